"""Built-in prosody plugin: break levels and chunking, on IR built by hand (no frontends)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.interfaces import MixvoxError
from mixvox.ir import (
    BREAK_CLAUSE,
    BREAK_NONE,
    BREAK_SENTENCE,
    BREAK_WORD,
    Sentence,
    Span,
    Utterance,
    Word,
    join_spoken,
)
from mixvox.plugins import prosody
from mixvox.plugins.prosody import (
    LONG_CLAUSE_SYLLABLES,
    MIN_PHRASE_SYLLABLES,
    assign_breaks,
    plan_chunks,
    syllables,
)
from mixvox.textutil import is_han

# ---------------------------------------------------------------------------------------------
# Building IR by hand
# ---------------------------------------------------------------------------------------------


def _kind(tok: str) -> str:
    if len(tok) > 2 and tok.startswith("[") and tok.endswith("]"):
        return "control"
    if all(unicodedata.category(c).startswith("P") for c in tok):
        return "punct"
    return "word"


def _lang(tok: str, kind: str) -> str:
    if kind == "control":
        return "ctrl"
    return "zh" if any(is_han(c) for c in tok) else "en"


def build(*sentences: list[str | Word]) -> Utterance:
    """An utterance whose words are the given tokens, with consistent offsets.

    Strings become words (kind guessed: ``[x]`` control, all-punctuation punct); zh words get
    one placeholder pinyin syllable per Han character. ``Word`` objects are used as given.
    """
    text = ""
    sents: list[Sentence] = []
    for toks in sentences:
        s0 = len(text)
        spans: list[Span] = []
        for tok in toks:
            if isinstance(tok, Word):
                w = tok
            else:
                if text and len(join_spoken([text, tok])) > len(text) + len(tok):
                    text += " "
                start = len(text)
                text += tok
                kind = _kind(tok)
                lang = _lang(tok, kind)
                phon = ["a1"] * sum(is_han(c) for c in tok) if lang == "zh" else []
                w = Word(tok, tok, phon, start, start + len(tok), lang, kind)
            if not spans or spans[-1].lang != w.lang:
                spans.append(Span(w.lang, "", w.start, w.end))
            spans[-1].words.append(w)
            spans[-1].end = w.end
        for sp in spans:
            sp.text = text[sp.start : sp.end]
        sents.append(Sentence(text[s0:], s0, len(text), "zh", spans))
    return Utterance(text, sents)


def levels(utt: Utterance) -> list[tuple[str, int]]:
    return [(w.spoken, w.break_after) for w in utt.words]


def check_chunks(utt: Utterance, chunks, limit: int) -> None:
    """The chunking contract: every word once, in order, numbered, within the size limit."""
    flat = [w for c in chunks for w in c.words]
    assert [id(w) for w in flat] == [id(w) for w in utt.words]
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert all(c.words for c in chunks)
    for c in chunks:
        spoken_words = [w for w in c.words if w.kind == "word" and w.spoken.strip()]
        if len(c.spoken) > limit:
            assert len(spoken_words) <= 1, f"oversized chunk with several words: {c.spoken!r}"


# ---------------------------------------------------------------------------------------------
# Break levels
# ---------------------------------------------------------------------------------------------


def test_punctuation_levels_zh():
    utt = build(["今天", "，", "我们", "走", "。"])
    assign_breaks(utt)
    assert levels(utt) == [("今天", 2), ("，", 2), ("我们", 1), ("走", 3), ("。", 3)]


def test_punctuation_levels_en_and_sentence_end_without_punct():
    utt = build(["Well", ";", "we", "go", "now", ":", "fast"], ["Next", "one"])
    assign_breaks(utt)
    assert levels(utt) == [
        ("Well", 2), (";", 2), ("we", 1), ("go", 1), ("now", 2), (":", 2), ("fast", 3),
        ("Next", 1), ("one", 3),
    ]  # fmt: skip


@pytest.mark.parametrize("mark", ["、", "—", "…", "...", "？", "!", "."])
def test_mid_sentence_marks(mark):
    utt = build(["一", mark, "二", "三"])
    assign_breaks(utt)
    expected = BREAK_SENTENCE if mark in ("？", "!", ".") else BREAK_CLAUSE
    assert utt.words[0].break_after == expected
    assert utt.words[1].break_after == expected
    assert utt.words[2].break_after == BREAK_WORD


def test_number_read_as_several_words_has_no_break_inside():
    # "at 3:30 today": "3:30" is one source token read as two words (overlapping offsets).
    text = "at 3:30 today"
    words = [
        Word("at", "at", ["AE1", "T"], 0, 2, "en"),
        Word("3:30", "three", ["TH", "R", "IY1"], 3, 7, "en"),
        Word("", "thirty", ["TH", "ER1", "T", "IY0"], 3, 7, "en"),
        Word("today", "today", ["T", "AH0", "D", "EY1"], 8, 13, "en"),
    ]
    utt = Utterance(text, [Sentence(text, 0, 13, "en", [Span("en", text, 0, 13, words)])])
    assign_breaks(utt)
    assert [w.break_after for w in words] == [BREAK_WORD, BREAK_NONE, BREAK_WORD, BREAK_SENTENCE]


def test_brackets_and_quotes():
    utt = build(["他", "说", "（", "大概", "）", "好", "“", "行", "”", "。"])
    assign_breaks(utt)
    assert levels(utt) == [
        ("他", 1), ("说", 2),        # an opening bracket starts a parenthesis: clause break before
        ("（", 0), ("大概", 2), ("）", 2),
        ("好", 1),                   # an opening quote: word-level break before it
        ("“", 0), ("行", 3), ("”", 3), ("。", 3),
    ]  # fmt: skip


def test_control_tokens_pause_after_and_colour_before():
    utt = build(["你好", "[uv_break]", "[laugh]", "朋友", "[lbreak]", "再见"])
    assign_breaks(utt)
    assert levels(utt) == [
        ("你好", 2), ("[uv_break]", 2),  # a pause token belongs to the text before it
        ("[laugh]", 0), ("朋友", 3), ("[lbreak]", 3),  # [laugh] belongs to what follows
        ("再见", 3),
    ]  # fmt: skip


def test_control_before_punctuation_stays_with_the_text_before():
    utt = build(["哈哈", "[laugh]", "，", "好", "（", "[oral_2]", "）", "吗"])
    assign_breaks(utt)
    assert levels(utt) == [
        ("哈哈", 2), ("[laugh]", 2), ("，", 2), ("好", 2), ("（", 2), ("[oral_2]", 2), ("）", 2),
        ("吗", 3),
    ]  # fmt: skip
    chunks = plan_chunks(utt, 3)
    assert [c.spoken for c in chunks] == ["哈哈[laugh]，", "好（[oral_2]）", "吗"]


def test_long_clause_gets_a_break_before_the_conjunction():
    head = ["我们", "今天", "在", "会议室", "里", "讨论", "了", "这个", "项目", "的", "进度"]
    tail = ["但是", "大家", "都", "觉得", "时间", "太", "紧张", "了"]
    utt = build(head + tail + ["。"])
    assign_breaks(utt)
    inserted = [w.spoken for w in utt.words if w.break_after == BREAK_CLAUSE]
    assert inserted == ["进度"]  # i.e. the clause is cut right before 但是


def test_long_clause_pieces_are_bounded_and_not_tiny():
    words = ["word"] * 70  # 70 syllables, no punctuation, no function words
    utt = build(words)
    assign_breaks(utt)
    pieces, cur = [], 0
    for w in utt.words:
        cur += syllables(w)
        if w.break_after >= BREAK_CLAUSE:
            pieces.append(cur)
            cur = 0
    assert sum(pieces) == 70
    assert len(pieces) >= 4
    assert all(MIN_PHRASE_SYLLABLES <= p <= LONG_CLAUSE_SYLLABLES for p in pieces), pieces


def test_no_break_after_article_or_before_particle():
    # 24 syllables; the best boundary near the middle is before "because", not after "the".
    words = "I think the new build of the project is broken because the tests fail on every".split()
    utt = build(words + ["single", "machine"])
    assign_breaks(utt)
    cut = [w.spoken for w in utt.words if w.break_after == BREAK_CLAUSE]
    assert cut == ["broken"]


def test_short_clause_gets_no_inserted_break():
    utt = build(["I", "like", "tea", "and", "cake"])
    assign_breaks(utt)
    assert [w.break_after for w in utt.words] == [1, 1, 1, 1, 3]


def test_breaks_are_recomputed_not_accumulated():
    utt = build(["a"] * 5 + ["word"] * 40, ["next", "one", "."])
    assign_breaks(utt)
    first = levels(utt)
    assign_breaks(utt)
    assert levels(utt) == first
    utt.words[0].break_after = BREAK_SENTENCE  # a stale value is overwritten
    assign_breaks(utt)
    assert levels(utt) == first


def test_syllables():
    assert syllables(Word("x", "kubernetes", [], 0, 1, "en")) == 4
    assert syllables(Word("x", "x", ["EH1", "K", "S"], 0, 1, "en")) == 1
    assert syllables(Word("银行", "银行", ["yin2", "hang2"], 0, 2, "zh")) == 2
    assert syllables(Word("，", "，", [], 0, 1, "zh", kind="punct")) == 0
    assert syllables(Word("hmm", "hmm", [], 0, 3, "en")) == 1


# ---------------------------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------------------------


def test_short_sentences_are_packed_and_cut_at_sentence_ends():
    s = [["今天", "天气", "很", "好", "。"], ["我们", "去", "公园", "。"], ["好", "的", "。"]]
    utt = build(*s)
    chunks = plan_chunks(utt, 13)
    check_chunks(utt, chunks, 13)
    assert [c.spoken for c in chunks] == ["今天天气很好。我们去公园。", "好的。"]
    chunks = plan_chunks(utt, 12)
    assert [c.spoken for c in chunks] == ["今天天气很好。", "我们去公园。好的。"]
    assert all(c.words[-1].break_after == BREAK_SENTENCE for c in chunks)


def test_long_sentence_is_cut_at_clause_breaks():
    utt = build("The meeting moved , the room changed , and lunch is late .".split())
    chunks = plan_chunks(utt, 40)
    check_chunks(utt, chunks, 40)
    assert [c.spoken for c in chunks] == [
        "The meeting moved, the room changed,",
        "and lunch is late.",
    ]
    chunks = plan_chunks(utt, 30)  # two clauses (36 chars) no longer fit together
    check_chunks(utt, chunks, 30)
    assert [c.spoken for c in chunks] == [
        "The meeting moved,",
        "the room changed,",
        "and lunch is late.",
    ]


def test_long_clause_without_punctuation_is_cut_at_word_boundaries():
    words = [f"w{i:02d}x" for i in range(30)]  # 30 words of 4 characters
    utt = build(words)
    chunks = plan_chunks(utt, 24)
    check_chunks(utt, chunks, 24)
    assert all(len(c.spoken) <= 24 for c in chunks)
    # The inserted clause break (after 12 of the 30 syllables) is also a chunk end; each clause
    # is then cut into even pieces (12 words -> 4+4+4, 18 words -> 5+4+5+4), not greedily
    # filled (which would leave a 2-word orphan).
    assert utt.words[11].break_after == BREAK_CLAUSE
    assert [len(c.words) for c in chunks] == [4, 4, 4, 5, 4, 5, 4]


def test_word_level_cut_avoids_orphans_and_binding_words():
    utt = build("The quick brown fox jumps over the lazy dog".split())  # 43 characters
    chunks = plan_chunks(utt, 40)
    check_chunks(utt, chunks, 40)
    # greedy filling would give "The quick brown fox jumps over the lazy" + "dog"
    assert [c.spoken for c in chunks] == ["The quick brown fox jumps", "over the lazy dog"]
    words = ["我们", "今天", "在", "会议室", "里", "讨论", "了", "这个", "项目", "的", "进度"]
    utt = build(words)  # 19 characters, no punctuation: two chunks are enough at 12
    chunks = plan_chunks(utt, 12)
    check_chunks(utt, chunks, 12)
    # not before 了 (it binds to the verb), not a third chunk for the sake of the preposition
    assert [c.spoken for c in chunks] == ["我们今天在会议室里", "讨论了这个项目的进度"]


def test_word_longer_than_limit_is_its_own_chunk():
    utt = build(["go", "supercalifragilistic", ",", "now", "."])
    chunks = plan_chunks(utt, 6)
    check_chunks(utt, chunks, 6)
    assert [c.spoken for c in chunks] == ["go", "supercalifragilistic,", "now."]


def test_number_group_is_not_split_when_it_fits():
    text = "x 1234 y"
    words = [
        Word("x", "x", [], 0, 1, "en"),
        Word("1234", "twelve", [], 2, 6, "en"),
        Word("", "thirty", [], 2, 6, "en"),
        Word("", "four", [], 2, 6, "en"),
        Word("y", "y", [], 7, 8, "en"),
    ]
    utt = Utterance(text, [Sentence(text, 0, 8, "en", [Span("en", text, 0, 8, words)])])
    chunks = plan_chunks(utt, 19)
    check_chunks(utt, chunks, 19)
    assert [c.spoken for c in chunks] == ["x", "twelve thirty four", "y"]
    # alone longer than the limit: then it is cut between its words (never inside one)
    chunks = plan_chunks(utt, 12)
    check_chunks(utt, chunks, 12)
    assert [c.spoken for c in chunks] == ["x", "twelve", "thirty four", "y"]


def test_control_tokens_stay_with_their_text():
    utt = build(["[laugh]", "你好"], ["[speed_2]", "朋友", "[uv_break]"], ["再见"])
    chunks = plan_chunks(utt, 4)
    check_chunks(utt, chunks, 4)
    assert [[w.spoken for w in c.words] for c in chunks] == [
        ["[laugh]", "你好"],
        ["[speed_2]", "朋友", "[uv_break]"],
        ["再见"],
    ]


def test_punctuation_only_sentence_joins_a_neighbour():
    utt = build(["好", "。"], ["……"], ["走", "。"])
    chunks = plan_chunks(utt, 2)
    check_chunks(utt, chunks, 2)
    assert [c.spoken for c in chunks] == ["好。……", "走。"]


def test_empty_and_punctuation_only_utterances():
    assert plan_chunks(Utterance(""), 10) == []
    utt = build(["。", "！"])
    chunks = plan_chunks(utt, 10)
    check_chunks(utt, chunks, 10)
    assert len(chunks) == 1


@pytest.mark.parametrize("bad", [0, -5, 2.5, "10", True])
def test_bad_max_chunk_chars(bad):
    with pytest.raises(MixvoxError, match="max_chunk_chars"):
        plan_chunks(build(["a"]), bad)


def test_hook_is_registered_as_builtin_trylast():
    impl = prosody.mixvox_prosody.mixvox_impl  # type: ignore[attr-defined]
    assert impl["trylast"] is True
    utt = build(["你好", "。"])
    chunks = prosody.mixvox_prosody(utterance=utt, max_chunk_chars=50)
    assert [c.spoken for c in chunks] == ["你好。"]


def test_huge_input_is_linear_enough():
    # 20k words in one clause-less sentence: must finish (no quadratic blow-up) and obey limits.
    utt = build(["data"] * 20000)
    chunks = plan_chunks(utt, 120)
    check_chunks(utt, chunks, 120)
    assert all(len(c.spoken) <= 120 for c in chunks)


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

_TOKENS = st.sampled_from(
    ["我们", "的", "但是", "银行", "hello", "and", "the", "kubernetes", "GPU", "x",
     "，", "。", "、", "!", "?", ",", "(", ")", "“", "”", "…", "——",
     "[uv_break]", "[laugh]", "[lbreak]", "[speed_5]", "supercalifragilisticexpialidocious"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(_TOKENS, min_size=0, max_size=40), min_size=0, max_size=5),
    st.integers(min_value=1, max_value=80),
)
def test_chunking_invariants(sentences, limit):
    utt = build(*sentences)
    chunks = plan_chunks(utt, limit)
    check_chunks(utt, chunks, limit)
    for w in utt.words:
        assert w.break_after in (BREAK_NONE, BREAK_WORD, BREAK_CLAUSE, BREAK_SENTENCE)
    for sent in utt.sentences:
        spoken = [w for w in sent.words if w.kind == "word" and w.spoken.strip()]
        if spoken and all(w.kind == "word" for w in sent.words):
            assert spoken[-1].break_after == BREAK_SENTENCE
