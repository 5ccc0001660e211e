"""Lexicon files (TOML and TSV) and the built-in lexicon plugin.

Users fix pronunciations the generic G2P gets wrong (``重构`` is *chóng*gòu in software, ``nginx``
is "engine x"). They write lexicons by hand, so every entry is validated on load and a mistake is
reported with the file, the line (TSV) or the key (TOML) and what is wrong, instead of being
spoken wrongly later.

Formats::

    # lexicon.toml
    [zh]
    "重庆银行" = "chong2 qing4 yin2 hang2"           # tone-numbered pinyin, one per Han char
    [en]
    nginx = "/EH1 N JH AH0 N EH1 K S/"              # ARPAbet between slashes
    Nginx = "engine x"                              # any other string: a respelling
    k8s = { spoken = "kubernetes", phonemes = "/K UW2 B ER0 N EH1 T IY0 Z/" }

    # lexicon.tsv: word<TAB>pronunciation[<TAB>lang]; lang defaults to zh for Han words
    重构	chong2 gou4
    nginx	/EH1 N JH AH0 N EH1 K S/	en

Pinyin is canonicalised the way the zh frontend writes it (pypinyin ``TONE3``: ``ü`` as ``v``,
neutral tone ``5``); ARPAbet is upper-cased with stress digits on vowels only.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import types
import unicodedata
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from mixvox.interfaces import LexEntry, MixvoxError
from mixvox.ir import EN, ZH
from mixvox.textutil import is_han

from .hookspecs import hookimpl

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "ARPABET_CONSONANTS",
    "ARPABET_VOWELS",
    "LANGS",
    "builtin_lexicon",
    "load_lexicon_file",
    "mixvox_lexicon",
    "parse_arpabet",
    "parse_pinyin",
]

#: Languages a lexicon may hold (the ones mixvox has frontends for).
LANGS: tuple[str, ...] = (ZH, EN)

#: CMU/ARPAbet phone set (39 phones). Vowels take a stress digit 0/1/2, consonants none.
ARPABET_VOWELS = frozenset("AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split())
ARPABET_CONSONANTS = frozenset("B CH D DH F G HH JH K L M N NG P R S SH T TH V W Y Z ZH".split())

#: Report at most this many problems of one file in one error (the rest are counted).
MAX_REPORTED_ERRORS = 20

_TSV_SUFFIXES = {".tsv", ".tab", ".txt", ".lex"}
_ENTRY_KEYS = {"phonemes", "respelling", "spoken"}
_SYLLABLE_RE = re.compile(r"([a-zê]+)([0-9]?)")
_PHONE_RE = re.compile(r"([A-Z]+)([0-9]?)")
# Letters that carry pinyin tone marks; their presence means the user wrote "chóng" not "chong2".
_TONE_MARKED = set("āáǎàēéěèīíǐìōóǒòūúǔùǖǘǚǜńňǹḿ")


class _EntryError(ValueError):
    """A problem with one entry; the caller adds the file and line/key."""


@functools.cache
def _pinyin_syllables() -> frozenset[str]:
    """Toneless pinyin syllables (data file generated from pypinyin's character readings)."""
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
    base = base.replace("ü", "v").replace("u:", "v")
    if base[:1] in ("j", "q", "x", "y") and base[1:2] == "v":
        base = base[0] + "u" + base[2:]
    if base in ("lue", "nue"):
        base = base[0] + "ve"
    return base


def parse_pinyin(text: str, word: str | None = None) -> tuple[str, ...]:
    """Validate tone-numbered pinyin and return its syllables in canonical form.

    ``"Chong2 qing4"`` -> ``("chong2", "qing4")``. With ``word``, the number of syllables must
    equal the number of Han characters of ``word``: a missing syllable would shift every reading
    after it. Raises :class:`ValueError` saying what is wrong.
    """
    pieces = unicodedata.normalize("NFC", text).lower().split()
    if not pieces:
        raise ValueError("empty pinyin")
    valid = _pinyin_syllables()
    out: list[str] = []
    for piece in pieces:
        if any(ch in _TONE_MARKED for ch in piece):
            raise ValueError(
                f"pinyin syllable {piece!r} uses a tone mark; write tone numbers "
                f"({_suggest_tone3(piece)!r})"
            )
        m = _SYLLABLE_RE.fullmatch(piece.replace("ü", "v").replace("u:", "v"))
        if m is None:
            raise ValueError(f"{piece!r} is not a pinyin syllable (letters then a tone 1-5)")
        base, tone = _canonical_syllable(m.group(1)), m.group(2)
        if base not in valid:
            raise ValueError(f"unknown pinyin syllable {m.group(1)!r} in {piece!r}")
        if not tone:
            raise ValueError(f"pinyin syllable {piece!r} has no tone number (1-5, 5 = neutral)")
        if tone not in "12345":
            raise ValueError(f"pinyin syllable {piece!r}: tone must be 1-5 (5 = neutral)")
        out.append(base + tone)
    if word is not None:
        n_han = sum(1 for ch in word if is_han(ch))
        if n_han != len(out):
            raise ValueError(
                f"{len(out)} pinyin syllable(s) for {n_han} Han character(s) in {word!r} "
                "(write one syllable per character)"
            )
    return tuple(out)


def _suggest_tone3(piece: str) -> str:
    try:
        from pypinyin.contrib.tone_convert import to_tone3

        return to_tone3(piece, v_to_u=False, neutral_tone_with_five=True)
    except Exception:  # only a hint for the message; never mask the real error
        return "e.g. chong2"


def parse_arpabet(text: str) -> tuple[str, ...]:
    """Validate ARPAbet (``/.../`` slashes optional) and return the phones upper-cased.

    Vowels must carry a stress digit (0, 1 or 2) and consonants none, because the en engines
    and frontends rely on stress to place the accent. Raises :class:`ValueError`.
    """
    body = text.strip()
    if body.startswith("/") and body.endswith("/") and len(body) >= 2:
        body = body[1:-1]
    phones = body.upper().split()
    if not phones:
        raise ValueError("empty ARPAbet")
    for ph in phones:
        m = _PHONE_RE.fullmatch(ph)
        base, stress = (m.group(1), m.group(2)) if m else (ph, "")
        if m is None or (base not in ARPABET_VOWELS and base not in ARPABET_CONSONANTS):
            raise ValueError(f"unknown ARPAbet phone {ph!r}")
        if base in ARPABET_VOWELS:
            if not stress:
                raise ValueError(f"ARPAbet vowel {ph!r} needs a stress digit (0, 1 or 2)")
            if stress not in "012":
                raise ValueError(f"ARPAbet vowel {ph!r}: stress must be 0, 1 or 2")
        elif stress:
            raise ValueError(f"ARPAbet consonant {ph!r} takes no stress digit")
    return tuple(phones)


def _is_arpabet_literal(value: str) -> bool:
    v = value.strip()
    return len(v) >= 2 and v.startswith("/") and v.endswith("/")


def _check_text(value: str, what: str) -> str:
    """Validate a respelling or spoken form: plain text an engine can read."""
    v = unicodedata.normalize("NFC", value).strip()
    if not v:
        raise _EntryError(f"empty {what}")
    for ch in v:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise _EntryError(f"{what} {value!r} contains control character U+{ord(ch):04X}")
    if "[" in v or "]" in v:
        # ChatTTS reads [..] as control tokens; a lexicon must not inject them.
        raise _EntryError(f"{what} {value!r} must not contain '[' or ']'")
    return v


def _check_word(word: str, lang: str) -> str:
    w = unicodedata.normalize("NFC", word).strip()
    if not w:
        raise _EntryError("empty word")
    if any(ch.isspace() for ch in w):
        raise _EntryError(f"word {word!r} contains whitespace (entries are single words)")
    for ch in w:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            raise _EntryError(f"word {word!r} contains control character U+{ord(ch):04X}")
    if lang == ZH and not all(is_han(ch) for ch in w):
        raise _EntryError(f"zh word {word!r} must be written in Han characters only")
    if lang == EN and any(is_han(ch) for ch in w):
        raise _EntryError(f"en word {word!r} contains Han characters (put it under zh)")
    return w


def _make_entry(lang: str, word: str, value: Any, source: str) -> LexEntry:
    """Build one validated entry from a TOML/TSV value (string or inline table)."""
    if lang not in LANGS:
        raise _EntryError(f"unknown language {lang!r} (expected one of: {', '.join(LANGS)})")
    w = _check_word(word, lang)
    phonemes: str | None = None
    respelling: str | None = None
    spoken: str | None = None
    if isinstance(value, str):
        if lang == ZH:
            phonemes = value
        elif _is_arpabet_literal(value):
            phonemes = value
        else:
            respelling = value
    elif isinstance(value, Mapping):
        unknown = sorted(set(value) - _ENTRY_KEYS)
        if unknown:
            raise _EntryError(
                f"unknown field(s) {', '.join(map(repr, unknown))} "
                f"(allowed: {', '.join(sorted(_ENTRY_KEYS))})"
            )
        for key in _ENTRY_KEYS & set(value):
            if not isinstance(value[key], str):
                raise _EntryError(
                    f"field {key!r} must be a string, not {type(value[key]).__name__}"
                )
        phonemes = value.get("phonemes")
        respelling = value.get("respelling")
        spoken = value.get("spoken")
        if phonemes is None and respelling is None and spoken is None:
            raise _EntryError("entry gives none of phonemes, respelling, spoken")
    else:
        raise _EntryError(f"value must be a string or an inline table, not {type(value).__name__}")

    if spoken is not None:
        spoken = _check_text(spoken, "spoken form")
        if lang == ZH and not all(is_han(ch) for ch in spoken):
            raise _EntryError(f"zh spoken form {spoken!r} must be written in Han characters only")
    if respelling is not None:
        respelling = _check_text(respelling, "respelling")
    phones: tuple[str, ...] = ()
    if phonemes is not None:
        try:
            phones = parse_pinyin(phonemes, spoken or w) if lang == ZH else parse_arpabet(phonemes)
        except ValueError as exc:
            raise _EntryError(str(exc)) from None
    return LexEntry(word=w, phonemes=phones, respelling=respelling, spoken=spoken, source=source)


def _raise_collected(path: Path, errors: list[str]) -> None:
    if not errors:
        return
    shown = errors[:MAX_REPORTED_ERRORS]
    more = len(errors) - len(shown)
    lines = "\n  ".join(shown)
    tail = f"\n  ... and {more} more" if more > 0 else ""
    raise MixvoxError(f"invalid lexicon {path}: {len(errors)} problem(s):\n  {lines}{tail}")


def _load_toml(path: Path, data: bytes) -> dict[str, dict[str, LexEntry]]:
    try:
        doc = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise MixvoxError(f"lexicon {path} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise MixvoxError(f"lexicon {path} is not valid TOML: {exc}") from None
    out: dict[str, dict[str, LexEntry]] = {}
    errors: list[str] = []
    for lang, table in doc.items():
        if lang not in LANGS:
            errors.append(
                f"{path}: top-level key {lang!r}: expected a language table "
                f"[{'] or ['.join(LANGS)}]"
            )
            continue
        if not isinstance(table, dict):
            errors.append(f"{path}: {lang!r} must be a table ([{lang}]), not a value")
            continue
        entries = out.setdefault(lang, {})
        for word, value in table.items():
            try:
                entry = _make_entry(lang, word, value, f"{path} [{lang}] {word}")
            except _EntryError as exc:
                errors.append(f"{path}: [{lang}] key {word!r}: {exc}")
                continue
            if entry.word in entries:
                errors.append(f"{path}: [{lang}] key {word!r}: duplicate of {entry.word!r}")
                continue
            entries[entry.word] = entry
    _raise_collected(path, errors)
    return out


def _guess_lang(word: str) -> str:
    return ZH if any(is_han(ch) for ch in word) else EN


def _load_tsv(path: Path, data: bytes) -> dict[str, dict[str, LexEntry]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MixvoxError(f"lexicon {path} is not UTF-8 text: {exc}") from None
    out: dict[str, dict[str, LexEntry]] = {}
    first_line: dict[tuple[str, str], int] = {}
    errors: list[str] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f.strip() for f in raw.rstrip("\r\n").split("\t")]
        if len(fields) == 3 and not fields[2]:
            fields = fields[:2]
        if len(fields) not in (2, 3) or not fields[0] or not fields[1]:
            hint = " (no TAB found: columns are TAB-separated)" if "\t" not in raw else ""
            errors.append(
                f"{path}:{lineno}: expected word<TAB>pronunciation[<TAB>lang], "
                f"got {len(fields)} column(s){hint}"
            )
            continue
        word, pron = fields[0], fields[1]
        lang = fields[2].lower() if len(fields) == 3 else _guess_lang(word)
        try:
            entry = _make_entry(lang, word, pron, f"{path}:{lineno}")
        except _EntryError as exc:
            errors.append(f"{path}:{lineno}: {word!r}: {exc}")
            continue
        key = (lang, entry.word)
        if key in first_line:
            errors.append(
                f"{path}:{lineno}: {word!r} ({lang}) already defined on line {first_line[key]}"
            )
            continue
        first_line[key] = lineno
        out.setdefault(lang, {})[entry.word] = entry
    _raise_collected(path, errors)
    return out


def load_lexicon_file(path: str | os.PathLike[str]) -> dict[str, dict[str, LexEntry]]:
    """Read a ``.toml`` or ``.tsv`` lexicon into ``{lang: {word: LexEntry}}``.

    Every entry is validated; all problems of the file (up to :data:`MAX_REPORTED_ERRORS`) are
    raised together as one :class:`~mixvox.MixvoxError` so a user fixes them in one pass.
    """
    p = Path(os.fspath(path)).expanduser()
    suffix = p.suffix.lower()
    if suffix != ".toml" and suffix not in _TSV_SUFFIXES:
        raise MixvoxError(
            f"lexicon {p}: unknown format {suffix or '(no extension)'!r} "
            f"(use .toml or {', '.join(sorted(_TSV_SUFFIXES))})"
        )
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise MixvoxError(f"lexicon file not found: {p}") from None
    except OSError as exc:
        raise MixvoxError(f"cannot read lexicon {p}: {exc.strerror or exc}") from None
    return _load_toml(p, data) if suffix == ".toml" else _load_tsv(p, data)


# ---------------------------------------------------------------------------------------------
# The built-in lexicon plugin
# ---------------------------------------------------------------------------------------------

#: Built-in lexicon files under ``plugins/data/``, merged in this order (earlier wins).
BUILTIN_FILES: tuple[str, ...] = ("tech_lexicon.toml",)


@functools.cache
def _builtin_tables() -> dict[str, Mapping[str, LexEntry]]:
    merged: dict[str, dict[str, LexEntry]] = {}
    root = resources.files("mixvox.plugins").joinpath("data")
    for name in BUILTIN_FILES:
        with resources.as_file(root.joinpath(name)) as file:
            for lang, table in load_lexicon_file(file).items():
                layer = merged.setdefault(lang, {})
                for word, entry in table.items():
                    layer.setdefault(word, entry)
    return {lang: types.MappingProxyType(t) for lang, t in merged.items()}


def builtin_lexicon(lang: str) -> Mapping[str, LexEntry]:
    """The built-in entries for ``lang`` (read-only; empty for other languages), loaded once."""
    return _builtin_tables().get(lang, types.MappingProxyType({}))


@hookimpl(trylast=True)
def mixvox_lexicon(lang: str) -> Mapping[str, LexEntry] | None:
    """Built-in tech vocabulary; ``trylast`` so user plugins and ``--lexicon`` files win."""
    return builtin_lexicon(lang) or None
