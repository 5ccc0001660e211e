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
