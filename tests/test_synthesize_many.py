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


def test_text_blocks_cover_the_text_and_cut_at_sentence_ends():
    from mixvox.pipeline import text_blocks

    text = ("第一句话很短。" * 3000) + ("no punctuation at all " * 2000) + "x" * 40000
    blocks = list(text_blocks(text, size=1000))
    assert "".join(blocks) == text
    assert all(len(b) <= 2000 for b in blocks)
    assert blocks[0].endswith("。")
    assert list(text_blocks("短", size=1000)) == ["短"] and list(text_blocks("")) == []


def test_long_text_streams_block_by_block(tts, monkeypatch):
    """The first audio comes after routing the first block, not the whole text."""
    routed = []
    real_route = tts.route
    monkeypatch.setattr(tts, "route", lambda t: routed.append(len(t)) or real_route(t))
    text = "今天天气很好。" * 4000  # 28,000 characters: several blocks
    first = next(iter(tts.stream(text)))
    assert len(first) > 0
    assert len(routed) == 1 and routed[0] < len(text)


def test_saved_files_get_normal_permissions(tmp_path):
    import os

    import numpy as np

    path = tmp_path / "a.wav"
    mixvox.Audio(np.linspace(-0.1, 0.1, 100), 24000).save(path)
    mask = os.umask(0)
    os.umask(mask)
    assert (path.stat().st_mode & 0o777) == (0o666 & ~mask)
