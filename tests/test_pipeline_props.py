"""Property-based tests (hypothesis) of the FULL analysis: ``mixvox.route()``.

``tests/test_router_props.py`` checks the segmentation alone; here the router, the zh/en
frontends and the shipped lexicons run together, and for any text the result must hold:

* no exception; ``to_dict()`` is JSON-serialisable and survives a round trip;
* every word lies inside its span (``[start, end)``), words are in input order;
* every non-space input character is covered by some word or some warning;
* zh words: one tone-numbered pinyin syllable per Han character of ``spoken``;
  en words: valid ARPAbet (vowels with a stress digit, consonants without);
* ``utt.spoken`` holds no digits (numbers are normalised) except inside control tokens.
"""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixvox.controls import CONTROL_TOKENS
from mixvox.ir import CTRL, EN, ZH, Utterance
from mixvox.pipeline import Router
from mixvox.textutil import is_han

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))

#: One router for the whole module: frontends and lexicons load once.
ROUTER = Router()

#: The 39 CMUdict phones: 15 vowels (need a stress digit) and 24 consonants (take none).
ARPA_VOWELS = frozenset("AA AE AH AO AW AY EH ER EY IH IY OW OY UH UW".split())
ARPA_CONSONANTS = frozenset("B CH D DH F G HH JH K L M N NG P R S SH T TH V W Y Z ZH".split())
PINYIN = re.compile(r"[a-z]+[1-5]")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_CONTROL_RE = re.compile("|".join(re.escape(t) for t in sorted(CONTROL_TOKENS, key=len)[::-1]))


def is_arpabet(phone: str) -> bool:
    if phone in ARPA_CONSONANTS:
        return True
    return len(phone) == 3 and phone[:2] in ARPA_VOWELS and phone[2] in "012"


# Material that exercises the frontends: numbers in both languages, dates, times, money, units,
# identifiers, polyphones, acronyms, URLs, symbols, odd Unicode and the two atom syntaxes.
FRAGMENTS = [
    "今天的", "meeting", "改到", "3:30 PM", "显存", "80GB", "只要", "22ms", "两", "2个", "第2",
    "0.5", "10%-20%", "3-5天", "5~10分钟", "1+2=3", "2≤4", "7x24", "13800138000",
    "010-64035547", "拨打12306", "2024年1月5日", "2024-01-05", "下午3点", "3/4", "1又1/5",
    "-5℃", "±2", "‰", "银行", "行长", "重庆", "长大", "一一", "AI", "GPU", "k8s", "iPhone15",
    "Python3.11", "5G", "4K", "No.1", "A股", "T恤", "卡拉OK", "PM2.5", "COVID-19", "¥100",
    "$5.99", "€3", "1,000", "#1", "@me", "a&b", "C#", "C++", ".NET", "½", "²", "₂", "'90s",
    "1980s", "Jan 5", "Dr. Smith", "e.g.", "U.S.", "3rd", "$1.5M", "24/7", "16:9", "v2.0",
    "i7-12700K", "RTX 4070", "192.168.0.1", "https://x.com/a?b=1", "a@b.com", "www.example.com",
    "com²", "It's", "don't", "café", "naïve", "ＲＴＸ４０７０", "１２３", "，", "。", "！", "？",
    "!", "?", ".", "...", "……", "“", "”", "「", "」", "(", ")", '"', "'", "—", "-", "/", ":",
    "😀", "👨\u200d👩\u200d👧", "👍🏽", "こんにちは", "안녕", "Привет", "שלום", "٣٤", "𝟏𝟐",
    "\x00", "\x1b[31m", "\x7f", "\x85", "\u200b", "\u200d", "\u200f", "\u202e", "\ufeff",
    "\ue000", "\U0010fffd", "e\u0301", "\u0301", "\ud800", "\udcff", "[", "]", "[laugh]",
    "[uv_break]", "[break_3]", "[speed_5]", "[break_9]", "[Stts]", "[银行](yin2 hang2)",
    "[银行](yin2)", "[nginx](/EH1 N JH AH0 N EH1 K S/)", "[x](/AA/)",
    " ", "  ", "\n", "\r\n", "\t", "\u3000",
    # issue 7 codes and symbols in zh sentences, and odd marks on them
    "CUDA 12.1和cuDNN 8.9", "7800X3D", "1920X1080", "tokens/s", "No. 5号", "GPT-4o",
    "Llama-2-7B", "- ", "| ", "•", "* ", "≥\u0301", "5\u20e3", "RTX\u202e4090", "1e-5",
    "−5~3℃", "2020-2024年", "36.00元", ".22", "max_batch_size", "K8s", "8000端口", "302会议室",
    "2TB", "Ｈ１００", "1\u200e2", "X\u0338", "10000100000", "00:00:00",
]  # fmt: skip

texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=16).map("".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=16).map(" ".join),
    st.text(max_size=60),  # any code point, lone surrogates included
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=10).map("".join),
)


def check_utterance(text: str, utt: Utterance) -> None:
    """Every property of the module docstring, for one routed text."""
    assert utt.input == text
    n = len(text)
    covered = bytearray(n)
    for sent in utt.sentences:
        assert sent.matrix in (ZH, EN)
        for span in sent.spans:
            assert text[span.start : span.end] == span.text
            assert span.lang in (ZH, EN, CTRL)
            last = span.start
            for w in span.words:
                assert span.start <= w.start <= w.end <= span.end, (w, span)
                assert w.start >= last, f"words out of order in {span.text!r}"
                last = w.start
                assert text[w.start : w.end] == w.text
                covered[w.start : w.end] = b"\x01" * (w.end - w.start)
                if w.kind == "control":
                    assert w.spoken in CONTROL_TOKENS and w.phonemes == []
                elif w.lang == ZH:
                    hans = [c for c in w.spoken if is_han(c)]
                    assert len(w.phonemes) == len(hans), (w.spoken, w.phonemes)
                    assert all(PINYIN.fullmatch(p) for p in w.phonemes), w.phonemes
                elif w.lang == EN:
                    assert all(is_arpabet(p) for p in w.phonemes), w.phonemes
    for issue in utt.warnings:
        assert 0 <= issue.start < issue.end <= n and text[issue.start : issue.end] == issue.text
        assert issue.code and issue.message
        covered[issue.start : issue.end] = b"\x01" * (issue.end - issue.start)
    lost = [(i, text[i]) for i in range(n) if not covered[i] and not text[i].isspace()]
    assert not lost, f"characters neither spoken nor reported: {lost[:5]}"
    spoken_text = _CONTROL_RE.sub(" ", utt.spoken)
    assert not any(c.isdigit() for c in spoken_text), utt.spoken
    d = utt.to_dict()
    encoded = json.dumps(d)
    if not _SURROGATE_PAIR.search(text):
        # (JSON cannot keep two lone surrogate halves apart: "\\ud83d\\ude00" reads back as 😀)
        assert json.loads(encoded) == d


@SETTINGS
@given(texts)
def test_route_properties(text: str) -> None:
    check_utterance(text, ROUTER.route(text))


_numbers = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: f"{d:f}"),
    st.integers(min_value=0, max_value=10**12).map(lambda i: f"{i:,}"),
    st.text(alphabet="0123456789.,:-/%+", min_size=1, max_size=24),
    st.from_regex(r"\A[0-9]{1,3}(:[0-9]{2}){1,2}\Z"),
)

_contexts = st.sampled_from(
    [
        "{}", "价格是{}元", "第{}章", "{}个人", "it costs {} dollars", "call {} now", "{} GB",
        "会议在{} PM", "编号{}", "温度{}℃", "about {}%", "({})", "“{}”", "版本v{}", "{}x{}",
    ]
)  # fmt: skip


@SETTINGS
@given(_contexts, _numbers)
def test_numbers_are_always_spoken_as_words(context: str, number: str) -> None:
    """Any digit string in any context comes out as words (no digit survives), with the
    same structural guarantees as any other text."""
    text = context.format(number, number)
    check_utterance(text, ROUTER.route(text))


def test_the_properties_catch_violations() -> None:
    """The checker itself fails on a broken utterance (it is not vacuous)."""
    utt = ROUTER.route("今天 3 个 GPU")
    bad_digit = ROUTER.route("今天 3 个 GPU")
    bad_digit.sentences[0].spans[0].words[0].spoken = "今天3"
    bad_pinyin = ROUTER.route("今天 3 个 GPU")
    bad_pinyin.sentences[0].spans[0].words[0].phonemes = ["jin1"]
    lost = ROUTER.route("今天 3 个 GPU")
    lost.sentences[0].spans.pop()
    check_utterance("今天 3 个 GPU", utt)
    for broken in (bad_digit, bad_pinyin, lost):
        try:
            check_utterance("今天 3 个 GPU", broken)
        except AssertionError:
            continue
        raise AssertionError("a broken utterance passed the checks")


#: Longest spoken text one word may have, whatever the input (a bound, not a target): long
#: tokens are read in slices (en) or digit groups (zh), so no word outgrows a synthesis chunk.
MAX_WORD_SPOKEN = 700

_long_tokens = st.builds(
    lambda prefix, body: prefix + body,
    st.sampled_from(["", "$", "https://x.com/", "v", "共", "it is ", "#", "-"]),
    st.text(alphabet="abcXYZ0123456789./-:_,é\u0301", min_size=80, max_size=1000),
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_long_tokens)
def test_long_tokens_give_bounded_words_and_chunks(text: str) -> None:
    utt = ROUTER.route(text)
    check_utterance(text, utt)
    assert max((len(w.spoken) for w in utt.words), default=0) <= MAX_WORD_SPOKEN
    for chunk in ROUTER.chunks(utt, 120):
        assert len(chunk.spoken) <= MAX_WORD_SPOKEN + 8, chunk.spoken[:80]


# --- SSML ------------------------------------------------------------------------------------

from mixvox.ssml import SsmlError  # noqa: E402


def _xml_legal(ch: str) -> bool:
    o = ord(ch)
    return (
        ch in "\t\n\r" or 0x20 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD or 0x10000 <= o <= 0x10FFFF
    )


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


_XML_FRAGMENTS = [f for f in FRAGMENTS if all(_xml_legal(c) for c in f)]
_SSML_ELEMENTS = [
    '<break time="300ms"/>', '<break strength="strong"/>', "<break/>", '<break time="2s"/>',
    '<say-as interpret-as="characters">{}</say-as>', '<say-as interpret-as="digits">{}</say-as>',
    '<say-as interpret-as="cardinal">{}</say-as>', '<say-as interpret-as="ordinal">{}</say-as>',
    '<say-as interpret-as="date">{}</say-as>', '<say-as interpret-as="time">{}</say-as>',
    '<say-as interpret-as="telephone">{}</say-as>', '<sub alias="{}">x</sub>',
    '<phoneme alphabet="pinyin" ph="yin2 hang2">银行</phoneme>',
    '<phoneme alphabet="pinyin" ph="{}">银行</phoneme>',
    '<phoneme alphabet="arpabet" ph="EH1 N JH AH0 N EH1 K S">{}</phoneme>',
    '<phoneme alphabet="ipa" ph="ˈhɛloʊ">{}</phoneme>', '<lang xml:lang="en-US">{}</lang>',
    '<lang xml:lang="zh-CN">{}</lang>', '<prosody rate="slow">{}</prosody>', "<p>{}</p>",
    "<s>{}</s>", "<emphasis>{}</emphasis>", '<mark name="a"/>', "<!-- {} -->",
]  # fmt: skip
_TAG_READ = re.compile(r"</?(speak|break|say-as|sub|phoneme|lang|prosody|p|s|emphasis|mark)\b")

_ssml_parts = st.lists(
    st.one_of(
        st.sampled_from(_XML_FRAGMENTS).map(lambda f: ("text", _escape(f))),
        st.tuples(st.sampled_from(_SSML_ELEMENTS), st.sampled_from(_XML_FRAGMENTS)).map(
            lambda t: ("elem", t[0].replace("{}", _escape(t[1]).replace("--", "")))
        ),
    ),
    max_size=12,
)


def _build(parts: list[tuple[str, str]]) -> tuple[str, list[tuple[int, int]]]:
    """An SSML document and the ranges of its top-level text parts."""
    out = "<speak>"
    ranges = []
    for kind, s in parts:
        if kind == "text":
            ranges.append((len(out), len(out) + len(s)))
        out += s
    return out + "</speak>", ranges


def check_ssml_utterance(text: str, utt: Utterance, text_ranges: list[tuple[int, int]]) -> None:
    """The SSML version of :func:`check_utterance`: the same structure, offsets into the SSML,
    coverage of every text character, and no tag ever in what is spoken."""
    assert utt.input == text
    n = len(text)
    covered = bytearray(n)
    for sent in utt.sentences:
        assert text[sent.start : sent.end] == sent.text
        for span in sent.spans:
            assert 0 <= span.start <= span.end <= n and text[span.start : span.end] == span.text
            for w in span.words:
                assert span.start <= w.start <= w.end <= span.end, (w, span)
                assert text[w.start : w.end] == w.text
                covered[w.start : w.end] = b"\x01" * (w.end - w.start)
                assert not _TAG_READ.search(w.spoken), w.spoken
                if w.kind == "control":
                    assert w.spoken in CONTROL_TOKENS
                elif w.lang == ZH:
                    assert len(w.phonemes) == sum(1 for c in w.spoken if is_han(c)), w
                    assert all(PINYIN.fullmatch(p) for p in w.phonemes), w.phonemes
                elif w.lang == EN:
                    assert all(is_arpabet(p) for p in w.phonemes), w.phonemes
    for issue in utt.warnings:
        assert 0 <= issue.start <= issue.end <= n and text[issue.start : issue.end] == issue.text
        covered[issue.start : issue.end] = b"\x01" * (issue.end - issue.start)
    for a, b in text_ranges:
        lost = [(i, text[i]) for i in range(a, b) if not covered[i] and not text[i].isspace()]
        assert not lost, f"text characters neither spoken nor reported: {lost[:5]}"
    assert not any(c.isdigit() for c in _CONTROL_RE.sub(" ", utt.spoken)), utt.spoken
    json.dumps(utt.to_dict())


@SETTINGS
@given(_ssml_parts)
def test_ssml_route_properties(parts: list[tuple[str, str]]) -> None:
    text, ranges = _build(parts)
    check_ssml_utterance(text, ROUTER.route(text), ranges)


@SETTINGS
@given(
    st.text(max_size=40),
    st.sampled_from(["<speak>{}</speak>", "<speak>{}", "<speak><s>{}</speak>"]),
)
def test_any_ssml_is_an_utterance_or_an_error_with_a_place(body: str, template: str) -> None:
    """Arbitrary (often malformed) SSML: either an analysis whose spoken text holds no tag, or
    an :class:`SsmlError` whose line/column/offset lie inside the input. Never anything else."""
    text = template.format(body)
    try:
        utt = ROUTER.route(text)
    except SsmlError as exc:
        assert 0 <= exc.offset <= len(text)
        assert exc.line == text.count("\n", 0, exc.offset) + 1 and exc.column >= 1
        assert f"line {exc.line}, column {exc.column}" in str(exc)
        return
    for w in utt.words:
        assert not _TAG_READ.search(w.spoken), w.spoken
        assert text[w.start : w.end] == w.text
