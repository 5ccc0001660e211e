"""SSML input (``mixvox.ssml``): detection, each element's mapping onto the IR, hardening,
errors naming line and column, offsets into the user's SSML, and the CLI/API entry points."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import mixvox
from mixvox.cli import main
from mixvox.ir import CTRL, EN, ZH, Utterance
from mixvox.pipeline import Router, shared_router
from mixvox.ssml import MAX_DEPTH, MAX_SSML_CHARS, SsmlError, ipa_to_arpabet, is_ssml

ROUTER = Router()


def route(text: str) -> Utterance:
    return ROUTER.route(text)


def spoken_words(utt: Utterance) -> list[str]:
    return [w.spoken for w in utt.words if w.kind == "word"]


def controls(utt: Utterance) -> list[str]:
    return [w.spoken for w in utt.words if w.kind == "control"]


def codes(utt: Utterance) -> list[str]:
    return [w.code for w in utt.warnings]


# --- detection --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<speak>hi</speak>", True),
        ("  \n<speak version='1.0'>hi</speak>", True),
        ("\ufeff<speak>hi</speak>", True),
        ('<?xml version="1.0"?><speak>hi</speak>', True),
        ("<speak/>", True),
        ("<speaker>hi</speaker>", False),
        ("say <speak>hi</speak>", False),
        ("a < b > c", False),
        ("", False),
    ],
)
def test_is_ssml(text: str, expected: bool) -> None:
    assert is_ssml(text) is expected


def test_plain_text_with_angle_brackets_is_not_parsed() -> None:
    utt = route("if a < b then <b>")
    assert utt.input == "if a < b then <b>"
    assert "invalid-ssml" not in codes(utt)


# --- elements ----------------------------------------------------------------------------------


def test_break_time_and_strength_become_pause_tokens_with_the_tag_offsets() -> None:
    text = '<speak>今天<break time="100ms"/>开会<break time="1s"/>好<break strength="strong"/>的</speak>'
    utt = route(text)
    assert controls(utt) == ["[uv_break]", "[llbreak]", "[lbreak]"]
    ctrl_words = [w for w in utt.words if w.kind == "control"]
    assert ctrl_words[0].text == '<break time="100ms"/>'
    assert text[ctrl_words[0].start : ctrl_words[0].end] == '<break time="100ms"/>'
    assert "ssml-break-capped" in codes(route('<speak>a<break time="3s"/>b</speak>'))
    assert controls(route('<speak>a<break strength="none"/>b</speak>')) == []


def test_say_as_kinds_in_chinese_and_english() -> None:
    zh = route(
        '<speak>日期<say-as interpret-as="date">2025-03-03</say-as>，电话'
        '<say-as interpret-as="telephone">138-0013</say-as>，第'
        '<say-as interpret-as="digits">2024</say-as>号，'
        '<say-as interpret-as="ordinal">3</say-as>名</speak>'
    )
    s = zh.spoken
    assert "二零二五年三月三日" in s
    assert "幺三八" in s and "零零幺三" in s
    assert "二零二四" in s
    assert "第三名" in s
    en = route(
        '<speak>It is on <say-as interpret-as="date">2025-03-03</say-as>, spell '
        '<say-as interpret-as="characters">abc</say-as>, you are '
        '<say-as interpret-as="ordinal">21</say-as>, call '
        '<say-as interpret-as="telephone">555-0100</say-as> at '
        '<say-as interpret-as="time">3:30pm</say-as>, '
        '<say-as interpret-as="cardinal">1,234</say-as> items.</speak>'
    )
    s = en.spoken
    assert "March third, twenty twenty five" in s
    assert "A B C" in s
    assert "twenty first" in s
    assert "five five five, zero one zero zero" in s
    assert "three thirty P M" in s
    assert "one thousand two hundred" in s


def test_say_as_that_does_not_fit_warns_and_reads_the_text() -> None:
    utt = route('<speak><say-as interpret-as="date">not a date</say-as></speak>')
    assert "ssml-say-as" in codes(utt)
    assert "not a date" in utt.spoken
    utt = route('<speak><say-as interpret-as="currency">5</say-as></speak>')
    assert "ssml-unsupported" in codes(utt) and utt.spoken == "五"


def test_sub_reads_the_alias_over_the_whole_element() -> None:
    text = '<speak>我爱<sub alias="万维网联盟">W3C</sub></speak>'
    utt = route(text)
    assert utt.spoken == "我爱万维网联盟"
    sub_words = [w for w in utt.words if w.start >= text.index("<sub")]
    assert sub_words and all(w.text.startswith("<sub") for w in sub_words)


def test_phoneme_pinyin_arpabet_and_ipa_are_overrides() -> None:
    utt = route(
        '<speak>去<phoneme alphabet="pinyin" ph="hang2">行</phoneme>里，用 '
        '<phoneme alphabet="arpabet" ph="EH1 N JH AH0 N EH1 K S">nginx</phoneme> 和 '
        '<phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme></speak>'
    )
    by = {w.spoken: w for w in utt.words if w.override}
    assert by["行"].phonemes == ["hang2"] and by["行"].lang == ZH
    assert by["nginx"].phonemes == "EH1 N JH AH0 N EH1 K S".split()
    assert by["tomato"].phonemes == ["T", "AH0", "M", "AA1", "T", "OW0"]
    assert by["tomato"].text.startswith("<phoneme")
    assert not utt.warnings


@pytest.mark.parametrize(
    "ph, alphabet",
    [("yin2", "pinyin"), ("hang", "pinyin"), ("EH N", "arpabet"), ("ʁ", "ipa"), ("x", "klingon")],
)
def test_bad_phoneme_warns_and_reads_the_text(ph: str, alphabet: str) -> None:
    text = f'<speak>我在<phoneme alphabet="{alphabet}" ph="{ph}">银行</phoneme></speak>'
    utt = route(text)
    bad = [w for w in utt.warnings if w.code == "bad-override"]
    assert bad and bad[0].text.startswith("<phoneme")
    assert "银行" in utt.spoken and not any(w.override for w in utt.words)


def test_ipa_to_arpabet() -> None:
    assert ipa_to_arpabet("ˈhɛloʊ")[0] == ["HH", "EH1", "L", "OW0"]
    assert ipa_to_arpabet("kæt")[0] == ["K", "AE1", "T"]  # no mark: first vowel stressed
    assert ipa_to_arpabet("ˈtʃɝtʃ")[0] == ["CH", "ER1", "CH"]
    phones, why = ipa_to_arpabet("ɣa")
    assert phones is None and "ɣ" in why


def test_lang_forces_numbers_and_sentence_matrix() -> None:
    utt = route(
        '<speak>价格 <lang xml:lang="en-US">2025</lang> 年，<lang xml:lang="zh-CN">3:30</lang></speak>'
    )
    langs = {w.spoken: w.lang for w in utt.words if w.kind == "word"}
    assert langs["twenty twenty five"] == EN
    assert "三点三十分" in utt.spoken
    whole = route('<speak><lang xml:lang="en-US"><s>3 cats</s></lang><s>3个</s></speak>')
    assert [s.matrix for s in whole.sentences] == [EN, ZH]
    assert "three" in whole.spoken and "三" in whole.spoken


def test_lang_en_over_chinese_text_warns_and_keeps_chinese() -> None:
    utt = route('<speak><lang xml:lang="en-US">你好</lang></speak>')
    assert "ssml-lang" in codes(utt) and utt.spoken == "你好"
    utt = route('<speak><lang xml:lang="ja-JP">hello</lang></speak>')
    assert "ssml-lang" in codes(utt) and utt.spoken == "hello"


def test_prosody_rate_brackets_content_with_speed_tokens() -> None:
    utt = route(
        '<speak>快<prosody rate="slow">慢慢<prosody rate="200%">飞</prosody>说</prosody>完</speak>'
    )
    assert controls(utt) == ["[speed_4]", "[speed_9]", "[speed_4]", "[speed_5]"]
    assert "ssml-attribute" in codes(route('<speak><prosody pitch="high">高</prosody></speak>'))


def test_p_and_s_are_sentences_and_xml_whitespace_is_not() -> None:
    text = "<speak>\n  <p>\n    <s>今天的 meeting\n      改到 3:30 PM</s>\n    <s>好的</s>\n  </p>\n</speak>"
    utt = route(text)
    assert [s.text for s in utt.sentences][1] == "好的"
    assert len(utt.sentences) == 2
    assert "three thirty" in utt.spoken


def test_unsupported_elements_and_attributes_warn_but_read_the_text() -> None:
    utt = route(
        '<speak><emphasis level="strong">重要</emphasis><mark name="m1"/>事<break tme="1s"/></speak>'
    )
    assert "ssml-unsupported" in codes(utt) and "ssml-attribute" in codes(utt)
    assert utt.spoken.startswith("重要事")


def test_entities_and_cdata_are_text_with_exact_offsets() -> None:
    text = "<speak>AT&amp;T <![CDATA[R&D]]> 3&lt;5</speak>"
    utt = route(text)
    # AT&T is one word ("A T and T"): its exact source slice holds the entity
    amp = next(w for w in utt.words if "and" in w.spoken.split() and "&amp;" in w.text)
    assert text[amp.start : amp.end] == "AT&amp;T"
    assert amp.start < text.index("&amp;") < amp.end
    lt = next(w for w in utt.words if w.spoken == "is less than")
    assert text[lt.start : lt.end] == "&lt;"  # an entity read on its own: its exact offsets
    for w in utt.words:
        assert text[w.start : w.end] == w.text


def test_offsets_point_into_the_ssml() -> None:
    text = '<speak><s>你好 <break time="300ms"/> world</s></speak>'
    utt = route(text)
    assert utt.input == text
    hello = next(w for w in utt.words if w.spoken == "你好")
    world = next(w for w in utt.words if w.spoken == "world")
    assert (hello.start, hello.end) == (text.index("你好"), text.index("你好") + 2)
    assert text[world.start : world.end] == "world"
    for sent in utt.sentences:
        assert text[sent.start : sent.end] == sent.text
        for sp in sent.spans:
            assert text[sp.start : sp.end] == sp.text


def test_warnings_from_text_inside_ssml_cite_the_ssml_offsets() -> None:
    text = "<speak>你好😀世界</speak>"
    utt = route(text)
    emoji = next(w for w in utt.warnings if w.code == "emoji")
    assert text[emoji.start : emoji.end] == "😀"
    assert f"at {text.index('😀')}" in emoji.message


# --- errors and hardening ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("<speak>abc", 1, 11, "no element found"),
        ("<speak>\n  <s>abc</p>\n</speak>", 2, 11, "mismatched tag"),
        ("<speak>&foo;</speak>", 1, 8, "undefined entity"),
        ("<speak>a\x00b</speak>", 1, 9, "not well-formed"),
        ("<speak>a\x1b[31m</speak>", 1, 9, "not well-formed"),
        ('<speak><break time="soon"/></speak>', 1, 8, "duration"),
        ('<speak><break time="1s">x</break></speak>', 1, 8, "empty"),
        ("<speak><sub>x</sub></speak>", 1, 8, "alias"),
        ('<speak><say-as interpret-as="date"><b>1</b></say-as></speak>', 1, 8, "text only"),
        ('<speak><prosody rate="zoom">x</prosody></speak>', 1, 8, "rate"),
        ("<speak><lang>x</lang></speak>", 1, 8, "xml:lang"),
        ("<speak><speak>x</speak></speak>", 1, 8, "inside"),
        ('<?xml version="1.0"?><p>hi</p>', 1, 22, "root element must be <speak>"),
        ("<speak>\ud800</speak>", 1, 8, "surrogate"),
    ],
)
def test_invalid_ssml_is_an_error_naming_line_and_column(
    text: str, line: int, column: int, words: str
) -> None:
    with pytest.raises(SsmlError) as info:
        route(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert words in str(err)
    assert f"line {line}, column {column}" in str(err)
    assert isinstance(err, mixvox.MixvoxError)


def test_dtd_entities_and_external_references_are_refused() -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE speak [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><speak>&b;</speak>'
    )
    with pytest.raises(SsmlError, match="DTD"):
        route(bomb)
    external = '<!DOCTYPE speak SYSTEM "file:///etc/passwd"><speak>x</speak>'
    with pytest.raises(SsmlError, match="DTD"):
        route(external)


def test_size_and_depth_are_bounded() -> None:
    with pytest.raises(SsmlError, match="longer than"):
        route("<speak>" + "好" * MAX_SSML_CHARS + "</speak>")
    deep = "<speak>" + "<s>" * MAX_DEPTH + "x" + "</s>" * MAX_DEPTH + "</speak>"
    with pytest.raises(SsmlError, match="deeper"):
        route(deep)


# --- entry points ---------------------------------------------------------------------------------


def test_public_route_accepts_ssml_and_reuses_one_router() -> None:
    utt = mixvox.route('<speak>你好<break time="300ms"/>world</speak>')
    assert controls(utt) == ["[lbreak]"]
    assert shared_router() is shared_router()


def test_shared_router_reloads_an_edited_lexicon(tmp_path) -> None:
    lex = tmp_path / "lex.tsv"
    lex.write_text("foo\tfoo bar\ten\n", encoding="utf-8")
    first = shared_router([lex])
    assert shared_router([lex]) is first
    lex.write_text("foo\tbaz qux quux\ten\n", encoding="utf-8")
    assert shared_router([lex]) is not first


def test_cli_route_reads_ssml_and_reports_errors() -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["route", "--json", '<speak>3<break time="1s"/>个</speak>'])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert "[llbreak]" in obj["spoken"]
    res = runner.invoke(main, ["route", "<speak><s>x</speak>"])
    assert res.exit_code == 1
    assert "invalid SSML at line 1, column 14" in res.output
    assert "Traceback" not in res.output


def test_synthesizer_speaks_ssml_as_one_document() -> None:
    with mixvox.Synthesizer("espeak") as tts:
        plain = tts.synthesize("你好")
        with_break = tts.synthesize('<speak>你好<break time="500ms"/></speak>')
        assert len(with_break) > len(plain)
        with pytest.raises(SsmlError):
            tts.synthesize("<speak>你好")


def test_ctrl_spans_are_ctrl() -> None:
    utt = route("<speak>a<break/>b</speak>")
    assert [sp.lang for s in utt.sentences for sp in s.spans] == [EN, CTRL, EN]


def test_batch_speaks_ssml_lines_and_reports_the_broken_one(tmp_path) -> None:
    script = tmp_path / "lines.txt"
    script.write_text(
        '<speak>你好<break time="300ms"/>world</speak>\n<speak><s>坏</speak>\n', encoding="utf-8"
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main, ["batch", str(script), "-o", str(out), "--engine", "espeak", "-q"]
    )
    assert res.exit_code == 1, res.output  # one line failed
    assert (out / "0001.wav").is_file() and not (out / "0002.wav").exists()
    assert "invalid SSML at line 1, column 14" in res.output


def test_raw_mode_refuses_ssml() -> None:
    with mixvox.Synthesizer("espeak") as tts, pytest.raises(mixvox.MixvoxError, match="raw"):
        tts.synthesize("<speak>你好</speak>", raw=True)


def test_say_as_language_ignores_inserted_tokens_and_pronunciations() -> None:
    text = (
        '<speak>第<break time="300ms"/><break time="300ms"/><phoneme alphabet="pinyin" '
        'ph="hang2">行</phoneme><say-as interpret-as="ordinal">3</say-as>名</speak>'
    )
    assert "第三" in route(text).spoken  # zh context, not "3rd" from "uv_break" / "hang2"


def test_xml_lang_on_a_sentence_is_honoured_but_on_speak_is_a_hint() -> None:
    utt = route('<speak xml:lang="zh-CN"><s xml:lang="en-US">2 cats</s><s>it is 5</s></speak>')
    assert [s.matrix for s in utt.sentences] == [EN, EN]
    assert "two cats" in utt.spoken and "five" in utt.spoken


@pytest.mark.parametrize("ph", ["yín háng", "yin 2 hang 2", "YIN2 HANG2"])
def test_pinyin_in_the_spellings_other_engines_accept(ph: str) -> None:
    utt = route(f'<speak><phoneme alphabet="pinyin" ph="{ph}">银行</phoneme></speak>')
    (w,) = utt.words
    assert w.override and w.phonemes == ["yin2", "hang2"] and not utt.warnings


def test_plain_text_syntax_works_inside_ssml() -> None:
    utt = route("<speak>[银行](yin2 hang2)[laugh]好</speak>")
    assert utt.words[0].override and "[laugh]" in controls(utt)
