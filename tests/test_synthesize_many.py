"""Synthesizer.synthesize_many: ordered results, overlapping stages, per-text failures."""

from __future__ import annotations

import pytest

import mixvox
from mixvox.stages import Failed


@pytest.fixture(scope="module")
def tts():
    with mixvox.Synthesizer("espeak") as t:
        yield t


def test_results_in_order_and_match_single_calls(tts):
    texts = [
        "你好",
        "hello world, this is a longer English sentence",
        "今天的 meeting 改到 3:30 PM",
    ]
    many = list(tts.synthesize_many(texts))
    assert all(isinstance(a, mixvox.Audio) for a in many)
    singles = [tts.synthesize(t) for t in texts]
    for a, b in zip(many, singles, strict=True):
        # espeak varies by a few samples between calls; the same text gives the same length
        assert abs(len(a) - len(b)) <= 0.03 * len(b)
    assert many[1].duration > many[0].duration


def test_a_failing_text_is_reported_and_the_rest_go_on(tts):
    out = list(tts.synthesize_many(["你好", None, "world"]))  # type: ignore[list-item]
    assert isinstance(out[0], mixvox.Audio) and isinstance(out[2], mixvox.Audio)
    assert isinstance(out[1], Failed) and out[1].stage == "prepare" and out[1].index == 1
