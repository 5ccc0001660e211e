"""Rendering IR chunks as ChatTTS text, its prompts, and the length guard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.engines.chattts import render
from mixvox.engines.chattts.render import (
    FRAMES_PER_SECOND,
    MAX_FRAMES,
    code_prompt,
    expected_seconds,
    filter_refined,
    frame_bounds,
    load_homophones,
    refine_params,
    refine_prompt,
    render_words,
)
from mixvox.engines.chattts.tokenizer import ChatTTSTokenizer
from mixvox.interfaces import MixvoxError
from mixvox.ir import BREAK_CLAUSE, Word

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
ALLOWED = re.compile(r"(?:\[[A-Za-z][A-Za-z0-9_]*\]|[\u4e00-\u9fffA-Za-z ，。、,.])*")


def zh(text: str, pinyin: str = "", **kw) -> Word:
    return Word(text, text, pinyin.split(), 0, len(text), lang="zh", **kw)


def en(text: str, phones: str = "", **kw) -> Word:
    return Word(text, text, phones.split(), 0, len(text), lang="en", **kw)


def punct(ch: str, lang: str = "zh") -> Word:
    return Word(ch, ch, [], 0, 1, lang=lang, kind="punct")


def ctrl(tok: str) -> Word:
    return Word(tok, tok, [], 0, len(tok), lang="ctrl", kind="control")


# -- prompts ------------------------------------------------------------------------------------


def test_code_prompt_matches_reference_format() -> None:
    assert code_prompt("你好", speaker=True) == "[Stts][spk_emb][speed_5]你好[Ptts]"
    assert code_prompt("你好", speaker=False) == "[Stts][empty_spk][speed_5]你好[Ptts]"
    assert code_prompt(" hi [spk_emb]", speaker=True, prompt="[speed_2]") == (
        "[Stts][spk_emb][speed_2]hi[Ptts]"
    )


def test_golden_prompts_tokenize_like_the_reference() -> None:
    import json

    import numpy as np

    tok = ChatTTSTokenizer(TINY / "asset" / "tokenizer")
    z = np.load(TINY / "golden.npz")
    texts = json.loads((TINY / "golden.json").read_text())["texts"]
    built = code_prompt("你好，世界！Hello World, this is ChatTTS.", speaker=True)
    assert built == texts["code_spk"]
    assert tok.encode(built) == z["tok/code_spk/ids"].tolist()
    ref = refine_prompt("今天的meeting改到三点半，OK吗", refine_params(oral=2, laugh=0, brk=6))
    assert ref == texts["refine"]


def test_refine_params_ranges() -> None:
    assert refine_params() == ""
    assert refine_params(oral=9, laugh=2, brk=7) == "[oral_9][laugh_2][break_7]"
    for kw in ({"oral": 10}, {"laugh": 3}, {"brk": -1}):
        with pytest.raises(MixvoxError):
            refine_params(**kw)


def test_filter_refined_drops_tokens_from_break_0_up() -> None:
    tok = ChatTTSTokenizer(TINY / "asset" / "tokenizer")
    ids = tok.encode("你好[uv_break]世界[break_3][laugh][laugh_1][oral_2][speed_5][lbreak]")
    kept = tok.decode(filter_refined(ids, tok.break_0_id))
    assert "[uv_break]" in kept and "[laugh]" in kept and "[lbreak]" in kept
    for gone in ("[break_3]", "[laugh_1]", "[oral_2]", "[speed_5]"):
        assert gone not in kept


def test_speed_prompt() -> None:
    assert render.speed_prompt(1.0) == "[speed_5]"
    assert render.speed_prompt(0.2) == "[speed_1]"
    assert render.speed_prompt(5.0) == "[speed_9]"


# -- rendering ----------------------------------------------------------------------------------


def test_control_tokens_pass_as_they_are() -> None:
    out = render_words(
        [zh("你好", "ni3 hao3"), ctrl("[uv_break]"), zh("世界", "shi4 jie4"), ctrl("[laugh]")]
    )
    assert out.text == "你好[uv_break]世界[laugh]" and not out.notes
    bad = render_words([zh("好", "hao3"), ctrl("[oops")])
    assert bad.text == "好" and bad.notes[0].code == "bad-control"


def test_respelling_replaces_spoken() -> None:
    words = [en("nginx", "EH1 N JH AH0 N EH1 K S", respelling="engine x"), en("rocks")]
    assert render_words(words).text == "engine x rocks"


def test_zh_homophones_for_unusual_readings() -> None:
    table = load_homophones()
    assert render_words([zh("行长", "hang2 zhang3")], table).text == "航掌"
    assert render_words([zh("银行", "yin2 hang2")], table).text == "银行"  # model knows it
    assert render_words([zh("行", "xing2")], table).text == "行"  # the usual reading
    # A user override is honoured even in a word the model usually gets right.
    assert render_words([zh("银行", "yin2 hang2", override=True)], table).text == "银航"
    # No pinyin: nothing to compare, left alone.
    assert render_words([zh("行长")], table).text == "行长"


def test_homophone_table_is_sound() -> None:
    from pypinyin import Style, pinyin

    table = load_homophones()
    assert len(table.subs) >= 30
    for (ch, reading), sub in table.subs.items():
        assert ch != sub
        # The substitute's usual reading is the wanted one, and the original is a polyphone
        # that has this reading among others (else the substitution would be pointless).
        usual = pinyin(sub, style=Style.TONE3, neutral_tone_with_five=True)[0]
        assert usual == [reading], f"{sub} usually reads {usual}, not {reading}"
        orig = pinyin(ch, style=Style.TONE3, heteronym=True, neutral_tone_with_five=True)[0]
        assert reading in orig and len(orig) > 1, f"{ch}: {orig}"


def test_bad_homophone_file(tmp_path: Path) -> None:
    p = tmp_path / "h.tsv"
    p.write_text("行\thang2\n", encoding="utf-8")
    with pytest.raises(MixvoxError, match="bad homophone line"):
        load_homophones(p)


def test_digits_never_reach_the_model() -> None:
    out = render_words([zh("跑", "pao3"), en("4070"), zh("3个", "san1 ge4")])
    assert not re.search(r"\d", out.text)
    assert "four zero seven zero" in out.text and "三个" in out.text
    assert {n.code for n in out.notes} == {"digits-in-spoken"}


def test_punctuation_mapped_to_what_the_normalizer_keeps() -> None:
    words = [
        zh("你好", "ni3 hao3"),
        punct("："),
        zh("世界", "shi4 jie4"),
        punct("！"),
        zh("是", "shi4"),
        punct("？"),
        zh("吗", "ma5"),
        punct("；"),
    ]
    assert render_words(words).text == "你好，世界。是。吗，"
    words = [
        en("hello"),
        punct("!", "en"),
        en("world"),
        punct(";", "en"),
        en("ok"),
        punct("?", "en"),
    ]
    assert render_words(words).text == "hello. world, ok."


def test_runs_of_punctuation_collapse_and_leading_pauses_go() -> None:
    words = [
        punct("《"),
        zh("书名", "shu1 ming2"),
        punct("》"),
        punct("，"),
        zh("好", "hao3"),
        punct("……"),
        punct("！"),
    ]
    assert render_words(words).text == "书名，好。"
    assert render_words([punct("“"), punct("”")]).text == ""


def test_unsupported_characters_dropped_with_a_note() -> None:
    out = render_words([en("café"), en("a&b"), zh("ｶﾅ好", "hao3")])
    assert out.text.startswith("cafe ab")
    assert "好" in out.text and "ｶ" not in out.text
    assert any(n.code == "engine-unsupported-char" and "&" in n.message for n in out.notes)


def test_apostrophes_and_hyphens() -> None:
    assert render_words([en("don't"), en("ONNX-Runtime")]).text == "dont ONNX Runtime"


def test_clause_break_without_punctuation_becomes_uv_break() -> None:
    words = [zh("今天", "jin1 tian1", break_after=BREAK_CLAUSE), zh("下雨", "xia4 yu3")]
    assert render_words(words).text == "今天[uv_break]下雨"
    words = [zh("今天", "jin1 tian1", break_after=BREAK_CLAUSE), punct("，"), zh("雨", "yu3")]
    assert render_words(words).text == "今天，雨"


def test_raw_words_pass_untouched() -> None:
    w = Word("4070 &", "4070 &", [], 0, 6, lang="raw")
    assert render_words([w]).text == "4070 &"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["zh", "en"]), st.text(max_size=12)), max_size=8))
def test_any_input_renders_to_the_model_alphabet(items: list[tuple[str, str]]) -> None:
    words = [Word(t, t, [], 0, len(t), lang=lang) for lang, t in items]
    out = render_words(words)
    assert ALLOWED.fullmatch(out.text), out.text
    assert not re.search(r"\d", out.text)


# -- length guard -------------------------------------------------------------------------------


def test_expected_seconds_counts_syllables_and_phones() -> None:
    han = expected_seconds(words=[zh("今天天气很好", "jin1 tian1 tian1 qi4 hen3 hao3")])
    assert han == pytest.approx(6 * 0.22)
    phones = expected_seconds(words=[en("meeting", "M IY1 T IH0 NG")])
    assert phones == pytest.approx(5 * 0.085)
    assert expected_seconds(text="你好") == pytest.approx(0.44)
    assert expected_seconds(text="[uv_break]") == pytest.approx(0.25)


def test_frame_bounds() -> None:
    b = frame_bounds(4.0)
    assert b.max_frames == round((2.5 * 4.0 + 1.5) * FRAMES_PER_SECOND)
    assert b.min_frames == round(0.25 * 4.0 * FRAMES_PER_SECOND)
    assert 0 < b.min_frames < b.max_frames
    assert frame_bounds(1000.0).max_frames == MAX_FRAMES
    assert frame_bounds(0.0).min_frames == 0 and frame_bounds(0.0).max_frames >= 8
    assert frame_bounds(4.0, speed=2.0).max_frames < b.max_frames
    prev = frame_bounds(0.0)
    for s in (0.5, 1, 2, 5, 10, 30):
        cur = frame_bounds(float(s))
        assert cur.max_frames >= prev.max_frames and cur.min_frames >= prev.min_frames
        assert cur.min_frames <= cur.max_frames // 2
        prev = cur


def test_zh_homophones_for_session7_rule_readings() -> None:
    table = load_homophones()
    assert render_words([zh("剥", "bao1")], table).text == "包"  # 剥个橘子
    assert render_words([zh("剥", "bo1")], table).text == "剥"  # 剥削's reading is left
    assert render_words([zh("闷", "men4")], table).text == "焖"  # 他这人挺闷的
    assert render_words([zh("郁闷", "yu4 men4")], table).text == "郁闷"  # a keep word
