"""Segmentation: text -> sentences -> language spans (the first stage of the router).

``segment(text)`` returns an :class:`~mixvox.ir.Utterance` whose sentences carry spans of one
language each. zh/en spans come with no words: :meth:`mixvox.pipeline.Router.route` hands each
to the frontend of its language. Control-token spans (``lang == "ctrl"``) and inline-override
spans come with their :class:`~mixvox.ir.Word` already (see :mod:`mixvox.controls` for both
syntaxes).

Guarantees, for any ``str`` input:

* ``sentence.text == text[sentence.start:sentence.end]``, likewise for spans; sentences are
  ordered and disjoint, spans are ordered, disjoint and inside their sentence, and neither
  starts or ends with whitespace.
* Every character that is not whitespace lies in a span or in a warning's ``[start, end)``.
  Emoji, kana, hangul and other unsupported scripts, control characters and invalid code
  points (unassigned, private use, lone surrogates) are left out of spans with one warning per
  run (codes ``emoji``, ``unsupported-script``, ``control-char``, ``invalid-char``). A whole
  ANSI terminal escape (``ESC[31m``) counts as control characters.
* Time is linear in ``len(text)``: no regular expressions, bounded look-around.

Sentences
---------
A sentence ends at a newline or after a terminator run: ``。！？!?``, ``…``/``……``/``...``,
``‼`` and friends. Closing quotes and brackets right after the terminator stay with the
sentence (``他说："好。"`` is one sentence). A ``.`` ends a sentence only when followed by the
end of text, whitespace, a closing quote/bracket or a non-ASCII character, and not

* between digits (``3.5``) or before any other ASCII character (``v2.0``, ``e.g.,``,
  ``Node.js``, ``example.com``);
* after a title or never-final abbreviation (``Dr.``, ``Mr.``, ``e.g.``, ``i.e.``, ``vs.``)
  or a single capital initial (``J. K. Rowling``);
* after ``etc.``/``a.m.``/``U.S.``-style words unless the next word starts with a capital;
* before a lowercase word (``approx. five``), or after a list number at a line start (``1.``).

ASCII ``!``/``?`` glued to an ASCII letter or digit (``Yahoo!Mail``, ``a?b``) and everything
inside a URL (``https://x.com/a?b=1``) or an atom (control token, override) never end a
sentence.

Spans
-----
Inside a sentence the text is cut into *tokens*: runs of Han characters, and runs of other
readable characters (Latin letters, digits, punctuation, symbols) between whitespace, Han and
skipped characters. Chinese and full-width punctuation (``，。：「」“”``) is a token of its own
even when glued to letters (``GPU，3块``), except between two digits (``3：30``).
:data:`TOKEN_RULES` gives each non-Han token a kind:

=========  ===========================================  ==========================================
kind       token                                        examples
=========  ===========================================  ==========================================
``en``     first letter/digit is a letter               ``GPU``  ``H200``  ``v2.0``  ``i7-12700K``
``en``     digits + English ordinal suffix              ``1st``  ``4th``
``num``    digits + measure unit or short code          ``80GB``  ``22ms``  ``3.5GHz``  ``4K``
``en``     digits + any other word                      ``24-hour``  ``4070Ti``
``num``    digits and symbols                           ``3:30``  ``$5.99``  ``50%``  ``-5℃``
``num``    symbols only                                 ``+``  ``→``  ``℃``
``open``   opening brackets/quotes only                 ``(``  ``“``  ``「``
``punct``  punctuation only                             ``，``  ``—``  ``)``  ``&``
=========  ===========================================  ==========================================

Han tokens are ``zh``. A ``num`` token (digits, units, symbols) takes the language of the
island it belongs to, by these rules in order:

1. glued to a Han character (no space) -> ``zh``: ``3个``, ``2024年``, ``80GB显存``; except a
   plain number spaced before a lower-case English noun in a zh sentence (``大概2 weeks后``,
   ``有10 years of experience``): the count of the English noun, ``en``;
2. reaching an ``en`` token across spaces (through other ``num``/punctuation tokens, never
   across clause punctuation such as ``，,;：``) -> ``en``: ``3:30 PM``, ``I have 3 cats``;
3. otherwise the sentence's matrix language: ``只要 22ms`` -> ``zh``, ``it costs 5`` -> ``en``.

A number spaced before a Han measure word counts in Chinese in any sentence (``on 8 张 A100``).

In a ``zh`` sentence rule 2 holds only for English text (issue 7): an *island* (non-Han
tokens joined by spaces) with digits or math symbols that is not English text (two lower-case
words, a count before a lower-case noun as in ``3 apples``, a month before a day, a time before
AM/PM) is a code or a name with a number (``RTX 4070``, ``Windows 11``, ``pytorch 2.1``,
``A100``, ``GPT-4o``, ``降到 35 ms``, ``x<5``): all of it goes
to the ``zh`` span, whose frontend reads the digits in Chinese and the letters with the
English frontend. Identifiers (URLs, e-mail, paths, ``snake_case``) and ordinals stay ``en``;
``March 3, 2025`` is ``en`` up to the year.

Also in a ``zh`` sentence (see :func:`_zh_latin_token`): letter pairs (``A/B``, ``I/O``), a
unit of a price (``元/GB/月``), the am/pm of a Chinese time (``3点am``, ``是10:00 AM``) and the
letter of a licence plate (``沪A·88888``) go to the ``zh`` span; Chinese clause punctuation
after an English word stays with the Chinese text; a month before a four-digit year is English
with it (``June 2025``). Rates (``tokens/s``), letter pairs and model names with a slash
(``ViT-L/16``) are not identifiers.

A tab, and a ``|`` that is not glued between two ASCII letters/digits, end a sentence (table
cells and pipe lists get a pause); a piece that is only pipes joins the next sentence.

Punctuation goes with the token before it (opening brackets/quotes with the token after),
falling back to the neighbour on the other side, then to the matrix language. Adjacent
tokens of one language separated only by spaces form one span (``Windows 11``).

The matrix language of a sentence comes from :func:`mixvox.langid.matrix_decision`;
a sentence with neither Han nor Latin words (``3.5``) takes the previous sentence's matrix
(or the next one's; ``zh`` when the whole text has none). A sentence without Han whose Latin
words are only codes and names (a table cell ``A100``) takes the matrix of the sentences
around it that decide on their own, and keeps its own guess when there is none.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from mixvox.controls import Atom, scan_atoms
from mixvox.frontends import chem
from mixvox.ir import CTRL, EN, ZH, Sentence, Span, Utterance
from mixvox.langid import EN_FUNCTION, matrix_decision, predict, script_score
from mixvox.textutil import UNITS as _TEXT_UNITS
from mixvox.textutil import fold_width, is_emoji, is_han, is_latin_letter

__all__ = ["ARCH_NAME", "TOKEN_RULES", "UNITS", "segment", "split_sentences"]

# --- character classes -------------------------------------------------------------------------

_W, _NL, _H, _T, _EMOJI, _SCRIPT, _CTRL, _INVALID, _MARK, _ATOM, _P = range(11)
_SKIP = {
    _EMOJI: "emoji",
    _SCRIPT: "unsupported-script",
    _CTRL: "control-char",
    _INVALID: "invalid-char",
}
_NEWLINES = frozenset("\n\r\u2028\u2029")
#: Characters read as symbols although their script is not Latin (units, dots between names).
_SYMBOL_LIKE = frozenset("µμΩ\u2126·・π")  # micro, mu, omega, ohm sign, middle dots, pi
#: Chinese and full-width punctuation: a token of its own even when glued to letters or digits
#: (``GPU，3块`` is ``GPU`` ``，`` ``3`` ``块``), except between two digits (``3：30``, ``1，000``).
_CJK_PUNCT = frozenset(
    "，。｡、；：！？…⋯‥「」『』【】〔〕〖〗〘〙〚〛《》〈〉﹁﹂﹃﹄（）［］｛｝“”‘’—–～・·＂＇"
)

_class_cache: dict[str, int] = {}


def _char_class(ch: str) -> int:
    """Class of one character; ``_MARK`` (combining mark) is resolved by its neighbour."""
    code = _class_cache.get(ch)
    if code is not None:
        return code
    code = _char_class_uncached(ch)
    if len(_class_cache) < 200_000:
        _class_cache[ch] = code
    return code


def _char_class_uncached(ch: str) -> int:
    if ch in _NEWLINES:
        return _NL
    c = fold_width(ch)
    cat = unicodedata.category(c)
    if cat == "Cc":
        return _W if c in "\t " else _CTRL
    if c.isspace():
        return _W
    if is_han(c):
        return _H
    if ("0" <= c <= "9") or is_latin_letter(c) or c in _SYMBOL_LIKE:
        return _T
    if is_emoji(c):
        return _EMOJI
    if cat in ("Cs", "Co", "Cn"):
        return _INVALID
    if cat == "Cf":
        return _CTRL
    if cat in ("Mn", "Mc", "Me"):
        return _MARK
    if cat[0] in "PS" or cat in ("No", "Nl"):
        return _T
    return _SCRIPT  # other letters (kana, hangul, Cyrillic ...) and non-ASCII decimal digits


def _code_before(text: str, i: int) -> bool:
    """The run of ASCII letters, digits and marks that ends at ``i`` holds a Latin letter or
    a slash (``f/1.8``, ``v2``): a code or a path, which a CJK mark never continues."""
    k = i
    while k > 0 and i - k < 32 and text[k - 1].isascii() and not text[k - 1].isspace():
        k -= 1
    return any(is_latin_letter(c) or c == "/" for c in text[k:i])


def _classify(text: str, atoms: list[Atom]) -> bytearray:
    out = bytearray(len(text))
    prev = _W
    for i, ch in enumerate(text):
        code = _char_class(ch)
        if code == _MARK:
            code = prev if prev in (_T, _EMOJI, _SCRIPT, _CTRL, _INVALID) else _SCRIPT
        out[i] = code
        prev = code
    n = len(text)
    for i, ch in enumerate(text):
        if ch in _CJK_PUNCT and out[i] == _T:
            between_digits = 0 < i < n - 1 and _is_digit(text[i - 1]) and _is_digit(text[i + 1])
            # 、 enumerates: it never joins the numbers around it (f/2.8、1/125秒 was one token,
            # read as an English path), nor does a CJK mark after a code or a path
            # (f/1.8，1/250s)
            between_digits = between_digits and ch != "、" and not _code_before(text, i)
            # Mon–Fri, Feb–Apr: an en dash between two Latin words joins them like a hyphen
            between_words = (
                ch == "–"
                and 1 < i < n - 2
                and is_latin_letter(text[i - 1])
                and is_latin_letter(text[i - 2])
                and is_latin_letter(text[i + 1])
                and is_latin_letter(text[i + 2])
            )
            if not between_digits and not between_words:
                out[i] = _P
        elif out[i] == _SCRIPT and "\u0391" <= ch <= "\u03c9":
            # a Greek letter on its own (σ, μ=10, Δt) is a math symbol, read by the frontends;
            # Greek words stay an unsupported script
            if not (_is_greek(text[i - 1 : i]) or _is_greek(text[i + 1 : i + 2])):
                out[i] = _T
    _mark_ansi_sequences(text, out)
    _join_inner_format_chars(text, out)
    for a in atoms:
        out[a.start : a.end] = bytes([_ATOM]) * (a.end - a.start)
    return out


#: Longest run of invisible format characters kept inside a token (a few bidi marks pasted
#: from a web page); a longer run still splits the token, with the segmenter's warning.
_MAX_INNER_FORMAT = 8


def _join_inner_format_chars(text: str, out: bytearray) -> None:
    """An invisible format character (``Cf``: bidi marks and overrides, zero-width space and
    joiners, soft hyphen, a BOM) glued between two letters/digits/symbols belongs to the token
    around it (``12\\u202e34``, ``RTX\\u202e4090``, ``re\\u00adstart``): splitting there would
    read ``12`` and ``34`` as two numbers. It takes the token's class, so the frontend gets the
    whole token and reports the character itself (``format-char``/``control-char``, with its
    offset); everywhere else the segmenter skips and reports it as before."""
    n = len(text)
    i = 0
    while i < n:
        if out[i] != _CTRL or unicodedata.category(text[i]) != "Cf":
            i += 1
            continue
        j = i
        while j < n and j - i < _MAX_INNER_FORMAT and out[j] == _CTRL:
            if unicodedata.category(text[j]) != "Cf":
                break
            j += 1
        if 0 < i and j < n and out[i - 1] == _T and out[j] == _T:
            out[i:j] = bytes([_T]) * (j - i)
        i = max(j, i + 1)


def _is_greek(ch: str) -> bool:
    return bool(ch) and "\u0370" <= ch <= "\u03ff" and ch.isalpha()


#: Longest ANSI CSI sequence recognised (``ESC [ 38;2;255;255;255 m`` is 19 characters).
_MAX_CSI = 32


def _mark_ansi_sequences(text: str, out: bytearray) -> None:
    """Mark whole ANSI CSI sequences (``ESC [ 31 m``, colour codes pasted from a terminal) as
    control characters, so that ``[31m`` is skipped with the ``ESC`` rather than read aloud as
    "thirty one M". Bounded look-ahead per ``ESC``, so still linear."""
    n = len(text)
    i = text.find("\x1b[")
    while i != -1:
        j = i + 2
        limit = min(n, i + _MAX_CSI)
        while j < limit and "\x30" <= text[j] <= "\x3f":  # parameter bytes: digits ; < = > ?
            j += 1
        while j < limit and "\x20" <= text[j] <= "\x2f":  # intermediate bytes
            j += 1
        if j < limit and "\x40" <= text[j] <= "\x7e":  # final byte: m, K, H, J ...
            out[i : j + 1] = bytes([_CTRL]) * (j + 1 - i)
            i = text.find("\x1b[", j + 1)
        else:
            i = text.find("\x1b[", i + 1)


def _is_digit(ch: str) -> bool:
    return "0" <= fold_width(ch) <= "9"


# --- sentences ---------------------------------------------------------------------------------

# These sets are looked up in width-folded text (！ is !, ） is ), “ is "), except _OPENERS,
# which is looked up in the original text so that curly quotes can tell opening from closing.
_ALWAYS_FINAL = frozenset("。｡…⋯‼⁇⁈⁉")
_TERM_RUN = frozenset("。｡!?…⋯‼⁇⁈⁉.")
_CLOSERS = frozenset("\"')]}>»」』】》〉〕〗〙〛﹂﹄")
_OPENERS = frozenset("([{<«“‘「『【〈《〔〖〘〚（［｛﹁﹃")
_CLAUSE_END = frozenset(",;:、。.!?…⋯")
#: Abbreviations after which ``.`` never ends a sentence (lower case, inner dots kept).
_NEVER_FINAL = frozenset(
    "mr mrs ms dr prof st sr jr vs e.g i.e cf fig figs no nos approx dept est mt gen col lt "
    "sgt capt rev vol vols pp ed eds ref refs eq eqs sec ch art".split()
)
#: Abbreviations that end a sentence only when a capitalised word follows.
_MAYBE_FINAL = frozenset(
    "etc inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


def _url_start(text: str, i: int, marker: str) -> int | None:
    """Where the URL whose ``marker`` (``://`` or ``www.``) is at ``i`` starts, or ``None``."""
    if marker == "www.":
        glued = i > 0 and text[i - 1].isascii() and text[i - 1].isalnum()
        return None if glued else i
    s = i  # the scheme: up to 32 ASCII letters, digits and "+.-"
    while s > 0 and i - s < 32 and text[s - 1].isascii():
        if not (text[s - 1].isalnum() or text[s - 1] in "+.-"):
            break
        s -= 1
    return s if s < i else None


def _find_urls(text: str) -> dict[int, int]:
    """Start -> end of URL-like runs (``scheme://...``, ``www....``) that must not be split.

    A URL runs to the next whitespace, non-ASCII character or ``<>"[]``; trailing ``.,;:!?'"``
    and an unbalanced ``)`` are left to the sentence.
    """
    found: list[tuple[int, int]] = []
    n = len(text)
    for marker in ("://", "www."):
        i = text.find(marker)
        while i != -1:
            s = _url_start(text, i, marker)
            e = i + len(marker)
            while e < n and text[e].isascii() and not text[e].isspace() and text[e] not in '<>"[]':
                e += 1
            if s is not None:
                opens, closes = text.count("(", s, e), text.count(")", s, e)
                while e > s and text[e - 1] in ".,;:!?'\")":
                    if text[e - 1] == ")":
                        if opens >= closes:
                            break
                        closes -= 1
                    e -= 1
                found.append((s, e))
            i = text.find(marker, max(e, i + 1))
    found.sort()
    out: dict[int, int] = {}
    last_end = -1
    for s, e in found:
        if s >= last_end and e > s:
            out[s] = e
            last_end = e
    return out


def _word_before(f: str, i: int) -> str:
    """ASCII letters and inner dots right before index ``i`` (at most 24 characters)."""
    k = i
    while k > 0 and i - k < 24 and f[k - 1].isascii() and (f[k - 1].isalpha() or f[k - 1] == "."):
        k -= 1
    return f[k:i].lstrip(".")


def _period_ends_sentence(f: str, i: int) -> bool:
    n = len(f)
    nxt = f[i + 1] if i + 1 < n else ""
    k = i + 1
    while k < n and k - i <= _MAX_INNER_FORMAT and unicodedata.category(f[k]) == "Cf":
        k += 1
    if k > i + 1 and k < n and f[k].isdigit() and i > 0 and f[i - 1].isdigit():
        return False  # 3.\u200b5: an invisible mark inside a decimal
    prev = f[i - 1] if i > 0 else ""
    if nxt == ".":
        return True  # "..." ellipsis
    if prev.isdigit() and nxt.isdigit():
        return False
    if nxt and nxt.isascii() and not nxt.isspace() and nxt not in _CLOSERS and nxt not in "!?":
        return False  # v2.0  Node.js  e.g.,  example.com
    word = _word_before(f, i)
    low = word.lower()
    if low in _NEVER_FINAL:
        return False
    if len(word) == 1 and word.isupper() and word != "I":
        return False  # an initial: J. K. Rowling
    # the next visible character decides the remaining cases
    k = i + 1
    while k < n and f[k] in " \t":
        k += 1
    following = f[k] if k < n else ""
    if following.isascii() and following.islower():
        return False  # "approx. five", "etc. and"
    if "." in word and all(len(p) == 1 for p in word.split(".")) and word.isupper():
        return False  # U.S. Army, U.K.
    if low in _MAYBE_FINAL or ("." in low and all(len(p) == 1 for p in low.split("."))):
        return following == "" or following in "\n\r" or following.isupper()
    if word == "" and prev.isdigit():  # "1. Item" at a line start is a list number
        k = i
        while k > 0 and f[k - 1].isdigit() and i - k < 9:
            k -= 1
        while k > 0 and f[k - 1] in " \t":
            k -= 1
        if k == 0 or f[k - 1] in "\n\r":
            return False
    return True


def _is_terminator(text: str, f: str, i: int) -> bool:
    c = f[i]
    if c in _ALWAYS_FINAL:
        return True
    if c == ".":
        if not text[i].isascii():  # full-width "．": a period unless it is a decimal point
            return not (i > 0 and f[i - 1].isdigit() and i + 1 < len(f) and f[i + 1].isdigit())
        return _period_ends_sentence(f, i)
    if c in "!?":
        nxt = f[i + 1] if i + 1 < len(f) else ""
        prev = f[i - 1] if i > 0 else ""
        glued = (
            prev.isascii() and prev.isalnum() and nxt.isascii() and (nxt.isalnum() or nxt in "=_")
        )
        if text[i].isascii() and (glued or nxt == "="):
            return False  # Yahoo!Mail  a?b  x!=y
        return True
    return False


def _end_of_terminal(f: str, i: int, protected: dict[int, int]) -> int:
    """Index after the terminator run at ``i`` and the closers/terminators glued to it."""
    n = len(f)
    j = i
    while j < n and j not in protected and (f[j] in _TERM_RUN or f[j] in _CLOSERS):
        j += 1
    return j


def _quote_continues(f: str, i: int, j: int) -> bool:
    """``"Stop!" he said``: a closing quote after the terminator, then a lowercase word."""
    if not any(f[k] in _CLOSERS for k in range(i, j)):
        return False
    k = j
    while k < len(f) and f[k] in " \t":
        k += 1
    return k < len(f) and f[k].isascii() and f[k].islower()


def _sentence_bounds(
    text: str, f: str, cls: bytearray, protected: dict[int, int]
) -> list[tuple[int, int]]:
    n = len(text)
    raw: list[tuple[int, int]] = []
    start = 0
    i = 0
    while i < n:
        end = protected.get(i)
        if end is not None:
            i = end
            continue
        if cls[i] == _NL:
            raw.append((start, i))
            i += 1
            start = i
            continue
        if text[i] == "\t" or (f[i] == "|" and _pipe_separates(f, i)):
            # table cells and "a | b" lists: a pause between cells (the pipe stays with the
            # cell before it; a pipe-only piece is merged below)
            raw.append((start, i + (text[i] != "\t")))
            i += 1
            start = i
            continue
        if f[i] in _TERM_RUN and _is_terminator(text, f, i):
            j = _end_of_terminal(f, i, protected)
            if _quote_continues(f, i, j):
                i = j
                continue
            raw.append((start, j))
            start = i = j
            continue
        i += 1
    raw.append((start, n))
    out: list[tuple[int, int]] = []
    for s, e in raw:
        while s < e and cls[s] in (_W, _NL):
            s += 1
        while e > s and cls[e - 1] in (_W, _NL):
            e -= 1
        if s < e:
            out.append((s, e))
    return _merge_pipes(f, out)


def _pipe_separates(f: str, i: int) -> bool:
    """A ``|`` is a cell separator unless it is glued between two ASCII letters/digits (a|b)."""
    prev = f[i - 1] if i > 0 else " "
    nxt = f[i + 1] if i + 1 < len(f) else " "
    return not (prev.isascii() and prev.isalnum() and nxt.isascii() and nxt.isalnum())


def _merge_pipes(f: str, bounds: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """A piece that is only pipes (``| a | b |`` ends) joins the next sentence (or the last)."""
    out: list[tuple[int, int]] = []
    carry: int | None = None
    for s, e in bounds:
        if all(c == "|" or c.isspace() for c in f[s:e]):
            if carry is None:
                carry = s
            continue
        out.append((carry if carry is not None else s, e))
        carry = None
    if carry is not None:
        if out:
            out[-1] = (out[-1][0], bounds[-1][1])
        else:
            out.append((carry, bounds[-1][1]))
    return out


def split_sentences(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, whitespace trimmed (rules: module doc)."""
    scan = scan_atoms(text)
    cls = _classify(text, scan.atoms)
    protected = _find_urls(text)
    for a in scan.atoms:
        protected[a.start] = a.end
    return _sentence_bounds(text, fold_width(text), cls, protected)


# --- tokens and spans --------------------------------------------------------------------------

#: Letter runs after digits that are read as a measure unit (compared in lower case).
UNITS = _TEXT_UNITS  # measure units after a number (lower case); see mixvox.textutil
_ORDINAL = frozenset({"st", "nd", "rd", "th"})

#: Token kinds for non-Han tokens, in the order they are tried (see the module docstring).
TOKEN_RULES: tuple[tuple[str, str], ...] = (
    ("en", "first letter/digit is a letter: GPU, H200, v2.0, i7-12700K"),
    ("en", "digits + English ordinal suffix: 1st, 4th"),
    ("num", "digits + measure unit or short code (<=3 capitals): 80GB, 22ms, 3.5GHz, 4K, 3D"),
    ("en", "digits + any other word: 24-hour, 4070Ti"),
    ("num", "digits and symbols: 3:30, $5.99, 50%, -5℃, ¥5"),
    ("num", "symbols only: +, →, ℃"),
    ("open", "opening brackets/quotes only: (, “, 「"),
    ("punct", "punctuation only: ，, —, ), &"),
)

_ZH, _EN, _NUM, _PUNCT, _OPEN = "zh", "en", "num", "punct", "open"


#: A decade written with its century (``1990s``, ``2010s``): English, not seconds.
_RE_DECADE = re.compile(r"(?:1[5-9]|20)[0-9]0s")


def _unit_like(run: str) -> bool:
    return run.lower() in UNITS or (len(run) <= 3 and run.isupper())


def token_kind(tok: str) -> str:
    """Kind of one non-Han token (already width-folded), by :data:`TOKEN_RULES`."""
    first = ""
    for ch in tok:
        if ch.isdigit() or is_latin_letter(ch):
            first = ch
            break
    if not first:
        if all(ch in _OPENERS for ch in tok):
            return _OPEN
        if all(unicodedata.category(ch)[0] == "P" for ch in tok):
            return _PUNCT
        return _NUM
    if not first.isdigit():
        return _EN
    if _RE_DECADE.fullmatch(tok):
        return _EN  # 1990s出生: a decade ("nineteen nineties"), never 1990 seconds
    runs: list[str] = []
    n = len(tok)
    i = 0
    while i < n:
        if is_latin_letter(tok[i]):
            j = i
            while j < n and is_latin_letter(tok[j]):
                j += 1
            runs.append(tok[i:j])
            i = j
        else:
            i += 1
    if not runs:
        return _NUM
    if (
        len(runs) == 1
        and runs[0].lower() in _ORDINAL
        and tok.find(runs[0]) > 0
        and tok[tok.find(runs[0]) - 1].isdigit()
    ):
        return _EN
    if all(_unit_like(r) for r in runs):
        return _NUM
    return _EN


@dataclass(slots=True)
class _Tok:
    kind: str
    start: int
    end: int
    #: "adj" (glued to the previous token), "space" (whitespace between) or "break"
    #: (skipped characters, or the start of the segment).
    gap: str
    lang: str | None = None


def _tokens(text: str, f: str, cls: bytearray, s: int, e: int) -> list[_Tok]:
    toks: list[_Tok] = []
    gap = "break"
    i = s
    while i < e:
        c = cls[i]
        if c in (_H, _T, _P):
            j = i + 1
            while j < e and cls[j] == c:
                j += 1
            if c == _H:
                kind = _ZH
            elif all(ch in _OPENERS for ch in text[i:j]):
                kind = _OPEN
            else:
                kind = token_kind(f[i:j])
            if (
                kind == _PUNCT
                and gap != "adj"
                and all(ch in _OPENERS or ch in "\"'" for ch in text[i:j])
            ):
                kind = _OPEN  # straight quotes (with opening brackets) after a space open
            toks.append(_Tok(kind, i, j, gap))
            gap = "adj"
            i = j
        elif c in (_W, _NL):
            if gap == "adj":
                gap = "space"
            i += 1
        else:
            gap = "break"
            i += 1
    return toks


def _resolve(
    toks: list[_Tok], f: str, matrix: str, before: str | None, text: str | None = None
) -> None:
    """Give every token a language (``zh``/``en``) by the rules in the module docstring.

    ``before`` is the language of the span that precedes this run of tokens in the sentence
    (the text before a control token or an override), ``None`` at the start of a sentence.
    """
    n = len(toks)
    for t in toks:
        if t.kind in (_ZH, _EN):
            t.lang = t.kind

    def crossable(left: _Tok, right: _Tok) -> bool:
        if right.gap != "space":
            return False
        if f[left.end - 1] not in _CLAUSE_END:
            return True
        # "No. 5号": the dot of "No." before a number is an abbreviation's, not a clause end
        return f[left.start : left.end] in _NUMERO and f[right.start].isdigit()

    transparent = (_NUM, _PUNCT, _OPEN)
    # en_left[i]: an English token is reachable leftwards from token i.
    en_left = [False] * n
    for i in range(1, n):
        prev = toks[i - 1]
        if crossable(prev, toks[i]):
            en_left[i] = prev.kind == _EN or (prev.kind in transparent and en_left[i - 1])
    en_right = [False] * n
    for i in range(n - 2, -1, -1):
        nxt = toks[i + 1]
        if crossable(toks[i], nxt):
            en_right[i] = nxt.kind == _EN or (nxt.kind in transparent and en_right[i + 1])
    for i, t in enumerate(toks):
        if t.kind != _NUM:
            continue
        glued_han = (i > 0 and t.gap == "adj" and toks[i - 1].kind == _ZH) or (
            i + 1 < n and toks[i + 1].gap == "adj" and toks[i + 1].kind == _ZH
        )
        measure_next = (
            i + 1 < n
            and toks[i + 1].kind == _ZH
            and toks[i + 1].gap == "space"
            and f[toks[i + 1].start] in _MEASURE_WORDS
            and f[t.start : t.end].replace(".", "").isdigit()
        )
        scale_next = (
            i + 1 < n
            and toks[i + 1].kind == _EN
            and toks[i + 1].gap == "space"
            and f[toks[i + 1].start : toks[i + 1].end].rstrip(".,;:!?").lower() in _SCALE_WORDS
        )
        count_next = (
            i + 1 < n
            and _count_before_noun(t, toks[i + 1], f)  # spaced before the noun
            and f[toks[i + 1].start : toks[i + 1].end].rstrip(".,;:!?").islower()
        )
        if scale_next:  # 超过1 million次: the number is part of an English numeral
            t.lang = EN
        elif count_next:
            # recipe说要2 cups flour, 再加2 tablespoons sugar: a count before its English noun
            # is English even glued to Han before it, in a sentence of either matrix (it was
            # 二 cups: the Han glue won in an English-matrix sentence)
            t.lang = EN
        elif glued_han or measure_next:  # 3个, "on 8 张 A100": a count with its measure word
            t.lang = ZH
        elif en_left[i] or en_right[i]:
            t.lang = EN
        else:
            t.lang = matrix
    if matrix == ZH:
        _zh_code_islands(toks, f, crossable)
        for k, t in enumerate(toks):
            if _time_glued_by_ampm(toks, k, f):
                t.lang = ZH  # 12:30 AM上线: the time is Chinese, so is its AM (below)
        for k in range(n - 4):
            a, ap, dash, b, bp = toks[k : k + 5]
            if (
                a.kind == b.kind == _NUM
                and ap.kind == bp.kind == _EN
                and dash.kind == _PUNCT
                and f[dash.start : dash.end] in ("-", "~", "–", "—", "～")
                and ap.gap == dash.gap == b.gap == bp.gap == "space"
                and all(_clock_time(f[x.start : x.end]) for x in (a, b))
                and all(f[x.start : x.end].lower().rstrip(".") in _AMPM_WORDS for x in (ap, bp))
                and ZH in (a.lang, b.lang)
            ):
                # 营业时间8:00 AM - 5:00 PM: one end glued to Chinese makes the range Chinese
                # (上午八点到下午五点), never half English with its dash lost
                a.lang = b.lang = ZH
        for k, t in enumerate(toks):
            if t.kind == _EN and _zh_latin_token(toks, k, f):
                t.lang = ZH
    # punctuation: with the token before; opening marks with the token after
    for i, t in enumerate(toks):
        if t.kind == _PUNCT:
            if (
                matrix == ZH
                and i > 0
                and toks[i - 1].lang == EN
                and text is not None
                and all(ch in _ZH_PUNCT for ch in text[t.start : t.end])
            ):
                # Chinese punctuation after an English word ends the Chinese clause: the
                # English span is the word alone (a URL stays a URL without its 。)
                t.lang = ZH
            elif i > 0 and toks[i - 1].lang is not None:
                t.lang = toks[i - 1].lang
            elif i == 0 and before is not None:
                t.lang = before
    for i in range(n - 1, -1, -1):
        t = toks[i]
        if t.lang is None and i + 1 < n and toks[i + 1].lang is not None:
            t.lang = toks[i + 1].lang
    for i, t in enumerate(toks):
        if t.lang is None:
            t.lang = toks[i - 1].lang if i > 0 and toks[i - 1].lang else (before or matrix)


#: Lower-case words after a version number that name a release, no counted noun (``15 beta``).
_VERSION_WORDS = frozenset(
    "alpha beta rc preview pro max plus ultra mini lite nightly dev stable lts final".split()
)
#: Measure words: a number spaced before one is counted in Chinese (``8 张``).
_MEASURE_WORDS = frozenset("个张台块元岁次件只条本辆座位名根颗片套部首项份杯瓶碗双对")
_MONTH_WORDS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_MATH = frozenset("<>≤≥≈≠=±×÷")
#: English scale words: a number spaced before one belongs to it (``1 million`` is English).
_SCALE_WORDS = frozenset("thousand million billion trillion".split())
_NUMERO = frozenset(("No.", "no.", "NO."))
_AMPM_WORDS = frozenset(("am", "pm", "a.m", "p.m"))


def _clock_time(x: str) -> bool:
    """A clock time that an am/pm can follow: ``3:30``, ``10:00:00``, or a bare hour 1-12
    (``5 PM``: read like ``5:00 PM``, so the two are never routed differently)."""
    if ":" in x:
        return x[-1:].isdigit()
    return x.isascii() and x.isdigit() and len(x) <= 2 and 1 <= int(x) <= 12


#: Chinese (full-width) clause punctuation, as written (width folding turns ，into ,).
_ZH_PUNCT = frozenset("，。、；：！？…⋯")
#: Full-width clause marks: a sentence of codes and names joined by them is Chinese.
_FULLWIDTH_CLAUSE_MARKS = frozenset("，、；：（）")
_ORDINAL_TOKEN = frozenset(("st", "nd", "rd", "th"))


#: Time units after ``/`` in a rate (``tokens/s``).
RATE_UNITS = frozenset("s sec ms min h hr d day".split())


def is_rate(tok: str) -> bool:
    """``tokens/s``, ``it/s``, ``req/min``: a word per a time unit (read 每秒 in zh)."""
    word, sep, unit = tok.rstrip(",.;:!?").partition("/")
    word = _RE_MEMORY_CODE_DASH.sub("", word)  # DDR5-5600MT/s: the memory type before its rate
    word = word.lstrip("0123456789.")  # 3.5it/s
    return bool(sep) and unit in RATE_UNITS and word.isascii() and word.isalpha()


#: A memory type and its dash before a transfer rate (``DDR5-``, ``LPDDR5X-``).
_RE_MEMORY_CODE_DASH = re.compile(r"^[A-Za-z]{2,6}\d[A-Za-z]?-(?=\d)")


def _is_letter_pair(tok: str) -> bool:
    """``A/B``, ``I/O``, ``TCP/IP``: short capital letter groups around one slash, no path."""
    left, sep, right = tok.rstrip(",.;:!?").partition("/")
    return (
        bool(sep)
        and 0 < len(left) <= 3
        and 0 < len(right) <= 3
        and left.isascii()
        and right.isascii()
        and left.isalpha()
        and right.isalpha()
        and left.isupper()
        and right.isupper()
    )


def _is_code_pair(tok: str) -> bool:
    """``B1/B2`` (visas), ``P0/P1`` (priorities), ``A2/B1`` (language levels): two short codes
    of letters and digits around one slash, no path: each code is read by the sentence's rules."""
    left, sep, right = tok.rstrip(",.;:!?").partition("/")
    if sep and all(_RE_LETTER_VERSION.fullmatch(x) for x in tok.rstrip(",.;:!?").split("/")):
        return True  # v2.3/v2.4, v1.2.0/v1.3.0: versions side by side (read 或 by the zh rules)
    return bool(sep) and all(
        0 < len(x) <= 4
        and x.isascii()
        and x.isalnum()
        and is_latin_letter(x[0])
        and any(c.isdigit() for c in x)
        for x in (left, right)
    )


#: A version with its letter (``v2.3``, ``V1.2.0``).
_RE_LETTER_VERSION = re.compile(r"[vV]\d{1,3}(?:\.\d{1,3}){1,2}")


def _is_slash_code(tok: str) -> bool:
    """``ViT-L/16``, ``ViT-B/32``: a model name, one slash, then only digits."""
    left, sep, right = tok.rstrip(",.;:!?").partition("/")
    if left in ("f", "F") and right.replace(".", "", 1).isdigit() and len(right) <= 4:
        return True  # f/2.8: an aperture
    return (
        bool(sep)
        and right.isdigit()
        and len(right) <= 4
        and left.isascii()
        and any(c.isalpha() for c in left)
        and all(c.isalnum() or c == "-" for c in left)
    )


def _is_number_pair(tok: str) -> bool:
    """``10/11``, ``4.0/5.0``: two numbers around one slash (a fraction, a date or a choice).

    No path: the zh frontend reads it (a fraction, a month/day, or versions after a name).
    """
    left, sep, right = tok.rstrip(",.;:!?").partition("/")
    return bool(sep) and all(x.replace(".", "", 1).isdigit() and x.isascii() for x in (left, right))


def _is_per_unit(tok: str) -> bool:
    """``/GB/``, ``/GB``, ``GB/`` between Chinese words (元/GB/月): a unit in a price, no path."""
    core = tok.strip("/")
    return (
        0 < len(core) <= 4
        and core.isascii()
        and core.isalpha()
        and core.lower() in UNITS
        and tok != core
        and "/" not in core
    )


#: Units of a lab value's numerator (besides :data:`UNITS`): ``mmol/L``, ``U/L``, ``mg/dL``.
_LAB_UNITS = frozenset("mmol μmol µmol umol mol u iu miu dl ng pg μg µg ug mg g l ml".split())


def _is_unit_ratio(tok: str) -> bool:
    """``mmol/L``, ``3.8mmol/L``, ``mg/dL``, ``U/L``, ``km/h``: a unit per a unit, no path."""
    left, sep, right = tok.rstrip(",.;:!?").lstrip("0123456789.").partition("/")
    if right.startswith("100") and not right[3:4].isdigit():
        right = right[3:]  # 2000kJ/100g, 7.5L/100km: per hundred of a unit
    units = UNITS | _LAB_UNITS
    return bool(sep) and left.lower() in units and right.lower() in units and "/" not in right


def _is_price_per(tok: str) -> bool:
    """``$0.002/token``, ``¥5/GB``: a currency sign, an amount, one slash, a word (no path)."""
    head, sep, word = tok.rstrip(",.;:!?").partition("/")
    amount = head.lstrip("$¥￥€£")
    return (
        bool(sep)
        and amount != head
        and amount.replace(".", "", 1).replace(",", "").isdigit()
        and word.isascii()
        and word.isalpha()
        and len(word) <= 12
    )


def _is_setting(tok: str) -> bool:
    """``max_tokens=2048``, ``lr=3e-4``, ``top_p=0.9``: a snake_case name, ``=``, a number."""
    key, _, val = tok.rstrip(",.;:!?").partition("=")
    if not key or not val or not key.isascii() or not key[0].isalpha():
        return False
    if not all(c.isalnum() or c == "_" for c in key):
        return False
    num = val.lstrip("-").replace(".", "", 1).replace("e-", "", 1).replace("e", "", 1)
    return num.isdigit()


def is_metric_at_k(tok: str) -> bool:
    """``mAP@0.5``, ``Recall@10``, ``NDCG@5``: letters, ``@``, a number (an e-mail address has
    a domain after the ``@``)."""
    name, sep, k = tok.rstrip(",.;:!?").partition("@")
    if not sep or not k or not name or not name.isascii() or not k.isascii():
        return False
    num = k.replace(".", "", 1)
    return num.isdigit() and name[0].isalpha() and all(c.isalnum() or c == "-" for c in name)


def is_network(tok: str) -> bool:
    """An IP network written with its prefix length (``10.0.0.0/8``, ``2001:db8::/32``)."""
    addr, sep, plen = tok.rstrip(",.;!?").partition("/")
    if not (sep and plen.isdigit() and len(plen) <= 3 and addr.isascii()):
        return False
    try:
        ipaddress.ip_network(addr + "/" + plen, strict=False)
    except ValueError:
        return False
    return True


#: CPU architecture names as package and build names write them (``x86_64``, ``arm64``,
#: ``aarch64``, ``amd64``, ``i386``, ``ppc64le``, ``riscv64``, ``s390x``): no identifier to be read
#: by parts in English; the zh frontend says their digits one by one (x 八六 六四, arm 六四).
ARCH_NAME = re.compile(
    r"(?:x86[_-]64|x86|x64|amd64|arm64|arm32|armv[5-9]l?|armhf|aarch64|aarch32|i[3-6]86"
    r"|ppc64(?:le)?|riscv64|riscv32|loongarch64|mips64(?:el)?|s390x)(?![A-Za-z0-9_])",
    re.IGNORECASE | re.ASCII,
)


#: A lower-case name of two or more words joined by ``-`` that ends in a number: a cloud region
#: (``us-east-1``, GCP's ``us-central1``), a host or a service (``web-server-01``,
#: ``redis-master-0``). Its number belongs to the name, so the whole is read in English ("U S
#: east one"; it was <U S east>一). One word and a number (``top-1``, ``python-3``) is no such
#: name: its number follows the sentence.
_RE_NAME_WITH_NUMBER = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})*-[a-z]{2,}(?:-\d{1,4}|\d{1,2})")


_MODIFIER_KEY = r"(?:Ctrl|CTRL|ctrl|Control|Cmd|CMD|cmd|Command|Shift|SHIFT|shift|Alt|ALT|alt|Option|Opt|Win|Fn|[⌘⇧⌥⌃])"
#: A key combination: modifier keys and one key joined by ``+`` (``Ctrl+C``, ``Alt+F4``).
_RE_KEY_COMBO = re.compile(
    _MODIFIER_KEY + r"(?:\+" + _MODIFIER_KEY + r")*\+(?:[A-Za-z0-9]|F\d{1,2}|[A-Z][a-z]{1,8})"
)


#: A digit, a dot and a word of two or more letters (``t3.large``; not ``v2.x``, ``1.5B``).
_RE_DIGIT_DOT_WORD = re.compile(r"[0-9]\.[a-z]{2,}")


#: A count per a unit (``12.5×10⁹/L``, ``10⁹/L``, ``4.5×10¹²/L``): a power of ten and a unit.
_RE_COUNT_PER_UNIT = re.compile(
    r"(?:[0-9]+(?:\.[0-9]+)?[×x*])?10[⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+/(?:L|mL|ml|μL|µL|uL|dL|kg|g|h|d)"
)


def _is_identifier(tok: str) -> bool:
    """URL, e-mail, path, ``snake_case``, ``a.b``: read by parts in English, never as a code.

    A rate (``tokens/s``, ``req/min``: letters, one slash, a time unit) is no path.
    """
    if is_rate(tok) or _is_per_unit(tok) or _is_letter_pair(tok) or _is_slash_code(tok):
        return False
    if _is_code_pair(tok):
        return False  # B1/B2签证, P0/P1: two codes, not a path
    if ARCH_NAME.fullmatch(tok.rstrip(".,;:!?")):
        return False  # x86_64, aarch64: an architecture, read by the zh rules
    if _is_unit_ratio(tok):
        return False  # 3.8 mmol/L, mg/dL: a lab value's unit, read by the zh rules
    if _RE_COUNT_PER_UNIT.fullmatch(tok.rstrip(".,;:!?")):
        return False  # 12.5×10⁹/L: a count per a unit (a lab value), read by the zh rules
    if _is_price_per(tok):
        return False  # $0.002/token: a price per a thing, 每 token
    if "=" in tok and _is_setting(tok):
        return False  # max_tokens=2048: a setting; its value is read in the sentence's language
    if "@" in tok and is_metric_at_k(tok):
        return False  # mAP@0.5, Recall@10: a metric at a cut-off, no e-mail address
    if "/" in tok and is_network(tok):
        return False  # 2001:db8::/32, 10.0.0.0/8: an address and its prefix, read by the zh rules
    if _is_number_pair(tok):
        return False  # Windows 10/11, 3/4: numbers around a slash, read by the zh rules
    parts = tok.rstrip(".,;:!?").split("/")
    if len(parts) == 3 and all(p.isascii() and p.isdigit() and len(p) <= 4 for p in parts):
        return False  # KDA 5/2/10, 12/25/2024: a score or a date, no path (the zh rules)
    if any(c in "/\\@_" for c in tok) or "://" in tok:
        return True
    if _RE_KEY_COMBO.fullmatch(tok.rstrip(".,;:!?")):
        return True  # Alt+F4, Ctrl+1: a key combination, said in English ("alt plus F four")
    if _RE_NAME_WITH_NUMBER.fullmatch(tok.rstrip(".,;:!?")):
        return True  # us-east-1, web-server-01, us-central1: the number is part of the name
    m = _RE_DIGIT_DOT_WORD.search(tok)
    if m and tok[:1].isascii() and tok[:1].isalpha():
        return True  # t3.large, m5.xlarge, python3.exe: a dot before a word is a name's dot
    host, sep, port = tok.partition(":")
    if sep and port.isdigit() and 2 <= len(port) <= 5 and host[:1].isalpha() and "+" not in host:
        return True  # localhost:8080
    return any(
        tok[k] == "." and is_latin_letter(tok[k - 1]) and is_latin_letter(tok[k + 1])
        for k in range(1, len(tok) - 1)
    )


def _is_english_phrase(words: list[str], toks: list[_Tok], f: str) -> bool:
    """Is an island of a zh sentence English text (``I have 3 cats``), not a code or a name?

    English when it has two lower-case words that are not units (``I have 3 cats``), a number
    followed by a lower-case word (``3 apples``, ``100 epochs``), a month name before a day
    (``March 3``), or a time before AM/PM (``3:30 PM``). A lower-case name before a number
    (``pytorch 2.1``, ``version 2``) and capitalised names (``RTX``, ``Python``, ``iOS``) are not.
    """

    def is_word(x: str) -> bool:
        w = x.rstrip(".,;:!?")
        return len(w) >= 2 and w.isalpha() and w.islower() and w not in UNITS

    for k in range(len(toks) - 1):
        a, b = toks[k], toks[k + 1]
        ta, tb = f[a.start : a.end], f[b.start : b.end]
        if a.kind == _EN and ta.rstrip(".").lower() in _MONTH_WORDS:
            day = _day_digits(tb)
            if b.kind in (_NUM, _EN) and day.isascii() and day.isdigit() and len(day) <= 2:
                return True  # March 3, Jan 2nd
        if _is_day_before_month(a, b, f):
            return True  # 12 Sep 2025: a day before a month name
        if (
            a.kind == _EN
            and b.kind == _EN
            and b.gap == "space"
            and _is_title_word(ta)
            and is_word(tb)
            and len(tb.rstrip(".,;:!?")) >= 3
        ):
            return True  # Input voltage 100-240 V: a capitalised word and a lower-case word
        if a.kind == _NUM and _clock_time(ta) and tb.lower().replace(".", "") in ("am", "pm"):
            return True  # 3:30 PM, 5 PM (DESIGN.md: a time with AM/PM is an English island)
        if (
            a.kind == _NUM
            and b.kind == _EN
            and is_word(tb)
            and tb.rstrip(".,;:!?") not in _VERSION_WORDS
        ):
            return True  # 3 apples: a count and its noun (not Android 15 beta: a version)
    for k in range(len(toks) - 2):
        n_, name, street = toks[k : k + 3]
        if (
            n_.kind in (_NUM, _EN)
            and f[n_.start : n_.end][:1].isdigit()
            and name.kind == _EN
            and name.gap == street.gap == "space"
            and _is_title_word(f[name.start : name.end])
            and f[street.start : street.end].rstrip(".,;:!?").lower() in _STREET_WORDS
        ):
            return True  # 123 Main St, 1600 Pennsylvania Ave: an English street address
    for k in range(len(toks) - 2):
        a, amp, c = toks[k : k + 3]
        if (
            f[amp.start : amp.end] == "&"
            and amp.gap == c.gap == "space"
            and a.kind == c.kind == _EN
            and _is_title_word(f[a.start : a.end])
            and _is_title_word(f[c.start : c.end])
        ):
            return True  # Fast & Furious 9, Tom & Jerry: a title joined by a spaced &
    for k in range(len(toks) - 2):
        verb, n_, nxt = toks[k : k + 3]
        if (
            verb.kind == _EN
            and f[verb.start : verb.end].lower() in _DEAL_VERBS
            and n_.kind == _NUM
            and n_.gap == nxt.gap == "space"
            and nxt.kind == _EN
            and _is_title_word(f[nxt.start : nxt.end])
            and f[nxt.start : nxt.end].rstrip(".,;:!?").lower() not in _VERSION_WORDS
        ):
            return True  # Buy 1 Get 1 Free, Buy 2 Get 1: an English deal, its numbers English
    for k in range(len(toks) - 2):
        word, prep, n_ = toks[k : k + 3]
        if (
            word.kind == prep.kind == _EN
            and n_.kind == _NUM
            and prep.gap == n_.gap == "space"
            and _is_title_word(f[word.start : word.end])
            and f[prep.start : prep.end].lower() in _NUMBER_PREPOSITIONS
        ):
            return True  # Born in 1990, Kids Under 12 Eat Free: an English phrase's number
    titles = [k for k, w in enumerate(words) if _is_title_word(w)]
    if len(titles) >= 2 and any(w in _TITLE_FUNCTION_WORDS for w in words[titles[0] + 1 :]):
        return True  # Top 10 AI Tools in 2025, Pride and Prejudice: a title in English
    return sum(1 for w in words if is_word(w)) >= 2


#: Street words after a house number and a name (``123 Main St``): an English address.
_STREET_WORDS = frozenset(
    "st st. street ave ave. avenue rd rd. road blvd blvd. boulevard dr dr. drive ln lane way "
    "ct court pl place pkwy parkway hwy highway sq square".split()
)
#: Prepositions between a capitalised English word and a number (``Born in 1990``, ``Kids
#: Under 12``): the phrase is English text, the number after the preposition English too.
_NUMBER_PREPOSITIONS = frozenset("in under over after before since until till from by".split())
#: Verbs that start the wording of a deal or a shop sign (``Buy 1 Get 1 Free``, ``Spend 100
#: Save 20``, ``Open 24 Hours``): a number between one and a capitalised word is part of the
#: English phrase.
_DEAL_VERBS = frozenset("buy get save spend pay take earn order open".split())
#: Lower-case function words of English titles (``Tools in 2025``, ``Lord of the Rings``).
_TITLE_FUNCTION_WORDS = frozenset("in of to for and the with on at from by".split())


def _day_digits(tok: str) -> str:
    """The digits of a day written after a month: ``3,`` -> ``3``, ``2nd`` -> ``2``."""
    day = tok.rstrip(",")
    if day[-2:].lower() in _ORDINAL_TOKEN and day[:-2].isdigit():
        return day[:-2]
    return day


def _count_before_noun(num: _Tok, word: _Tok, f: str) -> bool:
    """A plain number (or range) and a spaced English word that is no unit or release word
    (``2 weeks``, ``10 years``, ``2-3 weeks``; capitalised ``5 Tips`` too, the caller checks
    that the island is English text): the count of an English noun, English even when glued
    to Han before it."""
    x = f[num.start : num.end]
    w = f[word.start : word.end].rstrip(".,;:!?")
    low, _, high = x.replace("~", "-", 1).partition("-")  # 2-3 weeks: a range counts too
    return (
        num.kind == _NUM
        and x.isascii()
        and all(p.replace(".", "", 1).replace(",", "").isdigit() for p in (low, high or low))
        and word.kind == _EN
        and word.gap == "space"
        and len(w) >= 2
        and w.isascii()
        and w.isalpha()
        and (w.islower() or (len(w) >= 3 and w.istitle()))  # 5 Tips for Better Sleep
        and w.lower() not in UNITS
        and w.lower() not in _VERSION_WORDS
        and w not in _SCALE_WORDS
    )


def _is_title_word(x: str) -> bool:
    """``Input``, ``Output``: a capitalised word of lower-case letters (no ``iOS``, ``RTX``)."""
    w = x.rstrip(".,;:!?")
    return len(w) >= 3 and w.isascii() and w.isalpha() and w[0].isupper() and w[1:].islower()


def _is_day_before_month(d: _Tok, m: _Tok, f: str) -> bool:
    """``12 Sep``, ``3 March``: a day (1-31, one or two digits) and a spaced month name."""
    day = f[d.start : d.end]
    return (
        d.kind == _NUM
        and m.kind == _EN
        and day.isascii()
        and day.isdigit()
        and len(day) <= 2
        and 1 <= int(day) <= 31
        and m.kind == _EN
        and m.gap == "space"
        and f[m.start : m.end].rstrip(".,").lower() in _MONTH_WORDS
    )


def _time_glued_by_ampm(toks: list[_Tok], k: int, f: str) -> bool:
    """A clock time with a spaced AM/PM that is glued to Chinese on the side the rules for
    ``时间是10:00 AM`` do not see: its am/pm glued to the Han text after it (``12:30 AM上线``,
    also at the start of a sentence), or the time glued to a Chinese clause mark after Han
    (``上线时间：12:30 AM``). Glued to Chinese, the time is read in Chinese with 上午/下午/凌晨
    (CONVENTIONS.md, dates and times); spaced off on both sides it stays an English island."""
    t = toks[k]
    x = f[t.start : t.end]
    if t.kind != _NUM or not _clock_time(x) or k + 1 >= len(toks):
        return False
    ap = toks[k + 1]
    if ap.kind != _EN or ap.gap != "space":
        return False
    word, dash, rest = f[ap.start : ap.end].replace("~", "-").partition("-")
    if word.lower() not in _AMPM_WORDS:
        return False
    after = k + 2
    if dash:  # 8:00 AM-5:00 PM营业: the range's end and its am/pm decide for both
        if not _clock_time(rest) or k + 2 >= len(toks):
            return False
        end_ap = toks[k + 2]
        if end_ap.kind != _EN or f[end_ap.start : end_ap.end].lower() not in _AMPM_WORDS:
            return False
        after = k + 3
    if after < len(toks) and toks[after].gap == "adj" and toks[after].kind == _ZH:
        return True
    if k >= 2 and t.gap == "adj" and toks[k - 1].kind == _PUNCT:
        mark = f[toks[k - 1].start : toks[k - 1].end]
        return (
            mark in ("：", "，", "、", ":") and toks[k - 1].gap == "adj" and toks[k - 2].kind == _ZH
        )
    return False


def _zh_latin_token(toks: list[_Tok], k: int, f: str) -> bool:
    """English-looking tokens of a zh sentence that the zh frontend reads (issue 7).

    ``A/B测试``, ``I/O`` (letters one by one, the slash silent); ``元/GB/月`` after a number (a
    unit of a price); the am/pm glued after a time written in Chinese (``3点am`` -> 上午三点);
    the letter of a licence plate (``沪A·88888``).
    """
    tok = f[toks[k].start : toks[k].end]
    if _is_letter_pair(tok):
        return True
    if (
        tok.startswith("#")
        and k + 1 < len(toks)
        and toks[k + 1].kind == _ZH
        and toks[k + 1].gap == "adj"
        and "#" in f[toks[k + 1].end : toks[k + 1].end + 40]
    ):
        return True  # #AI改变生活#: a topic tag, its marks are silent (the zh frontend)
    word = tok.strip("#")
    if (
        tok.startswith("#")
        and 2 <= len(word) <= 30
        and word.isascii()
        and word.isalnum()
        and any(c.isalpha() for c in word)
        and tok.count("#") <= 2
        and (k == 0 or toks[k].gap != "adj" or toks[k - 1].kind == _ZH)
    ):
        return True  # #OOTD的话题, #MWC2026#: a hashtag in a Chinese sentence, its # silent
    if tok in _ROMAN_COUNTS and (
        (
            k + 1 < len(toks)
            and toks[k + 1].kind == _ZH
            and toks[k + 1].gap == "adj"
            and f[toks[k + 1].start] in _ROMAN_MEASURES
        )
        or (tok in ("II", "III") and k > 0 and toks[k - 1].kind == _ZH and toks[k].gap == "adj")
    ):
        # II型糖尿病, III期临床, 钻石III: a Roman numeral counting a kind or a tier (zh)
        return True
    if (
        len(tok) == 2
        and "A" <= tok[0] <= "Z"
        and tok[1] == "+"
        and k + 1 < len(toks)
        and toks[k + 1].kind == _ZH
        and toks[k + 1].gap == "adj"
    ):
        # B+轮融资, A+级: glued before a Chinese word it names a round or a class, B加; a
        # grade at the end of a clause keeps English (数学拿了A-，英语拿了B+: A minus, B plus)
        return True
    if re.fullmatch(r"SPF\d{1,3}\+?|PA\+{1,4}", tok):
        return True  # SPF50+ PA++++: a sunscreen's ratings, 加 in a Chinese sentence
    if tok[-1:] in "+-⁺⁻" and chem.ion(tok, f):
        return True  # 溶液中的Na+和Cl-: ions, named in Chinese (钠离子) by the zh frontend
    prev_time = (
        k > 0 and toks[k - 1].lang == ZH and _clock_time(f[toks[k - 1].start : toks[k - 1].end])
    )
    if toks[k].gap == "space" and tok.lower().rstrip(".") in _AMPM_WORDS and prev_time:
        return True  # 时间是10:00 AM: the time is Chinese (glued to 是), so is its AM
    ampm, dash, rest = tok.replace("~", "-").partition("-")
    if (
        toks[k].gap == "space"
        and prev_time
        and ampm.lower().rstrip(".") in _AMPM_WORDS
        and dash
        and rest[:1].isdigit()
        and all(c.isdigit() or c == ":" for c in rest)
    ):
        return True  # 1:00 PM-2:30 PM: the am/pm of a Chinese time and the range's end
    if k == 0 or toks[k].gap != "adj" or toks[k - 1].kind != _ZH:
        return False
    prev = toks[k - 1]
    if (
        len(tok) <= 2
        and tok.isupper()
        and tok.isalpha()
        and k + 2 < len(toks)
        and f[toks[k + 1].start : toks[k + 1].end] in ("·", "・")
        and toks[k + 2].kind == _NUM
        and toks[k + 1].gap == toks[k + 2].gap == "adj"
    ):
        return True  # 沪A·88888, 沪AD·12345: a licence plate, read with its digits
    if prev.gap == "adj" and k >= 2 and toks[k - 2].kind == _NUM and _is_per_unit(tok):
        return True
    return f[prev.end - 1] in "点分秒半刻" and tok.lower().rstrip(".") in _AMPM_WORDS


#: Roman numerals (two letters or more) and the measure words after which they count (二型).
_ROMAN_COUNTS = frozenset("II III IV VI VII VIII IX XI XII".split())
_ROMAN_MEASURES = frozenset("型期级类代度号卷章部阶")


#: Capital function words that make a run of capital words an English phrase (``GO TO LINE``,
#: ``DO NOT PRESS``, ``PRESS ANY KEY``); the English frontend then decides word or letters.
_CAPS_FUNCTION = frozenset(w.upper() for w in EN_FUNCTION if len(w) >= 2) | frozenset(
    "GO UP OFF OUT NOW GET".split()
)


def _caps_phrase_tokens(island: list[_Tok], f: str) -> tuple[set[int], bool]:
    """Indexes of the island's capital words that form an English phrase (issue 7), and
    whether the phrase is English text (its numbers English too).

    Two or more all-capital words of two or more letters in a row, spaced, with a capital
    function word among them (``GO TO LINE 10``, ``PRESS ANY KEY``, ``GPU AND CPU``): they stay
    one English span, which the English frontend reads as words (``go to line``) where they
    are words and spells where they are acronyms. Handed over one at a time, ``GO`` and ``TO``
    looked like acronyms (G O T O). The phrase is text, like the same words in lower case
    (``go to line 10`` is English: "ten"), when it has two function words or a longer word
    with a vowel (``LINE``, ``SIGNAL``); a function word between two short codes (``GPU AND
    CPU``, ``TCP OR UDP``) leaves the numbers around it to the matrix language.
    """

    def caps(t: _Tok) -> bool:
        x = f[t.start : t.end]
        return t.kind == _EN and len(x) >= 2 and x.isascii() and x.isalpha() and x.isupper()

    out: set[int] = set()
    text = False
    k = 0
    while k < len(island):
        if not caps(island[k]):
            k += 1
            continue
        j = k + 1
        while j < len(island) and caps(island[j]) and island[j].gap == "space":
            j += 1
        words = [f[island[x].start : island[x].end] for x in range(k, j)]
        function = [w for w in words if w in _CAPS_FUNCTION]
        if len(words) >= 2 and function:
            out.update(range(k, j))
            text = (
                text
                or len(function) >= 2
                or any(
                    len(w) >= 4 and w not in _CAPS_FUNCTION and any(c in "AEIOUY" for c in w)
                    for w in words
                )
            )
        k = j
    return out, text


#: A name of capitals joined by ``&`` (``AT&T``, ``S&P``, ``H&M``, ``R&D``): English in any
#: sentence (the English frontend says "S and P").
_AMPERSAND_NAME = re.compile(r"[A-Z]{1,4}&[A-Z]{1,4}(?:'s)?")
#: English words that join two numbers of one English phrase (``9 to 5``, ``5 out of 10``).
_EN_LINK_WORDS = frozenset("to of than by from and or till until through".split())
#: Han characters after a number that make it a date or a count (``2024年``, ``3个``).
_COUNTED_AFTER = _MEASURE_WORDS | frozenset("年月日号天周倍万亿点分秒人")


def _zh_code_islands(toks: list[_Tok], f: str, crossable: Callable[[_Tok, _Tok], bool]) -> None:
    """In a zh sentence, codes and numbers next to Latin words follow the matrix language.

    An island is a run of non-Han tokens joined by spaces (never across clause punctuation).
    When it holds digits or math symbols and is not an English phrase (see
    :func:`_is_english_phrase`), its codes (``A100``, ``GPT-4o``, ``1e-5``), numbers and names
    go to the zh span, whose frontend reads digits in Chinese and hands the letters to the
    English frontend: ``RTX 4070`` is RTX 四零七零, ``降到 35 ms`` is 三十五毫秒. Identifiers
    (URLs, e-mail, paths, snake_case) and ordinals (``1st``) stay English.
    """
    n = len(toks)
    i = 0
    english_before = False  # the island before ended an English phrase with ", "
    while i < n:
        if toks[i].kind == _ZH:
            english_before = False
            i += 1
            continue
        j = i + 1
        while j < n and toks[j].kind != _ZH and crossable(toks[j - 1], toks[j]):
            j += 1
        island = toks[i:j]
        texts = [f[t.start : t.end] for t in island]
        en = [x for t, x in zip(island, texts, strict=True) if t.kind == _EN]
        words = [x for x in en if x.replace("-", "").replace("'", "").isalpha()]
        continues = english_before and toks[i].gap == "space" and f[toks[i - 1].end - 1] in ",;:"
        phrase, caps_text = _caps_phrase_tokens(island, f)
        english = continues or caps_text or (bool(en) and _is_english_phrase(words, island, f))
        # "Input voltage 100-240 V, 50/60 Hz": the part after an ASCII comma of an English
        # phrase is English too (the comma ends no Chinese clause)
        english_before = (
            english and j < n and toks[j].kind != _ZH and f[toks[j - 1].end - 1] in ",;:"
        )
        if continues:
            for t in island:
                if t.kind in (_EN, _NUM):
                    t.lang = EN
        elif en and not english and any(_AMPERSAND_NAME.fullmatch(x) for x in en):
            # S&P 500, AT&T: a name of capitals joined by & is English ("S and P", never 和),
            # and so is the plain number of an index after it (S&P 500: "S and P five hundred")
            for k, (t, x) in enumerate(zip(island, texts, strict=True)):
                if t.kind in (_EN, _NUM) and not _AMPERSAND_NAME.fullmatch(x):
                    index = (
                        k > 0
                        and t.kind == _NUM
                        and t.gap == "space"
                        and x.isascii()
                        and x.isdigit()
                        and _AMPERSAND_NAME.fullmatch(texts[k - 1]) is not None
                        and not (  # H&M 2024年: a year or a count of the sentence
                            j < n
                            and k == len(island) - 1
                            and toks[j].gap == "adj"
                            and f[toks[j].start] in _COUNTED_AFTER
                        )
                    )
                    if index:
                        t.lang = EN
                    elif not _is_identifier(x):
                        t.lang = ZH
        elif english and len(island) > 1 and _count_before_noun(island[0], island[1], f):
            island[0].lang = EN  # 大概2 weeks后, 他有10 years of experience: "two weeks"
        elif en and any(
            any(c.isdigit() for c in x) or any(c in _MATH for c in x)
            for t, x in zip(island, texts, strict=True)
            if t.kind in (_EN, _NUM)
        ):
            if not english:
                for idx, (t, x) in enumerate(zip(island, texts, strict=True)):
                    if t.kind not in (_EN, _NUM) or _is_identifier(x) or idx in phrase:
                        continue
                    if t.kind == _EN and x.lstrip("0123456789").lower() in _ORDINAL_TOKEN:
                        continue
                    if _RE_DECADE.fullmatch(x):
                        continue  # 1990s: an English decade
                    t.lang = ZH
        if english:
            for k in range(1, len(island)):
                t, before_word = island[k], texts[k - 1].lower()
                glued_count = (
                    k == len(island) - 1
                    and j < n
                    and toks[j].gap == "adj"
                    and f[toks[j].start] in _COUNTED_AFTER
                )
                if (
                    t.kind == _NUM
                    and t.gap == "space"
                    and island[k - 1].kind == _EN
                    and (
                        before_word in _EN_LINK_WORDS
                        or before_word in _DEAL_VERBS
                        or before_word in _NUMBER_PREPOSITIONS
                    )
                    and texts[k].isascii()
                    and texts[k].isdigit()
                    and not glued_count
                ):
                    t.lang = EN  # 每天9 to 5上班: the number after "to" ends the English phrase
        i = j
    # "March 3, 2025": the day (even glued to Han) and the year belong to the English date
    for k in range(n - 1):
        if _is_day_before_month(toks[k], toks[k + 1], f):
            toks[k].lang = EN  # 是12 Sep 2025: the day of an English date, even glued to Han
        m, d = toks[k], toks[k + 1]
        day = _day_digits(f[d.start : d.end])
        if (
            m.kind == _EN
            and f[m.start : m.end].rstrip(".").lower() in _MONTH_WORDS
            and d.gap == "space"
            and d.kind in (_NUM, _EN)
            and day.isascii()
            and day.isdigit()
            and 1 <= int(day) <= 31
            and len(day) <= 2
        ):
            d.lang = EN
    for k in range(n - 2):  # "2 Jan 2025": a day before a month and a year
        d, m, y = toks[k : k + 3]
        day, year = f[d.start : d.end], f[y.start : y.end].rstrip(",.")
        if (
            d.kind == _NUM
            and day.isascii()
            and day.isdigit()
            and 1 <= int(day) <= 31
            and m.kind == _EN
            and m.gap == "space"
            and f[m.start : m.end].rstrip(".").lower() in _MONTH_WORDS
            and y.gap == "space"
            and year.isdigit()
            and len(year) == 4
        ):
            d.lang = EN
    for k in range(n - 1):  # "June 2025": a month and a year
        m, y = toks[k], toks[k + 1]
        year = f[y.start : y.end].rstrip(",.")
        if (
            m.kind == _EN
            and f[m.start : m.end].rstrip(".").lower() in _MONTH_WORDS
            and y.gap == "space"
            and y.kind == _NUM
            and year.isdigit()
            and len(year) == 4
            and year[0] in "12"
        ):
            m.lang = y.lang = EN  # Jan 2025: the month too (it was read alone as "Jan")
    for k in range(n - 2):
        m, d, y = toks[k : k + 3]
        if (
            m.kind == _EN
            and f[m.start : m.end].rstrip(".").lower() in _MONTH_WORDS
            and d.lang == EN
            and f[d.start : d.end].endswith(",")
            and _day_digits(f[d.start : d.end]).isdigit()
            and y.gap == "space"
            and f[y.start : y.end].isdigit()
            and len(f[y.start : y.end]) == 4
        ):
            y.lang = EN


def _spans_of_segment(
    text: str, f: str, cls: bytearray, s: int, e: int, matrix: str, before: str | None
) -> tuple[list[Span], bool]:
    """Spans of the text between two atoms; also whether it had anything besides punctuation."""
    toks = _tokens(text, f, cls, s, e)
    if not toks:
        return [], False
    _resolve(toks, f, matrix, before, text)
    spans: list[Span] = []
    cur_lang, cur_s, cur_e = toks[0].lang, toks[0].start, toks[0].end
    for t in toks[1:]:
        if t.lang == cur_lang and t.gap != "break":
            cur_e = t.end
            continue
        spans.append(Span(cur_lang or matrix, text[cur_s:cur_e], cur_s, cur_e))
        cur_lang, cur_s, cur_e = t.lang, t.start, t.end
    spans.append(Span(cur_lang or matrix, text[cur_s:cur_e], cur_s, cur_e))
    speakable = any(t.kind not in (_PUNCT, _OPEN) for t in toks)
    return spans, speakable


# --- warnings for skipped characters -----------------------------------------------------------


def _show(s: str, limit: int = 40) -> str:
    return repr(s if len(s) <= limit else s[:limit] + "…")


def _script_names(run: str) -> str:
    names: list[str] = []
    for ch in run[:64]:
        try:
            word = unicodedata.name(ch).split()[0]
        except ValueError:
            word = "UNNAMED"
        label = {
            "HIRAGANA": "Japanese kana",
            "KATAKANA": "Japanese kana",
            "HALFWIDTH": "Japanese kana",
            "HANGUL": "Korean hangul",
            "COMBINING": "combining mark",
        }.get(word, word.title())
        if label not in names:
            names.append(label)
    return ", ".join(names[:4]) + (" …" if len(names) > 4 else "")


def _warn_skipped(utt: Utterance, cls: bytearray) -> None:
    text = utt.input
    n = len(text)
    i = 0
    while i < n:
        code = cls[i]
        if code not in _SKIP:
            i += 1
            continue
        j = i + 1
        while j < n and cls[j] == code:
            j += 1
        run = text[i:j]
        where = f"at {i}" if j - i == 1 else f"at {i}-{j}"
        if code == _EMOJI:
            msg = f"emoji {_show(run)} {where} skipped: emoji are not spoken"
        elif code == _SCRIPT:
            msg = (
                f"{_script_names(run)} text {_show(run)} {where} skipped: only Chinese and "
                "English are spoken"
            )
        elif code == _CTRL:
            msg = f"control/format character(s) {_show(run)} {where} skipped"
        else:
            msg = (
                f"invalid code point(s) {_show(run)} {where} skipped (lone surrogate, private "
                "use or unassigned)"
            )
        utt.warn(_SKIP[code], msg, i, j)
        i = j


# --- the entry point ---------------------------------------------------------------------------

#: A Latin-only sentence of at least this many words that fastText confidently gives another
#: language gets a ``non-english`` warning (it is still read with English rules).
_FOREIGN_MIN_WORDS = 4
_FOREIGN_MIN_PROB = 0.9


def _probe_text(text: str, s: int, e: int, atoms: list[Atom]) -> str:
    """The sentence with atoms blanked, override brackets kept (they are words of the text)."""
    parts: list[str] = []
    pos = s
    for a in atoms:
        parts.append(text[pos : a.start])
        if a.kind == "override" and a.span is not None:
            parts.append(" " + a.span.words[0].spoken + " ")
        else:
            parts.append(" ")
        pos = a.end
    parts.append(text[pos:e])
    return "".join(parts)


def segment(text: str) -> Utterance:
    """Cut ``text`` into sentences and language spans (see the module docstring).

    Never raises on a ``str`` (odd code points are reported as warnings); anything else is a
    programming error and raises :class:`TypeError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"segment() needs a str, not {type(text).__name__}")
    utt = Utterance(text)
    if not text:
        return utt
    f = fold_width(text)
    scan = scan_atoms(text)
    for code, msg, s, e in scan.issues:
        utt.warn(code, msg, s, e)
    atoms = scan.atoms
    cls = _classify(text, atoms)
    protected = _find_urls(text)
    a: Atom | None
    for a in atoms:
        protected[a.start] = a.end
    bounds = _sentence_bounds(text, f, cls, protected)

    # atoms per sentence (both lists are sorted and atoms never straddle a boundary)
    per_sentence: list[list[Atom]] = []
    k = 0
    for s, e in bounds:
        mine: list[Atom] = []
        while k < len(atoms) and atoms[k].start < e:
            if atoms[k].start >= s:
                mine.append(atoms[k])
            k += 1
        per_sentence.append(mine)

    matrices: list[str | None] = []
    weak: list[bool] = []
    for (s, e), mine in zip(bounds, per_sentence, strict=True):
        probe = _probe_text(text, s, e, mine)
        lang, _conf = matrix_decision(probe)
        if lang is None:
            langs = {a.span.lang for a in mine if a.kind == "override" and a.span is not None}
            lang = langs.pop() if len(langs) == 1 else None
        matrices.append(lang)
        codes_only = False
        if lang == EN:
            score = script_score(probe)
            # only codes/acronyms/names (a table cell ``A100``, a heading ``RTX 4090``): no
            # English grammar, so the neighbouring sentences decide when they can
            codes_only = not mine and score.plain_words == 0
            inner = text[s:e].rstrip().rstrip("。！？")
            if codes_only and any(c in _FULLWIDTH_CLAUSE_MARKS for c in inner):
                # RAM 16G，ROM 512G。: codes and names whose clauses are joined by a Chinese
                # comma (not only ended by a 。) are a Chinese sentence
                matrices[-1], codes_only = ZH, False
            _check_foreign(utt, probe, s, e)
        weak.append(codes_only)
    resolved = _fill_matrices(matrices, weak)

    for (s, e), mine, matrix in zip(bounds, per_sentence, resolved, strict=True):
        sent = Sentence(text[s:e], s, e, matrix)
        pos = s
        prev_lang: str | None = None
        speakable = bool(mine)
        for a in [*mine, None]:
            seg_end = a.start if a is not None else e
            if pos < seg_end:
                spans, spoken = _spans_of_segment(text, f, cls, pos, seg_end, matrix, prev_lang)
                sent.spans.extend(spans)
                speakable = speakable or spoken
                if spans:
                    prev_lang = spans[-1].lang
            if a is not None:
                if a.span is not None:
                    sent.spans.append(a.span)
                    if a.span.lang != CTRL:
                        prev_lang = a.span.lang
                pos = a.end
        if not sent.spans:
            continue  # only skipped characters: their warnings say so
        if not speakable:
            utt.warn(
                "no-speech",
                f"sentence {_show(sent.text)} at {s} has only punctuation: nothing to speak",
                s,
                e,
            )
        utt.sentences.append(sent)
    _warn_skipped(utt, cls)
    utt.warnings.sort(key=lambda w: (w.start, w.end))
    return utt


def _fill_matrices(matrices: list[str | None], weak: list[bool] | None = None) -> list[str]:
    """Sentences without letters take the previous sentence's matrix, else the next one's.

    A ``weak`` sentence (Latin codes and names only, no Han) does the same from the sentences
    that decide on their own, and keeps its own guess when none does.
    """
    weak = weak or [False] * len(matrices)
    strong = [None if w else m for m, w in zip(matrices, weak, strict=True)]
    first = _fill_from_neighbours(strong)
    second = _fill_from_neighbours(matrices)
    return [a or b or ZH for a, b in zip(first, second, strict=True)]


def _fill_from_neighbours(matrices: list[str | None]) -> list[str | None]:
    out: list[str | None] = list(matrices)
    last: str | None = None
    for i, m in enumerate(out):
        if m is None:
            out[i] = last
        else:
            last = m
    nxt: str | None = None
    for i in range(len(out) - 1, -1, -1):
        if matrices[i] is not None:
            nxt = matrices[i]
        if out[i] is None:
            out[i] = nxt
    return out


def _check_foreign(utt: Utterance, probe: str, s: int, e: int) -> None:
    score = script_score(probe)
    if score.han or score.latin_words < _FOREIGN_MIN_WORDS:
        return
    preds = predict(probe, k=1)
    if preds and preds[0][0] != EN and preds[0][1] >= _FOREIGN_MIN_PROB:
        lab, p = preds[0]
        utt.warn(
            "non-english",
            f"sentence at {s} looks like language {lab!r} (p={p:.2f}); it is read with English "
            "rules",
            s,
            e,
        )
