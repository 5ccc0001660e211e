"""The one runtime decision: backend, device and precision resolved and validated before loading.

What is installed is faked (torch's CUDA, TensorRT), so every rule is checked on any machine;
the engine tests use the tiny checkpoint and prove that a bad choice fails before the weights
are read and that the GPT and the audio models get the same decision.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from mixvox.engines.chattts import runtime
from mixvox.engines.chattts.runtime import RuntimeChoiceError, RuntimeDecision, resolve
from mixvox.interfaces import EngineUnavailable, MixvoxError

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
needs_tiny = pytest.mark.skipif(
    not TINY.is_dir(), reason="tiny ChatTTS checkpoint not in ../shared"
)


@pytest.fixture
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with torch (CPU build) and no TensorRT."""
    monkeypatch.setattr(runtime, "_torch_installed", lambda: True)
    monkeypatch.setattr(runtime, "_torch_cuda", lambda: False)
    monkeypatch.setattr(runtime, "_ort_cuda", lambda: False)
    monkeypatch.setitem(sys.modules, "tensorrt", None)


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where torch sees a GPU, without TensorRT."""
    monkeypatch.setattr(runtime, "_torch_installed", lambda: True)
    monkeypatch.setattr(runtime, "_torch_cuda", lambda: True)
    monkeypatch.setitem(sys.modules, "tensorrt", None)


@pytest.fixture
def tensorrt(monkeypatch: pytest.MonkeyPatch) -> None:
    """TensorRT 10 and cuda-python importable, one GPU visible."""
    trt = types.ModuleType("tensorrt")
    trt.__version__ = "10.3.0"  # type: ignore[attr-defined]
    cudart = types.SimpleNamespace(cudaGetDeviceCount=lambda: (0, 1))
    monkeypatch.setitem(sys.modules, "tensorrt", trt)
    monkeypatch.setattr(runtime, "import_cudart", lambda: cudart)
    monkeypatch.setattr(runtime, "_torch_installed", lambda: True)
    monkeypatch.setattr(runtime, "_torch_cuda", lambda: True)


def test_a_precision_that_is_no_choice_names_the_valid_ones() -> None:
    with pytest.raises(RuntimeChoiceError, match="valid: fp32, int8, int4, fp16, bf16, fp8") as err:
        resolve("onnx", "cpu", "fp4")
    assert isinstance(err.value, ValueError) and isinstance(err.value, MixvoxError)
    assert "'fp4'" in str(err.value)
    with pytest.raises(RuntimeChoiceError, match="valid: onnx, torch, tensorrt or auto"):
        resolve("tensorflow")
    with pytest.raises(RuntimeChoiceError, match="valid: cpu, cuda, cuda:N or auto"):
        resolve("torch", "gpu")


def test_cpu_defaults(cpu_only: None) -> None:
    d = resolve()
    assert (d.backend, d.device, d.precision) == ("onnx", "cpu", "fp32")
    assert (d.audio_backend, d.audio_device, d.gpt_runner) == ("onnx", "cpu", "onnx")
    assert resolve("onnx", precision="int8").precision == "int8"
    t = resolve("torch")  # torch without a GPU: the portable stack on the CPU
    assert (t.device, t.precision, t.gpt_runner, t.audio_backend) == (
        "cpu",
        "fp32",
        "torch",
        "torch",
    )
    with pytest.raises(RuntimeChoiceError, match=r"torch on the CPU \(valid: fp32\)"):
        resolve("torch", "cpu", "fp16")
    with pytest.raises(RuntimeChoiceError, match=r"onnx on the CPU \(valid: fp32, int8, int4\)"):
        resolve("onnx", "cpu", "bf16")
    with pytest.raises(EngineUnavailable, match="CUDAExecutionProvider.*onnxruntime-gpu"):
        resolve("onnx", "cuda")  # no onnxruntime-gpu here


def test_auto_falls_back_on_the_cpu_and_says_why(cpu_only: None) -> None:
    d = resolve("auto", "auto", "fp16")  # fp16 was meant for a GPU that is not there
    assert (d.backend, d.device, d.precision) == ("onnx", "cpu", "fp32")
    assert "fp16" in d.reason and d.reason in d.describe()
    with pytest.raises(EngineUnavailable, match="no CUDA device"):
        resolve("auto", "cuda")  # a GPU asked for by name is not silently replaced
    with pytest.raises(EngineUnavailable, match="no CUDA device"):
        resolve("torch", "cuda:1")


def test_cuda_defaults_and_explicit_precisions(cuda: None, monkeypatch) -> None:
    monkeypatch.setattr(runtime, "_triton_installed", lambda: False)
    d = resolve()
    assert (d.backend, d.device, d.precision, d.gpt_runner) == (
        "torch",
        "cuda",
        "fp16",
        "cuda-graphs",
    )
    assert "Triton not installed" in d.reason
    assert (d.audio_backend, d.audio_device) == ("torch", "cuda")
    assert resolve("torch", "cuda", "fp32").precision == "fp32"  # explicit fp32 is honoured
    assert resolve("torch", "cuda:1", "bf16").device == "cuda:1"
    # --device cpu was the engine's default: with auto it names nothing (as before)
    assert resolve("auto", "cpu") == resolve("auto", "auto")
    assert resolve("torch", "auto").device == "cuda"
    with pytest.raises(RuntimeChoiceError, match=r"valid: fp16, fp32, bf16, fp8"):
        resolve("torch", "cuda", "int8")


def test_gpu_decoder_fused_by_default_with_triton_graphs_on_request(
    cuda: None, monkeypatch
) -> None:
    monkeypatch.setattr(runtime, "_triton_installed", lambda: True)
    monkeypatch.setattr(runtime, "_cuda_capability", lambda device: (9, 0))
    d = resolve()
    assert (d.gpt_runner, d.gpu_decoder, d.precision) == ("cuda-fused", "fused", "fp16")
    assert "fused Triton" in d.describe()
    g = resolve("torch", "cuda", "fp16", "graphs")
    assert (g.gpt_runner, g.gpu_decoder) == ("cuda-graphs", "graphs")
    assert resolve("torch", "cuda:1", "bf16", "fused").gpt_runner == "cuda-fused"
    f8 = resolve("torch", "cuda", "fp8")
    assert (f8.precision, f8.gpt_runner) == ("fp8", "cuda-fused")
    with pytest.raises(RuntimeChoiceError, match="fp8 runs on the fused Triton decode step only"):
        resolve("torch", "cuda", "fp8", "graphs")
    with pytest.raises(RuntimeChoiceError, match="unknown ChatTTS GPU decoder 'turbo'"):
        resolve("torch", "cuda", "fp16", "turbo")
    monkeypatch.setattr(runtime, "_cuda_capability", lambda device: (8, 0))
    with pytest.raises(EngineUnavailable, match="fp8 needs a GPU with fp8 conversions.*8.0"):
        resolve("torch", "cuda", "fp8")
    monkeypatch.setattr(runtime, "_triton_installed", lambda: False)
    with pytest.raises(EngineUnavailable, match="needs Triton"):
        resolve("torch", "cuda", "fp16", "fused")
    with pytest.raises(EngineUnavailable, match="needs Triton"):
        resolve("torch", "cuda", "fp8")


def test_gpu_decoder_and_fp8_refused_off_cuda(cpu_only: None) -> None:
    with pytest.raises(RuntimeChoiceError, match="--gpu-decoder fused needs --backend torch"):
        resolve("onnx", "cpu", "fp32", "fused")
    with pytest.raises(RuntimeChoiceError, match=r"fp8 is not available .* \(valid: fp32\)"):
        resolve("torch", "cpu", "fp8")
    with pytest.raises(RuntimeChoiceError, match=r"onnx on the CPU \(valid: fp32, int8, int4\)"):
        resolve("onnx", "cpu", "fp8")
    assert resolve("onnx", "cpu", "fp32", "graphs").gpu_decoder == ""  # nothing to choose


def test_tensorrt_rules(tensorrt: None) -> None:
    d = resolve()
    assert (d.backend, d.device, d.precision, d.audio_backend) == (
        "tensorrt",
        "cuda",
        "fp16",
        "torch",
    )
    assert resolve("tensorrt", precision="int8").precision == "int8"
    f = resolve("tensorrt", precision="fp32")
    assert f.precision == "fp16" and "TensorRT builds fp16" in f.reason
    with pytest.raises(RuntimeChoiceError, match=r"TensorRT \(valid: fp16, int8, fp32\)"):
        resolve("tensorrt", precision="bf16")


def test_missing_tensorrt_is_reported_before_loading(cuda: None) -> None:
    with pytest.raises(EngineUnavailable, match="TensorRT is not installed"):
        resolve("tensorrt")


def test_missing_torch_is_reported_before_loading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_torch_installed", lambda: False)
    with pytest.raises(EngineUnavailable, match=r"needs torch \(pip install 'mixvox\[torch\]'\)"):
        resolve("torch", "cpu")


def test_the_decision_is_frozen() -> None:
    d = resolve("onnx", "cpu")
    with pytest.raises(AttributeError):
        d.precision = "int8"  # type: ignore[misc]


# -- the engine ---------------------------------------------------------------------------------


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)


def _no_loading(*_a: object, **_k: object) -> None:
    raise AssertionError("the model was loaded before the choice was validated")


@needs_tiny
@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"precision": "fp4"}, "valid: fp32, int8, int4, fp16, bf16, fp8"),
        ({"backend": "onnx", "precision": "fp16"}, "valid: fp32, int8, int4"),
    ],
)
def test_engine_refuses_a_bad_choice_before_loading(isolated, monkeypatch, kw, match) -> None:
    from mixvox.engines.chattts import engine

    monkeypatch.setattr(engine, "load_assets", _no_loading)
    with pytest.raises(RuntimeChoiceError, match=match):
        engine.ChatTTSEngine(TINY, **kw)


@needs_tiny
def test_engine_hands_one_decision_to_the_gpt_and_the_audio(isolated, monkeypatch) -> None:
    from mixvox.engines.chattts import engine

    seen: dict[str, RuntimeDecision] = {}
    real_gpt, real_audio = engine.load_gpt, engine.load_audio_models

    def gpt(asset, rt, **kw):
        seen["gpt"] = rt
        return real_gpt(asset, rt, **kw)

    def audio(asset, rt, **kw):
        seen["audio"] = rt
        return real_audio(asset, rt, **kw)

    monkeypatch.setattr(engine, "load_gpt", gpt)
    monkeypatch.setattr(engine, "load_audio_models", audio)
    eng = engine.ChatTTSEngine(TINY, precision="int8")
    try:
        assert seen["gpt"] is seen["audio"] is eng.runtime
        assert (eng.backend, eng.device, eng.precision) == ("onnx", "cpu", "int8")
        assert eng.gpt.backend == "onnx" and eng.audio.backend.name == "onnx"
    finally:
        eng.close()
