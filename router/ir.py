"""The intermediate representation (IR) shared by the router, the frontends and the engines.

``Utterance -> Sentence -> Span -> Word``. Every node keeps ``start``/``end`` offsets into the
user's original text (Python ``str`` indices, i.e. code points) so that warnings, subtitles and
error messages can cite exactly what the user typed. Nothing here imports a frontend or an
engine: this module is the contract between them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: Language codes used in spans. ``ctrl`` spans carry engine control tokens (``[uv_break]``).
ZH = "zh"
EN = "en"
CTRL = "ctrl"

#: Break levels a prosody module puts on ``Word.break_after``.
BREAK_NONE = 0  # inside a word group
BREAK_WORD = 1  # ordinary word boundary
BREAK_CLAUSE = 2  # comma, semicolon, colon, long clause
BREAK_SENTENCE = 3  # end of sentence


@dataclass(slots=True)
class Issue:
    """A warning attached to the IR: something was skipped, replaced or could not be read.

    ``code`` is a stable machine-readable identifier (``unsupported-script``, ``emoji``,
    ``control-char``, ``bad-override``, ``oov`` ...); ``message`` is for humans.
    """

    code: str
    message: str
    text: str
    start: int
    end: int
    #: How many identical adjacent warnings this one stands for (see :meth:`Utterance.warn`).
    count: int = 1

    @property
    def base_message(self) -> str:
        """The message of one occurrence (before a merge appended the count)."""
        if self.count == 1:
            return self.message
        return self.message.rsplit(" (", 1)[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            **({"count": self.count} if self.count > 1 else {}),
        }


@dataclass(slots=True)
class Word:
    """One spoken unit.

    ``text`` is the slice of the input it came from (``input[start:end]``; it may be empty
    for material a normalizer inserted). ``spoken`` is the normalized text (or a control token
    for ``kind == "control"``); an engine that reads text reads ``respelling`` instead when it
    is set: an English word said as a word keeps its written form in ``spoken`` (``RAID``,
    ``Airbnb``, shown as users write them) and its reading in ``respelling`` (``raid``,
    ``Air B N B``; frontends/en/CONVENTIONS.md). ``phonemes`` are tone-numbered pinyin
    (one syllable per Han character of ``spoken``) when ``lang == "zh"`` and ARPAbet with
    stress when ``lang == "en"``; empty for punctuation and control tokens.
    """

    text: str
    spoken: str
    phonemes: list[str]
    start: int
    end: int
    lang: str
    kind: str = "word"  # "word" | "punct" | "control"
    break_after: int = BREAK_NONE
    #: True when the pronunciation came from a user override or a lexicon entry.
    override: bool = False
    #: Optional respelling for engines that read text (text-reading ones): what to write instead of
    #: ``spoken`` so that the model says ``phonemes``. ``None`` means ``spoken`` is fine.
    respelling: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "spoken": self.spoken, "phonemes": list(self.phonemes)}


@dataclass(slots=True)
class Span:
    """A run of one language (or of control tokens) inside a sentence."""

    lang: str
    text: str
    start: int
    end: int
    words: list[Word] = field(default_factory=list)

    @property
    def spoken(self) -> str:
        return join_spoken(w.spoken for w in self.words)

    def to_dict(self) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "spoken": self.spoken,
            "words": [w.to_dict() for w in self.words],
        }


@dataclass(slots=True)
class Sentence:
    text: str
    start: int
    end: int
    #: The matrix (dominant) language of the sentence: ``zh`` or ``en``.
    matrix: str
    spans: list[Span] = field(default_factory=list)

    @property
    def words(self) -> list[Word]:
        return [w for s in self.spans for w in s.words]

    @property
    def spoken(self) -> str:
        return join_spoken(s.spoken for s in self.spans)

    def to_dict(self) -> dict[str, Any]:
        return {"matrix": self.matrix, "spans": [s.to_dict() for s in self.spans]}


@dataclass(slots=True)
class Utterance:
    input: str
    sentences: list[Sentence] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)

    @property
    def words(self) -> list[Word]:
        return [w for s in self.sentences for w in s.words]

    @property
    def spoken(self) -> str:
        return join_spoken(s.spoken for s in self.sentences)

    def warn(self, code: str, message: str, start: int, end: int) -> Issue:
        """Record a warning; one that repeats the previous one right after it (same code and
        message, adjacent) extends it instead, so a megabyte of one bad character is one
        warning with its length, not a million."""
        if self.warnings:
            last = self.warnings[-1]
            if last.code == code and last.end == start and last.base_message == message:
                last.end = end
                last.count += 1
                last.text = self.input[last.start : end]
                last.message = f"{message} ({last.count} in a row, {end - last.start} characters)"
                return last
        issue = Issue(code, message, self.input[start:end], start, end)
        self.warnings.append(issue)
        return issue

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape printed by ``mixvox route --json``."""
        return {
            "input": self.input,
            "spoken": self.spoken,
            "warnings": [w.to_dict() for w in self.warnings],
            "sentences": [s.to_dict() for s in self.sentences],
        }


@dataclass(slots=True)
class Chunk:
    """A piece of an utterance that an engine synthesizes in one go (prosody decides the cuts).

    Chunks never split a word; ``words`` keep their IR objects so engines can read phonemes,
    languages, break levels and respellings.
    """

    index: int
    words: list[Word]

    @property
    def spoken(self) -> str:
        return join_spoken(w.spoken for w in self.words)

    @property
    def start(self) -> int:
        return self.words[0].start if self.words else 0

    @property
    def end(self) -> int:
        return self.words[-1].end if self.words else 0


# ---------------------------------------------------------------------------------------------
# Joining spoken pieces
# ---------------------------------------------------------------------------------------------

_NO_SPACE_BEFORE = set(",.;:!?%)]}”’»…，。；：！？、）》」』】〉\"'")
_NO_SPACE_AFTER = set("([{“‘«（《「『【〈$¥€£")


def is_cjk(ch: str) -> bool:
    """True for Han ideographs and CJK punctuation/full-width forms (no spaces around them)."""
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or 0x20000 <= o <= 0x2FA1F
        or 0xF900 <= o <= 0xFAFF
        or 0x3000 <= o <= 0x303F
        or 0xFF00 <= o <= 0xFFEF
    )


def _opens(ch: str) -> bool:
    """An opening bracket or quotation mark (Unicode Ps/Pi): ``(`` ``[`` ``“`` ``‘`` ``«``."""
    return unicodedata.category(ch) in ("Ps", "Pi")


def _needs_space(left: str, right: str) -> bool:
    a, b = left[-1], right[0]
    if a.isspace() or b.isspace():
        return False
    if b in _NO_SPACE_BEFORE or a in _NO_SPACE_AFTER:
        return False
    if left.endswith("]") and left.rfind("[") != -1:  # control token: [uv_break]
        return False
    if right.startswith("[") and len(right) > 1:  # a control token, not a lone bracket
        return False
    if is_cjk(a) and is_cjk(b):
        return False
    if _opens(b) and not (is_cjk(a) or is_cjk(b) or _opens(a)):
        return True  # "Call (415) …", 'said “hi”': an opening bracket or quote starts a word
    if right in ("—", "–") and not (is_cjk(a) or _opens(a)):
        return True  # "was — how": a dash standing for a pause stands apart
    if unicodedata.category(b).startswith("P") and not b.isalnum():
        return False
    return True


def join_spoken(parts: Iterable[str]) -> str:
    """Join spoken pieces the way a reader would write them.

    No space between two CJK pieces (``今天`` + ``的`` -> ``今天的``), none before closing
    punctuation or around control tokens, one space elsewhere (``改到`` + ``three thirty PM``
    -> ``改到 three thirty PM``).
    """
    out: list[str] = []
    for p in parts:
        if not p:
            continue
        if out and _needs_space(out[-1], p):
            out.append(" ")
        out.append(p)
    return "".join(out)


def iter_words(utt: Utterance) -> Iterator[Word]:
    for s in utt.sentences:
        for sp in s.spans:
            yield from sp.words
