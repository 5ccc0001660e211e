"""Bad input around overrides: invisible characters inside them, unbalanced brackets,
combining marks with nothing to sit on. Each is a warning naming the offset, never a silent
loss, and the text is still read."""

from __future__ import annotations

import pytest

from mixvox.pipeline import Router

ROUTER = Router()


@pytest.mark.parametrize(
    "text, at, what",
    [
        ("[ng\x00inx](/EH1 N JH AH0 N EH1 K S/)", 3, "U+0000"),
        ("[fooz](/EH1 N\x1b JH AH0 N/)", 13, "U+001B"),
        ("[银\u202e行](yin2 hang2)", 2, "U+202E"),
        ("[银行](yin2\u200f hang2)", 9, "U+200F"),
        ("[a\ue000b](/EY1/)", 2, "U+E000"),
        ("[x](/\u0301EY1/)", 5, "combining mark U+0301"),
    ],
)
def test_invisible_characters_in_an_override_are_reported(text: str, at: int, what: str) -> None:
    utt = ROUTER.route(text)
    bad = [w for w in utt.warnings if w.code == "bad-override"]
    assert bad, utt.warnings
    assert what in bad[0].message and f"at {at}" in bad[0].message
    assert (bad[0].start, bad[0].end) == (0, len(text))
    assert not any(w.override for w in utt.words)  # not taken as a pronunciation
    for w in utt.words:
        assert not any(ord(c) < 0x20 or 0x200E <= ord(c) <= 0x202E for c in w.spoken), w


@pytest.mark.parametrize(
    "text, start, end, why",
    [
        ("[nginx](/EH1 N", 0, 14, "no closing ')'"),
        ("[银行](yin2 hang2", 0, 15, "no closing ')'"),
        ("[nginx(/EH1 N/)", 0, 15, "'[' has no closing ']'"),
        ("use nginx](/EH1 N/) now", 4, 19, "']' has no opening '['"),
    ],
)
def test_unbalanced_override_brackets_are_reported(
    text: str, start: int, end: int, why: str
) -> None:
    utt = ROUTER.route(text)
    bad = [w for w in utt.warnings if w.code == "bad-override"]
    assert len(bad) == 1, utt.warnings
    assert why in bad[0].message and (bad[0].start, bad[0].end) == (start, end)
    assert "nginx" in utt.spoken.lower().replace(" ", "") or "银行" in utt.spoken


@pytest.mark.parametrize(
    "text", ["see [docs](https://x.com) now", "x [y] z", "a (b) [c]", "[laugh]"]
)
def test_ordinary_brackets_are_not_warned_about(text: str) -> None:
    assert not [w for w in ROUTER.route(text).warnings if w.code == "bad-override"]


@pytest.mark.parametrize("text, mark_at", [("+\u0301 5", 1), ("价格%\u0308", 3), ("\u0301开始", 0)])
def test_combining_marks_on_symbols_are_reported_at_their_offset(text: str, mark_at: int) -> None:
    utt = ROUTER.route(text)
    assert any(w.start <= mark_at < w.end for w in utt.warnings), utt.warnings


def test_the_same_checks_hold_inside_ssml() -> None:
    text = "<speak>用 [ng\u202einx](/EH1 N JH AH0 N EH1 K S/) 部署</speak>"
    utt = ROUTER.route(text)
    bad = next(w for w in utt.warnings if w.code == "bad-override")
    assert text[bad.start : bad.end] == "[ng\u202einx](/EH1 N JH AH0 N EH1 K S/)"
    assert f"at {text.index(chr(0x202E))}" in bad.message
