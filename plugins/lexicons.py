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
neutral tone ``5``); ARPAbet is upper-cased with stress digits on vowels only. Both checks live
in :mod:`mixvox.phonetics`, shared with the inline ``[text](pronunciation)`` overrides.
"""

from __future__ import annotations

import functools
import os
import sys
import types
import unicodedata
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from mixvox.interfaces import LexEntry, MixvoxError
from mixvox.ir import EN, ZH
from mixvox.phonetics import ARPABET_CONSONANTS, ARPABET_VOWELS, parse_arpabet, parse_pinyin
from mixvox.plugins.hookspecs import hookimpl
from mixvox.textutil import is_han

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

#: Report at most this many problems of one file in one error (the rest are counted).
MAX_REPORTED_ERRORS = 20

_TSV_SUFFIXES = {".tsv", ".tab", ".txt", ".lex"}
_ENTRY_KEYS = {"phonemes", "respelling", "spoken"}


class _EntryError(ValueError):
    """A problem with one entry; the caller adds the file and line/key."""


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
        # text-reading engines read [..] as control tokens; a lexicon must not inject them.
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
    from mixvox.safeio import check_regular, read_bounded

    p = Path(os.fspath(path)).expanduser()
    if not os.path.lexists(p):
        raise MixvoxError(f"lexicon file not found: {p}")
    check_regular(p, "lexicon")  # a FIFO or device is refused before anything else
    suffix = p.suffix.lower()
    if suffix != ".toml" and suffix not in _TSV_SUFFIXES:
        raise MixvoxError(
            f"lexicon {p}: unknown format {suffix or '(no extension)'!r} "
            f"(use .toml or {', '.join(sorted(_TSV_SUFFIXES))})"
        )
    data = read_bounded(p, "lexicon")
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
