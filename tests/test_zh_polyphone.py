"""The polyphone layers: context model, word-internal rules, word-sequence rules, t2s."""

from __future__ import annotations

import zipfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from mixvox.frontends.zh import polyphone
from mixvox.frontends.zh.plugin import ZhFrontend, g2p_zh
from mixvox.frontends.zh.polymodel import PolyphoneModel, SentenceReadings, default_model


def lexical(text: str) -> list[str]:
    """Lexical (pre-sandhi) pinyin of every Han character of ``text``."""
    r = ZhFrontend().char_readings(text, sandhi=False)
    return [r[i] for i in sorted(r)]


def reading_at(text: str, ch_index: int) -> str:
    return ZhFrontend().char_readings(text, sandhi=False)[ch_index]


# -- the weights file ---------------------------------------------------------------------------


def test_weights_are_plain_arrays_loaded_without_pickle() -> None:
    ref = resources.files("mixvox.frontends.zh").joinpath("data", "polyphone_bilstm.npz")
    with ref.open("rb") as fh, zipfile.ZipFile(fh) as z:
        names = z.namelist()
    assert all(n.endswith(".npy") for n in names)
    with ref.open("rb") as fh, np.load(fh, allow_pickle=False) as z:  # raises on object arrays
        for k in z.files:
            assert z[k].dtype.kind in "fU", (k, z[k].dtype)
        assert z["embedding"].shape[0] == len(z["vocab"])
        assert z["w_fc2"].shape[0] == len(z["classes"])
        assert "Apache-2.0" in str(z["source"])


def _reference_bilstm(m: PolyphoneModel, text: str) -> np.ndarray:
    """A plain two-pass LSTM straight from the PyTorch equations, to check the fused one."""
    ref = resources.files("mixvox.frontends.zh").joinpath("data", "polyphone_bilstm.npz")
    with ref.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        a = {k: z[k] for k in z.files}
    idx = {str(c): i for i, c in enumerate(a["vocab"])}
    ids = [idx["시"]] + [idx.get(c, idx["<UNK>"]) for c in text] + [idx["끝"]]
    x = a["embedding"][ids].astype(np.float64)

    def run(d: str, seq: np.ndarray) -> np.ndarray:
        hid = a[f"w_hh_{d}"].shape[1]
        h, c, out = np.zeros(hid), np.zeros(hid), []
        for xt in seq:
            g = a[f"w_ih_{d}"] @ xt + a[f"b_ih_{d}"] + a[f"w_hh_{d}"] @ h + a[f"b_hh_{d}"]
            i, f, gg, o = np.split(g, 4)
            sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
            c = sig(f) * c + sig(i) * np.tanh(gg)
            h = sig(o) * np.tanh(c)
            out.append(h)
        return np.array(out)

    return np.concatenate([run("fw", x), run("bw", x[::-1])[::-1]], axis=1)


@pytest.mark.parametrize("use_onnx", [True, False])
def test_lstm_matches_the_plain_equations(use_onnx: bool) -> None:
    m = PolyphoneModel()
    m.load()
    assert m.wait_onnx()  # onnxruntime is a core dependency
    m.use_onnx = use_onnx
    text = "专案组反复调查，于是向上级递交了结案报告。Hello 123"
    got = m.hidden_states(text)
    want = _reference_bilstm(m, text)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=2e-5)


def test_onnx_graph_holds_the_npz_weights() -> None:
    import onnx
    from onnx import numpy_helper

    data = resources.files("mixvox.frontends.zh").joinpath("data", "polyphone_bilstm.onnx")
    graph = onnx.load_from_string(data.read_bytes()).graph
    inits = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    ref = resources.files("mixvox.frontends.zh").joinpath("data", "polyphone_bilstm.npz")
    with ref.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
        np.testing.assert_array_equal(inits["emb"], z["embedding"])
    assert [n.op_type for n in graph.node].count("LSTM") == 1


def test_model_is_lazy() -> None:
    m = PolyphoneModel()
    fe = ZhFrontend()
    fe.model = m
    fe.char_readings("北京欢迎你")  # dictionary words and 你: the model is not needed
    assert not m._loaded
    assert fe.char_readings("我看了书", sandhi=False)[2] == "le5"  # one-character word 了
    assert m._loaded


def test_only_trained_characters_are_decided() -> None:
    m = default_model()
    assert m.is_polyphone("还") and m.is_polyphone("了")
    assert not m.is_polyphone("他")  # pypinyin lists tuo2 too, but CPP does not: not ours
    assert m.predict("他们") == {}
    assert m.only_reading("晟") == "sheng4"  # CPP knows one reading: pypinyin's first is rare


def test_model_view_leaves_out_unreadable_characters() -> None:
    m = default_model()
    a = SentenceReadings(m, "他还\x00😀没来").reading(1)
    b = SentenceReadings(m, "他还没来").reading(1)
    assert a == b == "hai2"
    assert SentenceReadings(m, "他").reading(5) is None


# -- the model where the dictionary does not decide --------------------------------------------


@pytest.mark.parametrize(
    ("text", "idx", "reading"),
    [
        ("他还没有回来。", 1, "hai2"),
        ("这条路很长。", 4, "chang2"),
        ("他为人民服务。", 1, "wei4"),
        ("他被选为主席。", 3, "wei2"),
        ("我看了一本书。", 2, "le5"),
        ("他们在场外等着。", 6, "zhe5"),
    ],
)
def test_model_reads_one_character_words(text: str, idx: int, reading: str) -> None:
    assert reading_at(text, idx) == reading


def test_place_name_with_wei_is_left_to_the_model() -> None:
    # 圩镇 is not in our table (xu1 there lost 2 of 3 CPP even lines: 六圩镇, 大圩镇 are wei2)
    assert reading_at("他住在六圩镇。", 4) == "wei2"
    assert reading_at("大圩镇有一条河。", 1) == "wei2"


def test_dictionary_words_stay_ours() -> None:
    assert lexical("行长") == ["hang2", "zhang3"]
    assert lexical("银行") == ["yin2", "hang2"]
    # our table's reading survives the model: citation tone lexically, neutral when spoken
    assert lexical("头发") == ["tou2", "fa4"]
    assert g2p_zh("头发") == ["tou2", "fa5"]


# -- neutral tones: lexical citation tone, spoken neutral (phrases.tsv X4/5) --------------------


def test_unstressed_content_morphemes_are_citation_lexically_neutral_when_spoken() -> None:
    # CPP (and any citation-tone benchmark) writes 认识 shi2, 衣服 fu2, 弟弟 di4: that is our
    # lexical layer now; the espeak path still speaks the neutral tone
    assert lexical("我认识他") == ["wo3", "ren4", "shi2", "ta1"]
    assert g2p_zh("我认识他") == ["wo3", "ren4", "shi5", "ta1"]
    assert lexical("衣服") == ["yi1", "fu2"] and g2p_zh("衣服") == ["yi1", "fu5"]
    assert lexical("我弟弟") == ["wo3", "di4", "di4"] and g2p_zh("我弟弟")[1:] == ["di4", "di5"]


def test_toneless_morphemes_stay_neutral_lexically() -> None:
    # particles and suffixes have no citation tone: CPP writes them 5 as well
    assert lexical("什么")[1] == "me5"
    assert lexical("石头")[1] == "tou5"
    assert lexical("右边")[1] == "bian5"


def test_neutral_tone_comes_before_sandhi() -> None:
    # 耳朵 er3 duo3 lexically; spoken duo5, so no third-tone sandhi on 耳 (er3, not er2)
    assert lexical("耳朵") == ["er3", "duo3"]
    assert g2p_zh("耳朵") == ["er3", "duo5"]
    # a word no dictionary knows, read by its parts, keeps the parts' neutral tones
    assert g2p_zh("姥姥家")[:2] == ["lao3", "lao5"]


def test_citation_slash_five_needs_a_tone(monkeypatch: pytest.MonkeyPatch) -> None:
    from mixvox.frontends.zh import g2p

    class Fake:
        def joinpath(self, *_a: str) -> Fake:
            return self

        def read_text(self, _enc: str) -> str:
            return "认识\tren4 shi5/5\n"

    monkeypatch.setattr(g2p.resources, "files", lambda _pkg: Fake())
    with pytest.raises(ValueError, match="citation tone"):
        g2p._load_table("phrases.tsv")


# -- rules never cross a word boundary ---------------------------------------------------------


def test_word_internal_rule_does_not_cross_into_the_next_word() -> None:
    text = "专案组向上级递交了结案报告。"
    assert reading_at(text, text.index("了")) == "le5"  # 递交/了/结案, not 了结
    assert reading_at("此案已经了结。", 4) == "liao3"


def test_province_is_not_governor() -> None:
    text = "吉林省长岭县"
    assert reading_at(text, 3) == "chang2"  # 吉林省/长岭县, not 省长
    assert reading_at("他当上了省长。", 5) == "zhang3"


def test_rule_context_is_the_word_only() -> None:
    # the 了 rule lists 结 on its right; given only the word's own characters it cannot
    # see the next word's 结
    assert polyphone.rule("了", "", "") is None
    assert polyphone.rule("了", "", "结") == "liao3"


@pytest.mark.parametrize(
    ("text", "pinyin"),
    [
        ("他跑得很快", "ta1 pao3 de5 hen3 kuai4"),
        ("我得去上班", "wo2 dei3 qu4 shang4 ban1"),
        ("他得了第一名", "ta1 de2 le5 di4 yi1 ming2"),
        ("东西都挺便宜的", "dong1 xi5 dou1 ting3 pian2 yi5 de5"),
        ("他认真地学习", "ta1 ren4 zhen1 de5 xue2 xi2"),
        ("他慢慢地走", "ta1 man4 man4 de5 zou3"),
        ("我去图书馆还书", "wo3 qu4 tu2 shu1 guan3 huan2 shu1"),
        ("这件事我做不了", "zhe4 jian4 shi4 wo3 zuo4 bu5 liao3"),
        ("突然地震了", "tu1 ran2 di4 zhen4 le5"),  # 地震 is one word: no 地 rule
    ],
)
def test_word_sequence_rules(text: str, pinyin: str) -> None:
    assert " ".join(g2p_zh(text)) == pinyin


@pytest.mark.parametrize(
    ("text", "char", "reading"),
    [
        ("缐补衮为宁前参将。", "将", "jiang4"),  # classical: 参/将 is a rank, not 'will'
        ("黄忠箭射魏将后", "将", "jiang4"),
        ("他将参加比赛。", "将", "jiang1"),
        ("今宜永还本国。", "还", "huan2"),
        ("李唐为师，尽得其真传。", "尽", "jin4"),
        ("把羽毛弄干。", "弄", "nong4"),
        ("把羽毛弄干。", "干", "gan1"),
        ("住在弄堂里。", "弄", "long4"),
        ("该寺所藏佛像很多。", "藏", "cang2"),
        ("他盛米饭给我。", "盛", "cheng2"),
        ("翻身，续炸三分钟。", "炸", "zha2"),
        ("也有撒上少量可可粉的。", "撒", "sa3"),
        ("有人做持桨划行状。", "划", "hua2"),
        ("耕地时刨塌了老鼠窝", "刨", "pao2"),
    ],
)
def test_one_character_word_rules(text: str, char: str, reading: str) -> None:
    assert reading_at(text, text.index(char)) == reading


def test_rule_for_a_previous_word_needs_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # '+' asks for a previous word: at the start of a run the rule does not fire
    monkeypatch.setattr(polyphone, "word_rules", lambda: {"弄": [("nong4", ("+",), (), False)]})
    assert polyphone.after_word("弄", "", "") is None
    assert polyphone.after_word("弄", "再次", "") == "nong4"


def test_nong_rule_needs_a_subject_or_a_complement() -> None:
    assert polyphone.after_word("弄", "", "") is None  # a lane number: 593弄
    assert polyphone.after_word("弄", "王家", "") is None  # a lane name: the model decides
    assert polyphone.after_word("弄", "我", "") == "nong4"
    assert polyphone.after_word("弄", "再次", "干") == "nong4"


def test_word_rules_match_whole_words() -> None:
    assert polyphone.after_word("地", "突然", "跑") == "de5"
    assert polyphone.after_word("地", "然", "跑") is None  # one-character 然 is no adverb
    assert polyphone.after_word("还", "他", "书法") is None  # 书法 is not 书
    assert polyphone.after_word("还", "他", "书") == "huan2"
    assert polyphone.after_word("得", "跑", "很快") == "de5"  # function-word prefix


# -- traditional -> simplified keeps the reading ------------------------------------------------


def test_t2s_does_not_change_a_reading() -> None:
    assert g2p_zh("閤门") == ["ge2", "men2"]
    assert g2p_zh("閤門") == ["ge2", "men2"]
    fe = ZhFrontend()
    assert fe.to_simplified("閤門") == "閤门"  # 閤 -> 合 would read he2
    assert fe.to_simplified("頭髮長了") == "头发长了"  # ordinary conversion is untouched
    assert g2p_zh("頭髮") == ["tou2", "fa5"]


# -- ChatTTS homophones follow the same decision ------------------------------------------------


def _chattts_text(text: str) -> str:
    from mixvox.engines.chattts.render import render_words
    from mixvox.interfaces import FrontendContext, Lexicon
    from mixvox.ir import Span

    ctx = FrontendContext(lexicon=Lexicon("zh"), warn=lambda *a: None, matrix="zh")
    words = ZhFrontend().analyze(Span("zh", text, 0, len(text)), ctx)
    return render_words(words).text


def test_chattts_homophones_follow_the_frontend() -> None:
    assert _chattts_text("他长得很高") == "他掌得很高"  # one-character word, rare reading
    assert _chattts_text("这条路太长了") == "这条路太长了"  # usual reading: left alone
    assert _chattts_text("行长很好") == "航掌很好"  # zhang3 said zhang2 by sandhi: still found
    assert _chattts_text("他很强") == "他很强"  # qiang2 is 强's own reading: no 抢
    assert _chattts_text("我去图书馆还书") == "我去图书馆环书"


def test_chattts_homophones_cover_more_rare_readings() -> None:
    assert _chattts_text("他住在厦门") == "他住在下门"  # xia4, not sha4
    assert _chattts_text("成吉思汗是可汗") == "成吉思韩是克韩"  # khan: han2, ke4
    assert _chattts_text("风靡全球") == "风米全球"
    assert _chattts_text("你应该去") == "你应该去"  # a common word on the keep list


def test_chattts_homophones_follow_the_everyday_rules() -> None:
    assert _chattts_text("把东西塞进包里") == "把东西腮进包里"  # sai1 by a word rule
    assert _chattts_text("他把腿折了") == "他把腿佘了"
    assert _chattts_text("树上结了很多果子") == "树上街了很多果子"
    assert _chattts_text("这孩子很结实") == "这孩子很结实"  # kept: the model reads it right
    assert _chattts_text("他背着书包") == "他杯着书包"


def test_chattts_homophones_follow_the_session6_rules() -> None:
    assert _chattts_text("我把钥匙落在家里了") == "我把钥匙辣在家里了"  # la4 by a word rule
    assert _chattts_text("树叶落在地上") == "树叶落在地上"  # luo4: the usual reading
    assert _chattts_text("他吐了一地") == "他兔了一地"
    assert _chattts_text("不要随地吐痰") == "不要随地吐痰"
    assert _chattts_text("你待会儿再来吧") == "你呆会儿再来吧"
    assert _chattts_text("他丢三落四的") == "他丢三落四的"  # a keep word


def test_chattts_reads_a_kept_traditional_character_right() -> None:
    assert _chattts_text("閤门") == "阁门"  # 閤 kept for its reading, written 阁 for ChatTTS


# -- speed shortcuts say the same --------------------------------------------------------------


def test_dictionary_word_cache_returns_copies() -> None:
    from mixvox.frontends.zh.g2p import ZhG2P

    g = ZhG2P()
    first = g.word_pinyin("银行")
    first[0] = "xx"  # a caller's edit must not reach the cache
    assert g.word_pinyin("银行") == ["yin2", "hang2"]
    # a rare word is never cached: the model may overrule it in one sentence and not another
    g.word_pinyin("叶儿")
    assert g._rare("叶儿") and "叶儿" not in g._fixed and "银行" in g._fixed


def test_segmenter_shortcut_finds_long_words() -> None:
    from mixvox.frontends.zh import g2p

    seg = g2p.ZhG2P()
    text = "中华人民共和国成立于一九四九年"
    fast = seg.segment(text)
    saved = g2p._SHORT
    try:
        g2p._SHORT = 99  # every length tried, as before the shortcut
        assert seg.segment(text) == fast
    finally:
        g2p._SHORT = saved
    assert "中华人民共和国" in fast


def test_t2s_shortcut_keeps_conversion() -> None:
    fe = ZhFrontend()
    assert fe.to_simplified("這是頭髮") == "这是头发"
    assert fe.to_simplified("这是头发") == "这是头发"  # nothing to change: OpenCC skipped
    assert fe._t2s_triggers and "這" in fe._t2s_triggers and "这" not in fe._t2s_triggers


# -- heteronym words: the model picks between the dictionary's senses ---------------------------


def test_heteronym_word_reading_follows_the_sentence() -> None:
    assert reading_at("他的肚子很大。", 2) == "du4"  # belly (pypinyin's entry says du3)
    assert reading_at("爆炒羊肚子是一道名菜。", 3) == "du3"  # tripe
    assert reading_at("那是一些见不得人的勾当。", 9) == "gou4"
    assert reading_at("大中祥符年间为勾当三班院。", 7) == "gou1"  # the Song-dynasty office
    assert reading_at("水分子", 1) == "fen1" and reading_at("知识分子", 2) == "fen4"


def test_heteronym_choice_is_not_cached_across_sentences() -> None:
    fe = ZhFrontend()
    assert fe.char_readings("爆炒羊肚子是一道名菜。", sandhi=False)[3] == "du3"
    assert fe.char_readings("他的肚子很大。", sandhi=False)[2] == "du4"


def test_heteronym_without_model_keeps_the_dictionary_reading() -> None:
    r = ZhFrontend(polyphone_model=False).char_readings("他的肚子很大。", sandhi=False)
    assert r[2] == "du3"  # pypinyin's reading: the list only lets the model choose


def test_heteronym_table_rejects_bad_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(polyphone, "_lines", lambda _name: [["肚子", "5", "du4 du3"]])
    polyphone.heteronyms.cache_clear()
    try:
        with pytest.raises(ValueError, match="bad entry"):
            polyphone.heteronyms()
    finally:
        monkeypatch.undo()
        polyphone.heteronyms.cache_clear()


def test_pypinyin_entry_fixed_in_our_table() -> None:
    assert reading_at("一种玉米粉糊糊。", 5) == "hu4"  # 糊糊 hù·hu (pypinyin: hu1)


def test_locative_bian_is_toneless_after_a_direction() -> None:
    assert reading_at("仅有西南边的一座楼", 4) == "bian5"  # a word no dictionary knows
    assert reading_at("他住在北边", 4) == "bian5"  # our table (pypinyin: bian1)
    assert reading_at("他在旁边", 3) == "bian1"  # 旁边 keeps its full tone
    assert reading_at("学校周边", 3) == "bian1"


def test_reviewed_pypinyin_entries_are_corrected() -> None:
    # 朴 pǔ 'plain' (pypinyin: piáo, the surname), 出处 chù, 释迦牟尼 móu, 南燕 Yān (the state)
    assert lexical("他的生活很简朴")[-1] == "pu3"
    assert reading_at("这句话的出处在哪里", 5) == "chu4"
    assert lexical("释迦牟尼")[2] == "mou2"
    assert reading_at("南燕是十六国之一", 1) == "yan1"


def test_reading_fixes_do_not_change_segmentation() -> None:
    # phrase_fixes.tsv changes readings only: 下处 (xià·chu) must not cut 一下/处理 as 一/下处/理
    from mixvox.frontends.zh.g2p import ZhG2P

    g = ZhG2P()
    assert "处理" in g.segment("我们一下处理完")
    assert g.word_pinyin("下处") == ["xia4", "chu4"]  # lexical: citation tone


def test_own_tables_include_the_reading_fixes() -> None:
    from mixvox.frontends.zh.g2p import ZhG2P

    g = ZhG2P()
    assert g.is_own("简朴") and g.is_own("认识") and not g.is_own("银杏")
    assert g.log_prob("认识") > g.log_prob("没有这个词的词") == -99.0


def test_onnx_start_up_is_waited_for_at_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a short script that exits while ONNX Runtime starts in the background thread used to
    # abort (exit status 134): load() registers a hook that lets the start-up finish
    from mixvox.frontends.zh import polymodel

    hooks: list[tuple[object, tuple[object, ...]]] = []
    monkeypatch.setattr(polymodel.atexit, "register", lambda f, *a: hooks.append((f, a)))
    m = PolyphoneModel()
    m.load()
    assert len(hooks) == 1
    fn, args = hooks[0]
    fn(*args)  # type: ignore[operator]
    assert m._onnx_thread is not None and not m._onnx_thread.is_alive()


def test_nong_is_a_verb_only_with_a_subject_or_complement() -> None:
    assert reading_at("我来弄吧", 2) == "nong4"  # after a subject/auxiliary word
    assert reading_at("他把衣服弄干了。", 4) == "nong4"  # before its complement
    assert reading_at("他住在王家弄。", 5) == "long4"  # a lane: the model decides
    assert reading_at("新华路593弄", 6) == "long4"


# -- everyday speech: conversational polyphones the Wikipedia-trained model misreads -----------


@pytest.mark.parametrize(
    ("marked", "reading"),
    [
        ("这个箱子太[重]了", "zhong4"),  # 太重 is one jieba word: the rule inside the word
        ("你的行李好[重]啊", "zhong4"),
        ("他把书[重]新整理了一遍", "chong2"),
        ("他还没[还]我钱", "huan2"),
        ("说好下次再[还]。", "huan2"),  # the end of a clause: $ in word_rules.tsv
        ("今天下午[还]要开会", "hai2"),
        ("别[着]急，慢慢说", "zhao2"),  # a rare word keeps the part in our table (着急)
        ("他[背]着书包上学", "bei1"),
        ("他[背]书包上学", "bei1"),
        ("他[背]着父母偷偷去了网吧", "bei4"),
        ("[背]诵课文", "bei4"),
        ("这件事[得]抓紧办", "dei3"),
        ("他说话很[冲]", "chong4"),
        ("[冲]一杯咖啡", "chong1"),
        ("他[数]了数人数", "shu3"),
        ("质量太[差]", "cha4"),
        ("出[差]去上海", "chai1"),
        ("门口[种]了一棵树", "zhong4"),
        ("这里有三[种]花", "zhong3"),  # a measure word after a numeral, though 花 follows
        ("衣服[干]了没有", "gan1"),
        ("这个孩子[长]得真快", "zhang3"),
        ("把箱子[空]出来", "kong4"),
        ("他[削]了个苹果", "xiao1"),
        ("[削]减开支", "xue1"),
        ("门有一条[缝]", "feng4"),
        ("给他[缝]衣服", "feng2"),
    ],
)
def test_everyday_polyphones(marked: str, reading: str) -> None:
    i = marked.index("[")
    assert reading_at(marked.replace("[", "").replace("]", ""), i) == reading


def test_word_rules_accept_a_whole_word_and_the_clause_end() -> None:
    assert polyphone.after_word("背着", "他", "书包") == "bei1 zhe5"
    assert polyphone.after_word("背着", "他", "父母") == "bei4 zhe5"
    assert polyphone.after_word("背着", "他", "走") is None  # no cue: the model decides
    assert polyphone.after_word("还", "再", "") == "huan2"
    assert polyphone.after_word("还", "再", "说") is None


def test_word_rules_with_two_words_on_one_side_match_whole_words_only() -> None:
    # A+B on the right: 落/在/家里 is 'left behind at home'; 家里人 is another word
    assert polyphone.after_word("落", "钥匙", "在", after=("家里",)) == "la4"
    assert polyphone.after_word("落", "羽毛", "在", after=("家里人",)) is None
    assert polyphone.after_word("落", "羽毛", "在", after=("地上",)) is None
    # what falls (树叶, 雨点, 太阳) is luo4 before any left-behind rule
    assert polyphone.after_word("落", "树叶", "在", after=("家里",)) == "luo4"
    # B spelt over two words (吐/了/一/地), never a word's first character (一地图)
    assert polyphone.after_word("吐", "他", "了", after=("一", "地")) == "tu4"
    assert polyphone.after_word("吐", "他", "了", after=("一", "地图")) is None
    # *B+A on the left: 心里 a few words back makes 闷 mèn, 天气 mēn
    assert polyphone.after_word("闷", "很", "", before=("我", "心里")) == "men4"
    assert polyphone.after_word("闷", "很", "", before=("今天", "天气")) == "men1"
    assert polyphone.after_word("闷", "很", "", before=("我的", "心里话", "说")) == "men1"
    # *把+: 把 some words back, any previous word (把/作业/落/在)
    assert polyphone.after_word("落", "作业", "在", before=("我", "把")) == "la4"
    assert polyphone.after_word("落", "羽毛", "在", before=("我们",)) is None
    assert polyphone.after_word("落", "太阳", "在", before=("我们",)) == "luo4"  # what falls
    # ^: the start of the run (应/令 'should order' in an edict; 一首/应/令/诗 stays yìng)
    assert polyphone.after_word("应", "", "令") == "ying1"
    assert polyphone.after_word("应", "一首", "令") is None


def test_number_after_the_run_is_the_hash_word() -> None:
    # "#": the run of Han text ends right before a number
    assert polyphone.after_word("重", "笔记本", "", after=("#",)) == "zhong4"
    assert polyphone.after_word("重", "笔记本", "") is None  # 很重 etc. decide elsewhere
    assert polyphone.after_word("重", "笔记本", "约", after=("#",)) == "zhong4"
    assert lexical("重3kg")[0] == "zhong4"


def test_an_anywhere_rule_is_kept_in_a_rare_word_however_it_is_cut() -> None:
    # 率 lv4 after any character of its word (利率, 准确率), even where the model, reading
    # the digits around it, is near certain of shuai4; 草率 率领 keep shuai4
    assert polyphone.anywhere_rule("率", "利", "") == "lv4"
    assert polyphone.anywhere_rule("率", "草", "") is None  # 草率: the shuai4 rule comes first
    assert polyphone.anywhere_rule("率", "", "领") is None
    assert lexical("房贷利率下调0.25个百分点。")[3] == "lv4"
    assert lexical("他做事很草率")[5] == "shuai4"


@pytest.mark.parametrize(
    ("marked", "reading"),
    [
        ("晋文公的大臣赵[衰]", "cui1"),  # 赵衰 Zhào Cuī
        ("国力逐渐[衰]落", "shuai1"),
        ("[任]弼时同志", "ren2"),  # the surname 任 rén
        ("他担[任]班长", "ren4"),
        ("[应]令各地官府严加查办", "ying1"),  # 'should order' (edict style)
        ("这是一首[应]令诗", "ying4"),  # a poem written on command
        ("机器运[转]正常", "zhuan4"),  # XHC 运转 yùnzhuàn
        ("地球绕着太阳运[转]", "zhuan4"),
        ("她扎了个马[尾]", "wei3"),  # XHC 马尾 mǎwěi (yǐ only in 马尾儿)
        ("在家里[待]着", "dai1"),
        ("[待]会儿见", "dai1"),
        ("他一家遭了[难]", "nan4"),
        ("他大[号]一声", "hao2"),
        ("一层又一[重]", "chong2"),
    ],
)
def test_names_classical_and_stay_readings(marked: str, reading: str) -> None:
    i = marked.index("[")
    assert reading_at(marked.replace("[", "").replace("]", ""), i) == reading


def test_a_reduplicated_verb_reads_as_the_verb_alone() -> None:
    # 教教 is a rare word the model read jiao4 jiao4; 教/我 is jiao1 by a word rule
    assert lexical("你教教我吧")[1:3] == ["jiao1", "jiao1"]
    assert lexical("他在学校教书")[4] == "jiao1"
    assert lexical("我们教室很大")[2] == "jiao4"  # 教室: a dictionary word, untouched


def test_word_rule_reading_must_have_a_syllable_per_character(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(polyphone, "_lines", lambda name: [["背着", "bei1", "-", "书包"]])
    polyphone.word_rules.cache_clear()
    try:
        with pytest.raises(ValueError, match="bad rule"):
            polyphone.word_rules()
    finally:
        monkeypatch.undo()
        polyphone.word_rules.cache_clear()


@pytest.mark.parametrize(
    ("marked", "reading"),
    [
        ("古[柏]参天", "bai3"),  # the tree (CPP even lines); 柏林 stays bo2
        ("院子里种着[柏]树", "bai3"),
        ("[柏]林墙", "bo2"),
        ("常规驾驶[杆]均能使用", "gan3"),  # a lever: 杆 gǎn
        ("推下操纵[杆]", "gan3"),
        ("旗[杆]很高", "gan1"),
        ("踩[煞]车", "sha1"),
        ("[斗]栱是中式建筑的特色", "dou3"),
        ("小说《麦秸[垛]》", "duo4"),
        ("后殿的门[樘]与梁柱", "tang2"),
        ("俺还有手艺做[哩]！", "li5"),  # a clause-final particle
        ("他跑了五[哩]。", "li3"),  # a mile after a numeral
        ("平方[差]公式", "cha1"),  # 方差 fāngchā (pypinyin chà)
        ("昼夜温[差]大", "cha1"),
    ],
)
def test_dictionary_readings_found_on_cpp_even_lines(marked: str, reading: str) -> None:
    i = marked.index("[")
    assert reading_at(marked.replace("[", "").replace("]", ""), i) == reading


def test_everyday_polyphone_sentences() -> None:
    """``tests/data/zh_everyday_polyphones.tsv``: conversational sentences (长 行 重 还 得 了 着
    便宜 音乐 乐观 一会儿 好奇 爱好 …), each marked character read in its everyday sense."""
    path = Path(__file__).parent / "data" / "zh_everyday_polyphones.tsv"
    fe = ZhFrontend()
    wrong = []
    rows = [ln.split("\t") for ln in path.read_text("utf-8").splitlines() if ln and ln[0] != "#"]
    for marked, reading in rows:
        assert marked.count("[") == 1 and marked.count("]") == 1, marked  # one mark per row
        i = marked.index("[")
        got = fe.char_readings(marked.replace("[", "").replace("]", ""), sandhi=False)[i]
        if got != reading:
            wrong.append((marked, got, reading))
    assert len(rows) >= 100
    assert not wrong


def test_word_rules_amount_and_nearby_word_patterns() -> None:
    # A+%: the word after A is a Han amount or a number follows (差/了/三分 chà)
    assert polyphone.after_word("差", "我", "了", after=("三分",)) == "cha4"
    assert polyphone.after_word("差", "我", "了", after=("#",)) == "cha4"
    assert polyphone.after_word("差", "", "了", after=("人", "去")) is None
    # *X: X is the next word or one of the two after it (为/公司/效力), whole words only
    assert polyphone.after_word("为", "愿意", "公司", after=("效力",)) == "wei4"
    assert polyphone.after_word("为", "愿意", "公司", after=("效力度",)) is None
    # A+: some word follows A (任/小/明 at a clause start); 任/小 alone is no name
    assert polyphone.after_word("任", "", "小", after=("明",)) == "ren2"
    assert polyphone.after_word("任", "", "小") is None


def test_yes_no_question_reads_the_predicate() -> None:
    from mixvox.frontends.zh.g2p import _a_not_a

    # at the end of the question: as after 很 (很长 cháng); before an object: as before it
    assert _a_not_a("长", "绳子", "不", (), ("长",)) == "chang2"
    assert _a_not_a("长", "不", "", ("绳子", "长"), ()) == "chang2"
    assert _a_not_a("长", "他", "不", (), ("长", "个子")) == "zhang3"
    assert _a_not_a("重", "箱子", "不重", (), ()) == "zhong4"  # jieba's word 不重
    assert _a_not_a("长", "他", "得", (), ()) is None  # no X不X: the usual rules decide


def test_yes_no_question_falls_back_to_the_not_x_reading() -> None:
    from mixvox.frontends.zh.g2p import _a_not_a

    # 还 has no rule after 很: the question reads X as 不/X does (huán at the clause end)
    assert _a_not_a("还", "你", "不", (), ("还",)) == "huan2"
    assert _a_not_a("还", "你", "不", (), ("还", "我")) == "huan2"
    # X/不/XY: the first X as in the word of the second half (还/不/还给 huán)
    assert reading_at("你还不还给他", 1) == "huan2"


def test_sentence_cue_crosses_commas_not_sentence_ends() -> None:
    # @X entries see the earlier clauses of the sentence (豆子/泡 … ，都/涨起来 zhàng)
    assert polyphone.after_word("涨", "都", "了", earlier=("豆子", "泡", "了", "一夜", "都")) == (
        "zhang4"
    )
    assert polyphone.after_word("涨", "都", "了", earlier=("豆子", "一夜", "都")) is None
    assert reading_at("豆子泡了一夜，都涨起来了", 8) == "zhang4"
    assert reading_at("豆子泡了一夜。都涨起来了", 8) == "zhang3"  # a new sentence: no cue
    # a price word in the sentence wins over the soaking verb (泡/了/杯/茶，股票/又/涨)
    assert reading_at("泡了杯茶，一看股票又涨了", 10) == "zhang3"


def test_names_jieba_keeps_whole_take_the_surname_reading() -> None:
    assert reading_at("单田芳说评书", 0) == "shan4"
    assert reading_at("区瑞强唱过这首歌", 0) == "ou1"
    # the same characters outside a name keep their readings
    assert reading_at("单位发了通知", 0) == "dan1"
    assert reading_at("这个地区很大", 3) == "qu1"
    from mixvox.frontends.zh import g2p

    tables = g2p._shared_tables(g2p._jieba_dict_path())
    names = tables[6]
    assert names.get("单田芳") == "shan4" and names.get("解晓东") == "xie4"
    # a place or a transliteration in jieba's nr list is no given name (解上州, 缪尔达)
    assert "解上州" not in names and "缪尔达" not in names
    # 任 and 曾 are verbs before offices in jieba's list (任中书): not read as names
    assert not any(w[0] in "任曾" for w in names)


def test_verb_like_surnames_are_names_in_a_persons_context() -> None:
    from mixvox.frontends.zh import g2p

    cued = g2p._shared_tables(g2p._jieba_dict_path())[7]
    assert cued.get("任正非") == "ren2" and cued.get("曾志伟") == "zeng1"
    assert "任中书" in cued  # a phrase in jieba's name list: only the context tells
    # a title, a verb of saying after it, a role before it
    assert reading_at("任正非先生说过", 0) == "ren2"
    assert reading_at("曾志伟说", 0) == "zeng1"
    assert reading_at("华为创始人任正非", 5) == "ren2"
    # no person context: the verb / adverb reading stays, and so do the words
    assert reading_at("他后任中书令", 2) == "ren4"
    assert reading_at("他曾率军出征", 1) == "ceng2"
    assert reading_at("任正非", 0) == "ren4"
    assert reading_at("我曾经去过", 1) == "ceng2"
    assert reading_at("任何人", 0) == "ren4"
    # names that fail the given-name statistics (曾荫权, 曾子墨) are read in context too, and a
    # role or a verb taking a person may stand before 了 (采访/了/曾宝仪)
    assert reading_at("曾荫权先生出席了晚宴", 0) == "zeng1"
    assert reading_at("记者采访了曾宝仪", 5) == "zeng1"
    # the reading depends on the sentence: never cached as a dictionary word's
    fe = ZhFrontend()
    assert fe.char_readings("任正非表示", sandhi=False)[0] == "ren2"
    assert fe.char_readings("任正非", sandhi=False)[0] == "ren4"


def test_glued_polyphones_are_read_by_their_word_rules() -> None:
    from mixvox.frontends.zh.g2p import ZhG2P

    g = ZhG2P()
    # the last character of a rare word (钥匙卡, 3 in jieba): a rule naming the word before
    assert g.segment("钥匙卡在锁里")[0] == "钥匙卡"  # the cut is kept
    assert reading_at("钥匙卡在锁里", 2) == "qia3"
    assert polyphone.after_word("卡", "门禁", "在") == "qia3"
    assert polyphone.after_word("卡", "门禁", "在", need_prev=True) is None
    assert reading_at("门禁卡在前台", 2) == "ka3"
    # only a rule naming the word before (or its form: AA, ~X) reads a glued last character:
    # 都's any-word rule (dōu) must not read the transliteration 奥古斯都
    assert polyphone.after_word("都", "奥古斯", "", need_prev=True) is None
    assert polyphone.after_word("地", "偷偷", "哭", need_prev=True) == "de5"  # AA
    assert reading_at("好久没见", 2) == "mei2"  # 好久没 (jieba, rare): 没 after 好久
    # the first character, where the second starts a far more frequent word with the next
    assert g.segment("他在扒鸡蛋壳")[2] == "扒鸡"
    assert reading_at("他在扒鸡蛋壳", 2) == "ba1"
    assert reading_at("德州扒鸡很好吃", 2) == "pa2"  # no rule decides: the word's reading


def test_yes_no_question_gets_its_first_half_back() -> None:
    from mixvox.frontends.zh.g2p import ZhG2P

    g = ZhG2P()
    assert g.segment("你明天空不空") == ["你", "明天", "空", "不", "空"]
    assert g.segment("这片天空不空")[-3:] == ["天空", "不", "空"]  # 片天 is no word
    assert reading_at("你明天空不空", 3) == "kong4"


def test_pypinyin_words_in_a_rare_word_are_kept_where_both_cuts_agree() -> None:
    # 抽空来 (jieba, 3): 抽空/来 forward and by the segmenter: 抽空 kòng is kept
    assert reading_at("抽空来一趟", 1) == "kong4"
    # 水分子: 水分/子 forward but 水/分子 by the segmenter: the model reads it (fēn)
    assert reading_at("水分子", 1) == "fen1"
    assert reading_at("我们要供养父母", 3) == "gong1"  # 供养 gōng 'provide for' (XHC)
    assert reading_at("他在寺里供养菩萨", 4) == "gong4"


def test_word_rules_han_amount_and_word_ending() -> None:
    # %h: a Han amount only (桌子/得/两个 děi); digits are left to the other layers
    assert polyphone.after_word("得", "桌子", "两个", after=("人才",)) == "dei3"
    # …X: the next word ends with X (得/一百分 dé, points)
    assert polyphone.after_word("得", "这次", "一百分") == "de2"
    # AABB: the next word is a reduplicated AABB word (收拾/得/干干净净 de5)
    assert polyphone.after_word("得", "收拾", "干干净净") == "de5"
