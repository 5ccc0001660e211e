"""ChatTTS logits processors and draw: golden parity with the reference and exact semantics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.gpt.sampler import (
    SamplingParams,
    draw,
    process_logits,
    repetition_penalty,
    top_k,
    top_p,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
GOLDEN = SHARED / "chattts" / "tiny" / "golden.npz"


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    if not GOLDEN.is_file():
        pytest.skip(f"reference goldens not found at {GOLDEN} (../shared beside the checkout)")
    with np.load(GOLDEN) as z:
        return {k: z[k] for k in z.files if k.startswith("proc/")}


def test_penalty_matches_reference(golden):
    x = golden["proc/logits"] / np.float32(0.3)
    got = repetition_penalty(x, golden["proc/past"], 1.05, 16)
    np.testing.assert_allclose(got, golden["proc/after_penalty"], rtol=1e-5, atol=1e-5)


def test_full_chain_matches_reference(golden):
    got = process_logits(
        golden["proc/logits"], golden["proc/past"], SamplingParams(temperature=0.3)
    )
    want = golden["proc/after_warpers"]
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    keep = np.isfinite(want)
    np.testing.assert_allclose(got[keep], want[keep], rtol=1e-5, atol=1e-5)


def test_penalty_semantics():
    logits = np.array([[2.0, -2.0, 1.0, -1.0, 0.5]], np.float32)
    # token 0 twice, token 1 once, token 3 only outside the window of 3
    hist = np.array([[3, 0, 1, 0]])
    got = repetition_penalty(logits, hist, 2.0, 3)
    np.testing.assert_allclose(got, [[2.0 / 4, -2.0 * 2, 1.0, -1.0, 0.5]])
    # no history / window 0 / penalty 1: unchanged
    for h, w, p in ((hist[:, :0], 3, 2.0), (hist, 0, 2.0), (hist, 3, 1.0)):
        np.testing.assert_array_equal(repetition_penalty(logits, h, p, w), logits)
    with pytest.raises(ValueError):
        repetition_penalty(logits, np.array([[7]]), 2.0, 3)


def test_top_p_boundary_and_min_keep():
    probs = np.array([0.5, 0.3, 0.15, 0.05], np.float64)
    logits = np.log(probs).astype(np.float32)[None]
    # p=0.75: ascending cumsum 0.05, 0.20, 0.50, 1.0; drop where <= 0.25 -> 0.05 and 0.15
    got = top_p(logits, 0.75, min_keep=1)
    assert np.isneginf(got[0]).tolist() == [False, False, True, True]
    # p=0.45 keeps only the top token, but min_keep 3 keeps three
    assert np.isneginf(top_p(logits, 0.45, min_keep=1)[0]).sum() == 3
    assert np.isneginf(top_p(logits, 0.45, min_keep=3)[0]).tolist() == [False, False, False, True]
    np.testing.assert_array_equal(top_p(logits, 1.0), logits)


def test_top_k_ties_and_min_keep():
    logits = np.array([[1.0, 3.0, 2.0, 2.0, 0.0]], np.float32)
    assert np.isfinite(top_k(logits, 2, min_keep=1)[0]).tolist() == [False, True, True, True, False]
    assert np.isfinite(top_k(logits, 1, min_keep=1)[0]).sum() == 1
    assert np.isfinite(top_k(logits, 1, min_keep=4)[0]).sum() == 4
    assert np.isfinite(top_k(logits, 99)[0]).all()


def test_per_codebook_temperature():
    params = SamplingParams(temperature=(0.5, 1.0), top_p=None, top_k=None, repetition_penalty=1.0)
    logits = np.ones((3, 2, 4), np.float32)
    out = process_logits(logits, np.zeros((3, 2, 0), np.int64), params)
    np.testing.assert_allclose(out[:, 0], 2.0)
    np.testing.assert_allclose(out[:, 1], 1.0)
    with pytest.raises(ValueError):
        params.row_temperatures(5)


def test_temperature_zero_is_greedy_with_penalty():
    params = SamplingParams(temperature=0.0, top_p=0.7, top_k=20)
    assert params.greedy and not SamplingParams().greedy
    logits = np.array([[2.0, 1.95, -5.0]], np.float32)
    out = process_logits(logits, np.array([[0]]), params)
    # 2.0 / 1.05 < 1.95: the penalty flips the argmax, as in the reference
    assert int(draw(out, np.random.default_rng(0), greedy=True)[0]) == 1


def test_params_validation():
    for bad in (
        {"temperature": -1},
        {"top_p": 0.0},
        {"top_p": 1.5},
        {"top_k": 0},
        {"repetition_penalty": 0.0},
        {"min_keep": 0},
        {"max_new_tokens": 0},
        {"temperature": float("nan")},
    ):
        with pytest.raises(ValueError):
            SamplingParams(**bad)
    r = SamplingParams.for_refine(eos_id=7)
    assert r.eos_id == 7 and r.repetition_penalty == 1.0 and r.temperatures[0] == np.float32(0.7)


def test_draw_follows_distribution_and_never_picks_dropped():
    rng = np.random.default_rng(123)
    logits = np.log(np.array([0.6, 0.3, 0.1, 1e-9], np.float32))
    logits = np.tile(logits, (20000, 1))
    logits[:, 3] = -np.inf
    ids = draw(logits, rng)
    freq = np.bincount(ids, minlength=4) / ids.size
    assert freq[3] == 0
    np.testing.assert_allclose(freq[:3], [0.6, 0.3, 0.1], atol=0.015)
    again = draw(logits[:50], np.random.default_rng(5))
    np.testing.assert_array_equal(again, draw(logits[:50], np.random.default_rng(5)))


def test_draw_greedy_rows_and_shapes():
    logits = np.array([[[0.0, 5.0, 1.0], [3.0, 0.0, 0.0]]], np.float32)
    out = draw(logits, np.random.default_rng(0), greedy=True)
    assert out.shape == (1, 2) and out.tolist() == [[1, 0]]
    mixed = draw(logits.reshape(2, 3), np.random.default_rng(0), greedy=[True, False])
    assert mixed[0] == 1
    with pytest.raises(ValueError):
        draw(np.full((1, 3), -np.inf, np.float32), np.random.default_rng(0))


def test_draw_with_one_generator_per_item_draws_each_item_as_alone() -> None:
    """One random stream per batch item: an item's tokens do not depend on its batch-mates,
    and items sharing one generator draw as one generator over all their rows."""
    from mixvox.engines.chattts.gpt.sampler import draw, first_rng, uniforms

    rng0 = np.random.default_rng(0)
    logits = rng0.standard_normal((3, 4, 50)).astype(np.float32)  # 3 items x 4 codebooks
    alone = [draw(logits[b], np.random.default_rng(10 + b)) for b in range(3)]
    together = draw(logits, [np.random.default_rng(10 + b) for b in range(3)])
    assert all(np.array_equal(together[b], alone[b]) for b in range(3))
    g = np.random.default_rng(7)
    shared = draw(logits, [g, g, g])  # one generator object for every item
    assert np.array_equal(shared, draw(logits, np.random.default_rng(7)))
    assert np.array_equal(uniforms(np.random.default_rng(1), 4), np.random.default_rng(1).random(4))
    with pytest.raises(ValueError):
        uniforms([np.random.default_rng(1)] * 3, 4)
    assert first_rng([g]) is g and isinstance(first_rng(None), np.random.Generator)
