"""What the engine codes against: the :class:`GPTRunner` protocol and :func:`load_gpt`.

Five runners, one protocol, chosen by the :class:`~mixvox.engines.chattts.runtime.
RuntimeDecision` (never by the engine):

=============  ============================================================================
onnx           :class:`~.model.GPT` over :class:`~.onnx_stack.OnnxStack` (CPU, fp32/int8)
torch          :class:`~.model.GPT` over :class:`~.torch_stack.TorchStack` (CPU, fp32)
cuda-graphs    :class:`~.cuda_graph.GraphGPT` (torch on CUDA, fp16/fp32/bf16)
cuda-fused     :class:`~.triton_decode.TritonGraphGPT` (fused Triton step; + fp8 weights)
tensorrt       :class:`~.model.GPT` over :class:`~.trt.TensorRTStack` (fp16/int8)
=============  ============================================================================

All of them decode with the one loop of :mod:`.decode` and take one
:class:`~.sampler.SamplingParams`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from mixvox.engines.chattts.gpt.decode import FramesCallback, GenerationResult, StackBackend
from mixvox.engines.chattts.gpt.model import GPT, Stage
from mixvox.engines.chattts.gpt.sampler import Rng, SamplingParams
from mixvox.engines.chattts.gpt.weights import GPTConfig, GPTWeights
from mixvox.engines.chattts.runtime import RuntimeDecision, resolve

__all__ = ["GPTRunner", "load_gpt"]


@runtime_checkable
class GPTRunner(Protocol):
    """A loaded GPT that decodes batches of prompts (see :mod:`.model` for the results).

    ``generate`` decodes ``prompts`` (1-D token-id arrays) as one batch, each to its own end
    or cap, calling ``on_frames(item, new_ids, new_hidden, done)`` as frames arrive;
    ``close`` frees what the runner holds (GPU memory, sessions).
    """

    config: GPTConfig
    backend: str

    def generate(
        self,
        prompts: Sequence[np.ndarray],
        *,
        stage: Stage = "code",
        spk_emb: np.ndarray | Sequence[np.ndarray | None] | None = None,
        spk_emb_token_id: int | None = None,
        params: SamplingParams | None = None,
        rng: Rng | None = None,
        max_new_tokens: int | Sequence[int] | None = None,
        on_frames: FramesCallback | None = None,
        stream_every: int = 24,
        min_new_tokens: int | Sequence[int] | None = None,
    ) -> list[GenerationResult]: ...

    def close(self) -> None: ...


def load_gpt(
    asset_dir: str | Path,
    runtime: RuntimeDecision | None = None,
    *,
    backend: str | None = None,
    device: str | None = None,
    precision: str | None = None,
    cache_dir: str | Path | None = None,
    threads: int | None = None,
    gpt_sha256: str | None = None,
    max_batch: int = 8,
    int4_block: int | None = None,
    kv_cache: str | None = None,
) -> GPTRunner:
    """Load the GPT of ``asset_dir`` (hashes already verified by the caller) as ``runtime``
    decides.

    Without a ``runtime``, ``backend``/``device``/``precision`` are resolved here (defaults
    onnx, cpu and the backend's default precision). ``cache_dir``: where built ONNX graphs
    and TensorRT engines are cached (default: the user cache), keyed by the weights' SHA-256;
    ``threads``: intra-op threads (default: physical cores); ``gpt_sha256``: the verified
    SHA-256 of ``gpt/model.safetensors`` if the caller has it (saves hashing the file again);
    ``max_batch``: the CUDA runner's batch slots; ``int4_block``: inputs per 4-bit scale of
    the ONNX int4 graph (32, 64 or 128; default ``onnx_stack.INT4_BLOCK``); ``kv_cache``: the
    ONNX CPU graph's KV cache, ``fp32`` or ``int8`` (default ``onnx_stack.KV_CACHE_DEFAULT``
    for the precision; other backends take only ``None``).
    """
    if runtime is None:
        runtime = resolve(backend or "onnx", device or "cpu", precision or "auto")
    elif backend is not None or device is not None or precision is not None:
        raise ValueError("give load_gpt either a RuntimeDecision or backend/device/precision")
    kind = runtime.gpt_runner
    if kv_cache is not None and kind != "onnx":
        raise ValueError(f"kv_cache={kv_cache!r} is an option of the ONNX backend, not {kind}")
    if kind in ("cuda-graphs", "cuda-fused"):
        from mixvox.engines.chattts.gpt.cuda_graph import GraphGPT

        cls: type[GraphGPT] = GraphGPT
        if kind == "cuda-fused":
            from mixvox.engines.chattts.gpt.triton_decode import TritonGraphGPT

            cls = TritonGraphGPT
        return cls(
            asset_dir,
            precision=runtime.precision,
            device=runtime.device,
            max_batch=max_batch,
            gpt_sha256=gpt_sha256,
        )
    weights = GPTWeights.load(asset_dir, gpt_sha256=gpt_sha256)
    stack: StackBackend
    if kind == "onnx":
        from mixvox.engines.chattts.gpt.onnx_stack import OnnxStack

        stack = OnnxStack(
            weights,
            precision=runtime.precision,
            device=runtime.device,
            cache_dir=cache_dir,
            threads=threads,
            int4_block=int4_block if runtime.precision == "int4" else None,
            kv_cache=kv_cache,
        )
    elif kind == "torch":
        from mixvox.engines.chattts.gpt.torch_stack import TorchStack

        stack = TorchStack(
            weights, precision=runtime.precision, device=runtime.device, threads=threads
        )
    else:  # tensorrt: the Llama stack on an engine built from our portable ONNX graph
        from mixvox.engines.chattts.gpt.onnx_stack import stack_graph_path
        from mixvox.engines.chattts.gpt.trt import StackDims, TensorRTStack
        from mixvox.engines.chattts.onnx_graph import default_cache_dir

        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        stack = TensorRTStack(
            stack_graph_path(weights, "fp32", cache / "onnx"),
            StackDims.from_config(weights.config),
            precision=runtime.precision,
            cache_dir=cache,
        )
    return GPT(weights, stack, kind)
