"""The ChatTTS engine's options: what it takes, the valid values, and the CLI flags it adds.

Why here: the core knows no engine. These classes are registered in the engine's
:class:`~mixvox.interfaces.EngineInfo`; the core validates user input into them before any
weight file is opened (``--precision fp4`` is refused naming the valid ones) and the
fields with a ``flag`` become ``mixvox say``/``batch`` flags with the spellings users type.
``None`` means "the engine decides" (e.g. fp16 on CUDA, fp32 on the CPU).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The choices come from the runtime decision (one list): the combinations it refuses
# (``--backend onnx --device cuda``) are checked when the engine is built, still before loading.
from mixvox.engines.chattts.runtime import BACKENDS, GPU_DECODERS, PRECISIONS
from mixvox.errors import OptionError
from mixvox.options import EngineOptions, option

__all__ = ["BACKENDS", "PRECISIONS", "ChatTTSCallOptions", "ChatTTSOptions"]

_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


@dataclass
class ChatTTSOptions(EngineOptions):
    """How the engine loads: the weights, the runtime, and the decode settings."""

    model_dir: Path | None = option(
        None,
        help="ChatTTS weights folder.",
        flag="--model-dir",
        decisive=True,  # naming weights means ChatTTS: no silent fallback to another engine
    )
    backend: str | None = option(
        None,
        help="ChatTTS backend: onnx, torch, tensorrt, auto.",
        choices=BACKENDS,
        flag="--backend",
    )
    device: str | None = option(
        None,
        help="ChatTTS device: cpu, cuda, cuda:N, auto (torch; onnx with onnxruntime-gpu).",
        flag="--device",
    )
    precision: str | None = option(
        None,
        help="Engine precision: " + ", ".join(PRECISIONS) + ".",
        choices=PRECISIONS,
        flag="--precision",
    )
    gpu_decoder: str | None = option(
        None,
        help="torch on CUDA: the decode step: fused (Triton kernels; default when Triton is "
        "installed), graphs (torch CUDA graphs), auto.",
        choices=GPU_DECODERS,
        flag="--gpu-decoder",
    )
    reverify: bool = option(
        False,
        help="Re-hash the ChatTTS weights even when an earlier check is cached.",
        flag="--reverify",
    )
    key_file: Path | None = option(
        None,
        help="Key of an encrypted model (see `mixvox keygen`; or MIXVOX_MODEL_KEY_FILE).",
        flag="--key-file",
    )
    verify: bool = option(True, help="Check the weights' SHA-256 (False: trusted builds, tests).")
    refine: bool | None = option(None, help="Refine text by default (per call: --refine).")
    source: str | None = option(
        None,
        help="What the vocoder reads: GPT hidden states or codes.",
        choices=("hidden", "codes"),
    )
    threads: int | None = option(None, help="Intra-op threads.", min=1)
    cache_dir: Path | None = option(None, help="Folder for converted graphs and engines.")
    max_batch: int | None = option(None, help="Chunks decoded together.", min=1)
    max_retries: int | None = option(None, help="Retries of a chunk with no frames.", min=0)
    stream_every: int | None = option(None, help="GPT frames per vocoder hand-over.", min=1)
    first_chunk_frames: int | None = option(None, help="Frames of the first audio piece.", min=1)
    chunk_frames: int | None = option(None, help="Frames of later audio pieces.", min=1)
    lookahead_frames: int | None = option(None, help="Vocoder lookahead frames.", min=0)
    first_lookahead_frames: int | None = option(
        None,
        help="Fast first audio: vocoder look-ahead (code frames) of the start, cross-faded "
        "into exact audio (e.g. 4 or 8; default exact).",
        min=0,
        flag="--first-lookahead",
    )
    int4_block: int | None = option(None, help="Weights per int4 quantization block.", min=1)
    kv_cache: str | None = option(
        None,
        help="ONNX CPU GPT's KV cache (default: int8 with --precision int4, else fp32).",
        choices=("fp32", "int8"),
    )
    audio_path: str | None = option(
        None,
        help="Streaming vocoder: window (GPU graphs) or layers (default: window on CUDA).",
        choices=("window", "layers"),
    )
    warmup: bool | None = option(
        None, help="Run one short request at load (default: on CUDA) for a fast first request."
    )
    audio_dtype: str | None = option(
        None,
        help="torch audio models' dtype (default float16 on CUDA).",
        choices=("float32", "float16", "bfloat16"),
    )

    def validate(self) -> None:
        if self.device is not None and not _DEVICE.fullmatch(self.device):
            raise OptionError(f"device {self.device!r} is not one of cpu, cuda, cuda:N, auto")

    def engine_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~.engine.ChatTTSEngine`: only what was set, so the
        engine keeps its own defaults for the rest."""
        out = {k: v for k, v in self.values().items() if v is not None}
        out.pop("reverify", None)
        out["verify"] = "force" if self.reverify else self.verify
        if out["verify"] is True:
            del out["verify"]  # the engine's default
        if "refine" in out:
            out["refine"] = bool(out["refine"])
        return out


@dataclass
class ChatTTSCallOptions(EngineOptions):
    """Settings of one synthesis call (``SynthesisOptions.extra``); only given keys travel."""

    temperature: float | None = option(
        None,
        help="Sampling temperature (0 = greedy, always the most likely code).",
        min=0,
        max=5,
        flag="--temperature",
    )
    top_p: float | None = option(None, help="Top-p.", min=0, max=1, min_open=True, flag="--top-p")
    top_k: int | None = option(None, help="Top-k.", min=1, flag="--top-k")
    repetition_penalty: float | None = option(None, help="Repetition penalty.", min=0.01, max=10)
    refine: bool | None = option(
        None,
        help="Run (or skip) ChatTTS text refinement (default: the engine's choice).",
        flag="--refine/--no-refine",
    )
    refine_temperature: float | None = option(None, help="Refine temperature.", min=0, max=5)
    oral: int | None = option(None, help="Refine prompt: [oral_N].", min=0, max=9)
    laugh: int | None = option(None, help="Refine prompt: [laugh_N].", min=0, max=2)
    break_: int | None = option(None, help="Refine prompt: [break_N].", min=0, max=7, key="break")
    prompt: str | None = option(None, help="Code prompt (default [speed_5] or from speed).")
    min_frames: int | None = option(
        None, help="Minimum audio-code frames per chunk.", min=0, flag="--min-frames"
    )
    max_frames: int | None = option(
        None, help="Maximum audio-code frames per chunk.", min=1, flag="--max-frames"
    )
    save_codes: str | None = option(
        None,
        help="Also save the generated audio codes to this file.",
        flag="--save-codes",
        commands=("say",),
    )

    def validate(self) -> None:
        if (
            self.min_frames is not None
            and self.max_frames is not None
            and self.min_frames > self.max_frames
        ):
            raise OptionError(
                f"--min-frames {self.min_frames} is larger than --max-frames {self.max_frames}"
            )
