"""StreamingVocoder: pieces fed frame by frame must join into the whole-utterance decode."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.decoder import AudioModelError, load_audio_models
from mixvox.engines.chattts.streaming import StreamingVocoder

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
HAVE_TINY = (TINY / "asset" / "Vocos.safetensors").is_file()
HAVE_TORCH = importlib.util.find_spec("torch") is not None

pytestmark = pytest.mark.skipif(not HAVE_TINY, reason=f"tiny ChatTTS checkpoint not at {TINY}")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return load_audio_models(
        TINY / "asset", backend="onnx", cache_dir=tmp_path_factory.mktemp("cache"), threads=1
    )


def _frames(source: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if source == "hidden":
        return rng.standard_normal((n, 32)).astype(np.float32)
    return rng.integers(0, 625, (n, 4))


def _whole(models, source: str, x: np.ndarray) -> np.ndarray:
    return models.hidden_to_wav(x) if source == "hidden" else models.codes_to_wav(x)


def _stream(sv: StreamingVocoder, x: np.ndarray, step: int) -> list[np.ndarray]:
    pieces = [sv.feed(x[i : i + step]) for i in range(0, len(x), step)]
    pieces.append(sv.finish())
    return pieces


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("source", ["hidden", "codes"])
@pytest.mark.parametrize("n", [1, 2, 13, 31, 80])
@pytest.mark.parametrize(("step", "first", "chunk"), [(1, 1, 1), (3, 2, 5), (7, 8, 3)])
def test_pieces_equal_whole_decode(models, source, n, step, first, chunk):
    x = _frames(source, n, seed=n * 10 + step)
    sv = StreamingVocoder(models, source, first_chunk_frames=first, chunk_frames=chunk)
    got = np.concatenate(_stream(sv, x, step))
    whole = _whole(models, source, x)
    assert got.shape == whole.shape == ((2 * n - 1) * 256,)
    assert _rel(got, whole) < 1e-4
    assert sv.samples_emitted == whole.shape[0]


def test_first_piece_arrives_after_first_chunk_plus_lookahead(models):
    x = _frames("hidden", 60, seed=1)
    la = models.receptive_field("hidden")["code_frames"]  # 12 for the tiny model
    sv = StreamingVocoder(models, "hidden", first_chunk_frames=4, chunk_frames=4)
    first = next(i + 1 for i in range(60) if sv.feed(x[i]).size)
    # samples of the first 4 code frames (+ the ISTFT's half window) need `la` frames after
    assert la + 4 <= first <= la + 6
    # later pieces come regularly, before the end of the stream
    sizes = [sv.feed(x[i]).size for i in range(first, 60)]
    assert sum(1 for s in sizes if s) >= 8
    assert all(s == 0 or s >= 4 * 512 for s in sizes)


def test_buffers_stay_bounded(models):
    sv = StreamingVocoder(models, "codes", first_chunk_frames=2, chunk_frames=2)
    x = _frames("codes", 400, seed=2)
    for i in range(0, 400, 4):
        sv.feed(x[i : i + 4])
    # every stage keeps only the frames its next window can read (+ one step of input)
    for st in sv._stages:
        assert st.buf is not None
        assert st.buf.shape[0] <= 2 * st.stage.radius + 8, st.stage.name
    assert sum(len(p) for p in sv._pending) <= 4 * models.receptive_field("codes")["code_frames"]
    assert sv.samples_emitted > 300 * 512


def _first_piece_and_all(sv: StreamingVocoder, x: np.ndarray) -> tuple[int, np.ndarray]:
    pieces, first = [], 0
    for i, row in enumerate(x):
        pieces.append(sv.feed(row))
        if pieces[-1].size and not first:
            first = i + 1
    pieces.append(sv.finish())
    return first, np.concatenate(pieces)


def test_smaller_lookahead_comes_earlier_and_keeps_length(models):
    x = _frames("hidden", 50, seed=3)
    exact = StreamingVocoder(models, "hidden", first_chunk_frames=2, chunk_frames=2)
    fast = StreamingVocoder(
        models, "hidden", first_chunk_frames=2, chunk_frames=2, lookahead_frames=2
    )
    assert exact.exact and not fast.exact
    exact_first, exact_wav = _first_piece_and_all(exact, x)
    fast_first, fast_wav = _first_piece_and_all(fast, x)
    assert 0 < fast_first < exact_first
    assert fast_wav.shape == exact_wav.shape == ((2 * 50 - 1) * 256,)
    assert np.isfinite(fast_wav).all()
    assert _rel(exact_wav, _whole(models, "hidden", x)) < 1e-4


def test_lookahead_at_receptive_field_is_exact(models):
    x = _frames("codes", 40, seed=4)
    la = models.receptive_field("codes")["code_frames"]
    sv = StreamingVocoder(
        models, "codes", first_chunk_frames=1, chunk_frames=1, lookahead_frames=la
    )
    assert sv.exact
    assert _rel(np.concatenate(_stream(sv, x, 1)), _whole(models, "codes", x)) < 1e-4


def test_empty_stream_and_misuse(models):
    sv = StreamingVocoder(models, "hidden")
    assert sv.feed(np.zeros((0, 32), np.float32)).size == 0
    assert sv.finish().size == 0
    assert sv.finish().size == 0  # idempotent
    with pytest.raises(AudioModelError, match="after finish"):
        sv.feed(np.zeros((1, 32), np.float32))
    sv = StreamingVocoder(models, "codes")
    with pytest.raises(AudioModelError, match="625"):
        sv.feed(np.array([[0, 1, 625, 3]]))
    with pytest.raises(AudioModelError, match="source"):
        StreamingVocoder(models, "text")
    with pytest.raises(AudioModelError, match=">= 1"):
        StreamingVocoder(models, "codes", chunk_frames=0)


def test_single_frame_vectors_are_accepted(models):
    x = _frames("hidden", 20, seed=5)
    sv = StreamingVocoder(models, "hidden", first_chunk_frames=1, chunk_frames=1)
    pieces = [sv.feed(row) for row in x]  # [H] vectors, one per GPT step
    pieces.append(sv.finish())
    assert _rel(np.concatenate(pieces), _whole(models, "hidden", x)) < 1e-4


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
def test_torch_backend_streams_exactly(tmp_path):
    m = load_audio_models(TINY / "asset", backend="torch", threads=1)
    x = _frames("hidden", 30, seed=6)
    sv = StreamingVocoder(m, "hidden", first_chunk_frames=3, chunk_frames=2)
    assert _rel(np.concatenate(_stream(sv, x, 2)), m.hidden_to_wav(x)) < 1e-4
