"""WindowVocoder (the GPU streaming path) on the CPU: the same code, eager, no graphs.

Pieces must join into the whole-utterance decode (fp32), reduced look-ahead must differ near
the newest frames and nowhere after the fast start's cross-fade, fp16 must stay close, and
the engine's window path must speak what the layer-wise path speaks.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
HAVE_TINY = (TINY / "asset" / "Vocos.safetensors").is_file()
HAVE_TORCH = importlib.util.find_spec("torch") is not None

pytestmark = [
    pytest.mark.skipif(not HAVE_TINY, reason=f"tiny ChatTTS checkpoint not at {TINY}"),
    pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed"),
]


@pytest.fixture(scope="module")
def models():
    from mixvox.engines.chattts.audio import load_audio_models

    return load_audio_models(TINY / "asset", backend="torch", threads=1)


@pytest.fixture(scope="module")
def vocoders(models):
    from mixvox.engines.chattts.audio.window import WindowVocoder

    return {
        s: WindowVocoder(models, s, chunk_sizes=(2, 4, 8), max_frames=120)
        for s in ("hidden", "codes")
    }


def _frames(source: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if source == "hidden":
        return rng.standard_normal((n, 32)).astype(np.float32)
    return rng.integers(0, 625, (n, 4))


def _whole(models, source: str, x: np.ndarray) -> np.ndarray:
    return models.hidden_to_wav(x) if source == "hidden" else models.codes_to_wav(x)


def _stream(st, x, step: int) -> np.ndarray:
    pieces = [st.feed(x[i : i + step]) for i in range(0, len(x), step)]
    pieces.append(st.finish())
    return np.concatenate(pieces)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("source", ["hidden", "codes"])
@pytest.mark.parametrize("n", [1, 2, 13, 31, 80])
@pytest.mark.parametrize(("step", "first", "chunk"), [(1, 1, 1), (3, 2, 5), (16, 8, 32)])
def test_window_pieces_equal_whole_decode(models, vocoders, source, n, step, first, chunk):
    from mixvox.engines.chattts.audio.window import WindowStream

    x = _frames(source, n, seed=n * 10 + step)
    st = WindowStream(vocoders[source], first_chunk_frames=first, chunk_frames=chunk)
    got = _stream(st, x, step)
    whole = _whole(models, source, x)
    assert got.shape == whole.shape == ((2 * n - 1) * 256,)
    assert _rel(got, whole) < 1e-5
    assert st.samples_emitted == whole.shape[0]


def test_first_piece_waits_for_exact_context_and_no_longer(models, vocoders):
    from mixvox.engines.chattts.audio.window import WindowStream

    v = vocoders["hidden"]
    x = _frames("hidden", 60, 3)
    st = WindowStream(v, first_chunk_frames=4, chunk_frames=4)
    sizes = [st.feed(x[i : i + 1]).size for i in range(40)]
    first = next(i for i, s in enumerate(sizes) if s)  # frames fed - 1
    assert first + 1 == 4 + v.ctx
    assert sizes[first] == 4 * 512


def test_context_is_needed(models, vocoders):
    """One frame less of right context than ``ctx`` changes samples: the context is not
    generous by accident (the exact test above would pass with any larger one)."""
    from mixvox.engines.chattts.audio.window import WindowStream

    v = vocoders["hidden"]
    x = _frames("hidden", 50, 4)
    whole = _whole(models, "hidden", x)
    short = _stream(WindowStream(v, chunk_frames=4, lookahead_frames=v.ctx - 1), x, 1)
    assert short.shape == whole.shape
    assert _rel(short, whole) > 1e-4  # 2.8e-4 here; exact pieces differ by < 1e-6


def test_device_frames_and_buffer_reuse(models, vocoders):
    import torch

    from mixvox.engines.chattts.audio.window import DeviceFrames, WindowStream

    v = vocoders["hidden"]
    x = _frames("hidden", 30, 5)
    whole = _whole(models, "hidden", x)
    for _ in range(2):  # the second stream reuses the first one's (zeroed) buffer
        st = WindowStream(v, first_chunk_frames=2, chunk_frames=2)
        pieces = [st.feed(DeviceFrames(torch.from_numpy(x[i : i + 4]))) for i in range(0, 30, 4)]
        got = np.concatenate([*pieces, st.finish()])
        assert _rel(got, whole) < 1e-5
    assert DeviceFrames(torch.from_numpy(x)).numpy().shape == (30, 32)


def test_misuse_is_refused(models, vocoders):
    from mixvox.engines.chattts.audio import AudioModelError
    from mixvox.engines.chattts.audio.window import WindowStream, WindowVocoder

    v = vocoders["hidden"]
    with pytest.raises(AudioModelError, match="first_chunk_frames"):
        WindowStream(v, first_chunk_frames=0)
    with pytest.raises(AudioModelError, match="lookahead"):
        WindowStream(v, lookahead_frames=-1)
    st = WindowStream(v)
    with pytest.raises(AudioModelError, match="NaN|finite"):
        st.feed(np.full((2, 32), np.nan, np.float32))
    with pytest.raises(AudioModelError, match="longer than"):
        st.feed(np.zeros((121, 32), np.float32))
    assert st.finish().size == 0 and st.finish().size == 0
    with pytest.raises(AudioModelError, match="after finish"):
        st.feed(np.zeros((1, 32), np.float32))
    with pytest.raises(AudioModelError, match="chunk_sizes"):
        WindowVocoder(models, "hidden", chunk_sizes=(0,))
    from mixvox.engines.chattts.audio import load_audio_models

    onnx = load_audio_models(TINY / "asset", backend="onnx", threads=1)
    with pytest.raises(AudioModelError, match="torch audio backend"):
        WindowVocoder(onnx, "hidden")


def test_fast_start_on_window_streams(models, vocoders):
    import functools

    from mixvox.engines.chattts.audio.faststart import FastStartVocoder
    from mixvox.engines.chattts.audio.window import WindowStream

    v = vocoders["hidden"]
    x = _frames("hidden", 70, 6)
    whole = _whole(models, "hidden", x)
    fs = FastStartVocoder(
        models,
        first_lookahead_frames=2,
        first_chunk_frames=2,
        make_stream=functools.partial(WindowStream, v),
    )
    sizes, pieces = [], []
    for i in range(70):
        pieces.append(fs.feed(x[i : i + 1]))
        sizes.append(pieces[-1].size)
    pieces.append(fs.finish())
    got = np.concatenate(pieces)
    assert got.shape == whole.shape
    first = next(i for i, s in enumerate(sizes) if s)
    assert first + 1 < 2 + v.ctx  # earlier than exact streaming
    assert fs.switched_at is not None and fs.switched_at > 0
    end = fs.switched_at + fs.fade
    assert _rel(got[:end], whole[:end]) > 1e-3  # the start is approximate
    assert _rel(got[end:], whole[end:]) < 1e-5  # and exact after the fade


@pytest.mark.parametrize(("dtype", "tol"), [("float16", 1e-2), ("bfloat16", 5e-2)])
def test_half_precision_stays_close(dtype, tol):
    from mixvox.engines.chattts.audio import load_audio_models
    from mixvox.engines.chattts.audio.window import WindowStream, WindowVocoder

    m32 = load_audio_models(TINY / "asset", backend="torch", threads=1)
    m16 = load_audio_models(TINY / "asset", backend="torch", threads=1, dtype=dtype)
    x = _frames("hidden", 40, 7)
    whole = m32.hidden_to_wav(x)
    got = _stream(WindowStream(WindowVocoder(m16, "hidden", chunk_sizes=(8,), max_frames=64)), x, 8)
    err = float(np.linalg.norm(got - whole) / np.linalg.norm(whole))
    assert 0 < err < tol


def test_loader_loads_only_the_sources_asked():
    from mixvox.engines.chattts.audio import AudioModelError, load_audio_models

    m = load_audio_models(TINY / "asset", backend="torch", threads=1, sources=("hidden",))
    assert m.decoder_weights is not None and m.dvae_weights is None
    with pytest.raises(AudioModelError, match="no model for source 'codes'"):
        m.decode_codes(np.zeros((2, 4), np.int64))
    with pytest.raises(AudioModelError, match="sources"):
        load_audio_models(TINY / "asset", backend="torch", sources=("mel",))


# -- through the engine ----------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)


def _speak(eng, n: int, save: Path | None = None) -> np.ndarray:
    from mixvox.interfaces import SynthesisOptions
    from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

    t = "今天天气很好"
    w = Word(t, t, [], 0, len(t), lang="zh")
    utt = Utterance(t, [Sentence(t, 0, len(t), "zh", [Span("zh", t, 0, len(t), [w])])])
    extra: dict = {"min_frames": n, "max_frames": n}
    if save is not None:
        extra["save_codes"] = str(save)
    opts = SynthesisOptions(seed=1, extra=extra)
    return np.concatenate([p.samples for p in eng.stream(utt, [Chunk(0, [w])], opts)])


def test_engine_window_path_speaks_like_the_layer_path(isolated, tmp_path) -> None:
    from mixvox.engines.chattts.audio import StreamingVocoder
    from mixvox.engines.chattts.audio.window import WindowStream
    from mixvox.engines.chattts.engine import ChatTTSEngine

    eng = ChatTTSEngine(TINY, backend="torch", audio_path="window", first_chunk_frames=2)
    try:
        assert eng.window is not None and isinstance(eng._vocoder(), WindowStream)
        assert eng.audio_dtype == "float32"  # CPU: fp32 unless asked
        got = _speak(eng, 40, save=tmp_path / "codes.npy")
        eng.window = None
        assert isinstance(eng._vocoder(), StreamingVocoder)
        ref = _speak(eng, 40)
    finally:
        eng.close()
    assert got.shape == ref.shape == ((2 * 40 - 1) * 256,)
    assert _rel(got, ref) < 1e-4
    assert np.load(tmp_path / "codes.npy").shape == (40, 4)


def test_engine_refuses_a_bad_audio_path(isolated) -> None:
    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.interfaces import MixvoxError

    with pytest.raises(MixvoxError, match="audio_path must be"):
        ChatTTSEngine(TINY, backend="torch", audio_path="gpu")
    with pytest.raises(MixvoxError, match="needs the torch audio backend"):
        ChatTTSEngine(TINY, backend="onnx", audio_path="window")


def test_device_generate_matches_graph_gpt_and_streams_device_frames() -> None:
    """The GPU hand-over (frames left on the device) decodes what ``GraphGPT.generate``
    decodes: same codes, and the streamed hidden states are the ones it returns."""
    import torch

    from mixvox.engines.chattts.audio.window import DeviceFrames
    from mixvox.engines.chattts.gpt import SamplingParams
    from mixvox.engines.chattts.gpt.cuda_graph import GraphGPT
    from mixvox.engines.chattts.gpu_link import device_generate, supports_device_frames

    g = GraphGPT(TINY / "asset", precision="fp32", device="cpu", use_graphs=False)
    try:
        assert supports_device_frames(g) and not supports_device_frames(object())
        prompt = np.arange(100, 120)
        params = SamplingParams(temperature=0.3, max_new_tokens=20, min_new_tokens=20)
        (ref,) = g.generate([prompt], params=params, rng=np.random.default_rng(3))
        got: list = []

        def on_frames(b, ids, hid, done):
            assert isinstance(ids, DeviceFrames) and isinstance(hid, DeviceFrames)
            got.append((ids.numpy(), hid.numpy()))

        (res,) = device_generate(
            g,
            [prompt],
            params=params,
            rng=np.random.default_rng(3),
            on_frames=on_frames,
            stream_every=4,
            frames_dtype=torch.float32,
        )
    finally:
        g.close()
    np.testing.assert_array_equal(res.ids, ref.ids)
    np.testing.assert_array_equal(np.concatenate([c for c, _ in got]), ref.ids)
    np.testing.assert_allclose(np.concatenate([h for _, h in got]), ref.hidden, atol=1e-6)
    assert len(got) > 1  # streamed, not one piece at the end


def test_engine_window_path_with_the_graph_runner(isolated) -> None:
    """Engine with the CUDA-graph runner's code path (here eager on the CPU): frames go
    GPT -> WindowVocoder as DeviceFrames and the audio equals the numpy hand-over's."""
    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.engines.chattts.gpt.cuda_graph import GraphGPT

    eng = ChatTTSEngine(TINY, backend="torch", audio_path="window", first_chunk_frames=2)
    try:
        eng.gpt.close()
        eng.gpt = GraphGPT(TINY / "asset", precision="fp32", device="cpu", use_graphs=False)
        got = _speak(eng, 30)
        w, eng.window = eng.window, None  # layer path, numpy frames from GraphGPT.generate
        ref = _speak(eng, 30)
        eng.window = w
    finally:
        eng.close()
    assert got.shape == ref.shape == ((2 * 30 - 1) * 256,)
    assert _rel(got, ref) < 1e-4
