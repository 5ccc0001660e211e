"""FastStartVocoder: an early approximate first chunk, then exactly the whole decode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.audio import AudioModelError, StreamingVocoder, load_audio_models
from mixvox.engines.chattts.audio.faststart import FastStartVocoder

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
pytestmark = pytest.mark.skipif(
    not (TINY / "asset" / "Vocos.safetensors").is_file(), reason="tiny checkpoint not found"
)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return load_audio_models(
        TINY / "asset", backend="onnx", cache_dir=tmp_path_factory.mktemp("cache"), threads=1
    )


def _hidden(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 32)).astype(np.float32)


def _first_piece_frames(voc, x: np.ndarray) -> int:
    """Frames fed (one at a time) before the first non-empty piece."""
    for i in range(len(x)):
        if voc.feed(x[i : i + 1]).size:
            return i + 1
    return len(x) + 1


@pytest.mark.parametrize(("n", "step", "fade"), [(80, 1, 256), (60, 4, 512), (40, 8, 0)])
def test_first_piece_is_early_and_the_rest_is_exact(models, n, step, fade) -> None:
    x = _hidden(n, seed=n + step)
    whole = models.hidden_to_wav(x)
    fs = FastStartVocoder(
        models, first_lookahead_frames=0, first_chunk_frames=2, crossfade_samples=fade
    )
    pieces = [fs.feed(x[i : i + step]) for i in range(0, n, step)] + [fs.finish()]
    got = np.concatenate(pieces)
    assert got.shape == whole.shape  # no gap, no overlap
    assert fs.switched_at is not None and fs.switched_at > 0
    tail = fs.switched_at + fade  # after the fade: the exact decode
    np.testing.assert_allclose(got[tail:], whole[tail:], rtol=0, atol=1e-4 * np.abs(whole).max())
    # before the switch the samples are approximate: they differ from the exact decode
    assert np.abs(got[: fs.switched_at] - whole[: fs.switched_at]).max() > 1e-3
    # and the first piece came earlier than exact streaming's
    early = _first_piece_frames(
        FastStartVocoder(models, first_lookahead_frames=0, first_chunk_frames=2), x
    )
    exact = _first_piece_frames(StreamingVocoder(models, first_chunk_frames=2), x)
    assert early < exact


def test_crossfade_is_between_the_two_streams(models) -> None:
    x = _hidden(50, seed=3)
    whole = models.hidden_to_wav(x)
    # reduced look-ahead output depends on when frames are finalised: the same piece sizes
    sv = StreamingVocoder(models, lookahead_frames=0, first_chunk_frames=2, chunk_frames=2)
    approx = np.concatenate([*(sv.feed(x[i : i + 1]) for i in range(50)), sv.finish()])
    fs = FastStartVocoder(models, first_lookahead_frames=0, first_chunk_frames=2)
    got = np.concatenate([*(fs.feed(x[i : i + 1]) for i in range(50)), fs.finish()])
    s, f = fs.switched_at, fs.fade
    assert s is not None and 0 < s and s + f <= got.size
    np.testing.assert_allclose(got[:s], approx[:s], atol=1e-5)  # the approximate start
    r = (np.arange(f, dtype=np.float32) + 0.5) / f
    mixed = (1 - r) * approx[s : s + f] + r * whole[s : s + f]
    np.testing.assert_allclose(got[s : s + f], mixed, atol=1e-4)


def test_full_lookahead_is_plain_exact_streaming(models) -> None:
    x = _hidden(30, seed=5)
    fs = FastStartVocoder(models, first_lookahead_frames=10_000)
    assert fs.approx is None
    got = np.concatenate([*(fs.feed(x[i : i + 3]) for i in range(0, 30, 3)), fs.finish()])
    whole = models.hidden_to_wav(x)
    np.testing.assert_allclose(got, whole, atol=1e-4 * np.abs(whole).max())


def test_short_utterance_ends_inside_the_approximate_part(models) -> None:
    x = _hidden(5, seed=9)
    fs = FastStartVocoder(models, first_lookahead_frames=0, first_chunk_frames=1)
    got = np.concatenate([*(fs.feed(x[i : i + 1]) for i in range(5)), fs.finish()])
    assert got.shape == models.hidden_to_wav(x).shape


def test_bad_settings_are_refused(models) -> None:
    with pytest.raises(AudioModelError, match="first_lookahead_frames"):
        FastStartVocoder(models, first_lookahead_frames=-1)
    with pytest.raises(AudioModelError, match="crossfade"):
        FastStartVocoder(models, crossfade_samples=-5)
    fs = FastStartVocoder(models)
    fs.finish()
    with pytest.raises(AudioModelError, match="after finish"):
        fs.feed(_hidden(1, 0))
