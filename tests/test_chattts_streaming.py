"""StreamingVocoder: pieces fed frame by frame must join into the whole-utterance decode."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.audio import AudioModelError, StreamingVocoder, load_audio_models

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


def _random_checkpoint(folder: Path, seed: int = 0) -> Path:
    """A checkpoint with other sizes than the tiny one (3/4 layers, odd widths, kernel 5,
    n_fft 512): everything must come from the tensor shapes."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)

    def stack(prefix, idim, odim, hidden, bn, n_layer, kernel, out):
        out[prefix + "conv_in.0.weight"] = rng.normal(0, 0.2, (bn, idim, 3))
        out[prefix + "conv_in.0.bias"] = rng.normal(0, 0.1, bn)
        out[prefix + "conv_in.2.weight"] = rng.normal(0, 0.2, (hidden, bn, 3))
        out[prefix + "conv_in.2.bias"] = rng.normal(0, 0.1, hidden)
        for i in range(n_layer):
            block(f"{prefix}decoder_block.{i}.", hidden, 3 * hidden, kernel, "weight", out)
        out[prefix + "conv_out.weight"] = rng.normal(0, 0.2, (odim, hidden, 1))

    def block(p, dim, inter, kernel, scale_key, out):
        out[p + "dwconv.weight"] = rng.normal(0, 0.3, (dim, 1, kernel))
        out[p + "dwconv.bias"] = rng.normal(0, 0.1, dim)
        out[p + "norm.weight"] = rng.normal(1, 0.1, dim)
        out[p + "norm.bias"] = rng.normal(0, 0.1, dim)
        out[p + "pwconv1.weight"] = rng.normal(0, 0.2, (inter, dim))
        out[p + "pwconv1.bias"] = rng.normal(0, 0.1, inter)
        out[p + "pwconv2.weight"] = rng.normal(0, 0.2, (dim, inter))
        out[p + "pwconv2.bias"] = rng.normal(0, 0.1, dim)
        out[p + scale_key] = rng.normal(0.3, 0.1, dim)

    dec = {"coef": rng.uniform(0.5, 1.5, (1, 100, 1))}
    stack("decoder.", 10, 12, 24, 6, 3, 5, dec)
    dec["out_conv.weight"] = rng.normal(0, 0.2, (100, 12, 3))
    dvae = {"coef": rng.uniform(0.5, 1.5, (1, 100, 1))}
    stack("decoder.", 14, 14, 20, 6, 4, 7, dvae)
    dvae["out_conv.weight"] = rng.normal(0, 0.2, (100, 14, 3))
    for g in range(2):
        dvae[f"vq_layer.quantizer.rvqs.{g}.project_out.weight"] = rng.normal(0, 0.5, (14, 4))
        dvae[f"vq_layer.quantizer.rvqs.{g}.project_out.bias"] = rng.normal(0, 0.1, 14)
    voc = {
        "backbone.embed.weight": rng.normal(0, 0.05, (16, 100, 7)),
        "backbone.embed.bias": np.zeros(16),
        "backbone.norm.weight": np.ones(16),
        "backbone.norm.bias": np.zeros(16),
        "backbone.final_layer_norm.weight": np.ones(16),
        "backbone.final_layer_norm.bias": np.zeros(16),
        "head.out.weight": rng.normal(0, 0.1, (514, 16)),
        "head.out.bias": np.zeros(514),
    }
    for i in range(3):
        block(f"backbone.convnext.{i}.", 16, 40, 7, "gamma", voc)
    for name, t in (("Decoder", dec), ("DVAE", dvae), ("Vocos", voc)):
        save_file(
            {k: np.asarray(v, np.float32) for k, v in t.items()},
            str(folder / f"{name}.safetensors"),
        )
    return folder


def test_other_geometry_is_read_from_shapes(tmp_path):
    (tmp_path / "asset").mkdir()
    asset = _random_checkpoint(tmp_path / "asset")
    m = load_audio_models(asset, cache_dir=tmp_path / "cache", threads=1)
    assert m.vocos_weights.n_fft == 512 and m.decoder_weights.in_features == 20
    # decoder: conv_in 1+1, 3 blocks of k5 dilation 2 (4 each), out_conv 1 -> 15; DVAE:
    # 2 + 4*6 + 1 = 27; Vocos: 3 + 3*3 = 12 (the window defaults to a periodic hann)
    assert m.receptive_field("hidden")["decoder"] == 15
    assert m.receptive_field("codes")["decoder"] == 27
    assert m.receptive_field("codes")["vocos"] == 12
    rng = np.random.default_rng(9)
    h = rng.standard_normal((33, 20)).astype(np.float32)
    c = rng.integers(0, 625, (33, 4))
    wav_h, wav_c = m.hidden_to_wav(h), m.codes_to_wav(c)
    assert wav_h.shape == wav_c.shape == ((2 * 33 - 1) * 256,)
    for source, x, whole in (("hidden", h, wav_h), ("codes", c, wav_c)):
        sv = StreamingVocoder(m, source, first_chunk_frames=2, chunk_frames=3)
        assert _rel(np.concatenate(_stream(sv, x, 2)), whole) < 1e-4
    if HAVE_TORCH:
        t = load_audio_models(asset, backend="torch", threads=1)
        assert _rel(t.hidden_to_wav(h), wav_h) < 1e-4
        assert _rel(t.codes_to_wav(c), wav_c) < 1e-4
