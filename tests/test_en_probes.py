"""English readings probed in session 5 (issue 7): standards numbers, processor and phone-chip
model numbers, phrases in capitals, emoticons, decades, lower-case abbreviations, and ~100
everyday sentences of Chinese tech text and English narration (``tests/data/en_probe_sentences.tsv``).
Conventions: ``frontends/en/CONVENTIONS.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from mixvox.frontends.en.normalize import normalize_en
from mixvox.frontends.en.plugin import EnFrontend
from mixvox.interfaces import FrontendContext, LexEntry, Lexicon
from mixvox.ir import Span

_DATA = Path(__file__).parent / "data" / "en_probe_sentences.tsv"


def _rows() -> list[tuple[str, str]]:
    rows = []
    for line in _DATA.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            text, expected = line.split("\t")
            rows.append((text, expected))
    return rows


@pytest.mark.parametrize(("text", "spoken"), _rows())
def test_probe_sentences(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def analyze(text: str, lexicon: Lexicon | None = None) -> tuple[list, list[tuple]]:
    warns: list[tuple] = []
    ctx = FrontendContext(
        lexicon=lexicon or Lexicon("en"), warn=lambda *a: warns.append(a), matrix="en"
    )
    return EnFrontend().analyze(Span("en", text, 0, len(text)), ctx), warns


@pytest.mark.parametrize(
    ("digits", "spoken"),
    [
        ("9001", "nine thousand one"),  # a round thousand plus a unit digit
        ("9000", "nine thousand"),
        ("8601", "eighty six oh one"),  # other four-digit numbers in pairs
        ("27001", "twenty seven oh oh one"),  # five digits: two, then three
        ("17025", "seventeen oh twenty five"),
        ("13485", "thirteen four eighty five"),
        ("20000", "twenty thousand"),
        ("754", "seven fifty four"),
        ("802", "eight oh two"),
        ("800", "eight hundred"),
        ("8", "eight"),
    ],
)
def test_standard_numbers_after_iso(digits: str, spoken: str) -> None:
    assert normalize_en(f"ISO {digits}") == f"I S O {spoken}"


def test_standard_number_never_says_and() -> None:
    for digits in ("9001", "754", "27001", "3107"):
        assert " and " not in normalize_en(f"ISO {digits}")
        assert " and " not in normalize_en(f"PEP {digits}")


def test_brand_rows_need_a_capital() -> None:
    """``office 365 days`` (lower case) is no product name: the number stays a quantity."""
    assert normalize_en("Office 365") == "Office three sixty five"
    assert normalize_en("the office 365 days a year") == (
        "the office three hundred and sixty five days a year"
    )


def test_a_lexicon_entry_adds_a_brand_row() -> None:
    """A lexicon entry ``"<name> #"`` whose spoken is a mode reads the digits after the name."""
    plain, _ = analyze("Zorbex 4090")
    assert [w.spoken for w in plain] == ["Zorbex", "four thousand and ninety"]
    lex = Lexicon("en", [{"Zorbex #": LexEntry("Zorbex #", spoken="model")}])
    words, _ = analyze("Zorbex 4090", lex)
    assert [w.spoken for w in words] == ["Zorbex", "forty ninety"]


def test_emoticons_are_silent_and_warned() -> None:
    words, warns = analyze("Thanks :) see you ;-) bye :D")
    assert [w.spoken for w in words if w.spoken] == ["Thanks", "see", "you", "bye"]
    codes = [(w[0], w[2], w[3]) for w in warns]
    assert codes == [("emoticon", 7, 9), ("emoticon", 18, 21), ("emoticon", 26, 28)]


def test_not_emoticons() -> None:
    """A list item ``8)``, a drive ``C:D`` and a ratio ``a:b`` are not faces."""
    _, warns = analyze("item 8) and C:D or a:b")
    assert not any(w[0] == "emoticon" for w in warns)
    assert normalize_en("item 8)") == "item eight)"


def test_capital_phrase_words_have_word_phonemes() -> None:
    words, _ = analyze("GO TO")
    # shown as written, said (respelling and phonemes) as the words
    assert [(w.spoken, w.respelling, w.phonemes) for w in words] == [
        ("GO", "go", ["G", "OW1"]),
        ("TO", "to", ["T", "UW1"]),
    ]


def test_cc_d_phonemes_end_in_d() -> None:
    words, _ = analyze("I cc'd him")
    assert words[1].spoken == "C C'd"
    assert words[1].phonemes == ["S", "IY1", "S", "IY1", "D"]


def test_hashtag_sign_is_silent_in_a_chinese_sentence() -> None:
    """今天的#OOTD: a Chinese reader says the tag, not its sign; in English it is "hashtag"."""
    from mixvox import route

    zh = route("今天的#OOTD很好看")
    words = [w for s in zh.sentences for w in s.words]
    assert zh.spoken == "今天的 O O T D 很好看"
    sign = [w for w in words if w.text == "#"]  # the sign is a word of its own, said as nothing
    assert len(sign) == 1 and sign[0].spoken == "" and sign[0].phonemes == []
    assert [w.spoken for w in words if w.lang == "en"] == ["O O T D"]
    assert normalize_en("Today #OOTD is nice") == "Today hashtag O O T D is nice"


@pytest.mark.parametrize(
    ("text", "word", "phonemes"),
    [
        ("They lead the team.", 1, "L IY1 D"),
        ("She is the tech lead.", 4, "L IY1 D"),
        ("We take the lead.", 3, "L IY1 D"),
        ("The lead pipe leaks.", 1, "L EH1 D"),  # the metal
        ("It causes lead poisoning.", 2, "L EH1 D"),
        ("He wound the clock.", 1, "W AW1 N D"),  # the past of "wind"
        ("Clean the wound.", 2, "W UW1 N D"),  # the injury
    ],
)
def test_heteronyms_lead_and_wound(text: str, word: int, phonemes: str) -> None:
    words, _ = analyze(text)
    assert " ".join(words[word].phonemes) == phonemes


@pytest.mark.parametrize(
    ("word", "phonemes"),
    [
        ("retries", "R IY0 T R AY1 Z"),  # retry + Z, not the neural model's guess
        ("retried", "R IY0 T R AY1 D"),
        ("MAX_RETRIES", "M AE1 K S R IY0 T R AY1 Z"),
    ],
)
def test_inflections_of_dictionary_words(word: str, phonemes: str) -> None:
    words, _ = analyze(word)
    assert " ".join(p for w in words for p in w.phonemes) == phonemes


def test_words_said_as_words_are_shown_as_written() -> None:
    """Session 8: ``spoken`` keeps the written word, ``respelling`` carries the reading that
    engines write and phonemes are found for; spelled letters and identifiers stay as read."""
    from mixvox.engines.chattts.render import render_words

    words, _ = analyze("RAID IKEA Airbnb maintainer GPU stdin localhost:3000 getUserName")
    got = [(w.spoken, w.respelling) for w in words]
    assert got == [
        ("RAID", "raid"),
        ("IKEA", "ikea"),
        ("Airbnb", "Air B N B"),
        ("maintainer", "main tainer"),
        ("G P U", None),
        ("stdin", "standard in"),
        ("localhost colon three thousand", "local host colon three thousand"),
        ("get User Name", None),
    ]
    assert words[0].phonemes == ["R", "EY1", "D"]
    assert words[2].phonemes[:2] == ["EH1", "R"]  # "air", never a spelled A
    text = render_words(words).text
    assert "raid" in text and "Air B N B" in text and "RAID" not in text
    assert normalize_en("RAID and Airbnb") == "raid and Air B N B"  # TN text: the readings


def test_pinyin_brands_are_said_from_the_lexicon() -> None:
    """Brands written in pinyin are lexicon words: the neural G2P read Meituan as
    M Y UW0 CH UW1 AH0 N; shown as written, said as their owners say them."""
    import mixvox

    words = [w for w in mixvox.route("我在Meituan和Xiaomi下单").words if w.lang == "en"]
    assert [(w.spoken, w.respelling, w.phonemes[:2]) for w in words] == [
        ("Meituan", "may twan", ["M", "EY1"]),
        ("Xiaomi", "shao mee", ["SH", "AW1"]),
    ]


def test_mixed_case_names_show_spelled_capitals_apart() -> None:
    """Held-out writers wrote <mac O S> and <i O S> (three batches) but <AirPods>, <Airbnb>:
    in a mixed-case word shown as written, the capitals said as letters are spaced letters."""
    import mixvox

    def shown(word: str) -> list[str]:
        return [w.spoken for w in mixvox.route(f"用{word}做").words if w.lang == "en"]

    assert shown("macOS") == ["mac O S"]  # a lexicon word
    assert shown("iOS") == ["i O S"]  # said "eye O S": the capitals are the letters
    assert shown("ChatGPT") == ["Chat G P T"]
    assert shown("NVLink") == ["N V Link"]
    assert shown("Airbnb") == ["Airbnb"]  # lower-case letters said as letters: the word
    assert shown("AirPods") == ["AirPods"]
    assert shown("DDoS") == ["DDoS"]  # no part to show apart
    assert shown("PyTorch") == ["PyTorch"]
