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


# -- through the engine ---------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)


def _speak(eng, n: int) -> np.ndarray:
    from mixvox.interfaces import SynthesisOptions
    from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

    t = "今天天气很好"
    w = Word(t, t, [], 0, len(t), lang="zh")
    utt = Utterance(t, [Sentence(t, 0, len(t), "zh", [Span("zh", t, 0, len(t), [w])])])
    opts = SynthesisOptions(seed=1, extra={"min_frames": n, "max_frames": n})
    return np.concatenate([p.samples for p in eng.stream(utt, [Chunk(0, [w])], opts)])


def test_engine_fast_start_ends_exactly_like_exact_streaming(isolated) -> None:
    from mixvox.engines.chattts.engine import ChatTTSEngine

    eng = ChatTTSEngine(TINY, first_lookahead_frames=0, first_chunk_frames=2)
    try:
        assert isinstance(eng._vocoder(), FastStartVocoder)
        fast = _speak(eng, 60)
        eng.first_lookahead_frames = None
        assert isinstance(eng._vocoder(), StreamingVocoder)
        exact = _speak(eng, 60)
        tail = eng.audio.receptive_field("hidden")["code_frames"] * 512 + 8192
    finally:
        eng.close()
    assert fast.shape == exact.shape
    assert np.abs(fast[:4096] - exact[:4096]).max() > 1e-3  # the start is approximate
    np.testing.assert_allclose(fast[tail:], exact[tail:], atol=1e-4 * np.abs(exact).max())


@pytest.mark.parametrize("bad", [-1, True, "x"])
def test_engine_refuses_a_bad_first_lookahead(isolated, bad) -> None:
    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.interfaces import MixvoxError

    with pytest.raises(MixvoxError, match="first_lookahead_frames must be an integer"):
        ChatTTSEngine(TINY, first_lookahead_frames=bad)
    eng = ChatTTSEngine(TINY, first_lookahead_frames="4")  # option text from the CLI
    try:
        assert eng.first_lookahead_frames == 4
    finally:
        eng.close()
