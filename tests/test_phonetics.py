"""The shared pronunciation validator (:mod:`mixvox.phonetics`).

One validator serves lexicon files, inline overrides, the zh frontend and the espeak engine,
so most tests here check that two of those places agree.
"""

from __future__ import annotations

import pytest

from mixvox.controls import normalize_pinyin, parse_override
from mixvox.interfaces import FrontendContext, LexEntry, Lexicon
from mixvox.ir import Span, Word
from mixvox.phonetics import (
    ARPABET_CONSONANTS,
    ARPABET_VOWELS,
    canonical_pinyin,
    parse_arpabet,
    parse_arpabet_phone,
    parse_pinyin,
    parse_pinyin_syllable,
    pinyin_syllables,
)
from mixvox.plugins import lexicons


def _override(text: str):
    close = text.index("]")
    return parse_override(text, 0, close, close + 1, len(text) - 1)


# --------------------------------------------------------------------------- the validator


def test_inventory_is_pypinyins() -> None:
    """The shipped syllable list is exactly what pypinyin's character table reads (plus ê)."""
    from pypinyin.contrib.tone_convert import to_normal
    from pypinyin.pinyin_dict import pinyin_dict

    built = {
        to_normal(reading)
        for value in pinyin_dict.values()
        for reading in value.split(",")
        if to_normal(reading).isascii() and to_normal(reading).isalpha()
    }
    assert pinyin_syllables() - {"ê"} == built


def test_lexicons_reexport_the_shared_validator() -> None:
    assert lexicons.parse_pinyin is parse_pinyin
    assert lexicons.parse_arpabet is parse_arpabet
    assert lexicons.ARPABET_VOWELS is ARPABET_VOWELS
    assert lexicons.ARPABET_CONSONANTS is ARPABET_CONSONANTS
    assert len(ARPABET_VOWELS | ARPABET_CONSONANTS) == 39


@pytest.mark.parametrize("bad", ["yin", "hang7", "hxng2", "chong2qing4", "chóng", "a0"])
def test_lexicon_and_override_explain_a_bad_syllable_alike(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_pinyin_syllable(bad)
    assert normalize_pinyin(bad) == (None, str(err.value))
    with pytest.raises(ValueError) as lex_err:
        parse_pinyin(bad)
    assert str(lex_err.value) == str(err.value)


@pytest.mark.parametrize("bad", ["EH", "EH3", "N1", "QQ", "ŋ"])
def test_lexicon_and_override_explain_a_bad_phone_alike(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_arpabet_phone(bad)
    with pytest.raises(ValueError) as lex_err:
        parse_arpabet(f"/{bad}/")
    assert str(lex_err.value) == str(err.value)
    span, why = _override(f"[x](/{bad}/)")
    assert span is None and why == str(err.value)


def test_override_accepts_what_a_lexicon_accepts() -> None:
    """``jv``, ``nue`` and lower-case phones were lexicon-only before the validators merged."""
    span, why = _override("[举虐](jv3 nue4)")
    assert why is None and span is not None
    assert span.words[0].phonemes == list(parse_pinyin("jv3 nue4")) == ["ju3", "nve4"]
    span, why = _override("[x](/eh1 k s/)")
    assert why is None and span is not None
    assert span.words[0].phonemes == ["EH1", "K", "S"]


def test_canonical_pinyin_splits_good_from_bad() -> None:
    assert canonical_pinyin(["Lu:4", "xyz1", "lü4", "jv3", "de"]) == (
        ["lv4", "lv4", "ju3"],
        ["xyz1", "de"],
    )
    assert canonical_pinyin([]) == ([], [])


# --------------------------------------------------------------------------- its users


def test_zh_frontend_canonicalises_and_checks_plugin_entries() -> None:
    from mixvox.frontends.zh.plugin import ZhFrontend

    fe = ZhFrontend()

    def run(entry: LexEntry) -> tuple[list[Word], list[tuple]]:
        warnings: list[tuple] = []
        ctx = FrontendContext(
            lexicon=Lexicon("zh", [{entry.word: entry}]),
            warn=lambda *a: warnings.append(a),
            matrix="zh",
        )
        return fe.analyze(Span("zh", entry.word, 0, len(entry.word)), ctx), warnings

    words, warnings = run(LexEntry("绿", ("Lu:4",)))
    assert words[0].phonemes == ["lv4"] and warnings == []
    # letters and a digit are not enough: the syllable must exist
    words, warnings = run(LexEntry("绿", ("xyz1",)))
    assert words[0].phonemes == ["lv4"]
    assert [w[0] for w in warnings] == ["bad-override"] and "xyz1" in warnings[0][1]
    # every syllable bad: still reported
    words, warnings = run(LexEntry("绿", ("q",)))
    assert [w[0] for w in warnings] == ["bad-override"] and words[0].phonemes == ["lv4"]


def test_espeak_pinyin_uses_the_canonical_form() -> None:
    from mixvox.engines.espeak.engine import pinyin_for

    def word(*syl: str) -> Word:
        return Word("举绿", "举绿", list(syl), 0, 2, lang="zh")

    assert pinyin_for(word("jv3", "lü4"), lambda s: True) == "ju3 lv4"
    assert pinyin_for(word("xyz1", "lv4"), lambda s: True) is None
    assert pinyin_for(word("ju3", "lv4"), lambda s: s != "lv4") is None
