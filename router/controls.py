"""Engine control tokens and inline pronunciation overrides typed by the user.

Both are *atoms*: pieces of the input that the router takes out before segmentation and hands
to the pipeline already analysed (a :class:`~mixvox.ir.Span` that carries its
:class:`~mixvox.ir.Word`), so no frontend ever reads them as words.

Control tokens
--------------
The prosody tokens the text-reading engine's tokenizer knows (its ``tokenizer.json`` added tokens)
and that make sense inside a user's text::

    [uv_break] [v_break] [lbreak] [llbreak] [laugh]
    [break_0] .. [break_7]   [laugh_0] .. [laugh_2]   [oral_0] .. [oral_9]   [speed_0] .. [speed_9]

They are matched exactly (lower case, no spaces). Each becomes a ``ctrl`` span holding one
``Word(kind="control", spoken=token, phonemes=[])``. A look-alike out of range (``[break_9]``)
or any other bracketed word (``[foo]``) stays plain text (``[break_9]`` also gets an
``unknown-control`` warning, since it was almost certainly meant as a token). The structural
tokens (``[Stts]``, ``[spk_emb]``, ``[PAD]``, ``[Sbreak]`` ...) are never passed on: they would
let typed text rewrite the engine's prompt, so they are skipped with a ``reserved-token``
warning.

Inline pronunciation overrides
------------------------------
One syntax, modelled on a Markdown link: ``[text](pronunciation)``.

* Pinyin: ``[银行](yin2 hang2)``. The bracket holds Chinese characters only; the parentheses
  hold one tone-numbered syllable (tones 1-5, 5 = neutral) per character, separated by spaces.
  ``ü`` may be written ``v``, ``ü`` or ``u:`` (``[绿](lv4)``). Syllables are checked against
  pypinyin's inventory.
* ARPAbet: ``[nginx](/EH1 N JH AH0 N EH1 K S/)``. The parentheses hold slash-delimited
  CMUdict phones separated by spaces; every vowel carries its stress digit (0, 1 or 2),
  consonants carry none.

A valid override becomes a ``zh``/``en`` span with one ``Word(override=True)`` whose ``text``
is the whole ``[..](..)`` slice, ``spoken`` the bracket text and ``phonemes`` the given
pronunciation. An invalid one (wrong syllable count, unknown syllable or phone, missing tone or
stress) gets a ``bad-override`` warning saying why and is then read as plain text. A bracket
followed by parentheses that look like neither (``[docs](https://...)``) is plain text with no
warning.

Bracket text is at most :data:`MAX_BRACKET` characters and the pronunciation at most
:data:`MAX_PAREN`, so scanning stays linear in the input however many ``[`` it holds.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass, field

from mixvox.ir import CTRL, EN, ZH, Span, Word
from mixvox.phonetics import parse_arpabet_phone, parse_pinyin_syllable
from mixvox.textutil import is_han

#: Longest bracket text / pronunciation we look at (bounded work per ``[``).
MAX_BRACKET = 64
MAX_PAREN = 400

_FREE_TOKENS = ("uv_break", "v_break", "lbreak", "llbreak", "laugh")
#: Families ``name_N`` with the digits the engine tokenizer has for each.
_FAMILIES: dict[str, range] = {
    "break": range(0, 8),
    "laugh": range(0, 3),
    "oral": range(0, 10),
    "speed": range(0, 10),
}

#: Control tokens a user may type, e.g. ``[uv_break]``; all are added tokens of the engine's
#: tokenizer (the test suite checks this against the shipped ``tokenizer.json``).
CONTROL_TOKENS: frozenset[str] = frozenset(
    [f"[{t}]" for t in _FREE_TOKENS]
    + [f"[{name}_{n}]" for name, ns in _FAMILIES.items() for n in ns]
)

#: Tokenizer tokens that structure the engine's prompt; typed text must never produce them.
RESERVED_TOKENS: frozenset[str] = frozenset(
    "[" + t + "]"
    for t in (
        "PAD UNK CLS SEP MASK Sasr Pasr Easr Stts Ptts Etts Sbreak Pbreak Ebreak "
        "undefine spk_emb empty_spk music pure"
    ).split()
)

# --- pronunciations (validated by the shared :mod:`mixvox.phonetics`) -------------------------


def normalize_pinyin(syllable: str) -> tuple[str | None, str]:
    """``"Lu:4"`` -> ``("lv4", "")``; on failure ``(None, reason)``.

    The override scanner's view of :func:`mixvox.phonetics.parse_pinyin_syllable` (the same
    check as lexicon files), reporting instead of raising.
    """
    try:
        return parse_pinyin_syllable(syllable), ""
    except ValueError as exc:
        return None, str(exc)


# --- atoms -------------------------------------------------------------------------------------


@dataclass(slots=True)
class Atom:
    """A piece of the input taken out before segmentation.

    ``span`` is set for control tokens and valid overrides; it is ``None`` for a reserved
    token, which is skipped (and reported through ``issues``).
    """

    kind: str  # "control" | "override" | "reserved"
    start: int
    end: int
    span: Span | None = None


@dataclass(slots=True)
class AtomScan:
    atoms: list[Atom] = field(default_factory=list)
    #: ``(code, message, start, end)`` warnings found while scanning.
    issues: list[tuple[str, str, int, int]] = field(default_factory=list)


def _control_span(token: str, start: int, end: int) -> Span:
    word = Word(token, token, [], start, end, lang=CTRL, kind="control")
    return Span(CTRL, token, start, end, [word])


def _family_lookalike(token: str, at: int) -> str | None:
    """For ``[break_9]`` the message saying which numbers exist; else ``None``."""
    name, sep, num = token[1:-1].rpartition("_")
    if sep and num.isdigit() and num.isascii() and name in _FAMILIES:
        ns = _FAMILIES[name]
        return (
            f"{token} at {at} is not a control token ({name}_{ns.start}..{name}_{ns.stop - 1} "
            "exist); read as text"
        )
    return None


def _looks_like_pinyin(paren: str) -> bool:
    """Parentheses holding only letters, digits, ``:``, ``ü`` and spaces, with a digit."""
    has_digit = False
    for ch in paren:
        if ch.isdigit() and ch.isascii():
            has_digit = True
        elif not (ch.isascii() and ch.isalpha()) and ch not in " :üÜ":
            return False
    return has_digit


def parse_override(
    text: str, start: int, close: int, pstart: int, pend: int
) -> tuple[Span | None, str | None]:
    """Try ``text[start:pend+1]`` as ``[bracket](paren)``.

    ``close`` is the index of ``]``, ``pstart`` of ``(`` and ``pend`` of ``)``. Returns
    ``(span, None)`` when valid, ``(None, reason)`` when it is an override attempt that is
    wrong, ``(None, None)`` when it is not an override at all (a Markdown link).
    """
    bracket = text[start + 1 : close]
    paren = text[pstart + 1 : pend]
    end = pend + 1
    whole = text[start:end]
    odd = _odd_char(text, start + 1, pend)
    if odd is not None and (paren.startswith("/") or any(is_han(c) for c in bracket)):
        return None, odd
    if paren.startswith("/"):
        body = paren[1:-1] if len(paren) >= 2 and paren.endswith("/") else None
        if body is None:
            return None, "ARPAbet override must end with '/': [word](/P1 P2/)"
        if not bracket.strip():
            return None, "override has no text in the brackets"
        phones = body.split()
        if not phones:
            return None, "ARPAbet override has no phones"
        try:
            phones = [parse_arpabet_phone(ph) for ph in phones]
        except ValueError as exc:
            return None, str(exc)
        word = Word(whole, bracket, phones, start, end, lang=EN, override=True)
        return Span(EN, whole, start, end, [word]), None
    has_han = any(is_han(c) for c in bracket)
    if not has_han and not _looks_like_pinyin(paren):
        return None, None
    if not has_han:
        return None, "pinyin override needs Chinese characters in the brackets"
    if not all(is_han(c) for c in bracket):
        return None, "pinyin override: the brackets must hold Chinese characters only"
    syllables = paren.split()
    if len(syllables) != len(bracket):
        return None, (
            f"pinyin override has {len(syllables)} syllable(s) for {len(bracket)} character(s)"
        )
    phonemes: list[str] = []
    for syl in syllables:
        norm, why = normalize_pinyin(syl)
        if norm is None:
            return None, why
        phonemes.append(norm)
    word = Word(whole, bracket, phonemes, start, end, lang=ZH, override=True)
    return Span(ZH, whole, start, end, [word]), None


def _odd_char(text: str, start: int, end: int) -> str | None:
    """Why ``text[start:end]`` cannot be an override: a control, format (bidi), private-use,
    unassigned or surrogate character, or a combining mark with no letter to sit on."""
    for i in range(start, end):
        ch = text[i]
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Co", "Cn", "Cs"):
            return (
                f"it holds the invisible character U+{ord(ch):04X} ({_char_name(ch)}) at {i}; "
                "remove it"
            )
        if cat.startswith("M") and (i == start or not text[i - 1].isalnum()):
            return f"it holds a combining mark U+{ord(ch):04X} with no letter under it at {i}"
    return None


def _char_name(ch: str) -> str:
    return unicodedata.name(ch, "control character")


def _unclosed(text: str, i: int, close: int, out: AtomScan) -> None:
    """``[word](/EH1 N`` with no ``)``: an override attempt that will be read as text."""
    n = len(text)
    if close + 2 > n or text[close + 1 : close + 2] != "(":
        return
    stop = min(n, close + 3 + MAX_PAREN)
    nl = text.find("\n", close + 2, stop)
    rest = text[close + 2 : nl if nl != -1 else stop]
    if ")" in rest or "(" in rest:
        return
    if rest.startswith("/") or (
        any(is_han(c) for c in text[i + 1 : close]) and _looks_like_pinyin(rest)
    ):
        out.issues.append(
            (
                "bad-override",
                f"override {_clip(text[i : close + 2 + len(rest)])} at {i} has no closing ')'; "
                "read as text",
                i,
                close + 2 + len(rest),
            )
        )


def scan_atoms(text: str) -> AtomScan:
    """Find control tokens, reserved tokens and overrides, left to right, non-overlapping.

    Work per ``[`` is bounded by :data:`MAX_BRACKET` + :data:`MAX_PAREN`, so the scan is
    linear in ``len(text)``. Tokens are matched in the original text (exact ASCII), not in
    width-folded text: ``［laugh］`` is prose, not a token.
    """
    out = AtomScan()
    n = len(text)
    i = text.find("[")
    while i != -1:
        close = text.find("]", i + 1, min(n, i + 2 + MAX_BRACKET))
        nxt = i + 1
        if close != -1:
            inner_open = text.find("[", i + 1, close)
            if inner_open == -1 and text.find("\n", i + 1, close) == -1:
                token = text[i : close + 1]
                atom = _match_at(text, i, close, token, out)
                if atom is not None:
                    out.atoms.append(atom)
                    nxt = atom.end
                else:
                    _unclosed(text, i, close, out)
        elif (j := text.find("(/", i + 1, min(n, i + 2 + MAX_BRACKET))) != -1:
            if text.find("\n", i + 1, j) == -1 and text.find("[", i + 1, j) == -1:
                _half_override(text, i, j, "'[' has no closing ']'", out)
        i = text.find("[", nxt)
    _orphan_closers(text, out)
    return out


def _half_override(text: str, start: int, paren: int, why: str, out: AtomScan) -> None:
    """An override with a bracket missing (``[nginx(/EH1 N/)``, ``nginx](/EH1 N/)``)."""
    end = text.find(")", paren, min(len(text), paren + MAX_PAREN))
    end = end + 1 if end != -1 and text.find("\n", paren, end) == -1 else paren + 2
    out.issues.append(
        (
            "bad-override",
            f"unbalanced override {_clip(text[start:end])} at {start}: {why}; an override is "
            "written [word](/P1 P2/) or [汉字](pin1 yin1); read as text",
            start,
            end,
        )
    )


def _orphan_closers(text: str, out: AtomScan) -> None:
    """``nginx](/EH1 N/)``: a ``](/`` with no ``[`` before it on the line (linear scan)."""
    n = len(text)
    k = text.find("](/")
    if k == -1:
        return
    covered = sorted(
        [(a.start, a.end) for a in out.atoms] + [(s, e) for _c, _m, s, e in out.issues]
    )
    starts = [s for s, _e in covered]
    while k != -1:
        lo = max(0, k - MAX_BRACKET - 1)
        line_start = max(text.rfind("\n", lo, k) + 1, lo)
        at = bisect.bisect_right(starts, k) - 1
        inside = at >= 0 and covered[at][0] <= k < covered[at][1]
        if not inside and text.find("[", line_start, k) == -1:
            w = k
            while w > line_start and not text[w - 1].isspace():
                w -= 1
            _half_override(text, w, k + 1, "']' has no opening '['", out)
        k = text.find("](/", k + 3, n)


def _clip(s: str, limit: int = 60) -> str:
    return repr(s if len(s) <= limit else s[:limit] + "…")


def _match_at(text: str, i: int, close: int, token: str, out: AtomScan) -> Atom | None:
    n = len(text)
    if close + 1 < n and text[close + 1] == "(" and close > i + 1:
        pend = text.find(")", close + 2, min(n, close + 3 + MAX_PAREN))
        if pend != -1:
            paren = text[close + 2 : pend]
            if "(" not in paren and "\n" not in paren:
                span, why = parse_override(text, i, close, close + 1, pend)
                if span is not None:
                    return Atom("override", i, pend + 1, span)
                if why is not None:
                    out.issues.append(
                        (
                            "bad-override",
                            f"override {_clip(text[i : pend + 1])} at {i} ignored: {why}",
                            i,
                            pend + 1,
                        )
                    )
    if token in CONTROL_TOKENS:
        return Atom("control", i, close + 1, _control_span(token, i, close + 1))
    if token in RESERVED_TOKENS:
        out.issues.append(
            (
                "reserved-token",
                f"{token} at {i} is an engine-internal token; skipped (typed text may not "
                "control the prompt)",
                i,
                close + 1,
            )
        )
        return Atom("reserved", i, close + 1, None)
    why = _family_lookalike(token, i)
    if why is not None:
        out.issues.append(("unknown-control", why, i, close + 1))
    return None
