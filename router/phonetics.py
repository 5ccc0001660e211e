"""The one validator for typed pronunciations: tone-numbered pinyin and ARPAbet.

Users write pronunciations in two places, lexicon files (:mod:`mixvox.plugins.lexicons`) and
inline overrides such as ``[银行](yin2 hang2)`` (:mod:`mixvox.controls`); the zh frontend and
the espeak engine check pronunciations that other plugins hand them. All of them use this
module, so a spelling accepted in one place is accepted (and written the same way) in every
other, and a mistake gets the same explanation wherever it is made.

Canonical forms are the ones the zh frontend writes (pypinyin ``TONE3``: lower case, ``ü`` as
``v`` except after j/q/x/y where pinyin writes ``u``, neutral tone ``5``) and CMUdict's
(upper-case phones, a stress digit 0/1/2 on every vowel and none on consonants).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from importlib import resources

from mixvox.textutil import is_han

__all__ = [
    "ARPABET_CONSONANTS",
    "ARPABET_VOWELS",
    "canonical_pinyin",
    "parse_arpabet",
    "parse_arpabet_phone",
    "parse_pinyin",
    "parse_pinyin_syllable",
    "pinyin_syllables",
]

#: CMU/ARPAbet phone set (39 phones). Vowels take a stress digit 0/1/2, consonants none.
ARPABET_VOWELS = frozenset("AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split())
ARPABET_CONSONANTS = frozenset("B CH D DH F G HH JH K L M N NG P R S SH T TH V W Y Z ZH".split())

_SYLLABLE_RE = re.compile(r"([a-zê]+)([0-9]?)")
_PHONE_RE = re.compile(r"([A-Z]+)([0-9]?)")
# Letters that carry pinyin tone marks; their presence means the user wrote "chóng" not "chong2".
_TONE_MARKED = frozenset("āáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜńňǹḿ")


@functools.cache
def pinyin_syllables() -> frozenset[str]:
    """Toneless pinyin syllables (``v`` for ``ü``) that pypinyin's character table uses.

    Read from a data file generated from pypinyin's readings rather than rebuilt from its
    41k-entry table at start-up; ``tests/test_phonetics.py`` checks the two agree.
    """
    text = (
        resources.files("mixvox.plugins")
        .joinpath("data/pinyin_syllables.txt")
        .read_text(encoding="utf-8")
    )
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def _canonical_syllable(base: str) -> str:
    """Accept the common spellings of ü: ``lü``/``lv``; ``jv``/``ju`` (pypinyin writes ``ju``)."""
    if base[:1] in ("j", "q", "x", "y") and base[1:2] == "v":
        base = base[0] + "u" + base[2:]
    if base in ("lue", "nue"):
        base = base[0] + "ve"
    return base


def parse_pinyin_syllable(piece: str) -> str:
    """``"Lu:4"`` -> ``"lv4"``: one tone-numbered syllable in canonical form.

    Accepts ``ü``/``u:``/``v`` for ü, ``lue``/``nue`` for ``lve``/``nve`` and ``jv`` for
    ``ju``. The tone digit (1-5, 5 = neutral) is required because a toneless syllable would
    leave the reading to chance. Raises :class:`ValueError` saying what is wrong.
    """
    s = unicodedata.normalize("NFC", piece).lower()
    if any(ch in _TONE_MARKED for ch in s):
        raise ValueError(
            f"pinyin syllable {piece!r} uses a tone mark; write tone numbers "
            f"({_suggest_tone3(s)!r})"
        )
    m = _SYLLABLE_RE.fullmatch(s.replace("ü", "v").replace("u:", "v"))
    if m is None:
        raise ValueError(f"{piece!r} is not a pinyin syllable (letters then a tone 1-5)")
    base, tone = _canonical_syllable(m.group(1)), m.group(2)
    if base not in pinyin_syllables():
        raise ValueError(
            f"unknown pinyin syllable {m.group(1)!r} in {piece!r}: not a Mandarin syllable"
        )
    if not tone:
        raise ValueError(
            f"pinyin syllable {piece!r} has no tone number (each syllable needs a tone number "
            "1-5, 5 = neutral)"
        )
    if tone not in "12345":
        raise ValueError(f"pinyin syllable {piece!r}: tone must be 1-5 (5 = neutral)")
    return base + tone


def parse_pinyin(text: str, word: str | None = None) -> tuple[str, ...]:
    """Validate space-separated tone-numbered pinyin and return its syllables, canonical.

    ``"Chong2 qing4"`` -> ``("chong2", "qing4")``. With ``word``, the number of syllables must
    equal the number of Han characters of ``word``: a missing syllable would shift every reading
    after it. Raises :class:`ValueError` saying what is wrong.
    """
    pieces = text.split()
    if not pieces:
        raise ValueError("empty pinyin")
    out = tuple(parse_pinyin_syllable(p) for p in pieces)
    if word is not None:
        n_han = sum(1 for ch in word if is_han(ch))
        if n_han != len(out):
            raise ValueError(
                f"{len(out)} pinyin syllable(s) for {n_han} Han character(s) in {word!r} "
                "(write one syllable per character)"
            )
    return out


def _suggest_tone3(piece: str) -> str:
    try:
        from pypinyin.contrib.tone_convert import to_tone3

        return to_tone3(piece, v_to_u=False, neutral_tone_with_five=True)
    except Exception:  # only a hint for the message; never mask the real error
        return "e.g. chong2"


def parse_arpabet_phone(phone: str) -> str:
    """Validate one ARPAbet phone and return it upper-cased; :class:`ValueError` says why not.

    Vowels must carry a stress digit (0, 1 or 2) and consonants none, because the en engines
    and frontends rely on stress to place the accent.
    """
    ph = phone.upper()
    m = _PHONE_RE.fullmatch(ph)
    base, stress = (m.group(1), m.group(2)) if m else (ph, "")
    if m is None or (base not in ARPABET_VOWELS and base not in ARPABET_CONSONANTS):
        raise ValueError(f"unknown ARPAbet phone {ph!r} (not an ARPAbet phone of CMUdict)")
    if base in ARPABET_VOWELS:
        if not stress:
            raise ValueError(f"ARPAbet vowel {ph!r} needs a stress digit (0, 1 or 2)")
        if stress not in "012":
            raise ValueError(f"ARPAbet vowel {ph!r}: stress must be 0, 1 or 2")
    elif stress:
        raise ValueError(
            f"ARPAbet consonant {ph!r} takes no stress digit (consonants take no stress; "
            "vowels carry it)"
        )
    return ph


def parse_arpabet(text: str) -> tuple[str, ...]:
    """Validate ARPAbet (``/.../`` slashes optional) and return the phones upper-cased.

    Raises :class:`ValueError` for an empty body or the first bad phone
    (see :func:`parse_arpabet_phone`).
    """
    body = text.strip()
    if body.startswith("/") and body.endswith("/") and len(body) >= 2:
        body = body[1:-1]
    phones = body.split()
    if not phones:
        raise ValueError("empty ARPAbet")
    return tuple(parse_arpabet_phone(ph) for ph in phones)


def canonical_pinyin(syllables: Iterable[str]) -> tuple[list[str], list[str]]:
    """Split ``syllables`` into the canonical forms of the valid ones and the invalid ones.

    For pronunciations that arrive already split (a plugin's :class:`~mixvox.LexEntry`), where
    the caller reports every bad syllable at once and falls back to its own reading.
    """
    good: list[str] = []
    bad: list[str] = []
    for syl in syllables:
        try:
            good.append(parse_pinyin_syllable(syl))
        except ValueError:
            bad.append(syl)
    return good, bad
