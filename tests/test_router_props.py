"""Property-based tests of the router's segmentation (hypothesis).

For arbitrary text the router must not raise, must keep its offsets consistent, and must account
for every non-space character: it is in a span or in a warning.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mixvox.controls import CONTROL_TOKENS
from mixvox.ir import CTRL, EN, ZH, Utterance
from mixvox.langid import detect
from mixvox.segment import segment

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Pieces that exercise the rules: Han, Latin, digits and units, punctuation of both languages,
# full-width forms, emoji, kana, hangul, Cyrillic, control and format characters, private use,
# brackets and the two atom syntaxes (valid and broken), URLs and abbreviations.
FRAGMENTS = [
    "今天",
    "的",
    "會議",
    "3",
    "个",
    "GPU",
    "meeting",
    "PM",
    "3:30",
    "80GB",
    "显存",
    "22ms",
    "v2.0",
    "$5.99",
    "i7-12700K",
    "H200",
    "50%",
    "-5℃",
    "¥5",
    "2024年",
    "Dr.",
    "e.g.",
    "3.5",
    "。",
    "，",
    "！",
    "？",
    "!",
    "?",
    ".",
    "...",
    "…",
    "……",
    "“",
    "”",
    "「",
    "」",
    "(",
    ")",
    '"',
    "'",
    "ＲＴＸ",
    "４０７０",
    "．",
    "😀",
    "👍🏽",
    "こんにちは",
    "안녕",
    "Привет",
    "\x00",
    "\x0b",
    "\u200b",
    "\ufeff",
    "\ue000",
    "\U0010fffd",
    "\u0301",
    "[",
    "]",
    "[laugh]",
    "[uv_break]",
    "[break_9]",
    "[Stts]",
    "[foo]",
    "[银行](yin2 hang2)",
    "[银行](yin2)",
    "[nginx](/EH1 N/)",
    "[x](/AA/)",
    "https://x.com/a?b=1",
    "www.example.com",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "\u3000",
]

texts = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=4),
        ),
        max_size=12,
    ).map(" ".join),
)


def check_invariants(text: str, utt: Utterance) -> None:
    assert utt.input == text
    n = len(text)
    covered = bytearray(n)
    last_end = 0
    for sent in utt.sentences:
        assert 0 <= sent.start < sent.end <= n
        assert text[sent.start : sent.end] == sent.text
        assert sent.start >= last_end, "sentences overlap or are out of order"
        last_end = sent.end
        assert sent.matrix in (ZH, EN)
        assert sent.text[0] not in " \t\n\r\u3000" and sent.text[-1] not in " \t\n\r\u3000"
        assert sent.spans, "a sentence without spans"
        pos = sent.start
        for sp in sent.spans:
            assert sp.lang in (ZH, EN, CTRL)
            assert sent.start <= pos <= sp.start < sp.end <= sent.end
            assert text[sp.start : sp.end] == sp.text
            assert not sp.text[0].isspace() and not sp.text[-1].isspace()
            pos = sp.end
            if sp.lang == CTRL:
                assert len(sp.words) == 1 and sp.words[0].kind == "control"
                assert sp.words[0].spoken == sp.text and sp.words[0].phonemes == []
            elif sp.words:  # only inline overrides come with words
                assert len(sp.words) == 1 and sp.words[0].override
                w = sp.words[0]
                assert (w.start, w.end, w.text) == (sp.start, sp.end, sp.text)
                assert w.phonemes and w.lang == sp.lang
            covered[sp.start : sp.end] = b"\x01" * (sp.end - sp.start)
    for w in utt.warnings:
        assert 0 <= w.start < w.end <= n
        assert text[w.start : w.end] == w.text
        assert w.code and w.message
        covered[w.start : w.end] = b"\x01" * (w.end - w.start)
    lost = [(i, text[i]) for i in range(n) if not covered[i] and not text[i].isspace()]
    assert not lost, f"characters neither spoken nor reported: {lost[:5]}"


@SETTINGS
@given(texts)
def test_segment_invariants(text: str) -> None:
    check_invariants(text, segment(text))


@SETTINGS
@given(st.text(max_size=40))
def test_segment_accepts_any_str_including_lone_surrogates(text: str) -> None:
    check_invariants(text, segment(text))


@SETTINGS
@given(texts)
def test_segment_is_deterministic(text: str) -> None:
    assert segment(text).to_dict() == segment(text).to_dict()


# Full-width ，．：！？ are deliberately *not* like their ASCII forms (they are Chinese
# punctuation: "．" always ends a sentence, "，" is a token of its own), so they are left out.
_ASCII_FOR_WIDTH = st.sampled_from(list("abcXYZ0123456789 %$-+") + ["的", "个", "今天"])


def _to_full_width(s: str) -> str:
    return "".join(
        "\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s
    )


@SETTINGS
@given(st.lists(_ASCII_FOR_WIDTH, max_size=30).map("".join))
def test_full_width_text_segments_like_ascii(text: str) -> None:
    """Full-width letters, digits and symbols are read as their ASCII counterparts."""
    a = segment(text)
    b = segment(_to_full_width(text))
    assert [(s.start, s.end, s.matrix) for s in a.sentences] == [
        (s.start, s.end, s.matrix) for s in b.sentences
    ]
    assert [(sp.start, sp.end, sp.lang) for s in a.sentences for sp in s.spans] == [
        (sp.start, sp.end, sp.lang) for s in b.sentences for sp in s.spans
    ]


@SETTINGS
@given(texts)
def test_detect_never_fails(text: str) -> None:
    lang, conf = detect(text)
    assert isinstance(lang, str) and lang
    assert 0.0 <= conf <= 1.0


_TOKENS = sorted(CONTROL_TOKENS)


@SETTINGS
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=8),
    st.lists(st.sampled_from(FRAGMENTS), max_size=8),
    st.sampled_from(_TOKENS),
)
def test_control_token_between_spaces_is_always_a_control_span(
    left: list[str], right: list[str], token: str
) -> None:
    prefix = " ".join(left) + " "
    text = prefix + token + " " + " ".join(right)
    utt = segment(text)
    check_invariants(text, utt)
    ctrl = [sp for s in utt.sentences for sp in s.spans if sp.lang == CTRL]
    assert any(sp.start == len(prefix) and sp.text == token for sp in ctrl)


# --- SSML: the offset map under segmentation ----------------------------------------------------

from mixvox.ssml import SsmlError, parse_ssml  # noqa: E402

_XML_TEXT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="<&\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11"
        "\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\ufffe\uffff",
    ),
    max_size=12,
)
_ELEMENT = st.sampled_from(
    ["<s>{}</s>", "<p>{}</p>", "<emphasis>{}</emphasis>", '<lang xml:lang="en-US">{}</lang>',
     '<prosody rate="fast">{}</prosody>', "{}<break/>", '<sub alias="x">{}</sub>', "{}<!--c-->",
     "<![CDATA[{}]]>", "{}&amp;", "&#x4e2d;{}"]
)  # fmt: skip


@st.composite
def _ssml_docs(draw: st.DrawFn) -> str:
    body = ""
    for _ in range(draw(st.integers(0, 6))):
        text = draw(_XML_TEXT).replace("]]>", "")
        body += draw(_ELEMENT).replace("{}", text) if draw(st.booleans()) else text
    return "<speak>" + body + "</speak>"


@SETTINGS
@given(_ssml_docs())
def test_ssml_offset_map_points_at_the_characters(doc: str) -> None:
    """Plain text made from SSML maps back into the document: ordered, inside it, and every
    character copied from text content sits exactly where it was typed."""
    try:
        parsed = parse_ssml(doc)
    except SsmlError as exc:  # only for text the generator cannot keep legal (e.g. "\r" alone)
        assert 0 <= exc.offset <= len(doc)
        return
    plain, s, e = parsed.plain, parsed.src_start, parsed.src_end
    assert len(s) == len(e) == len(plain)
    last = 0
    for i, ch in enumerate(plain):
        assert last <= s[i] < e[i] <= len(doc)
        last = s[i]
        if e[i] - s[i] == 1 and ch not in " \n":
            assert doc[s[i]] == ch
    utt = segment(plain)
    for sent in utt.sentences:
        a, b = parsed.to_input(sent.start, sent.end)
        assert 0 <= a <= b <= len(doc)
