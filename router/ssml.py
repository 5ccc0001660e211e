"""SSML input: the subset people use, mapped onto the IR the engines already understand.

Text that starts with ``<speak`` (after whitespace or a byte-order mark, optionally after an
``<?xml ...?>`` declaration) is SSML; anything else is plain text. The document is parsed with
the standard library's expat parser, hardened: a DTD, entity declarations and external
references are refused outright (so no entity expansion, no file or network access), and the
size and the element depth are bounded. Malformed SSML is an :class:`SsmlError` naming line,
column and offset; tags are never read aloud.

How each element maps onto the IR (so engines need nothing new):

=========================================  ===================================================
element                                    becomes
=========================================  ===================================================
``<speak>``                                the document (``xml:lang`` is a hint only: English
                                           words in a ``zh-CN`` document stay English)
``<p>`` ``<s>``                            sentence boundaries
``<break time="500ms"/>`` / ``strength``   a pause control token (``[uv_break]``, ``[lbreak]``,
                                           ``[llbreak]``) covering the tag's offsets
``<say-as interpret-as="...">``            text the frontends read as asked: ``characters``
                                           (spelled), ``digits`` (one by one), ``cardinal``,
                                           ``ordinal``, ``date``, ``time``, ``telephone``, in
                                           the language of the surrounding sentence
``<sub alias="...">``                      the alias is read, with the element's offsets
``<phoneme alphabet="pinyin|arpabet|ipa">``  an inline override ``[text](pinyin)`` or
                                           ``[text](/ARPABET/)`` (IPA is converted to ARPAbet)
``<lang xml:lang="zh-CN|en-US">``          the language of the spans inside (numbers and
                                           symbols follow it; Han text is always Chinese)
``<prosody rate="...">``                   ``[speed_N]`` control tokens around the content
=========================================  ===================================================

Other elements (``<emphasis>``, ``<voice>``, ``<audio>`` ...) are read as their text with an
``ssml-unsupported`` warning; ``<mark>`` is ignored. Unknown or unsupported attributes get an
``ssml-attribute`` warning. Every offset in the returned :class:`~mixvox.ir.Utterance` points
into the user's SSML: a word from text content covers exactly its characters there, a word made
from an element (``<sub>``, ``<say-as>``, ``<break/>``) covers the whole element.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from xml.parsers import expat

from mixvox.controls import MAX_BRACKET, MAX_PAREN
from mixvox.interfaces import MixvoxError
from mixvox.ir import CTRL, EN, ZH, Issue, Span, Utterance
from mixvox.langid import matrix_decision
from mixvox.phonetics import parse_arpabet, parse_pinyin
from mixvox.textutil import is_han

if TYPE_CHECKING:
    from mixvox.pipeline import Router

__all__ = [
    "MAX_DEPTH",
    "MAX_SSML_CHARS",
    "SsmlDocument",
    "SsmlError",
    "ipa_to_arpabet",
    "is_ssml",
    "parse_ssml",
    "route_ssml",
]

#: Longest SSML document accepted (characters); longer ones must be split by the caller.
MAX_SSML_CHARS = 200_000
#: Deepest element nesting accepted.
MAX_DEPTH = 32

_SPEAK_START = re.compile(r"<speak[\s>/]")


class SsmlError(MixvoxError):
    """Invalid SSML, with the place it went wrong (1-based line and column, 0-based offset)."""

    code = "invalid-ssml"

    def __init__(self, reason: str, line: int, column: int, offset: int) -> None:
        super().__init__(
            f"invalid SSML at line {line}, column {column} (offset {offset}): {reason}"
        )
        self.reason = reason
        self.line = line
        self.column = column
        self.offset = offset


def is_ssml(text: str) -> bool:
    """Whether ``text`` is to be read as SSML: it starts with ``<speak`` (or ``<?xml``)."""
    if not isinstance(text, str):
        return False
    head = text.lstrip(" \t\r\n\ufeff")
    if head.startswith("<?xml") or (head.startswith("<!DOCTYPE") and "<speak" in head[:4096]):
        return True  # then refused or accepted by the parser, never read aloud
    return _SPEAK_START.match(head[:7]) is not None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _error(text: str, offset: int, reason: str) -> SsmlError:
    offset = max(0, min(offset, len(text)))
    line, col = _line_col(text, offset)
    return SsmlError(reason, line, col, offset)


# ---------------------------------------------------------------------------------------------
# The tree (built from expat events, with character offsets into the input)
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Text:
    """Character data: ``(decoded, raw start, raw end)`` pieces in input character offsets."""

    pieces: list[list[object]] = field(default_factory=list)

    @property
    def value(self) -> str:
        return "".join(str(p[0]) for p in self.pieces)


@dataclass(slots=True)
class _Node:
    tag: str
    attrs: dict[str, str]
    start: int  # offset of "<"
    tag_end: int  # offset after the start tag's ">"
    end: int = -1  # offset after the end tag (== tag_end for <x/>)
    close_start: int = -1  # offset of the end tag's "<" (== tag_end for <x/>)
    children: list[_Node | _Text] = field(default_factory=list)

    def text_only(self) -> str | None:
        """The text content when the element holds text only, else ``None``."""
        if any(isinstance(c, _Node) for c in self.children):
            return None
        return "".join(c.value for c in self.children if isinstance(c, _Text))


class _Reject(Exception):
    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def _tag_end(text: str, i: int) -> int:
    """Offset after the ``>`` closing the tag that starts at ``i`` (quotes respected)."""
    n = len(text)
    quote = ""
    j = i + 1
    while j < n:
        ch = text[j]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == ">":
            return j + 1
        j += 1
    return n


class _TreeBuilder:
    def __init__(self, text: str, data: bytes) -> None:
        self.text = text
        # byte offset -> character offset
        b2c = [0] * (len(data) + 1)
        pos = 0
        for ci, ch in enumerate(text):
            o = ord(ch)
            w = 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
            for k in range(w):
                b2c[pos + k] = ci
            pos += w
        b2c[pos] = len(text)
        self.b2c = b2c
        self.stack: list[_Node] = []
        self.root: _Node | None = None
        self.piece_region: list[int] = []
        self.open_piece: list[object] | None = None
        self.parser = expat.ParserCreate()
        self.parser.buffer_text = False
        p = self.parser
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        p.StartElementHandler = self.start
        p.EndElementHandler = self.end
        p.CharacterDataHandler = self.chars
        p.CommentHandler = lambda _c: self.mark()
        p.ProcessingInstructionHandler = lambda _t, _d: self.mark()
        p.StartCdataSectionHandler = self.mark
        p.EndCdataSectionHandler = self.mark
        p.StartDoctypeDeclHandler = self.doctype
        p.EntityDeclHandler = self.entity
        p.UnparsedEntityDeclHandler = self.entity
        p.NotationDeclHandler = self.entity
        p.ExternalEntityRefHandler = self.external

    def here(self) -> int:
        return self.b2c[min(self.parser.CurrentByteIndex, len(self.b2c) - 1)]

    def mark(self) -> None:
        """Close the open text piece at the current event (its raw end)."""
        if self.open_piece is not None:
            self.open_piece[2] = self.here()
            self.open_piece = None

    def doctype(self, *_a: object) -> None:
        raise _Reject("a DTD (<!DOCTYPE>) is not allowed in SSML input", self.here())

    def entity(self, *_a: object) -> None:
        raise _Reject("entity and notation declarations are not allowed", self.here())

    def external(self, *_a: object) -> int:
        raise _Reject("external entity references are not allowed", self.here())

    def start(self, name: str, attrs: dict[str, str]) -> None:
        self.mark()
        at = self.here()
        if len(self.stack) >= MAX_DEPTH:
            raise _Reject(f"elements nested deeper than {MAX_DEPTH} levels", at)
        node = _Node(name, dict(attrs), at, _tag_end(self.text, at))
        if self.stack:
            self.stack[-1].children.append(node)
        elif self.root is None:
            self.root = node
        self.stack.append(node)

    def end(self, _name: str) -> None:
        self.mark()
        node = self.stack.pop()
        if self.text[node.tag_end - 2 : node.tag_end] == "/>":
            node.close_start = node.end = node.tag_end
        else:
            node.close_start = self.here()
            node.end = _tag_end(self.text, node.close_start)

    def chars(self, data: str) -> None:
        self.mark()
        if not self.stack:
            return
        parent = self.stack[-1]
        if parent.children and isinstance(parent.children[-1], _Text):
            txt = parent.children[-1]
        else:
            txt = _Text()
            parent.children.append(txt)
        piece: list[object] = [data, self.here(), self.here()]
        txt.pieces.append(piece)
        self.open_piece = piece


def _parse_tree(text: str) -> _Node:
    if len(text) > MAX_SSML_CHARS:
        raise _error(
            text,
            MAX_SSML_CHARS,
            f"SSML document of {len(text)} characters is longer than {MAX_SSML_CHARS}; "
            "split it into several documents",
        )
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _error(text, exc.start, "lone surrogate code point (not valid XML)") from None
    tb = _TreeBuilder(text, data)
    try:
        tb.parser.Parse(data, True)
    except _Reject as exc:
        raise _error(text, exc.offset, exc.reason) from None
    except expat.ExpatError as exc:
        offset = tb.b2c[min(max(0, tb.parser.ErrorByteIndex), len(tb.b2c) - 1)]
        reason = expat.ErrorString(exc.code) if exc.code else str(exc)
        raise _error(text, offset, reason) from None
    root = tb.root
    if root is None:  # expat reports "no element found" before we get here
        raise _error(text, 0, "no <speak> element")
    if root.tag != "speak":
        raise _error(text, root.start, f"the root element must be <speak>, not <{root.tag}>")
    return root


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------

_TIME = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*(ms|s)\s*", re.I)
#: Pause tokens by the silence they stand for (ms, as the espeak engine plays them).
_PAUSES: tuple[tuple[int, str], ...] = ((100, "[uv_break]"), (300, "[lbreak]"), (500, "[llbreak]"))
_STRENGTH = {
    "none": None,
    "x-weak": "[uv_break]",
    "weak": "[uv_break]",
    "medium": "[uv_break]",
    "strong": "[lbreak]",
    "x-strong": "[llbreak]",
}
#: Longest pause a single token gives; longer breaks are capped (with a warning).
_MAX_PAUSE_MS = 500
_RATES = {"x-slow": 0.5, "slow": 0.75, "medium": 1.0, "default": 1.0, "fast": 1.3, "x-fast": 1.7}
_RATE = re.compile(r"\s*([+-]?)([0-9]+(?:\.[0-9]+)?)\s*(%?)\s*")


def _pause_token(ms: float) -> str | None:
    if ms <= 0:
        return None
    return min(_PAUSES, key=lambda p: abs(p[0] - ms))[1]


def _speed_token(factor: float) -> str:
    return f"[speed_{min(9, max(0, int(round(5 * factor))))}]"


def _parse_rate(value: str) -> float | None:
    v = value.strip().lower()
    if v in _RATES:
        return _RATES[v]
    m = _RATE.fullmatch(v)
    if not m:
        return None
    sign, num, pct = m.group(1), float(m.group(2)), m.group(3)
    if pct:
        factor = 1 + (num / 100 if sign == "+" else -num / 100) if sign else num / 100
    else:
        factor = 1 + num if sign == "+" else 1 - num if sign == "-" else num
    return factor if factor > 0 else None


def _tone_numbers(ph: str) -> str:
    """SSML pinyin as other engines accept it -> tone numbers: ``yín háng`` and ``yin 2 hang 2``
    -> ``yin2 hang2`` (anything else is left for the validator to explain)."""
    ph = re.sub(r"([A-Za-züÜv:]+)\s+([1-5])(?![0-9])", r"\1\2", ph)
    if any(unicodedata.combining(c) for c in unicodedata.normalize("NFD", ph)):
        try:
            from pypinyin.contrib.tone_convert import to_tone3

            ph = " ".join(
                to_tone3(p, v_to_u=False, neutral_tone_with_five=True) for p in ph.split()
            )
        except Exception:  # the validator then names the problem
            return ph
    return ph


def _lang_of(tag: str) -> str | None:
    t = tag.strip().lower().replace("_", "-")
    if t in ("zh", "cmn") or t.startswith(("zh-", "cmn-")):
        return ZH
    if t == "en" or t.startswith("en-"):
        return EN
    return None


# --- IPA -> ARPAbet ---------------------------------------------------------------------------

_IPA_VOWELS = {
    "eɪ": "EY", "aɪ": "AY", "aʊ": "AW", "ɔɪ": "OY", "oʊ": "OW", "əʊ": "OW", "ɪə": "IH",
    "i": "IY", "ɪ": "IH", "e": "EY", "ɛ": "EH", "æ": "AE", "a": "AA", "ɑ": "AA", "ɒ": "AA",
    "ɔ": "AO", "o": "OW", "ʊ": "UH", "u": "UW", "ʌ": "AH", "ə": "AH", "ɐ": "AH", "ɚ": "ER",
    "ɝ": "ER", "ɜ": "ER", "y": "IY", "ɨ": "IH",
}  # fmt: skip
_IPA_CONSONANTS = {
    "tʃ": "CH", "t͡ʃ": "CH", "dʒ": "JH", "d͡ʒ": "JH", "p": "P", "b": "B", "t": "T", "d": "D",
    "k": "K", "g": "G", "ɡ": "G", "f": "F", "v": "V", "θ": "TH", "ð": "DH", "s": "S", "z": "Z",
    "ʃ": "SH", "ʒ": "ZH", "h": "HH", "m": "M", "n": "N", "ŋ": "NG", "l": "L", "ɫ": "L",
    "r": "R", "ɹ": "R", "ɾ": "T", "w": "W", "j": "Y", "ʍ": "W", "x": "HH",
}  # fmt: skip
#: Marks that carry no phone of their own: length, syllable breaks, tie bars, aspiration.
_IPA_SKIP = set("ːˑ.‿͡ʰ̩̯ ")
_IPA_KEYS = sorted([*_IPA_VOWELS, *_IPA_CONSONANTS], key=len, reverse=True)


def ipa_to_arpabet(ipa: str) -> tuple[list[str] | None, str]:
    """General-American IPA -> ARPAbet with stress digits; ``(None, reason)`` when impossible.

    ``ˈ``/``ˌ`` give the next vowel stress 1/2, other vowels get 0 (``ɝ`` without a mark
    counts as stressed); with no stress mark at all the first vowel gets 1.
    """
    s = unicodedata.normalize("NFC", ipa.strip().strip("/[]"))
    out: list[list[str]] = []
    pending = ""
    marked = False
    i = 0
    while i < len(s):
        ch = s[i]
        if ch in "ˈ'":
            pending, marked = "1", True
            i += 1
            continue
        if ch in "ˌ,":
            pending, marked = "2", True
            i += 1
            continue
        if ch in _IPA_SKIP or unicodedata.combining(ch):
            i += 1
            continue
        for key in _IPA_KEYS:
            if s.startswith(key, i):
                if key in _IPA_VOWELS:
                    stress = pending or ("1" if key == "ɝ" else "0")
                    out.append([_IPA_VOWELS[key], stress])
                    pending = ""
                else:
                    out.append([_IPA_CONSONANTS[key], ""])
                i += len(key)
                break
        else:
            return None, f"IPA symbol {ch!r} (U+{ord(ch):04X}) has no ARPAbet equivalent"
    vowels = [p for p in out if p[1]]
    if not vowels:
        return None, "IPA transcription has no vowel"
    if not marked:
        vowels[0][1] = "1"
    return [base + stress for base, stress in out], ""


# ---------------------------------------------------------------------------------------------
# say-as
# ---------------------------------------------------------------------------------------------

_ZH_DIGIT = "零一二三四五六七八九"
_ZH_PHONE_DIGIT = "零幺二三四五六七八九"
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
_CLOCK = re.compile(
    r"([0-9]{1,2})[:：.]([0-9]{2})(?:[:：.]([0-9]{2}))?\s*([ap])?\.?\s*(?:m\.?)?", re.I
)


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _spell(content: str) -> str:
    parts = []
    for ch in content:
        if ch.isspace():
            continue
        parts.append(ch.upper() if ch.isascii() and ch.isalpha() else ch)
    return " ".join(parts)


def _date(content: str, fmt: str, lang: str) -> str | None:
    nums = re.findall(r"[0-9]+", content)
    if not nums or len(nums) > 3:
        return None
    fmt = (fmt or "").lower()
    if not fmt:
        if len(nums) == 1 and len(nums[0]) == 8:  # 20250303
            nums = [nums[0][:4], nums[0][4:6], nums[0][6:]]
        if len(nums) == 3:
            fmt = "ymd" if len(nums[0]) == 4 else ("mdy" if lang == EN else "dmy")
        elif len(nums) == 2:
            fmt = "ym" if len(nums[0]) == 4 else "my" if len(nums[1]) == 4 else "md"
        else:
            fmt = "y"
    if len(fmt) != len(nums) or set(fmt) - set("ymd") or len(set(fmt)) != len(fmt):
        return None
    parts = dict(zip(fmt, (int(x) for x in nums), strict=True))
    y, m, d = parts.get("y"), parts.get("m"), parts.get("d")
    if (m is not None and not 1 <= m <= 12) or (d is not None and not 1 <= d <= 31):
        return None
    if lang == ZH:
        out = ""
        if y is not None:
            out += "".join(_ZH_DIGIT[int(c)] for c in str(y)) + "年"
        if m is not None:
            out += f"{m}月"
        if d is not None:
            out += f"{d}日"
        return out
    words: list[str] = []
    if m is not None:
        words.append(_MONTHS[m - 1])
    if d is not None:
        words.append(f"{d}{_ordinal_suffix(d)}" + ("," if y is not None else ""))
    if y is not None:
        words.append(str(y))
    return " ".join(words)


def _time(content: str, lang: str) -> str | None:
    m = _CLOCK.fullmatch(content.strip())
    if not m:
        return None
    h, mi, sec, ap = int(m.group(1)), m.group(2), m.group(3), (m.group(4) or "").lower()
    if h > 24 or int(mi) > 59 or (sec and int(sec) > 59):
        return None
    clock = f"{h}:{mi}" + (f":{sec}" if sec else "")
    if lang == ZH:
        prefix = {"a": "上午", "p": "下午"}.get(ap, "")
        return prefix + clock
    return clock + ({"a": " AM", "p": " PM"}.get(ap, ""))


def _telephone(content: str, lang: str) -> str | None:
    s = content.strip()
    if not re.fullmatch(r"\+?[0-9][0-9 \-().]*", s):
        return None
    plus = s.startswith("+")
    groups = [g for g in re.split(r"[^0-9]+", s) if g]
    if lang == ZH:
        spoken = ["".join(_ZH_PHONE_DIGIT[int(c)] for c in g) for g in groups]
        return ("加" if plus else "") + "，".join(spoken)
    spoken = [" ".join(g) for g in groups]
    return ("plus " if plus else "") + ", ".join(spoken)


def _say_as(kind: str, content: str, fmt: str, lang: str) -> str | None:
    """What to write for ``<say-as>`` content, or ``None`` when it does not fit the kind."""
    c = content.strip()
    if kind in ("characters", "spell-out", "letters", "verbatim"):
        return _spell(c) or None
    if kind in ("digits", "number_digits"):
        if not any(ch.isdigit() for ch in c):
            return None
        return " ".join(ch for ch in c if not ch.isspace())
    if kind in ("cardinal", "number"):
        num = re.sub(r"(?<=[0-9])[,_ ](?=[0-9]{3})", "", c)
        if not _NUMBER.fullmatch(num):
            return None
        if lang == EN:  # grouping commas: 1,234 is a number, 1234 could be read as a year
            whole, dot, frac = num.partition(".")
            sign = whole[0] if whole[0] in "+-" else ""
            num = f"{sign}{int(whole.lstrip('+-')):,}{dot}{frac}"
        return num
    if kind == "ordinal":
        num = re.sub(r"(?<=[0-9])[,_ ](?=[0-9]{3})", "", c)
        if not re.fullmatch(r"[0-9]+", num):
            return None
        return f"第{num}" if lang == ZH else f"{num}{_ordinal_suffix(int(num))}"
    if kind == "date":
        return _date(c, fmt, lang)
    if kind == "time":
        return _time(c, lang)
    if kind in ("telephone", "phone"):
        return _telephone(c, lang)
    return None


SAY_AS_KINDS = frozenset(
    "characters spell-out letters verbatim digits number_digits cardinal number ordinal date "
    "time telephone phone".split()
)

# ---------------------------------------------------------------------------------------------
# Flattening the tree into plain text with an offset map
# ---------------------------------------------------------------------------------------------

_TOKEN_OR_PRON = re.compile(r"\[[A-Za-z_0-9]{1,32}\]|\]\([^()\n]{0,400}\)")

_ATTRS: dict[str, frozenset[str]] = {
    "speak": frozenset({"version", "xmlns", "xml:lang", "xmlns:xsi", "xsi:schemaLocation"}),
    "p": frozenset({"xml:lang"}),
    "s": frozenset({"xml:lang"}),
    "break": frozenset({"time", "strength"}),
    "say-as": frozenset({"interpret-as", "format", "detail"}),
    "sub": frozenset({"alias"}),
    "phoneme": frozenset({"alphabet", "ph"}),
    "lang": frozenset({"xml:lang"}),
    "prosody": frozenset({"rate", "pitch", "volume", "contour", "range", "duration"}),
    "mark": frozenset({"name"}),
}
_IGNORED_PROSODY = ("pitch", "volume", "contour", "range", "duration")


@dataclass(slots=True)
class _Piece:
    text: str
    start: int
    end: int
    one_to_one: bool = False
    #: For ``<say-as>``: made once the language around it is known.
    make: Callable[[str], str] | None = None


@dataclass
class SsmlDocument:
    """A parsed SSML document: the plain text to route and how to map it back.

    ``plain`` is what segmentation and the frontends read; ``src_start[i]``/``src_end[i]``
    give the input range that plain character ``i`` stands for.
    """

    input: str
    plain: str = ""
    src_start: list[int] = field(default_factory=list)
    src_end: list[int] = field(default_factory=list)
    #: ``(plain start, plain end, lang, input start, input end)`` of ``<lang>`` elements.
    regions: list[tuple[int, int, str, int, int]] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)

    # -- mapping ------------------------------------------------------------------------------

    def to_input(self, start: int, end: int) -> tuple[int, int]:
        """The input range for the plain range ``[start, end)``."""
        n = len(self.plain)
        if end > start:
            return self.src_start[start], self.src_end[min(end, n) - 1]
        if start < n:
            return self.src_start[start], self.src_start[start]
        last = self.src_end[n - 1] if n else len(self.input)
        return last, last

    def warn(self, code: str, message: str, start: int, end: int) -> None:
        line, col = _line_col(self.input, start)
        self.issues.append(
            Issue(
                code,
                f"{message} (line {line}, column {col})",
                self.input[start:end],
                start,
                end,
            )
        )


class _Flattener:
    def __init__(self, doc: SsmlDocument) -> None:
        self.doc = doc
        self.text = doc.input
        self.pieces: list[_Piece] = []
        #: (first piece, last piece + 1, lang, node) of <lang> elements.
        self.regions: list[tuple[int, int, str, _Node]] = []
        self.rates: list[float] = [1.0]
        self.root: _Node | None = None

    def add(self, text: str, start: int, end: int, one_to_one: bool = False) -> None:
        self.pieces.append(_Piece(text, start, end, one_to_one))

    def insert(self, text: str, node: _Node, *, closing: bool = False) -> None:
        """Text standing for an element (or its end tag)."""
        if closing:
            self.add(text, node.close_start, node.end)
        else:
            self.add(
                text, node.start, node.end if node.close_start == node.tag_end else node.tag_end
            )

    def check_attrs(self, node: _Node) -> None:
        known = _ATTRS.get(node.tag)
        if known is None:
            return
        for name in node.attrs:
            if name not in known and not name.startswith("xmlns"):
                self.doc.warn(
                    "ssml-attribute",
                    f"attribute {name!r} of <{node.tag}> is not supported; ignored",
                    node.start,
                    node.tag_end,
                )

    def fail(self, node: _Node, reason: str) -> SsmlError:
        return _error(self.text, node.start, reason)

    def text_node(self, t: _Text) -> None:
        for data, s, e in t.pieces:
            d = str(data).replace("\r", " ").replace("\n", " ")
            s_, e_ = int(s), int(e)  # type: ignore[call-overload]
            self.add(d, s_, e_, one_to_one=(e_ - s_ == len(d)))

    def children(self, node: _Node) -> None:
        for c in node.children:
            if isinstance(c, _Text):
                self.text_node(c)
            else:
                self.element(c)

    def need_text(self, node: _Node) -> str:
        content = node.text_only()
        if content is None:
            raise self.fail(node, f"<{node.tag}> may hold text only, not other elements")
        return content

    def element(self, node: _Node) -> None:
        tag = node.tag
        self.check_attrs(node)
        a = node.attrs
        if tag == "speak":
            if node is not self.root:
                raise self.fail(node, "<speak> inside <speak>")
            self.children(node)
        elif tag in ("p", "s"):
            self.insert("\n", node)
            if "xml:lang" in a:
                self.lang(node)  # explicit per paragraph/sentence: as a <lang> element
            else:
                self.children(node)
            self.insert("\n", node, closing=True)
        elif tag == "break":
            self.brk(node)
        elif tag == "say-as":
            self.say_as(node)
        elif tag == "sub":
            if "alias" not in a:
                raise self.fail(node, '<sub> needs an alias="..." attribute')
            self.need_text(node)
            alias = a["alias"].replace("\n", " ").replace("\r", " ")
            if not alias.strip():
                self.doc.warn(
                    "ssml-empty", "<sub> with an empty alias: nothing is said", node.start, node.end
                )
            self.add(f" {alias} ", node.start, node.end)
        elif tag == "phoneme":
            self.phoneme(node)
        elif tag == "lang":
            self.lang(node)
        elif tag == "prosody":
            self.prosody(node)
        elif tag == "mark":
            pass  # a bookmark: nothing to say
        else:
            self.doc.warn(
                "ssml-unsupported",
                f"element <{tag}> is not supported; its text is read as it is",
                node.start,
                node.tag_end,
            )
            self.children(node)

    def brk(self, node: _Node) -> None:
        content = node.text_only()
        if content is None or content.strip():
            raise self.fail(node, '<break> must be empty: <break time="500ms"/>')
        a = node.attrs
        token: str | None
        if "time" in a:
            m = _TIME.fullmatch(a["time"])
            if not m:
                raise self.fail(
                    node, f"<break> time {a['time']!r} is not a duration like 500ms or 1.5s"
                )
            ms = float(m.group(1)) * (1 if m.group(2).lower() == "ms" else 1000)
            token = _pause_token(ms)
            if ms > _MAX_PAUSE_MS * 1.5:
                self.doc.warn(
                    "ssml-break-capped",
                    f"break of {ms:g} ms is longer than the longest pause the engines make "
                    f"(~{_MAX_PAUSE_MS} ms); shortened",
                    node.start,
                    node.end,
                )
        elif "strength" in a:
            s = a["strength"].strip().lower()
            if s not in _STRENGTH:
                raise self.fail(
                    node,
                    f"<break> strength {a['strength']!r} is not one of " + ", ".join(_STRENGTH),
                )
            token = _STRENGTH[s]
        else:
            token = "[uv_break]"
        if token:
            self.insert(f" {token} ", node)

    def say_as(self, node: _Node) -> None:
        kind = node.attrs.get("interpret-as")
        if kind is None:
            raise self.fail(node, '<say-as> needs an interpret-as="..." attribute')
        content = self.need_text(node)
        kind = kind.strip().lower()
        if kind not in SAY_AS_KINDS:
            self.doc.warn(
                "ssml-unsupported",
                f"<say-as interpret-as={kind!r}> is not supported (characters, digits, cardinal, "
                "ordinal, date, time, telephone are); read as plain text",
                node.start,
                node.end,
            )
            self.children(node)
            return
        fmt = node.attrs.get("format", "")
        doc = self.doc

        def make(lang: str) -> str:
            out = _say_as(kind, content, fmt, lang)
            if out is None:
                doc.warn(
                    "ssml-say-as",
                    f"{content.strip()!r} is not a {kind} that <say-as> can read; read as plain "
                    "text",
                    node.start,
                    node.end,
                )
                out = content.replace("\n", " ").replace("\r", " ")
            return f" {out} "

        piece = _Piece("", node.start, node.end, make=make)
        self.pieces.append(piece)

    def phoneme(self, node: _Node) -> None:
        a = node.attrs
        if "ph" not in a:
            raise self.fail(node, '<phoneme> needs a ph="..." attribute')
        content = self.need_text(node).strip().replace("\n", " ").replace("\r", " ")
        alphabet = a.get("alphabet", "ipa").strip().lower()
        ph = a["ph"].strip()
        why = ""
        paren: str | None = None
        if not content:
            why = "<phoneme> has no text"
        elif len(content) > MAX_BRACKET or any(c in content for c in "[]()"):
            why = f"<phoneme> text must be at most {MAX_BRACKET} characters without brackets"
        elif len(ph) > MAX_PAREN - 2 or any(c in ph for c in "()\n\r"):
            why = f"ph must be at most {MAX_PAREN - 2} characters without parentheses"
        elif alphabet in ("pinyin", "x-pinyin", "sapi-pinyin"):
            try:
                paren = " ".join(parse_pinyin(_tone_numbers(ph), word=content))
                if not all(is_han(c) for c in content if not c.isspace()):
                    paren, why = None, "pinyin needs Chinese characters only in the text"
                content = "".join(content.split())
            except ValueError as exc:
                why = str(exc)
        elif alphabet in ("arpabet", "x-arpabet", "cmu", "x-cmu"):
            try:
                paren = "/" + " ".join(parse_arpabet(ph)) + "/"
            except ValueError as exc:
                why = str(exc)
        elif alphabet in ("ipa", "x-ipa"):
            phones, why = ipa_to_arpabet(ph)
            if phones is not None:
                paren = "/" + " ".join(phones) + "/"
        else:
            why = f"alphabet {alphabet!r} is not supported (pinyin, arpabet, ipa are)"
        if paren is not None and any(is_han(c) for c in content) and paren.startswith("/"):
            paren, why = None, "ARPAbet/IPA pronunciations are for English words, not Chinese text"
        if paren is None:
            self.doc.warn(
                "bad-override",
                f"<phoneme ph={ph!r}> ignored: {why}; the text is read as usual",
                node.start,
                node.end,
            )
            self.children(node)
            return
        self.add(f"[{content}]({paren})", node.start, node.end)

    def lang(self, node: _Node) -> None:
        tag = node.attrs.get("xml:lang")
        if tag is None:
            raise self.fail(node, '<lang> needs an xml:lang="..." attribute')
        lang = _lang_of(tag)
        if lang is None:
            self.doc.warn(
                "ssml-lang",
                f"language {tag!r} is not spoken (zh-CN and en-US are); the text is read by "
                "its script",
                node.start,
                node.tag_end,
            )
            self.children(node)
            return
        first = len(self.pieces)
        self.children(node)
        self.regions.append((first, len(self.pieces), lang, node))

    def prosody(self, node: _Node) -> None:
        a = node.attrs
        for name in _IGNORED_PROSODY:
            if name in a:
                self.doc.warn(
                    "ssml-attribute",
                    f"<prosody {name}=...> is not supported (only rate is); ignored",
                    node.start,
                    node.tag_end,
                )
        if "rate" not in a:
            self.children(node)
            return
        factor = _parse_rate(a["rate"])
        if factor is None:
            raise self.fail(
                node,
                f"<prosody> rate {a['rate']!r} is not x-slow/slow/medium/fast/x-fast, a "
                "percentage (80%) or a factor (0.8)",
            )
        factor *= self.rates[-1] if a["rate"].strip().startswith(("+", "-")) else 1.0
        self.insert(f" {_speed_token(factor)} ", node)
        self.rates.append(factor)
        self.children(node)
        self.rates.pop()
        self.insert(f" {_speed_token(self.rates[-1])} ", node, closing=True)

    # -- finishing ----------------------------------------------------------------------------

    def context_lang(self, index: int) -> str:
        """The language around piece ``index``: an enclosing <lang>, else its sentence's."""
        k = self.piece_region[index]
        if k >= 0:
            return self.regions[k][2]
        left: list[str] = []
        size = 0
        for i in range(index - 1, -1, -1):
            text = self.pieces[i].text
            cut = max(text.rfind(c) for c in "\n。！？!?")
            left.append(text[cut + 1 :])
            size += len(left[-1])
            if cut >= 0 or size > 80:
                break
        right: list[str] = []
        size = 0
        for i in range(index + 1, len(self.pieces)):
            text = self.pieces[i].text
            cuts = [text.find(c) for c in "\n。！？!?" if c in text]
            right.append(text[: min(cuts)] if cuts else text)
            size += len(right[-1])
            if cuts or size > 80:
                break
        around = "".join(reversed(left)) + " " + "".join(right)
        # inserted tokens and override pronunciations are not words of the sentence
        around = _TOKEN_OR_PRON.sub(" ", around)
        decided, _ = matrix_decision(around)
        if decided is None:
            root_lang = _lang_of(self.root.attrs.get("xml:lang", "")) if self.root else None
            return root_lang or ZH
        return decided

    def run(self, root: _Node) -> None:
        self.root = root
        self.element(root)
        # innermost <lang> per piece (regions nest; paint the largest first)
        self.piece_region = [-1] * len(self.pieces)
        for k in sorted(
            range(len(self.regions)), key=lambda k: self.regions[k][0] - self.regions[k][1]
        ):
            first, last = self.regions[k][0], self.regions[k][1]
            self.piece_region[first:last] = [k] * (last - first)
        for i, p in enumerate(self.pieces):
            if p.make is not None:
                p.text = p.make(self.context_lang(i))
        doc = self.doc
        chars: list[str] = []
        src_s: list[int] = []
        src_e: list[int] = []
        starts: list[int] = []
        total = 0
        for p in self.pieces:
            starts.append(total)
            total += len(p.text)
            chars.append(p.text)
            n = len(p.text)
            if p.one_to_one:
                src_s.extend(range(p.start, p.start + n))
                src_e.extend(range(p.start + 1, p.start + n + 1))
            else:
                src_s.extend([p.start] * n)
                src_e.extend([p.end] * n)
        starts.append(total)
        doc.plain = "".join(chars)
        doc.src_start, doc.src_end = src_s, src_e
        for first, last, lang, node in self.regions:
            doc.regions.append((starts[first], starts[last], lang, node.start, node.end))


def parse_ssml(text: str) -> SsmlDocument:
    """Parse ``text`` as SSML into plain text with an offset map; :class:`SsmlError` if invalid."""
    root = _parse_tree(text)
    doc = SsmlDocument(text)
    _Flattener(doc).run(root)
    return doc


# ---------------------------------------------------------------------------------------------
# Routing
# ---------------------------------------------------------------------------------------------


def _split_for_regions(utt: Utterance, doc: SsmlDocument) -> None:
    """Cut spans at ``<lang>`` boundaries and give the inside the element's language."""
    if not doc.regions:
        return
    plain = doc.plain
    cuts = sorted({b for r in doc.regions for b in r[:2]})
    warned: set[int] = set()

    # innermost region per plain position: paint the largest first, nested ones over them
    # (work is the total region length, at most MAX_DEPTH x the text)
    inner: list[int] = [-1] * (len(plain) + 1)
    order = sorted(range(len(doc.regions)), key=lambda k: doc.regions[k][0] - doc.regions[k][1])
    for k in order:
        a, b = doc.regions[k][0], doc.regions[k][1]
        inner[a:b] = [k] * (b - a)

    def region_at(pos: int) -> tuple[int, int, str, int, int] | None:
        k = inner[pos] if 0 <= pos < len(inner) else -1
        return doc.regions[k] if k >= 0 else None

    for sent in utt.sentences:
        new: list[Span] = []
        for sp in sent.spans:
            if sp.words or sp.lang == CTRL:
                new.append(sp)
                continue
            lo, hi = bisect.bisect_right(cuts, sp.start), bisect.bisect_left(cuts, sp.end)
            bounds = [sp.start, *cuts[lo:hi], sp.end]
            for s, e in zip(bounds, bounds[1:], strict=False):
                while s < e and plain[s].isspace():
                    s += 1
                while e > s and plain[e - 1].isspace():
                    e -= 1
                if s >= e:
                    continue
                piece = Span(sp.lang, plain[s:e], s, e)
                r = region_at(s)
                if r is not None and r[2] != piece.lang:
                    if r[2] == EN and any(is_han(c) for c in piece.text):
                        if r[3] not in warned:
                            warned.add(r[3])
                            doc.warn(
                                "ssml-lang",
                                "Chinese characters inside <lang xml:lang=en-...> are read in "
                                "Chinese",
                                r[3],
                                r[4],
                            )
                    else:
                        piece.lang = r[2]
                new.append(piece)
        sent.spans = new
        inside = {region_at(sp.start)[2] for sp in new if region_at(sp.start) is not None}  # type: ignore[index]
        outside = any(region_at(sp.start) is None for sp in new if sp.lang != CTRL)
        if len(inside) == 1 and not outside:
            sent.matrix = inside.pop()


_AT = re.compile(r"\bat (\d+)(?:-(\d+))?")


def _remap(utt: Utterance, doc: SsmlDocument) -> Utterance:
    """Move every offset of ``utt`` (made on ``doc.plain``) into the user's SSML input."""
    text = doc.input
    for sent in utt.sentences:
        sent.start, sent.end = doc.to_input(sent.start, sent.end)
        sent.text = text[sent.start : sent.end]
        for sp in sent.spans:
            sp.start, sp.end = doc.to_input(sp.start, sp.end)
            sp.text = text[sp.start : sp.end]
            for w in sp.words:
                w.start, w.end = doc.to_input(w.start, w.end)
                w.text = text[w.start : w.end]
    n = len(doc.plain)

    def fix(m: re.Match[str]) -> str:
        """``at 12`` / ``at 12-15`` in a message: plain offsets -> input offsets."""
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else None
        if a > n or (b is not None and not a < b <= n):
            return m.group(0)
        if b is None:
            return f"at {doc.to_input(a, min(a + 1, n))[0]}"
        s, e = doc.to_input(a, b)
        return f"at {s}-{e}"

    for issue in utt.warnings:
        issue.message = _AT.sub(fix, issue.message)
        issue.start, issue.end = doc.to_input(issue.start, issue.end)
        issue.text = text[issue.start : issue.end]
    out = Utterance(text, utt.sentences, [*utt.warnings, *doc.issues])
    out.warnings.sort(key=lambda w: (w.start, w.end))
    return out


def route_ssml(router: Router, text: str) -> Utterance:
    """Analyse an SSML document with ``router``; offsets point into ``text``."""
    from mixvox.segment import segment

    doc = parse_ssml(text)
    utt = segment(doc.plain)
    _split_for_regions(utt, doc)
    router.analyze(utt)
    return _remap(utt, doc)
