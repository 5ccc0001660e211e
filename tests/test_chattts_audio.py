"""Parity of the ChatTTS audio side (Decoder, DVAE, Vocos) with the reference goldens.

golden.npz holds outputs of the reference implementation (ChatTTS 0.2.5, torch) on the tiny
random-weight checkpoint: ``decoder/mel`` = Decoder(``greedy/hiddens``), ``dvae/mel`` =
DVAE(``greedy/codes``), ``vocos/wav_from_*`` = Vocos(that mel). Both backends must match
them to a relative error (max|a-b| / max|b|) below 1e-3.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.audio import AudioModelError, load_audio_models
from mixvox.engines.chattts.audio.vocos import StreamingISTFT, istft
from mixvox.engines.chattts.audio.weights import dequantize_codes, fsq_codebook

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
HAVE_TINY = (TINY / "golden.npz").is_file() and (TINY / "asset" / "Vocos.safetensors").is_file()
HAVE_TORCH = importlib.util.find_spec("torch") is not None

needs_tiny = pytest.mark.skipif(not HAVE_TINY, reason=f"tiny ChatTTS checkpoint not at {TINY}")
BACKENDS = [
    "onnx",
    pytest.param(
        "torch", marks=pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed")
    ),
]


def rel(a: np.ndarray, b: np.ndarray) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a.astype(np.float64) - b).max() / np.abs(b).max())


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    if not HAVE_TINY:
        pytest.skip(f"tiny ChatTTS checkpoint not at {TINY}")
    with np.load(TINY / "golden.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module", params=BACKENDS)
def models(request, tmp_path_factory):
    if not HAVE_TINY:
        pytest.skip(f"tiny ChatTTS checkpoint not at {TINY}")
    cache = tmp_path_factory.mktemp(f"onnx-cache-{request.param}")
    return load_audio_models(TINY / "asset", backend=request.param, cache_dir=cache, threads=1)


# --------------------------------------------------------------------------- golden parity


@needs_tiny
def test_decoder_mel_matches_golden(models, golden):
    hidden = golden["greedy/hiddens"]  # [24, 32]: one GPT hidden state per generated frame
    mel = models.decode_hidden(hidden)
    assert mel.shape == golden["decoder/mel"].shape == (100, 2 * hidden.shape[0])
    assert mel.dtype == np.float32
    assert rel(mel, golden["decoder/mel"]) < 1e-3


@needs_tiny
def test_dvae_mel_matches_golden(models, golden):
    mel = models.decode_codes(golden["greedy/codes"])
    assert mel.shape == golden["dvae/mel"].shape
    assert rel(mel, golden["dvae/mel"]) < 1e-3


@needs_tiny
@pytest.mark.parametrize("src", ["decoder", "dvae"])
def test_vocos_matches_golden(models, golden, src):
    mel = golden[f"{src}/mel"]
    wav = models.vocode(mel)
    ref = golden[f"vocos/wav_from_{src}"]
    # ISTFT with center=True: (F - 1) * hop samples for F mel frames
    assert wav.shape == ref.shape == ((mel.shape[1] - 1) * 256,)
    assert wav.dtype == np.float32
    assert rel(wav, ref) < 1e-3


@needs_tiny
def test_end_to_end_matches_golden(models, golden):
    assert (
        rel(models.hidden_to_wav(golden["greedy/hiddens"]), golden["vocos/wav_from_decoder"]) < 1e-3
    )
    assert rel(models.codes_to_wav(golden["greedy/codes"]), golden["vocos/wav_from_dvae"]) < 1e-3


@needs_tiny
def test_onnx_and_torch_agree_on_random_input(tmp_path):
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    a = load_audio_models(TINY / "asset", backend="onnx", cache_dir=tmp_path, threads=1)
    b = load_audio_models(TINY / "asset", backend="torch", threads=1)
    rng = np.random.default_rng(7)
    h = rng.standard_normal((37, 32)).astype(np.float32) * 3
    c = rng.integers(0, 625, (37, 4))
    assert rel(a.hidden_to_wav(h), b.hidden_to_wav(h)) < 1e-4
    assert rel(a.codes_to_wav(c), b.codes_to_wav(c)) < 1e-4


# --------------------------------------------------------------------------- batching


@needs_tiny
def test_batch_items_equal_single_decodes(models):
    rng = np.random.default_rng(3)
    hs = [rng.standard_normal((n, 32)).astype(np.float32) for n in (3, 20, 11)]
    for item, wav in zip(hs, models.hidden_to_wav_batch(hs), strict=True):
        single = models.hidden_to_wav(item)
        assert wav.shape == single.shape == ((2 * len(item) - 1) * 256,)
        assert rel(wav, single) < 1e-5
    cs = [rng.integers(0, 625, (n, 4)) for n in (1, 16, 7)]
    for item, wav in zip(cs, models.codes_to_wav_batch(cs), strict=True):
        single = models.codes_to_wav(item)
        assert wav.shape == single.shape
        assert rel(wav, single) < 1e-5
    assert models.hidden_to_wav_batch([]) == []


@needs_tiny
def test_batched_mel_zeroes_padding_and_keeps_lengths(models):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 10, 32)).astype(np.float32)
    mel = models.decode_hidden(x, lengths=[10, 4])
    assert mel.shape == (2, 100, 20)
    assert np.all(mel[1, :, 8:] == 0)
    assert rel(mel[1, :, :8], models.decode_hidden(x[1, :4])) < 1e-5


# --------------------------------------------------------------------------- FSQ + ISTFT


def test_fsq_codebook_digits():
    cb = fsq_codebook((5, 5, 5, 5))
    assert cb.shape == (625, 4)
    assert np.all(cb[0] == -1) and np.all(cb[624] == 1)
    assert np.all(cb[312] == 0)  # 312 = 2 + 2*5 + 2*25 + 2*125: every digit in the middle
    assert np.allclose(cb[1], [-0.5, -1, -1, -1])  # least significant digit first
    assert np.allclose(cb[5], [-1, -0.5, -1, -1])


@needs_tiny
def test_dequantize_is_affine_in_the_tables(models):
    w = models.dvae_weights
    codes = np.array([[312, 312, 312, 312]])  # all-zero codewords -> only the biases remain
    feat = dequantize_codes(codes, w.fsq)
    assert np.allclose(feat[0], np.concatenate(w.fsq.biases))


def _torch_istft(re, im, window, hop):
    import torch

    spec = torch.complex(torch.from_numpy(re), torch.from_numpy(im))
    win = torch.from_numpy(window.astype(np.float32))
    return torch.istft(spec, len(window), hop, len(window), win, center=True).numpy()


@pytest.mark.parametrize("frames", [1, 2, 5, 33])
def test_numpy_istft_matches_torch_istft(frames):
    if not HAVE_TORCH:
        pytest.skip("torch is not installed")
    n_fft, hop = 1024, 256
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    rng = np.random.default_rng(frames)
    re = rng.standard_normal((n_fft // 2 + 1, frames)).astype(np.float32)
    im = rng.standard_normal((n_fft // 2 + 1, frames)).astype(np.float32)
    ours = istft(re, im, window, hop)
    assert ours.shape == ((frames - 1) * hop,)
    if frames == 1:  # torch.istft refuses a single frame (empty output); ours gives 0 samples
        return
    assert rel(ours, _torch_istft(re, im, window, hop)) < 1e-5


@pytest.mark.parametrize("chunks", [[1] * 12, [5, 7], [3, 1, 4, 1, 3], [12]])
def test_streaming_istft_equals_whole(chunks):
    n_fft, hop = 1024, 256
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    rng = np.random.default_rng(len(chunks))
    total = sum(chunks)
    re = rng.standard_normal((513, total))
    im = rng.standard_normal((513, total))
    s = StreamingISTFT(window, hop)
    pieces, at = [], 0
    for n in chunks:
        pieces.append(s.push(re[:, at : at + n], im[:, at : at + n]))
        at += n
    pieces.append(s.finish())
    got = np.concatenate(pieces)
    whole = istft(re, im, window, hop)
    assert got.shape == whole.shape
    assert rel(got, whole) < 1e-6


# --------------------------------------------------------------------------- errors + cache


@needs_tiny
def test_bad_inputs_raise_clear_errors(models):
    with pytest.raises(AudioModelError, match="625"):
        models.decode_codes(np.array([[1, 2, 3, 625]]))  # the GPT's end token
    with pytest.raises(AudioModelError, match="integers"):
        models.decode_codes(np.zeros((3, 4), np.float32))
    with pytest.raises(AudioModelError, match=r"\[\.\.\., T, 32\]"):
        models.decode_hidden(np.zeros((3, 31), np.float32))
    with pytest.raises(AudioModelError, match="NaN"):
        models.decode_hidden(np.full((3, 32), np.nan, np.float32))
    with pytest.raises(AudioModelError, match="mel must be"):
        models.vocode(np.zeros((99, 4), np.float32))
    with pytest.raises(AudioModelError, match="lengths"):
        models.decode_hidden(np.zeros((2, 3, 32), np.float32), lengths=[3, 4])


@needs_tiny
def test_empty_inputs_give_empty_audio(models):
    assert models.decode_hidden(np.zeros((0, 32), np.float32)).shape == (100, 0)
    assert models.vocode(np.zeros((100, 0), np.float32)).shape == (0,)
    assert models.hidden_to_wav(np.zeros((0, 32), np.float32)).shape == (0,)


def test_missing_files_and_bad_backend(tmp_path):
    with pytest.raises(AudioModelError, match="Vocos"):
        load_audio_models(tmp_path)
    if HAVE_TINY:
        with pytest.raises(AudioModelError, match="backend"):
            load_audio_models(TINY / "asset", backend="tensorflow", cache_dir=tmp_path)


@needs_tiny
def test_graphs_are_cached_and_reused(tmp_path):
    a = load_audio_models(TINY / "asset", cache_dir=tmp_path, threads=1)
    paths = dict(a.backend.graph_paths)
    assert set(paths) == {"hidden", "codes", "vocos"}
    stamps = {k: p.stat().st_mtime_ns for k, p in paths.items()}
    b = load_audio_models(TINY / "asset", cache_dir=tmp_path, threads=1)
    assert b.backend.graph_paths == paths
    assert {k: p.stat().st_mtime_ns for k, p in paths.items()} == stamps
    # a corrupted cached graph is detected by its manifest hash and rebuilt
    paths["vocos"].write_bytes(b"garbage")
    c = load_audio_models(TINY / "asset", cache_dir=tmp_path, threads=1)
    assert c.vocode(np.zeros((100, 3), np.float32)).shape == (512,)


@needs_tiny
def test_receptive_field_from_shapes(models):
    rf = models.receptive_field("hidden")
    # tiny: conv_in 1+1, 2 blocks of k7 dilation 2 (6 each), out_conv 1 -> 15;
    # Vocos: embed 3 + 2 blocks of k7 (3 each) -> 9
    assert rf == {"decoder": 15, "vocos": 9, "istft": 3, "code_frames": 12}


@needs_tiny
def test_warmup_builds_everything(tmp_path):
    m = load_audio_models(TINY / "asset", cache_dir=tmp_path, threads=1)
    m.warmup()
    assert set(m.backend._stages) == {"hidden", "codes", "vocos"}
    assert len(list(tmp_path.glob("chattts-stage-*"))) == len(m.backend._stages["hidden"]) + len(
        m.backend._stages["codes"]
    ) + len(m.backend._stages["vocos"])
