"""The CPU section of issue 9: int4 weights on the ONNX CPU path, and ONNX on CUDA.

int4 is checked for its layout (the ORT kernel against our own dequantization), its cache
keys, its option validation and its cost on the tiny checkpoint (teacher-forced agreement
with fp32 and with the golden greedy codes). ONNX Runtime's CUDA provider cannot run here
(no onnxruntime-gpu), so its choice is tested with a faked provider list.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts import runtime
from mixvox.engines.chattts.gpt import SamplingParams, load_gpt, onnx_stack
from mixvox.engines.chattts.gpt.onnx_stack import (
    INT4_BLOCKS,
    OnnxStack,
    _quantize_int4_blocks,
    runtime_graph_path,
    session_providers,
)
from mixvox.engines.chattts.gpt.weights import GPTWeights
from mixvox.engines.chattts.runtime import RuntimeChoiceError, resolve
from mixvox.interfaces import EngineUnavailable

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
ASSET = TINY / "asset"
needs_tiny = pytest.mark.skipif(
    not (TINY / "golden.npz").is_file(), reason="tiny ChatTTS checkpoint not in ../shared"
)
SPK_EMB_ID = 21143
GREEDY = SamplingParams(
    temperature=0.0, top_p=0.7, top_k=20, repetition_penalty=1.05, suppress_eos=True
)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "onnx"


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch (CPU build) without a GPU, no TensorRT; ONNX Runtime as installed here."""
    monkeypatch.setattr(runtime, "_torch_installed", lambda: True)
    monkeypatch.setattr(runtime, "_torch_cuda", lambda: False)
    monkeypatch.setitem(sys.modules, "tensorrt", None)


def _fake_providers(monkeypatch: pytest.MonkeyPatch, providers: list[str]) -> None:
    import onnxruntime

    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: list(providers))


# -- int4 layout ---------------------------------------------------------------------------


@pytest.mark.parametrize("block", INT4_BLOCKS)
def test_int4_kernel_reads_our_layout(block: int) -> None:
    """ORT's MatMulNBits (4 bits) on our packed weights equals x @ our dequantized weights,
    and that dequantization is a 4-bit approximation of the float weights (not garbage)."""
    import onnxruntime as ort
    from onnx import helper

    from mixvox.engines.chattts.onnx_graph import GraphBuilder

    rng = np.random.default_rng(block)
    N, K = 40, 2 * block + block // 2  # a ragged last block too
    w = rng.standard_normal((N, K)).astype(np.float32)
    x = rng.standard_normal((3, K)).astype(np.float32)
    q, s = _quantize_int4_blocks(w, block)
    nb = -(-K // block)
    assert q.shape == (N, nb, block // 2) and q.dtype == np.uint8 and s.shape == (N * nb,)
    codes = np.empty((N, nb, block), np.float32)
    codes[..., 0::2], codes[..., 1::2] = q & 15, q >> 4
    deq = ((codes - 8) * s.reshape(N, nb, 1)).reshape(N, -1)[:, :K]
    g = GraphBuilder("t")
    xi = g.input("x", np.float32, [3, K])
    y = g.op(
        "MatMulNBits",
        xi,
        g.const("w", q),
        g.const("s", s),
        domain="com.microsoft",
        K=K,
        N=N,
        bits=4,
        block_size=block,
        accuracy_level=0,
    )
    g.output(y, "y", np.float32, [3, N])
    m = g.build()
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    out = sess.run(None, {"x": x})[0]
    np.testing.assert_allclose(out, x @ deq.T, rtol=1e-4, atol=1e-4)
    err = np.linalg.norm(deq - w) / np.linalg.norm(w)
    assert 0.02 < err < 0.12  # 16 levels per block: a few % of error, never exact


def test_int4_all_zero_block_stays_zero() -> None:
    w = np.zeros((2, 64), np.float32)
    w[1, 32:] = np.linspace(-1, 1, 32)
    q, s = _quantize_int4_blocks(w, 32)
    codes = np.stack([q & 15, q >> 4], -1).reshape(2, 2, 32)
    assert (codes[0] == 8).all() and (codes[1, 0] == 8).all()
    assert np.isfinite(s).all() and (s != 0).all()


# -- options and cache keys -----------------------------------------------------------------


@needs_tiny
def test_int4_graphs_have_their_own_cache_keys(cache_dir: Path) -> None:
    w = GPTWeights.load(ASSET)
    paths = {runtime_graph_path(w, "int4", cache_dir, int4_block=b) for b in INT4_BLOCKS}
    paths |= {runtime_graph_path(w, p, cache_dir) for p in ("fp32", "int8")}
    assert len(paths) == 5
    default = runtime_graph_path(w, "int4", cache_dir)
    assert default == runtime_graph_path(w, "int4", cache_dir, int4_block=onnx_stack.INT4_BLOCK)
    with pytest.raises(ValueError, match="32, 64, 128"):
        runtime_graph_path(w, "int4", cache_dir, int4_block=48)
    with pytest.raises(ValueError, match="int4 block size was given"):
        runtime_graph_path(w, "int8", cache_dir, int4_block=32)
    with pytest.raises(ValueError, match="fp32, int8 or int4"):
        runtime_graph_path(w, "int2", cache_dir)


def test_int4_is_an_onnx_cpu_precision_only(no_gpu: None, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "_ort_cuda", lambda: False)
    d = resolve("onnx", "cpu", "int4")
    assert (d.backend, d.device, d.precision, d.gpt_runner) == ("onnx", "cpu", "int4", "onnx")
    assert resolve("onnx", "auto", "INT4").precision == "int4"
    with pytest.raises(RuntimeChoiceError, match=r"torch on the CPU \(valid: fp32\)"):
        resolve("torch", "cpu", "int4")
    # auto on a CPU machine runs it (onnx is the CPU backend)
    assert resolve("auto", "auto", "int4").precision == "int4"


def test_int4_is_refused_on_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_torch_installed", lambda: True)
    monkeypatch.setattr(runtime, "_torch_cuda", lambda: True)
    monkeypatch.setitem(sys.modules, "tensorrt", None)
    with pytest.raises(RuntimeChoiceError, match=r"valid: fp16, fp32, bf16"):
        resolve("torch", "cuda", "int4")
    monkeypatch.setattr(runtime, "_ort_cuda", lambda: True)
    with pytest.raises(RuntimeChoiceError, match=r"onnx on cuda \(valid: fp32\)"):
        resolve("onnx", "cuda", "int4")


# -- ONNX Runtime's CUDA provider (faked) ---------------------------------------------------


def test_onnx_cuda_allowed_when_the_cuda_provider_is_there(no_gpu, monkeypatch) -> None:
    _fake_providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    d = resolve("onnx", "cuda")
    assert (d.backend, d.device, d.precision, d.gpt_runner) == ("onnx", "cuda", "fp32", "onnx")
    assert (d.audio_backend, d.audio_device) == ("onnx", "cuda")
    assert d.on_cuda
    assert resolve("onnx", "cuda:1").device == "cuda:1"
    # auto + a named GPU, with onnxruntime-gpu the only GPU runtime: onnx on the GPU
    a = resolve("auto", "cuda")
    assert (a.backend, a.device) == ("onnx", "cuda")
    # auto without naming a device stays on the CPU (as before)
    assert resolve("auto", "auto").device == "cpu"


def test_onnx_cuda_without_the_provider_says_what_to_install(no_gpu, monkeypatch) -> None:
    _fake_providers(monkeypatch, ["AzureExecutionProvider", "CPUExecutionProvider"])
    with pytest.raises(EngineUnavailable, match="onnxruntime-gpu") as err:
        resolve("onnx", "cuda")
    assert "--backend torch" in str(err.value)
    with pytest.raises(EngineUnavailable, match="no CUDA device"):
        resolve("auto", "cuda")  # nothing can run on a GPU here: torch's message


def test_session_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    assert session_providers("cpu") == ["CPUExecutionProvider"]
    _fake_providers(monkeypatch, ["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="onnxruntime-gpu"):
        session_providers("cuda")
    _fake_providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert session_providers("cuda") == [
        ("CUDAExecutionProvider", {"device_id": 0}),
        "CPUExecutionProvider",
    ]
    assert session_providers("cuda:2")[0] == ("CUDAExecutionProvider", {"device_id": 2})
    with pytest.raises(ValueError, match="unknown ONNX device"):
        session_providers("gpu")


@needs_tiny
def test_onnx_stack_on_cuda_refuses_cpu_graphs_and_missing_provider(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = GPTWeights.load(ASSET)
    with pytest.raises(ValueError, match="onnxruntime-gpu"):
        OnnxStack(w, device="cuda", cache_dir=cache_dir)
    _fake_providers(monkeypatch, ["CUDAExecutionProvider", "CPUExecutionProvider"])
    with pytest.raises(ValueError, match="fp32 only"):
        OnnxStack(w, device="cuda", precision="int4", cache_dir=cache_dir)


@needs_tiny
def test_engine_refuses_onnx_cuda_before_loading(tmp_path, monkeypatch) -> None:
    from mixvox.engines.chattts import engine

    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(runtime, "_ort_cuda", lambda: False)

    def no_loading(*_a: object, **_k: object) -> None:
        raise AssertionError("the model was loaded before the choice was validated")

    monkeypatch.setattr(engine, "load_assets", no_loading)
    with pytest.raises(EngineUnavailable, match="onnxruntime-gpu"):
        engine.ChatTTSEngine(TINY, backend="onnx", device="cuda")


# -- int4 cost on the tiny checkpoint -------------------------------------------------------


@needs_tiny
def test_int4_cost_is_bounded(cache_dir: Path) -> None:
    """Measured on this checkpoint (onnxruntime 1.32, accuracy_level 4, AVX-512 VNNI CPU),
    teacher-forced over 200 greedy fp32 frames: top-1 code agreement with fp32 ~83 % at block
    32 and the default 64 (one padded block per 32-wide row), code logits max rel error ~0.16
    (int8: 98 %, 0.019). The tiny model's rows are
    32 wide (one block) with random Gaussian weights: the worst case for 16 levels. The
    floors are loose versions of those figures; int8 must stay closer than int4."""
    golden = np.load(TINY / "golden.npz")
    ids, spk = golden["tok/code_spk/ids"], golden["speaker/vector_f16"]
    fp = load_gpt(ASSET, cache_dir=cache_dir)
    q8 = load_gpt(ASSET, precision="int8", cache_dir=cache_dir)
    q4 = load_gpt(ASSET, precision="int4", cache_dir=cache_dir)
    kw = {"spk_emb": spk, "spk_emb_token_id": SPK_EMB_ID, "params": GREEDY}
    (a,) = fp.generate([ids], **kw, max_new_tokens=200)
    emb = fp.embed(ids[None], spk, SPK_EMB_ID)
    seq = np.concatenate([emb[0], fp.embed_codes(a.codes[:-1])])[None]
    tf = slice(len(ids) - 1, None)

    def scores(m) -> tuple[float, float]:
        lg = m.code_logits(m.hidden(seq)[0, tf])
        ref = fp.code_logits(fp.hidden(seq)[0, tf])
        agree = float((lg.argmax(-1) == ref.argmax(-1)).mean())
        return agree, float(np.abs(lg - ref).max() / np.abs(ref).max())

    a4, e4 = scores(q4)
    a8, e8 = scores(q8)
    assert a4 > 0.7 and e4 < 0.3
    assert a8 > a4 and e8 < e4
    # the golden greedy codes (the reference, fp32, 24 frames): int4 predicts most of them
    # teacher-forced from the golden prefix
    gold = golden["greedy/codes"]
    gseq = np.concatenate([emb[0], q4.embed_codes(gold[:-1])])[None]
    pred = q4.code_logits(q4.hidden(gseq)[0, len(ids) - 1 :]).argmax(-1)
    assert pred.shape == gold.shape
    assert (pred == gold).mean() > 0.7


@needs_tiny
def test_engine_int4_block_option(tmp_path, monkeypatch) -> None:
    from mixvox.engines.chattts import engine
    from mixvox.interfaces import MixvoxError

    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)
    with pytest.raises(MixvoxError, match="goes with precision int4"):
        engine.ChatTTSEngine(TINY, precision="int8", int4_block=32)
    with pytest.raises(MixvoxError, match="32, 64, 128"):
        engine.ChatTTSEngine(TINY, precision="int4", int4_block=48)
    eng = engine.ChatTTSEngine(TINY, precision="int4", int4_block="128")
    try:
        assert eng.precision == "int4" and eng.int4_block == 128
        assert "int4-b128" in str(eng.gpt.stack.graph_path)
    finally:
        eng.close()
