"""English normalization: every category of the brief, offsets, odd input, bounded time."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.frontends.en import numbers as num
from mixvox.frontends.en.normalize import Normalizer, normalize_en
from mixvox.frontends.en.plugin import EnFrontend
from mixvox.interfaces import FrontendContext, Lexicon
from mixvox.ir import Span


def analyze(text: str, start: int = 0, lexicon: Lexicon | None = None):
    warns: list[tuple[str, str, int, int]] = []
    ctx = FrontendContext(
        lexicon=lexicon or Lexicon("en"), warn=lambda *a: warns.append(a), matrix="en"
    )
    words = EnFrontend().analyze(Span("en", text, start, start + len(text)), ctx)
    return words, warns


@pytest.mark.parametrize(
    "text, spoken",
    [
        # cardinals, negatives, decimals, separators
        ("0", "zero"),
        ("7", "seven"),
        ("13", "thirteen"),
        ("42", "forty two"),
        ("100", "one hundred"),
        ("123", "one hundred and twenty three"),
        ("1,000,000", "one million"),
        ("123,000,012", "one hundred twenty three million twelve"),
        ("-5", "minus five"),
        # issue 7: scientific notation keeps its sign; comparison symbols are words
        ("1e-5", "one E minus five"),
        ("lr = 3e-4", "L R equals three E minus four"),
        ("-1e-9", "minus one E minus nine"),
        ("2.5E+3", "two point five E plus three"),
        ("x < 5", "X is less than five"),
        ("x > 0", "X is greater than zero"),
        ("x<=5", "X is less than or equal to five"),
        ("x >= 3", "X is greater than or equal to three"),
        ("a != b", "a is not equal to B"),
        ("a ≤ b", "a is less than or equal to B"),
        ("±0.5", "plus or minus zero point five"),
        ("~5 minutes", "about five minutes"),
        ("5~10", "five to ten"),
        ("10%~15%", "ten percent to fifteen percent"),
        ("-5~3°C", "minus five to three degrees Celsius"),
        ("it was .22", "it was point two two"),
        ("A | B", "A | B"),
        # all-capital words that are words (logs, code) are said; true acronyms spelled
        ("a WARN and an INFO line", "a warn and an info line"),
        ("Set DEBUG to TRUE, not NULL", "Set debug to true, not null"),
        ("ERROR on the GPU", "error on the G P U"),
        ("25 sept.", "the twenty fifth of September"),
        ("open Mon.-Sun.", "open Monday to Sunday."),
        ("a 401(k) plan", "a four oh one K plan"),
        ("card ending in 8876", "card ending in eight eight seven six"),
        ("mail enterpriseservices@nvidia.com", "mail enterprise services at nvidia dot com"),
        # paths and host:port are read by parts, no slash or backslash left
        ("open ~/.bashrc", "open tilde slash dot bash R C"),
        ("run ./build.sh", "run dot slash build dot S H"),
        ("at /etc/hosts", "at slash etc slash hosts"),
        ("C:\\Users\\a.txt", "C colon backslash users backslash A dot T X T"),
        ("localhost:8080", "local host colon eight zero eight zero"),
        (
            "go <noise/> home",
            "go <noise/> home",
        ),  # passed through; the frontend keeps it silent  # a silent separator (punctuation), not "bar"
        ("3.14", "three point one four"),
        (".5", "point five"),
        ("-0.1", "minus zero point one"),
        ("007", "zero zero seven"),
        # ordinals
        ("1st", "first"),
        ("2nd", "second"),
        ("3rd", "third"),
        ("11th", "eleventh"),
        ("22nd", "twenty second"),
        ("101st", "one hundred first"),
        ("2th", "two T H"),  # wrong suffix is not an ordinal: its letters spelled
        # money
        ("$5.99", "five dollars ninety nine cents"),
        ("$1", "one dollar"),
        ("$0.01", "one cent"),
        ("$2.00", "two dollars"),
        ("€3.50", "three euros fifty cents"),
        ("£1.20", "one pound twenty pence"),
        ("¥300", "three hundred yen"),
        ("$45 billion", "forty five billion dollars"),
        ("$2.5M", "two point five million dollars"),
        ("$20/mo", "twenty dollars per month"),
        ("$50-$100", "fifty dollars to one hundred dollars"),
        # percent
        ("50%", "fifty percent"),
        ("3.5%", "three point five percent"),
        # years
        ("1998", "nineteen ninety eight"),
        ("2005", "two thousand five"),
        ("2024", "twenty twenty four"),
        ("1905", "nineteen oh five"),
        ("1900", "nineteen hundred"),
        ("in the 1980s", "in the nineteen eighties"),
        ("the '90s", "the nineties"),
        # dates
        ("January 5, 2024", "January fifth, twenty twenty four"),
        ("Jan. 5", "January fifth"),
        ("5 January 2024", "the fifth of January twenty twenty four"),
        ("2024-01-05", "January fifth twenty twenty four"),
        ("01/05/2024", "January fifth twenty twenty four"),
        ("15.01.2020", "the fifteenth of January twenty twenty"),
        # times
        ("3:30 PM", "three thirty P M"),
        ("10:05", "ten oh five"),
        ("10:00", "ten o'clock"),
        ("10:00 am", "ten A M"),
        ("5pm", "five P M"),
        ("3:30pm", "three thirty P M"),
        ("7 a.m.", "seven A M"),
        ("14:10:30", "fourteen hours ten minutes and thirty seconds"),
        # units, singular/plural
        ("5kg", "five kilograms"),
        ("1 kg", "one kilogram"),
        ("22 ms", "twenty two milliseconds"),
        ("22ms", "twenty two milliseconds"),
        ("1.6 GB", "one point six gigabytes"),
        ("100 km/h", "one hundred kilometers per hour"),
        ("2°C", "two degrees Celsius"),
        ("1 mph", "one mile per hour"),
        ("3 GHz", "three gigahertz"),
        # abbreviations
        ("Dr. Smith", "doctor Smith"),
        ("Elm Dr.", "Elm drive"),
        ("St. Paul", "saint Paul"),
        ("Main St.", "Main street"),
        ("Mr. and Mrs. Lee", "mister and misses Lee"),
        ("e.g. cats", "for example cats"),
        ("i.e. dogs", "that is dogs"),
        ("cats vs. dogs", "cats versus dogs"),
        ("apples, pears, etc.", "apples, pears, et cetera"),
        # symbols and programming languages
        ("C++", "C plus plus"),
        ("C#", "C sharp"),
        (".NET", "dot net"),
        ("R&D", "R and D"),
        ("a & b", "a and B"),  # single letters other than a/I are spelled capitals
        ("2 + 2 = 4", "two plus two equals four"),
        # urls and e-mails
        ("john.doe@example.com", "john dot doe at example dot com"),
        ("https://github.com/x", "H T T P S colon slash slash github dot com slash X"),
        ("www.python.org", "W W W dot python dot org"),
        # versions
        ("v2.0", "version two point oh"),
        ("v1.10.3", "version one point ten point three"),
        ("1.2.3", "one point two point three"),
        # acronyms and words
        ("GPU", "G P U"),
        ("GPUs", "G P U's"),
        ("NASA", "Nasa"),
        ("JPEG", "jay peg"),
        ("API", "A P I"),
        ("ChatGPT", "Chat G P T"),
        ("TensorRT", "Tensor R T"),
        # model numbers
        ("RTX 4070", "R T X forty seventy"),
        ("GTX 1080", "G T X ten eighty"),
        ("i7-12700K", "I seven twelve seven hundred K"),
        ("H200", "H two hundred"),
        ("A100", "A one hundred"),
        ("Windows 11", "Windows eleven"),
        ("Qwen2.5", "Qwen two point five"),
        ("1080p", "ten eighty P"),
        # roman numerals only where unambiguous
        ("Henry VIII", "Henry the eighth"),
        ("World War II", "World War two"),
        ("Chapter IV", "Chapter four"),
        ("I think", "I think"),
        ("MIX it", "M I X it"),
        # fractions and ranges
        ("1/2", "one half"),
        ("3/4", "three quarters"),
        ("2/3", "two thirds"),
        ("10-20", "ten to twenty"),
        ("2 1/2", "two and a half"),
        # phone numbers
        ("555-123-4567", "five five five, one two three, four five six seven"),
    ],
)
def test_normalize_categories(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def test_numbers_module_edges() -> None:
    assert num.cardinal("1" + "0" * 33) == "one decillion"
    assert num.cardinal("1" * 40) == " ".join(["one"] * 40)  # beyond decillion: digits
    assert num.ordinal("12") == "twelfth"
    assert num.ordinal("20") == "twentieth"
    assert num.year("2010") == "twenty ten"
    assert num.year("1066") == "ten sixty six"
    assert num.roman_to_int("XIV") == 14
    assert num.roman_to_int("IIII") is None
    assert num.roman_to_int("MIX") == 1009  # valid numeral: context decides (see MIX test)
    assert num.fraction("5", "16") == "five sixteenths"
    assert num.fraction("1", "100000") == "one over one hundred thousand"


def test_words_cover_input_with_absolute_offsets() -> None:
    text = "Meet at 3:30 PM, (RTX 4070) costs $5.99!"
    words, warns = analyze(text, start=100)
    assert not warns
    covered = set()
    for w in words:
        assert text[w.start - 100 : w.end - 100] == w.text
        covered.update(range(w.start - 100, w.end - 100))
    assert covered == {i for i, c in enumerate(text) if not c.isspace()}
    by_text = {w.text: w for w in words}
    assert by_text["3:30"].spoken == "three thirty"
    assert by_text["PM"].spoken == "P M"
    assert by_text["$5.99"].spoken == "five dollars ninety nine cents"
    assert by_text[","].kind == "punct" and by_text[","].phonemes == []
    assert by_text["("].kind == "punct"
    assert [w.text for w in words if w.kind == "punct"] == [",", "(", ")", "!"]


def test_full_width_input_keeps_offsets() -> None:
    text = "ＲＴＸ　４０７０ ＧＰＵ"
    words, warns = analyze(text)
    assert not warns
    assert [(w.text, w.spoken) for w in words] == [
        ("ＲＴＸ", "R T X"),
        ("４０７０", "forty seventy"),
        ("ＧＰＵ", "G P U"),
    ]
    assert all(text[w.start : w.end] == w.text for w in words)


def test_empty_and_punctuation_only() -> None:
    assert analyze("") == ([], [])
    assert analyze("   ") == ([], [])
    words, warns = analyze("?!...")
    assert not warns
    assert [w.kind for w in words] == ["punct"] * 5
    assert "".join(w.spoken for w in words) == "?!..."


def test_emoji_and_foreign_script_are_reported_not_dropped() -> None:
    text = "great 😀 job привет ok"
    words, warns = analyze(text)
    codes = {c for c, *_ in warns}
    assert codes == {"emoji", "unsupported-script"}
    emoji = [w for w in words if w.text == "😀"]
    assert emoji and emoji[0].spoken == "" and emoji[0].kind == "punct"
    (e_code, _, e_start, e_end) = next(w for w in warns if w[0] == "emoji")
    assert text[e_start:e_end] == "😀"
    cyr = next(w for w in warns if w[0] == "unsupported-script")
    assert text[cyr[2] : cyr[3]] == "привет"
    assert [w.spoken for w in words if w.kind == "word"] == ["great", "job", "ok"]


def test_ten_thousand_digits_bounded_time() -> None:
    digits = "1234567890" * 1000
    t0 = time.perf_counter()
    words, warns = analyze(digits)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0
    # digit by digit, in words of at most SLICE_CHARS digits (no word outgrows a chunk)
    assert "".join(w.text for w in words) == digits
    assert max(len(w.text) for w in words) <= 16
    spoken = " ".join(w.spoken for w in words).split()
    assert len(spoken) == 10_000 and spoken[:3] == ["one", "two", "three"]
    assert words[0].phonemes[:3] == ["W", "AH1", "N"]


@pytest.mark.parametrize(
    "text",
    [
        "1" * 5000 + "." + "2" * 5000,
        "," * 3000 + "1",
        "1," * 3000,
        "$" + "9" * 5000,
        "a" * 5000 + "@" + "b" * 5000 + ".com",
        "-" * 5000 + "x",
        "1:" * 3000,
        "v" + "1." * 2000,
        "http://" + "a/" * 3000,
        "1/" * 3000,
    ],
)
def test_pathological_inputs_finish_quickly(text: str) -> None:
    t0 = time.perf_counter()
    words, _ = analyze(text)
    assert time.perf_counter() - t0 < 10.0
    covered = {i for w in words for i in range(w.start, w.end)}
    assert covered == {i for i, c in enumerate(text) if not c.isspace()}


def test_odd_unicode_never_raises() -> None:
    samples = [
        "\u0000\u0007 bell",
        "e\u0301\u0301\u0301",  # stacked combining marks
        "\ud800",  # lone surrogate
        "²³ ½ Ⅻ",
        "\u200b\u200d zero width",
        "١٢٣",  # Arabic-Indic digits
        "ß straße smør œuvre",
        "中文 mixed",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",
    ]
    for s in samples:
        words, warns = analyze(s)
        covered = {i for w in words for i in range(w.start, w.end)}
        assert covered == {i for i, c in enumerate(s) if not c.isspace()}, s
        for w in words:
            assert w.kind in ("word", "punct")
            if w.kind == "word" and w.spoken.strip():
                assert w.phonemes or any(c == "oov" for c, *_ in warns), (s, w)


def test_lexicon_spoken_and_respelling_win() -> None:
    from mixvox.interfaces import LexEntry

    lex = Lexicon(
        "en",
        [
            {
                "k8s": LexEntry("k8s", spoken="kubernetes"),
                "nginx": LexEntry(
                    "nginx", ("EH1", "N", "JH", "IH0", "N", "EH1", "K", "S"), respelling="engine x"
                ),
                "GPU": LexEntry("GPU", ("G", "UW1", "P", "UW0")),
            }
        ],
    )
    words, warns = analyze("k8s with Nginx on a GPU", lexicon=lex)
    assert not warns
    w = {x.text: x for x in words}
    assert w["k8s"].spoken == "kubernetes" and w["k8s"].override
    # no phonemes in the entry: they follow its spoken form
    from mixvox.frontends.en.g2p import g2p_en_word

    assert w["k8s"].phonemes == g2p_en_word("kubernetes") and w["k8s"].phonemes
    assert w["Nginx"].phonemes == ["EH1", "N", "JH", "IH0", "N", "EH1", "K", "S"]
    assert w["Nginx"].respelling == "engine x" and w["Nginx"].override
    assert w["GPU"].phonemes == ["G", "UW1", "P", "UW0"] and w["GPU"].override
    assert not w["with"].override
    # respelling without phonemes: the phonemes follow the respelling
    lex2 = Lexicon("en", [{"nginx": LexEntry("nginx", respelling="engine x")}])
    words2, _ = analyze("nginx", lexicon=lex2)
    assert words2[0].spoken == "nginx" and words2[0].respelling == "engine x"
    assert words2[0].phonemes == g2p_en_word("engine") + g2p_en_word("X")


def test_shouting_headline_reads_words_not_letters() -> None:
    assert normalize_en("BREAKING NEWS: MARKETS FALL") == "breaking news: markets fall"
    # but an acronym in normal text is spelled
    assert normalize_en("The GPU is fast") == "The G P U is fast"


def test_normalizer_tokens_local_offsets() -> None:
    toks = Normalizer().tokenize("  Hi, Bob.")
    assert [(t.start, t.end, t.kind) for t in toks] == [
        (2, 4, "word"),
        (4, 5, "punct"),
        (6, 9, "word"),
        (9, 10, "punct"),
    ]


_ALPHABET = list("abcXYZ0123456789 .,:;-+/$€£%@#&*'\"()[]=_~^vVstndrhkmgMBKGPp") + [
    "😀",
    "中",
    "é",
    "\u0301",
    "²",
    "١",
    "\u200b",
    "\x00",
    "µ",
    "°",
    "ＡＢ",
    "\u3000",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET), max_size=30).map("".join))
def test_property_words_tile_the_input(text: str) -> None:
    """Any input: words in order, no overlap, every non-space character covered, valid phones."""
    from mixvox.frontends.en.g2p import is_valid_phone

    words, warns = analyze(text, start=7)
    assert not any(code == "frontend-error" for code, *_ in warns)
    last = 7
    covered: set[int] = set()
    for w in words:
        assert last <= w.start < w.end <= 7 + len(text)
        assert text[w.start - 7 : w.end - 7] == w.text
        covered.update(range(w.start - 7, w.end - 7))
        last = w.end
        assert all(is_valid_phone(p) for p in w.phonemes)
    assert covered == {i for i, c in enumerate(text) if not c.isspace()}


def test_internal_failure_is_reported_and_offsets_kept(monkeypatch) -> None:
    def boom(self: Normalizer, text: str) -> list:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(Normalizer, "tokenize", boom)
    text = "ab c"
    words, warns = analyze(text)
    assert [c for c, *_ in warns] == ["frontend-error"]
    assert "simulated bug" in warns[0][1]
    assert [(w.text, w.start, w.end, w.spoken) for w in words] == [
        ("a", 0, 1, ""),
        ("b", 1, 2, ""),
        ("c", 3, 4, ""),
    ]


@pytest.mark.parametrize(
    "text, spoken",
    [
        # identifiers after a cue word are read character by character
        ("ID 123456789012", "I D one two three four five six seven eight nine zero one two"),
        ("PIN 1234", "pin one two three four"),
        ("the PIN is 1234.", "the pin is one two three four."),
        ("code 834921", "code eight three four nine two one"),
        ("order number 12345678", "order number one two three four five six seven eight"),
        ("Order No. 5512", "Order number five five one two"),
        ("account #: 99812", "account number: nine nine eight one two"),
        ("your otp is ab9453", "your otp is A B nine four five three"),
        # ... but not without a cue, nor across a sentence break
        ("number 256", "number two hundred and fifty six"),
        ("I need the code. 1234 people came", "I need the code. twelve thirty four people came"),
        ("code 7", "code seven"),
    ],
)
def test_identifiers_after_cue_words(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    "text, spoken",
    [
        # parenthesised area codes: every group digit by digit, spread over several chunks
        ("(123) 456-7890", "(one two three) four five six, seven eight nine zero"),
        ("(555)555-5555", "(five five five, five five five, five five five five"),
        ("+1 (123)-123-5678", "plus one (one two three, one two three, five six seven eight"),
        (
            "call 1 (800) 555-0199 now",
            "call one (eight zero zero) five five five, zero one nine nine now",
        ),
        # a parenthesised number that is not a phone number stays a number
        ("(123) apples", "(one hundred and twenty three) apples"),
        # vanity numbers: dictionary words said as words
        ("1-800-GO-U-HAUL", "one, eight hundred, go U haul"),
        ("1-888-FLOWERS", "one, eight eight eight, flowers"),
        # four dotted groups of up to three digits: dot reading even when not a valid IPv4
        ("987.987.0.40", "nine eight seven dot nine eight seven dot zero dot four zero"),
        ("version 1.2.3.4", "version one point two point three point four"),
    ],
)
def test_telephone_forms(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    "text, spoken",
    [
        ("3-5 apples", "three to five apples"),
        ("1990-1995", "nineteen ninety to nineteen ninety five"),
        # a unit after the range makes the ends quantities, not years
        (
            "1980-1970 kg",
            "one thousand nine hundred and eighty to one thousand nine hundred and seventy kilograms",
        ),
        (
            "1234-123kg",
            "one thousand two hundred and thirty four to one hundred and twenty three kilograms",
        ),
        # a lone dash between times is "to"; between plain numbers it stays a dash
        ("4:00 am - 8:12 pm", "four A M to eight twelve P M"),
        ("9:00 - 17:30", "nine o'clock to seventeen thirty"),
        ("5 - 3", "five minus three"),
        # units after dimensions and mixed fractions
        ("2x8 m2", "two by eight square meters"),
        ("4 1/2 lbs", "four and a half pounds"),
        ("5m3", "five cubic meters"),
        ("the M2 chip", "the M two chip"),
        ("23 4/5th", "twenty three and four fifths"),
        # dotted year-month-day is a date
        ("2012.01.05", "January fifth twenty twelve"),
        ("US$76.3 trillion", "seventy six point three trillion U S dollars"),
        # a spaced scale abbreviation after money is the scale word, the currency after it
        ("¥30 b", "thirty billion yen"),
        ("$2 bn in aid", "two billion dollars in aid"),
        ("$5 and more", "five dollars and more"),
    ],
)
def test_ranges_units_dates(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def test_markup_is_silent_with_a_warning() -> None:
    words, warns = analyze("go <noise/> home [HH AH0 L OW1]")
    assert [w.spoken for w in words] == ["go", "", "home", ""]
    assert [w[0] for w in warns] == ["markup", "markup"]
    words, warns = analyze("if a<b and c>d")  # comparisons, not a tag
    assert "less than" in " ".join(w.spoken for w in words) and warns == []
