"""English text-normalization rules of issue 7, each on sentences written for this file (never
the public test-set sentences): the "and" convention, ranges, signs, comparison symbols,
identifiers, capital words, dates, bad input (combining marks), and English inside Chinese
sentences through ``mixvox.route``. Conventions: ``frontends/en/CONVENTIONS.md``."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.frontends.en import numbers as num
from mixvox.frontends.en.normalize import normalize_en
from mixvox.frontends.en.plugin import EnFrontend
from mixvox.interfaces import FrontendContext, Lexicon
from mixvox.ir import Span


def analyze(text: str) -> tuple[list, list[tuple]]:
    warns: list[tuple] = []
    ctx = FrontendContext(lexicon=Lexicon("en"), warn=lambda *a: warns.append(a), matrix="en")
    return EnFrontend().analyze(Span("en", text, 0, len(text)), ctx), warns


# -- the "and" convention ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("digits", "with_and", "without"),
    [
        ("245", "two hundred and forty five", "two hundred forty five"),
        ("3007", "three thousand and seven", "three thousand seven"),
        ("86019", "eighty six thousand and nineteen", "eighty six thousand nineteen"),
        (
            "5,300,118",
            "five million three hundred thousand one hundred and eighteen",
            "five million three hundred thousand one hundred eighteen",
        ),  # fmt: skip
        ("7,000,040", "seven million forty", "seven million forty"),  # no "and" after million
        ("640,000", "six hundred forty thousand", "six hundred forty thousand"),  # last group
        ("900", "nine hundred", "nine hundred"),
        ("58", "fifty eight", "fifty eight"),
    ],
)
def test_and_inside_cardinals(digits: str, with_and: str, without: str) -> None:
    assert num.cardinal(digits) == with_and  # the default
    with num.number_style(and_=False):
        assert num.cardinal(digits) == without
        assert num.says_and() is False
    assert num.says_and() is True  # the block restores the default
    assert num.cardinal(digits, and_=False) == without


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("She counted 365 steps.", "She counted three hundred and sixty five steps."),
        ("He was the 342nd caller.", "He was the three hundred forty second caller."),
        ("They met in 2008.", "They met in two thousand eight."),  # years: no "and"
        ("It weighs 104.5 kg", "It weighs one hundred and four point five kilograms"),
        ("a bill of $1,205", "a bill of one thousand two hundred and five dollars"),
        ("$3.75 each", "three dollars seventy five cents each"),  # no "and" before cents
        ("£12.08 total", "twelve pounds eight pence total"),
        ("sales of 340 billion", "sales of three hundred forty billion"),  # before a scale
        ("a $215 million deal", "a two hundred fifteen million dollars deal"),
        ("Take 3 1/2 cups", "Take three and a half cups"),
        ("about 105/1000 of it", "about one hundred five one thousandths of it"),
        ("the B737 and the A350", "the B seven thirty seven and the A three fifty"),  # codes
        ("a 208-page report", "a two hundred and eight page report"),
        ("item 417-XB", "item four hundred seventeen X B"),
    ],
)
def test_and_convention_in_context(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def test_us_style_drops_every_and_of_numbers() -> None:
    with num.number_style(and_=False):
        assert normalize_en("all 512 shelves hold 1,250 books") == (
            "all five hundred twelve shelves hold one thousand two hundred fifty books"
        )


# -- ranges, ratios, signs, comparison symbols -----------------------------------------------


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("open 9-17 daily", "open nine to seventeen daily"),
        ("ISBN prefix 979-1", "I S B N prefix nine hundred and seventy nine one"),  # descending
        ("they won 4-2", "they won four to two"),
        ("0.25-0.75 mm", "zero point two five to zero point seven five millimeters"),
        ("a 21:9 screen", "a twenty one to nine screen"),
        ("mix 1:100 with water", "mix one to one hundred with water"),
        ("at 14:45 sharp", "at fourteen forty five sharp"),  # two digits: a clock time
        ("~40 ms later", "about forty milliseconds later"),
        ("≈12% of users", "approximately twelve percent of users"),
        ("use 3.5x less power", "use three point five X less power"),
        ("if n ≥ 8", "if N is greater than or equal to eight"),
        ("if n<8", "if N is less than eight"),
        ("when a != b", "when a is not equal to B"),
        ("tolerance ±0.02 mm", "tolerance plus or minus zero point zero two millimeters"),
        ("rate 3e-4 works", "rate three E minus four works"),
        ("-7.5e+2 units", "minus seven point five E plus two units"),
        ("so 9- 4 = 5", "so nine minus four equals five"),
        ("so 9 - 4 = 5", "so nine minus four equals five"),
        ("the 1990 s were loud", "the nineteen nineties were loud"),
        ("results for 2H24", "results for the second half of twenty four"),
        ('a 15" laptop', "a fifteen inch laptop"),  # an adjective: singular
        ('the screen is 15" wide', "the screen is fifteen inches wide"),
        ('she said "it is 15"', "she said “it is fifteen”"),  # a closing quote, not inches
        ("it was 30º outside", "it was thirty degrees outside"),
        ("½ of 3⁄4", "one half of three quarters"),
        ("from -8--2 degrees", "from minus eight to minus two degrees"),
        ("lows of -7-2°C", "lows of minus seven to two degrees Celsius"),
        ("costs $15-20", "costs fifteen to twenty dollars"),
        ("open Feb-Apr", "open February to April"),
        ("held June 4-6, 2026", "held June fourth to sixth, twenty twenty six"),
        ("held 4-6 June", "held the fourth to the sixth of June"),
        ("a loss of -$40", "a loss of minus forty dollars"),
        ("within +/-0.3 mm", "within plus or minus zero point three millimeters"),
        ("latency ≤20 ms", "latency at most twenty milliseconds"),
        ("for ≥65 years", "for at least sixty five years"),
        ("<1% of cases", "less than one percent of cases"),
        (">200 people", "more than two hundred people"),
        ("when t >3", "when T is greater than three"),
        ("1.5e−3 s", "one point five E minus three S"),  # U+2212 MINUS SIGN
    ],
)
def test_ranges_signs_symbols(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


# -- identifiers, capital words, dates, times --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("edit __main__.py now", "edit dunder main dot P Y now"),
        ("export JAVA_HOME_PATH", "export java home path"),
        ("set API_TOKEN first", "set A P I token first"),
        ("run make --no-cache", "run make dash dash no cache"),
        ("try grep -rn foo", "try grep dash R N foo"),
        ("see /srv/my_app/logs", "see slash S R V slash my underscore app slash logs"),
        ("open README.txt", "open read me dot T X T"),
        ("ERROR: quota exceeded", "error: quota exceeded"),
        ("FATAL crash in the GPU driver", "fatal crash in the G P U driver"),
        ("the FBI and NATO", "the F B I and Nato"),
        ("hit SAVE then EXIT", "hit save then exit"),
        ("runs on UNIX with a LOCK file", "runs on unix with a lock file"),
        ("the HTML spec and ESPN", "the H T M L spec and E S P N"),  # CMUdict spells them
        ("ALL CAPS: READ THE SQL GUIDE", "all caps: read the S Q L guide"),  # a headline
        ("due March 3, 2025", "due March third, twenty twenty five"),
        ("from 9:15 p.m.pst on", "from nine fifteen P M P S T on"),
        ("at 7:30 am cet", "at seven thirty A M C E T"),
        ("Th 18:00 or Tu 9:30", "Thursday eighteen o'clock or Tuesday nine thirty"),
        ("crowned as Louis I.", "crowned as Louis the first."),
        ("Louis I think so", "Louis I think so"),
        ("write to .ops@corp.example.com", "write to. ops at corp dot example dot com"),
        ("mail bbcnews@x.org", "mail B B C news at X dot org"),
        ("see ex.com/gtx-3000 now", "see E X dot com slash G T X dash three thousand now"),
        ("a 12 x 9 m hall", "a twelve by nine meters hall"),
        ("flow of 5 ml/s", "flow of five milliliters per second"),
        ("see 12 Oak Rd", "see twelve Oak road"),
        ("at 405 W 3rd Ave", "at four zero five West third avenue"),
    ],
)
def test_identifiers_words_dates(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("the treaty ended in 1648.", "the treaty ended in sixteen forty eight."),
        ("an account ending in 0071", "an account ending in zero zero seven one"),
        ("the year 1215 matters", "the year twelve fifteen matters"),
        (
            "Upgrade to Python 3.11 or Node 18.19.0",
            "Upgrade to Python three point eleven or Node eighteen point nineteen point oh",
        ),  # fmt: skip
        ("stir for 4-6 min.", "stir for four to six minutes."),
        ("a lap in 1h05m", "a lap in one hour five minutes"),
        ("rest 2m15s", "rest two minutes fifteen seconds"),
        ("a 30m mast", "a thirty meter mast"),
        ("she is 5'7\" tall", "she is five feet seven inches tall"),
        ("a 6' 1\" man", "a six feet one inch man"),
        ("it got 8.5/10 from critics", "it got eight point five out of ten from critics"),
        ("over 3.4k stars", "over three point four thousand stars"),
        (
            "logged at 2023-11-02T07:45:00Z",
            "logged at November second twenty twenty three, seven forty five U T C",
        ),  # fmt: skip
        ("at 19:20+05:30", "at nineteen twenty U T C plus five thirty"),
        ("build with --jobs=8", "build with dash dash jobs equals eight"),
        ("a^2 - b^3", "a squared minus B cubed"),
        ("2^16 values", "two to the power of sixteen values"),
        (
            "ring +33 1 4568 1234",
            "ring plus three three one four five six eight one two three four",
        ),
        ("open 24/7", "open twenty four seven"),
        ("3 tsp (approx. 15 ml)", "three teaspoons (approximately fifteen milliliters)"),
        ("CO2 at 420 ppm", "C O two at four hundred and twenty parts per million"),
        ("renew by 6/30 please", "renew by June thirtieth please"),
        ("on 2/3 of the nights", "on two thirds of the nights"),  # "of": a fraction
        ("a 60-60 split", "a sixty sixty split"),
        ("she is in her 30s", "she is in her thirties"),
        ("a fee of USD 120", "a fee of one hundred and twenty U S dollars"),
        ("EUR 4.50 each", "four euros fifty cents each"),
        ("raised USD 3 million", "raised three million U S dollars"),
        ("costs 80 CHF", "costs eighty Swiss francs"),
        ("the EUR zone", "the E U R zone"),
        ("a timeout of 30s", "a timeout of thirty seconds"),
        ("report at 0600 hours", "report at oh six hundred hours"),
        ("born 03/09", "born March ninth"),
        ("a 70/30 mix", "a seventy thirty mix"),
        ("add 2/3 cup", "add two thirds cup"),
        ("got HTTP 502", "got H T T P five oh two"),
        ("meet in room 204", "meet in room two oh four"),
        ("the error was < 1%", "the error was less than one percent"),
        ("tested on Ubuntu 24.04", "tested on Ubuntu twenty four point oh four"),
        (
            'a 3.5" bay and a 2.5" bay',
            "a three point five inch bay and a two point five inch bay",  # adjectives
        ),
        ("see Eq. 4 and Sec. 2", "see equation four and section two"),
        ("board flight BA 2490", "board flight B A twenty four ninety"),
        ("take highway 280 north", "take highway two eighty north"),
        ("we have 204 rooms", "we have two hundred and four rooms"),  # a quantity
        ("raised 2.7M in seed", "raised two point seven million in seed"),
        ("a 1:25,000 map", "a one to twenty five thousand map"),
        ("she is 5 ft 4 in tall", "she is five feet four inches tall"),
        (
            "at 51.5° N, 0.12° W",
            "at fifty one point five degrees North, zero point one two degrees West",
        ),  # fmt: skip
        ("c = 3×10^8 m/s", "C equals three times ten to the power of eight meters per second"),
        ("after 3 yrs", "after three years"),
        ("a $50M+ round", "a fifty million dollars plus round"),
        ("for ages 12+", "for ages twelve plus"),
        ("it costs €4,20 here", "it costs four euros twenty cents here"),
        ("sleep 8 hours/day", "sleep eight hours per day"),
        ("open 12/20-12/24", "open December twentieth to December twenty fourth"),
        ("press *72 then", "press star seventy two then"),
        ("a 10¢ stamp", "a ten cent stamp"),
    ],
)
def test_everyday_readings(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    "text",
    [
        "__init__.py",
        "my_var_name",
        "LD_PRELOAD",
        "/var/log/sys_log.txt",
        "a.b_c@d-e.org",
        "https://ex.com/a_b/c?d_e=1",
        "_private",
        "`code_block`",
        "snake_case_here",
    ],  # fmt: skip
)
def test_no_underscore_or_slash_left_in_spoken(text: str) -> None:
    words, _ = analyze(text)
    spoken = " ".join(w.spoken for w in words)
    assert spoken.strip() and not any(c in spoken for c in "_/\\`"), spoken


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("cost +\u0303 tax", 6),  # tilde on a plus sign
        ("x =\u20dd y", 3),  # enclosing circle on "="
        ("page 7\u0301 here", 6),  # acute on a digit, inside a read word
        ("\u0308start", 0),  # a mark with nothing before it
        ("50%\u0323 off", 3),
    ],
)
def test_combining_marks_on_symbols_are_reported(text: str, offset: int) -> None:
    words, warns = analyze(text)
    marks = [w for w in warns if w[0] == "combining-mark"]
    assert [(w[2], w[3]) for w in marks] == [(offset, offset + 1)], warns
    # nothing else is lost: every non-space character is covered by a word
    covered = {i for w in words for i in range(w.start, w.end)}
    assert covered == {i for i, c in enumerate(text) if not c.isspace()}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab5 +=%$<.-_/\u0301\u0303\u0338\u20dd\u0323", max_size=24))
def test_property_no_mark_vanishes(text: str) -> None:
    """Every combining mark that no letter carries is either part of a symbol that is read
    (``=`` + U+0338) or covered by a warning naming its offset; never silently gone."""
    words, warns = analyze(text)
    special = {"≠", "≮", "≯"}
    for i, c in enumerate(text):
        if unicodedata.category(c)[0] != "M":
            continue
        j = i
        while j > 0 and unicodedata.category(text[j - 1])[0] == "M":
            j -= 1
        if j > 0 and text[j - 1].isalpha():
            continue  # a mark on a letter belongs to the word
        if j == i and i > 0 and unicodedata.normalize("NFC", text[i - 1 : i + 1]) in special:
            continue
        assert any(w[2] <= i < w[3] for w in warns), (text, i, warns)


def test_decomposed_symbol_is_composed_and_read() -> None:
    words, warns = analyze("a =\u0338 b")  # "=" + COMBINING LONG SOLIDUS OVERLAY is "≠"
    assert not warns
    assert "is not equal to" in [w.spoken for w in words]


@pytest.mark.parametrize(
    ("text", "spoken", "offsets"),
    [
        ("re\u00adstart it", "restart", [2]),  # soft hyphen
        ("data\u2060base", "database", [4]),  # word joiner
        ("\ufb01le", "file", []),  # the fi ligature is two letters, nothing to report
    ],
)
def test_invisible_joiners_keep_the_word_whole(text: str, spoken: str, offsets: list[int]) -> None:
    words, warns = analyze(text)
    assert words[0].spoken == spoken and words[0].text == text.split(" ")[0]
    assert [w[2] for w in warns if w[0] == "format-char"] == offsets


def test_marks_on_letters_are_fine() -> None:
    words, warns = analyze("a cafe\u0301 and a nai\u0308ve plan")
    assert not warns
    assert [w.text for w in words][1] == "cafe\u0301"


# -- English inside Chinese sentences ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("发布会定在 April 9, 2026 举行", ["April", "ninth", "twenty twenty six"]),
        ("日志显示 ERROR 和 WARNING", ["error", "warning"]),
        ("先运行 make --dry-run 看看", ["make", "dash dash dry run"]),
        ("打开 __init__.py 文件", ["dunder init dot P Y"]),
        ("设置 CUDA_VISIBLE_DEVICES 变量", ["cooda visible devices"]),
        ("他说 it costs 245 dollars", ["it", "costs", "two hundred and forty five", "dollars"]),
    ],
)
def test_english_spans_in_chinese_sentences(text: str, english: list[str]) -> None:
    import mixvox

    utt = mixvox.route(text)
    got = [
        w.respelling or w.spoken  # the reading (ERROR is shown as written, said "error")
        for s in utt.sentences
        for w in s.words
        if w.lang == "en" and w.spoken
    ]
    got = [w for w in got if w not in (",", ".")]
    assert got == english


# -- session 4: alternatives, model variants, spaced dashes, spaced one-letter units ----------


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("runs on Win 10/11 only", "runs on Win ten or eleven only"),
        ("tested on macOS 13/14", "tested on mac O S thirteen or fourteen"),
        ("a PCIe 4.0/5.0 slot", "a P C I E four point zero or five point zero slot"),
        ("ports: 3.0/3.1", "ports: three point zero or three point one"),  # dotted: no fraction
        ("Python 3.11/3.12 wheels", "Python three point eleven or three point twelve wheels"),
        ("scored 10/11 today", "scored ten out of eleven today"),  # a score, not a choice
        ("Python 2/3 of the time", "Python two thirds of the time"),  # "of": a fraction
        ("the TCP/IP stack", "the T C P I P stack"),  # acronyms: the slash is not said
        ("fast I/O and CI/CD", "fast I O and C I C D"),
        ("an A/B test", "an A B test"),
    ],
)
def test_slash_between_alternatives(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("the Boeing 767-300 fleet", "the Boeing seven sixty seven three hundred fleet"),
        ("a 747-400 freighter", "a seven forty seven four hundred freighter"),
        ("the 777-200ER", "the seven seventy seven two hundred E R"),
        ("from 125-300 users", "from one hundred and twenty five to three hundred users"),
        ("open 150-200 days", "open one hundred and fifty to two hundred days"),
        ("a 125-300 mg dose", "a one hundred and twenty five to three hundred milligram dose"),
    ],
)
def test_model_and_variant_numbers(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("8 - 2 is six", "eight minus two is six"),
        ("just 7 - 4", "just seven minus four"),
        ("so 7 - 4 + 1", "so seven minus four plus one"),
        ("loop to n - 1 here", "loop to N minus one here"),
        ("then x - y", "then X minus Y"),
        ("seats 30 - 40 people", "seats thirty to forty people"),  # going up: a range
        ("ran 2015 - 2019", "ran twenty fifteen to twenty nineteen"),
        ("they won 4 - 1", "they won four to one"),  # a score: "to"
        ("a 9 - 5 shift", "a nine to five shift"),  # clock hours before a noun: no sum
        ("a - b", "a- B"),  # "a" is the article
    ],
)
def test_spaced_dash_between_terms(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("a 650 W supply", "a six hundred and fifty watt supply"),
        ("runs at 5 V", "runs at five volts"),
        ("draws 1 A max", "draws one amp max"),
        ("pause 15 s now", "pause fifteen seconds now"),
        ("swim 50 m daily", "swim fifty meters daily"),
        ("add 3 g of yeast", "add three grams of yeast"),
        ("a 2 h drive", "a two hour drive"),
        ("pour 1 L in", "pour one liter in"),
        ("see Table 5 A", "see Table five A"),  # a label numbers things
        ("row 2 B is free", "row two B is free"),
        ("got 3 A's", "got three A's"),
        ("pick 1 A or B", "pick one A or B"),
        ("levels 1 A B", "levels one A B"),  # a list of letters
    ],
)
def test_spaced_one_letter_units(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        (
            "Chrome 121.0.6167.85 is out",
            "Chrome one hundred twenty one point oh point six thousand one hundred sixty seven "
            "point eighty five is out",
        ),
        (
            "build 19045.3803",
            "build nineteen thousand forty five point three thousand eight hundred three",
        ),  # fmt: skip
    ],
)
def test_versions_are_names(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("then ssh in", "then S S H in"),  # no vowel, no word: spelled
        ("run npm test", "run N P M test"),
        ("type pwd", "type P W D"),
        ("hmm, shh", "hmm, shh"),  # CMUdict words without vowels stay words
        ("a Pv cell", "a P V cell"),  # any case
        ("Mr Smith", "Mr Smith"),  # CMUdict has "mr" (mister)
        ("edit lib/net/http.rb", "edit lib slash net slash H T T P dot R B"),  # a relative path
        ("open docs/setup.md", "open docs slash setup dot M D"),
        ("in us-east-1 now", "in U S east one now"),  # a cloud region's code is spelled
        ("or ap-southeast-2", "or A P southeast two"),
        ("ZeRO offload", "zero offload"),  # a word with capitals for style
        ("PaLM is a model.", "palm is a model."),  # as in a zh span (PaLM-2 -> palm 二)
        ("on iOS and macOS", "on I O S and mac O S"),  # a letter or a word, then an acronym
    ],
)
def test_codes_paths_and_styled_words(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def test_relative_path_is_one_word() -> None:
    words, _ = analyze("see app/models/user.py")
    assert [w.text for w in words if w.kind == "word"] == ["see", "app/models/user.py"]


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("due Thu, Apr 10", "due Thursday, April tenth"),  # a day before a date, no dot
        ("Wed 9:30 works", "Wednesday nine thirty works"),
        ("I sat 5 hours", "I sat five hours"),  # lower case: the verb
        ("in H.265 only", "in H two sixty five only"),
        ("over 2M downloads", "over two million downloads"),
        ("the 3M logo", "the three M logo"),  # the company
        ("open port 5432", "open port fifty four thirty two"),
        (
            "bind 10.0.0.5:9090",
            "bind one zero dot zero dot zero dot five colon nine zero nine zero",
        ),
        ("hit Ctrl+S", "hit control plus S"),
    ],
)
def test_days_codecs_counts_ports_keys(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("rated 110/220 V", "rated one hundred and ten or two hundred and twenty volts"),
        ("a 50/60 Hz supply", "a fifty or sixty hertz supply"),
        ("cut 4 1/2 lbs", "cut four and a half pounds"),  # a fraction before a unit
        ("your order #90210 shipped", "your order number nine zero two one zero shipped"),
        ("the #2 seed", "the number two seed"),
        ("sales up 8% YoY", "sales up eight percent year over year"),
        ("in 2007。", "in two thousand seven。"),  # CJK punctuation is punctuation
        ("（Python 3.9）", "(Python three point nine)"),
    ],
)
def test_unit_choices_order_numbers_cjk_punct(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("rated 4/5 overall", "rated four out of five overall"),  # a score
        ("got 2/3 stars", "got two out of three stars"),
        ("ate 2/3 of it", "ate two thirds of it"),
        ("a $20-30K budget", "a twenty to thirty thousand dollars budget"),
        ("from Q2-Q4 2025", "from Q two to Q four twenty twenty five"),
        ("in H1-H2", "in H one to H two"),
        ("Q1-H2 plan", "Q one H two plan"),  # different prefixes: no range
        ("we are open 24/7/365", "we are open twenty four seven three sixty five"),
    ],
)
def test_scores_prefixed_ranges_money_ranges(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("DO NOT touch", "do not touch"),  # a shouted phrase
        ("NO ENTRY here", "no entry here"),
        ("IN STOCK today", "in stock today"),
        ("call IT now", "call I T now"),  # alone: letters
        ("US and EU rules", "U S and E U rules"),
        ("FIXME soon", "fix me soon"),
    ],
)
def test_short_capital_words(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("open Feb 1-Apr 30", "open February first to April thirtieth"),
        ("closed Dec 24-26", "closed December twenty fourth to twenty sixth"),
        ("from 8 AM - 6 PM", "from eight A M to six P M"),
        ("the Mar 3-5 fair", "the March third to fifth fair"),
        ("since Sep 2025", "since September twenty twenty five"),  # a month of a year
    ],
)
def test_date_and_time_ranges(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("at 0x1f4a", "at zero X one F four A"),
        ("use #00ff7f", "use hash zero zero F F seven F"),
        ("use #abc", "use hash A B C"),
        ("issue #1024", "issue number ten twenty four"),  # digits only: a number
        (
            "id 0a1b2c3d-0000-4000-8000-00000000abcd",
            "I D zero A one B two C three D, zero zero zero zero, four zero zero zero, "
            "eight zero zero zero, zero zero zero zero zero zero zero zero A B C D",
        ),
        ("copy .env.example", "copy dot E N V dot example"),
        ("edit .bashrc", "edit dot bash R C"),
    ],
)
def test_hex_uuid_dotfiles(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("a 3/8-inch socket", "a three eighths inch socket"),
        ("hashed with SHA-512", "hashed with S H A five twelve"),
        ("a DDR4-3200 kit", "a D D R four thirty two hundred kit"),
        ("the F-150 truck", "the F one fifty truck"),
        ("COVID-19 data", "covid nineteen data"),
        ("a 12MP sensor", "a twelve megapixel sensor"),
        ("shot at f/2.8", "shot at F two point eight"),
    ],
)
def test_code_numbers_fraction_compounds_apertures(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("call at 2:00-3:30 PM", "call at two to three thirty P M"),
        ("at 9:00-10:30 am", "at nine to ten thirty A M"),
        ("open 9-11 am", "open nine to eleven A M"),
        ("from 10:00-11:00", "from ten o'clock to eleven o'clock"),
    ],
)
def test_time_ranges_share_am_pm(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("fly to St Louis", "fly to saint Louis"),  # no dot: still the title
        ("ask Dr Jones", "ask doctor Jones"),
        ("at 5 Oak St", "at five Oak street"),
        ("off Pine Dr now", "off Pine drive now"),
    ],
)
def test_titles_without_a_dot(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("both CPUs' caches", "both C P U's caches"),
        ("built ca. 1850", "built circa eighteen fifty"),
        ("built c. 1850", "built circa eighteen fifty"),
    ],
)
def test_plural_possessive_acronyms_circa(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("fare HK$38", "fare thirty eight Hong Kong dollars"),
        ("just S$4.50", "just four Singapore dollars fifty cents"),
        ("about A$1 each", "about one Australian dollar each"),
        ("a US$2 fee", "a two U S dollar fee"),
    ],
)
def test_prefixed_dollar_signs(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("a 45-min session", "a forty five minute session"),  # a unit in a compound: singular
        ("a 10-km race", "a ten kilometer race"),
        ("a 2-in-1 tablet", "a two in one tablet"),
        ("tea w/ lemon, w/o ice", "tea with lemon, without ice"),
    ],
)
def test_units_in_compounds_with_without(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("g(t) grows", "G of T grows"),  # the ")" stays a (silent) punctuation word
        ("in O(n) time", "in O of N time"),
        ("take sqrt(x)", "take square root of X"),
        ("call obj.f(x)", "call O B J dot F (X)"),  # code: no "of"
        ("if x ∈ S", "if X is in S"),
        ("as n → ∞", "as N to infinity"),
        ("so a*b", "so a times B"),
        ("pick (A) or (B)", "pick (A) or (B)"),  # a letter before punctuation is no article
    ],
)
def test_formula_words(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("measured in GB/s", "measured in gigabytes per second"),  # a unit on its own
        ("a 1000 W/m2 panel", "a one thousand watt per square meter panel"),
        ("at 35 psi", "at thirty five P S I"),
        ("the I/O path", "the I O path"),
    ],
)
def test_units_on_their_own(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        (
            "ISBN 978-0-306-40615-7",
            "I S B N nine seven eight zero three zero six four zero six one five seven",
        ),
        ("SKU 44-120", "S K U four four one two zero"),
        ("Super Bowl XLIX", "Super Bowl forty nine"),
    ],
)
def test_product_identifiers_and_bowls(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("mail jobs@abc-corp.com", "mail jobs at A B C dash corp dot com"),  # CMUdict spells abc
        ("see api.example.org", "see A P I dot example dot org"),
        ("the abc of it", "the A B C of it"),  # spelled everywhere: CMUdict's first reading
        ("the ok button", "the ok button"),  # the exception: ok is a word
    ],
)
def test_spelled_names_in_addresses(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize("name", ["ZeRO", "PaLM", "LLaMA"])
def test_mixed_case_word_reads_the_same_in_en_and_zh_spans(name: str) -> None:
    """A mixed-case word whose lower case is an English word is that word in both frontends."""
    import mixvox

    def word(text: str) -> tuple[str, str | None]:
        return next((w.spoken, w.respelling) for w in mixvox.route(text).words if w.text == name)

    en, zh = word(f"We use {name} here."), word(f"我们用{name}训练")
    assert en == zh == (name, name.lower())  # shown as written, said as the word
