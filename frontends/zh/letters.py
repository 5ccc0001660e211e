"""Latin letters read one by one inside a Chinese span (``80GB`` -> 八十 G B).

ARPAbet (with stress) of the English letter names; accented letters are read as their base
letter (``é`` -> E). Anything else has no reading and is reported by the caller.
"""

from __future__ import annotations

import unicodedata

LETTER_ARPABET: dict[str, list[str]] = {
    "A": ["EY1"], "B": ["B", "IY1"], "C": ["S", "IY1"], "D": ["D", "IY1"], "E": ["IY1"],
    "F": ["EH1", "F"], "G": ["JH", "IY1"], "H": ["EY1", "CH"], "I": ["AY1"], "J": ["JH", "EY1"],
    "K": ["K", "EY1"], "L": ["EH1", "L"], "M": ["EH1", "M"], "N": ["EH1", "N"], "O": ["OW1"],
    "P": ["P", "IY1"], "Q": ["K", "Y", "UW1"], "R": ["AA1", "R"], "S": ["EH1", "S"],
    "T": ["T", "IY1"], "U": ["Y", "UW1"], "V": ["V", "IY1"], "W": ["D", "AH1", "B", "AH0", "L",
    "Y", "UW0"], "X": ["EH1", "K", "S"], "Y": ["W", "AY1"], "Z": ["Z", "IY1"],
}  # fmt: skip


def base_letter(ch: str) -> str | None:
    """``'é'`` -> ``'E'``; ``None`` when ``ch`` has no ASCII base letter (``ø``, ``ß``)."""
    up = ch.upper()
    if up in LETTER_ARPABET:
        return up
    for c in unicodedata.normalize("NFD", ch):
        if c.upper() in LETTER_ARPABET:
            return c.upper()
    return None


def spell(letters: str) -> tuple[str, list[str], list[int]]:
    """Spoken text, ARPAbet phonemes and the indices of letters that have no reading."""
    names: list[str] = []
    phones: list[str] = []
    bad: list[int] = []
    for i, ch in enumerate(letters):
        b = base_letter(ch)
        if b is None:
            bad.append(i)
            continue
        names.append(b)
        phones.extend(LETTER_ARPABET[b])
    return " ".join(names), phones, bad
