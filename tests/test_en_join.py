"""How spoken pieces are joined (issue 7): a space before an opening bracket or quotation mark
that follows a word, none inside the brackets or quotes, none between Chinese pieces, none
around control tokens; straight quotation marks of English text become opening or closing
ones from their place in the source (``said "hi"`` was joined ``said" hi"``)."""

from __future__ import annotations

import pytest

from mixvox.frontends.en.normalize import normalize_en
from mixvox.ir import join_spoken


@pytest.mark.parametrize(
    ("parts", "joined"),
    [
        (["Call", "(", "four one five", ")", "five"], "Call (four one five) five"),
        (["said", "“", "hi", "”", "to"], "said “hi” to"),
        (["see", "[", "one", "]", "now"], "see [one] now"),
        (["x", "«", "y", "»"], "x «y»"),
        (["请拨打", "(", "四幺五", ")"], "请拨打(四幺五)"),  # no space after a Chinese word
        (["说", "（", "你好", "）"], "说（你好）"),
        (["hello", "[uv_break]", "world"], "hello[uv_break]world"),  # control tokens: no space
        (["((", "a", "))"], "((a))"),
        (["$", "(", "five"], "$(five"),  # after a mark that takes no space after it
        (["one", ",", "two", "."], "one, two."),
    ],
)
def test_join_spoken(parts: list[str], joined: str) -> None:
    assert join_spoken(parts) == joined


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Call (415) 555-0100", "Call (four one five) five five five, zero one zero zero"),
        (
            "Call (415) 555-0100 now.",
            "Call (four one five) five five five, zero one zero zero now.",
        ),
        ('She said "it works" and left.', "She said “it works” and left."),
        ('He said "hi".', "He said “hi”."),
        ("'quoted' words", "‘quoted’ words"),
        ('A "B" and "C"', "A “B” and “C”"),
        ("He said “hi” to me", "He said “hi” to me"),  # typographic quotes keep their side
        ("see [1] now", "see [one] now"),
        ('a 15" laptop', "a fifteen inch laptop"),  # an inch mark is no quotation mark
        ("don't", "don't"),
    ],
)
def test_quotes_and_brackets_in_english(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        # an em dash glued between words was read as a hyphen: "was how" as one word
        ("It was—how do I put it—odd.", "It was — how do I put it — odd."),
        ("I — I don't know.", "I — I don't know."),  # never "I minus I"
        ("C — D", "C — D"),
        ("x – y", "X – Y"),  # an en dash is never minus either
        ("1990 — 2000", "nineteen ninety to two thousand"),  # numbers going up: a range
        ("x - y", "X minus Y"),  # a hyphen with spaces between terms still is
    ],
)
def test_dashes_are_pauses_not_minus(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken
