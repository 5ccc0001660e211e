"""Where and how ChatTTS runs: backend, device and precision, decided once, before any load.

The GPT and the audio models are loaded from one :class:`RuntimeDecision`, made by
:func:`resolve` from the user's three choices and from what is installed here (torch and
whether it sees a GPU, TensorRT with cuda-python, onnxruntime-gpu). A value that is not a
choice at all (``--precision fp4``) raises :class:`RuntimeChoiceError` naming the valid ones;
a valid value this machine cannot run (``--device cuda`` without a GPU) raises
:class:`~mixvox.interfaces.EngineUnavailable` saying what to install or use instead. Both
happen before the weights are read.

The rules (``auto`` = left to this module):

============  =========  ==================================  =========================
backend       device     GPT runner                          precision (default first)
============  =========  ==================================  =========================
onnx          cpu        ONNX Runtime, CPU provider          fp32, int8, int4
onnx          cuda[:N]   ONNX Runtime, CUDA provider         fp32
torch         cpu        portable torch stack                fp32
torch         cuda[:N]   fused Triton step (default) or      fp16, fp32, bf16, fp8
                         torch CUDA graphs (``gpu_decoder``)  (fp8: fused, Hopper+)
tensorrt      (GPU)      TensorRT engine                     fp16, int8 (fp32 -> fp16)
============  =========  ==================================  =========================

* ``gpu_decoder`` (torch on CUDA only): ``fused`` = the fused Triton decode step
  (``gpt.triton_decode``, 2 + 5 kernels per layer, ~2.5x the frames/s of the graphs path on
  an H200), ``graphs`` = the torch ops captured in CUDA graphs (``gpt.cuda_graph``), ``auto``
  (default) = fused when Triton is importable, else graphs (the reason says so). ``fp8``
  (e4m3 weights, per-output-channel scales, fp16 activations) runs on the fused step only,
  on GPUs with fp8 conversions (compute capability 8.9 or newer).

* ``backend=auto``: TensorRT when it and a GPU are usable, else torch when it sees a CUDA
  GPU, else onnx on the CPU (also when only onnxruntime-gpu is installed: the ONNX GPT runs
  on the CPU provider unless a cuda device is named). ``device=cpu`` counts as unnamed here, as it always did (it
  was the engine's default): ``--backend onnx`` is the way to stay on the CPU. A named
  ``cuda`` device keeps the choice on the GPU (ONNX Runtime's CUDA provider when it is the
  only GPU runtime installed), and is refused when no GPU backend can run.
* ``--backend onnx --device cuda[:N]``: allowed when ONNX Runtime offers the
  ``CUDAExecutionProvider`` (the onnxruntime-gpu package, instead of onnxruntime); else
  :class:`~mixvox.interfaces.EngineUnavailable` says to install it or to use torch. The same
  graphs run there (fp32: the int8/int4 ``MatMulNBits`` graphs are the CPU's), with the
  KV cache bound on the device. Not verified on our machines (no onnxruntime-gpu wheel for
  their CUDA 13); the provider choice is unit-tested with a faked provider list.
  A precision the automatic choice cannot run (fp16 on the CPU) falls back to that
  backend's default, as before, and the reason says so.
* ``device=auto``: the GPT backend's natural device (onnx: cpu; torch: cuda when torch sees
  a GPU, else cpu; tensorrt: cuda).
* The audio models (Decoder/DVAE/Vocos) follow the GPT: same backend and device, except
  that next to TensorRT they run on torch (there is no TensorRT audio path).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from typing import Any, Literal

from mixvox.interfaces import EngineUnavailable, MixvoxError

__all__ = [
    "BACKENDS",
    "GPU_DECODERS",
    "PRECISIONS",
    "RuntimeChoiceError",
    "RuntimeDecision",
    "choose_backend",
    "import_cudart",
    "import_tensorrt",
    "resolve",
    "tensorrt_unavailable_reason",
]

#: The backends a user may name (``auto`` included).
BACKENDS = ("onnx", "torch", "tensorrt", "auto")
#: Every precision some backend runs (``auto`` aside); each backend takes a subset.
PRECISIONS = ("fp32", "int8", "int4", "fp16", "bf16", "fp8")
#: The CUDA decode steps of the torch backend a user may name (``auto`` included).
GPU_DECODERS = ("fused", "graphs", "auto")
#: Precisions per (backend, device kind), the default first.
_BACKEND_PRECISIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("onnx", "cpu"): ("fp32", "int8", "int4"),
    ("onnx", "cuda"): ("fp32",),
    ("torch", "cpu"): ("fp32",),
    ("torch", "cuda"): ("fp16", "fp32", "bf16", "fp8"),
    ("tensorrt", "cuda"): ("fp16", "int8", "fp32"),
}
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")

GPTRunnerKind = Literal["onnx", "torch", "cuda-graphs", "cuda-fused", "tensorrt"]


class RuntimeChoiceError(MixvoxError, ValueError):
    """A backend, device or precision that is not one of the valid choices (names them)."""


@dataclass(frozen=True)
class RuntimeDecision:
    """Where the GPT and the audio models run; made by :func:`resolve`, read by the loaders.

    ``backend``/``device``/``precision`` are the GPT's; ``audio_backend``/``audio_device``
    the Decoder/DVAE/Vocos's (their precision is always fp32). ``reason`` says why, for the
    log (``auto`` choices, fallbacks).
    """

    backend: Literal["onnx", "torch", "tensorrt"]
    device: str
    precision: str
    audio_backend: Literal["onnx", "torch"]
    audio_device: str
    reason: str = "requested"
    #: torch on CUDA: "fused" (Triton step) or "graphs" (torch CUDA graphs); else "".
    gpu_decoder: str = ""

    @property
    def gpt_runner(self) -> GPTRunnerKind:
        """Which GPT runner the decision loads (see the table in the module docstring)."""
        if self.backend == "torch" and self.on_cuda:
            return "cuda-fused" if self.gpu_decoder == "fused" else "cuda-graphs"
        return self.backend

    @property
    def on_cuda(self) -> bool:
        """True when the GPT runs on a CUDA device."""
        return self.backend == "tensorrt" or self.device.startswith("cuda")

    def describe(self) -> str:
        """One line for logs and ``--verbose``: ``torch fp16 on cuda (audio: torch on cuda)``."""
        return (
            f"{self.gpt_runner} {self.precision} on {self.device} "
            f"(audio: {self.audio_backend} on {self.audio_device}; {self.reason})"
        )


# ---------------------------------------------------------------------------------------------
# what is installed
# ---------------------------------------------------------------------------------------------


def import_tensorrt() -> Any:
    """The ``tensorrt`` module, or :class:`EngineUnavailable` saying how to get it."""
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise EngineUnavailable(
            "TensorRT is not installed (pip install tensorrt from NVIDIA's package index, "
            f"version 10 or newer): {exc}"
        ) from None
    major = int(str(getattr(trt, "__version__", "0")).split(".")[0] or 0)
    if major < 10:
        raise EngineUnavailable(f"TensorRT {trt.__version__} is too old: version 10 is needed")
    return trt


def import_cudart() -> Any:
    """cuda-python's runtime module (either of its two import paths), or EngineUnavailable."""
    try:
        from cuda.bindings import runtime as cudart  # type: ignore[import-not-found]
    except ImportError:
        try:
            from cuda import cudart  # type: ignore[import-not-found]
        except ImportError as exc:
            raise EngineUnavailable(
                f"cuda-python is needed by the TensorRT backend (pip install cuda-python): {exc}"
            ) from None
    return cudart


def tensorrt_unavailable_reason() -> str | None:
    """``None`` when the TensorRT backend can run here, else why not."""
    try:
        import_tensorrt()
        cudart = import_cudart()
    except EngineUnavailable as exc:
        return str(exc)
    err, count = cudart.cudaGetDeviceCount()
    if int(err) != 0 or count < 1:
        return "no CUDA GPU is visible"
    return None


def _torch_installed() -> bool:
    return importlib.util.find_spec("torch") is not None


def _torch_cuda() -> bool:
    """Whether torch is installed and sees a CUDA device (imports torch only if installed)."""
    if not _torch_installed():
        return False
    import torch

    return bool(torch.cuda.is_available())


def _triton_installed() -> bool:
    """Whether Triton is importable (the fused CUDA decode step JIT-compiles with it)."""
    return importlib.util.find_spec("triton") is not None


def _cuda_capability(device: str) -> tuple[int, int]:
    """Compute capability of a CUDA device name (``cuda``, ``cuda:N``)."""
    import torch

    return tuple(torch.cuda.get_device_capability(torch.device(device)))  # type: ignore[return-value]


def _ort_cuda() -> bool:
    """Whether ONNX Runtime offers its CUDA execution provider (onnxruntime-gpu installed)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return False
    return "CUDAExecutionProvider" in ort.get_available_providers()


def _require_ort_cuda(device: str) -> None:
    """A clear error when ``--backend onnx --device cuda`` cannot run here."""
    if not _ort_cuda():
        raise EngineUnavailable(
            f"--backend onnx --device {device} needs ONNX Runtime's CUDAExecutionProvider, "
            "which this onnxruntime lacks (pip uninstall onnxruntime && pip install "
            "onnxruntime-gpu, matching your CUDA); or use --backend torch for CUDA, or "
            "--device cpu"
        )


def choose_backend(requested: str = "auto") -> tuple[str, str, str]:
    """The ``auto`` policy alone: ``(backend, device, why)`` from what is installed.

    tensorrt when importable and a GPU is present, else torch on CUDA, else onnx (reported
    with ONNX Runtime's CUDA provider when onnxruntime-gpu is installed, else CPU; the ONNX
    GPT itself runs on the CPU). A named backend is returned as it is.
    """
    if requested != "auto":
        return requested, ("cuda" if requested == "tensorrt" else "cpu"), "requested"
    reason = tensorrt_unavailable_reason()
    if reason is None:
        return "tensorrt", "cuda", "TensorRT and a GPU are present"
    if _torch_cuda():
        return "torch", "cuda", f"torch sees a CUDA GPU (tensorrt: {reason})"
    if _ort_cuda():
        return "onnx", "cuda", "onnxruntime-gpu is installed"
    return "onnx", "cpu", "no GPU backend is available"


# ---------------------------------------------------------------------------------------------
# the decision
# ---------------------------------------------------------------------------------------------


def _choice(kind: str, value: str | None, valid: tuple[str, ...]) -> str:
    v = "auto" if value is None else str(value).strip().lower()
    if v not in valid and not (kind == "device" and _DEVICE.match(v)):
        names = ", ".join(x for x in valid if x != "auto")
        raise RuntimeChoiceError(
            f"unknown ChatTTS {kind} {value!r} (valid: {names}"
            + (", cuda:N" if kind == "device" else "")
            + " or auto)"
        )
    return v


def _require_torch_cuda(device: str) -> None:
    """A clear error instead of torch's assertion when no CUDA device can be used."""
    if not _torch_installed():
        raise EngineUnavailable(
            "the ChatTTS torch backend needs torch (pip install 'mixvox[torch]'); "
            "or use --backend onnx on the CPU"
        )
    if not _torch_cuda():
        raise EngineUnavailable(
            f"no CUDA device is available to torch here for --device {device} (a CPU-only "
            "torch build, or no GPU); use --device cpu, or --backend onnx (the fast CPU backend)"
        )


def resolve(
    backend: str | None = "auto",
    device: str | None = "auto",
    precision: str | None = "auto",
    gpu_decoder: str | None = "auto",
) -> RuntimeDecision:
    """Decide backend, device and precision once (see the module docstring for the rules).

    ``None`` means ``auto``. Raises :class:`RuntimeChoiceError` for a value that is no choice
    or a combination no backend runs (``--precision bf16`` on the CPU, ``int4`` off the
    ONNX CPU path), and :class:`EngineUnavailable` when a valid choice cannot run here.
    """
    b = _choice("backend", backend, BACKENDS)
    d = _choice("device", device, ("auto", "cpu", "cuda"))
    p = _choice("precision", precision, (*PRECISIONS, "auto"))
    dec = _choice("GPU decoder", gpu_decoder, GPU_DECODERS)
    reason = "requested"
    automatic = b == "auto"
    if automatic:
        b, auto_device, reason = choose_backend("auto")
        if d.startswith("cuda") and b == "onnx" and not _ort_cuda():
            _require_torch_cuda(d)  # a GPU was asked for by name, and none can be used
        if d in ("auto", "cpu"):  # "cpu": the engine's old default, so it names nothing here
            d = "cpu" if b == "onnx" else auto_device
    if b == "onnx" and d == "auto":
        d = "cpu"
    elif b == "torch" and d == "auto":
        d = "cuda" if _torch_cuda() else "cpu"
    if b == "onnx" and d != "cpu":
        _require_ort_cuda(d)
    if b == "torch":
        if d.startswith("cuda"):
            _require_torch_cuda(d)
        elif not _torch_installed():
            _require_torch_cuda("cpu")  # the same message: torch is missing
    if b == "tensorrt":
        import_tensorrt()  # EngineUnavailable: how to install it
        import_cudart()
    kind = "cpu" if b != "tensorrt" and d == "cpu" else "cuda"
    allowed = _BACKEND_PRECISIONS[(b, kind)]
    if p == "auto":
        p = allowed[0]
    elif p not in allowed:
        if automatic and kind == "cpu":
            reason += f"; {p} does not run on the CPU, using {allowed[0]}"
            p = allowed[0]
        else:
            where = "TensorRT" if b == "tensorrt" else f"{b} on {'the CPU' if kind == 'cpu' else d}"
            raise RuntimeChoiceError(
                f"precision {p} is not available with ChatTTS {where} (valid: {', '.join(allowed)})"
            )
    if b == "tensorrt" and p == "fp32":
        p, reason = "fp16", reason + "; TensorRT builds fp16 (or int8) engines"
    decoder = ""
    if b == "torch" and kind == "cuda":
        decoder = _gpu_decoder(dec, p, d)
        if dec == "auto":
            reason += (
                "; fused Triton decode step"
                if decoder == "fused"
                else "; Triton not installed: torch CUDA-graph decode step"
            )
    elif dec == "fused":
        raise RuntimeChoiceError(
            "--gpu-decoder fused needs --backend torch on a CUDA device "
            f"(got {b} on {'the CPU' if kind == 'cpu' else d})"
        )
    gpt_device = "cuda" if b == "tensorrt" and d in ("auto", "cpu") else d
    audio_device = "cuda" if b == "tensorrt" and d == "auto" else d
    return RuntimeDecision(
        backend=b,  # type: ignore[arg-type]
        device=gpt_device,
        precision=p,
        audio_backend="torch" if b == "tensorrt" else b,  # type: ignore[arg-type]
        audio_device=audio_device,
        reason=reason,
        gpu_decoder=decoder,
    )


def _gpu_decoder(requested: str, precision: str, device: str) -> str:
    """The CUDA decode step of torch on ``device``: "fused" or "graphs" (see the table)."""
    if requested == "graphs":
        if precision == "fp8":
            raise RuntimeChoiceError(
                "precision fp8 runs on the fused Triton decode step only (--gpu-decoder fused "
                "or auto); the graphs step takes fp16, fp32 or bf16"
            )
        return "graphs"
    if not _triton_installed():
        if requested == "fused" or precision == "fp8":
            raise EngineUnavailable(
                "the fused CUDA decode step (--gpu-decoder fused, and precision fp8) needs "
                "Triton (pip install triton); or use --gpu-decoder graphs"
            )
        return "graphs"
    if precision == "fp8" and _cuda_capability(device) < (8, 9):
        raise EngineUnavailable(
            f"precision fp8 needs a GPU with fp8 conversions (compute capability 8.9 or newer, "
            f"e.g. Ada or Hopper); {device} has {'.'.join(map(str, _cuda_capability(device)))}"
        )
    return "fused"
