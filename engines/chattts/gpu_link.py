"""GPT -> GPU vocoder with no host copy: the CUDA-graph runner's frames as device tensors.

Glue between ``gpt/`` (which must not know the audio side) and ``audio/window.py`` (which
must not know the GPT): :func:`device_generate` drives the code stage of
:class:`~mixvox.engines.chattts.gpt.cuda_graph.GraphGPT` (or a subclass such as the fused
Triton runner) like ``GraphGPT.generate`` does, but hands each window's frames over as
:class:`~mixvox.engines.chattts.audio.window.DeviceFrames` (a copy on the GPT's stream plus a
CUDA event) instead of numpy arrays, so the vocoder's stream waits on the event and nothing
waits for a device-to-host copy in between.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mixvox.engines.chattts.audio.window import DeviceFrames
from mixvox.engines.chattts.gpt.sampler import Rng, first_rng

__all__ = ["device_generate", "supports_device_frames"]


def supports_device_frames(gpt: Any) -> bool:
    """Whether ``gpt`` is the CUDA-graph runner (or a subclass, e.g. the fused Triton one)
    whose code stage :func:`device_generate` can drive."""
    cuda = getattr(gpt, "cuda", None)
    return all(hasattr(gpt, a) for a in ("code_requests", "config")) and hasattr(cuda, "generate")


def device_generate(
    gpt: Any,
    prompts: Sequence[np.ndarray],
    *,
    frames_dtype: Any = None,
    on_frames: Callable[[int, Any, Any, bool], None] | None = None,
    stream_every: int = 24,
    spk_emb: Any = None,
    spk_emb_token_id: int | None = None,
    params: Any = None,
    rng: Rng | None = None,
    max_new_tokens: int | Sequence[int] | None = None,
    stage: str = "code",
    min_new_tokens: int | Sequence[int] | None = None,
) -> list[Any]:
    """``GraphGPT.generate`` for the code stage with frames left on the GPU.

    ``on_frames(item, codes, hidden, done)`` gets :class:`DeviceFrames` (copies made on the
    GPT's stream, ``hidden`` in ``frames_dtype``, each with a ready event) instead of
    numpy arrays, so nothing waits for a device-to-host copy between the GPT and the
    vocoder. The results hold the codes (host) and no hidden states (``[0, H]``: they went
    to the vocoder). Other stages go to ``gpt.generate`` unchanged.
    """
    from mixvox.engines.chattts.gpt import GenerationResult, SamplingParams
    from mixvox.engines.chattts.gpt.cuda_graph import BATCH_BUCKETS

    if stage != "code":
        return list(
            gpt.generate(
                prompts,
                stage=stage,
                spk_emb=spk_emb,
                spk_emb_token_id=spk_emb_token_id,
                params=params,
                rng=rng,
                max_new_tokens=max_new_tokens,
                on_frames=on_frames,
                stream_every=stream_every,
                min_new_tokens=min_new_tokens,
            )
        )
    import torch

    params = params or SamplingParams()
    rng = first_rng(rng)  # one seed for the GPU's counter-based noise
    reqs, samp = gpt.code_requests(
        prompts, spk_emb, spk_emb_token_id, params, max_new_tokens, min_new_tokens
    )
    if not reqs:
        return []
    b = len(reqs)
    run = gpt.cuda

    def relay(tag: Any, codes: Any, hidden: Any, done: bool) -> None:
        if on_frames is None:
            return
        c = codes.clone()
        h = hidden.to(frames_dtype or hidden.dtype, copy=True)
        ev = torch.cuda.Event() if h.device.type == "cuda" else None
        if ev is not None:
            ev.record()
        on_frames(tag, DeviceFrames(c, ev), DeviceFrames(h, ev), done)

    res = run.generate(
        reqs,
        samp,
        seed=int(rng.integers(2**31)),
        max_batch=max(run.capacity, min(b, BATCH_BUCKETS[-1])),
        on_frames=relay if on_frames is not None else None,
        stream_every=stream_every,
    )
    hidden_size = int(gpt.config.hidden_size)
    return [
        GenerationResult(
            ids=r.codes.cpu().numpy(),
            hidden=np.zeros((0, hidden_size), np.float32),
            finished=r.finished,
        )
        for r in res
    ]
