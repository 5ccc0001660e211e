"""The decode loop shared by every GPT backend.

A backend only runs the Llama stack with its KV cache (``StackBackend``); embeddings, heads
and sampling are numpy here, so onnx, torch and later TensorRT decode identically.

The loop follows the reference ``GPT.generate``: prefill the prompt once; at step ``i`` take
the hidden state of the last position, compute logits, process them (``sampler``), draw; an
item ends at the first step whose draw holds the end token (any codebook, code stage). The
end frame is not part of the result, and ``hidden[t]`` is the hidden state that produced
``ids[t]`` (the Decoder's input). A finished item keeps riding along in the batch (its
cache rows are independent) until every item is done or has hit its own cap.

Positions: a left-padded prompt gets ``cumsum(mask) - 1`` (pads 1), and the token fed after
step ``i`` of an item with ``L`` real prompt tokens gets position ``L + i``, all items sharing
one cache slot index ``T + i`` (``T`` = padded prompt length).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mixvox.engines.chattts.sampler import SamplingParams, draw, process_logits

__all__ = [
    "FramesCallback",
    "GenerationResult",
    "StackBackend",
    "prompt_positions",
    "run_generation",
]

#: ``on_frames(item_index, new_ids, new_hidden, done)``
FramesCallback = Callable[[int, np.ndarray, np.ndarray, bool], None]


@dataclass
class GenerationResult:
    """One item's output. ``ids``: ``[T, num_vq]`` codes (code stage) or ``[T]`` tokens
    (refine); ``hidden``: ``[T, H]`` float32; ``finished``: the end token was drawn."""

    ids: np.ndarray
    hidden: np.ndarray
    finished: bool

    @property
    def codes(self) -> np.ndarray:
        """Alias of ``ids`` for the code stage."""
        return self.ids

    def __len__(self) -> int:
        return int(self.ids.shape[0])


class StackBackend(Protocol):
    """The Llama decoder stack with a preallocated KV cache.

    ``begin`` (re)uses a cache for ``attention_mask.shape[0]`` items and ``max_len`` slots and
    records which prompt slots are padding. ``forward`` runs ``T`` new positions starting at
    cache slot ``start`` (writing their keys/values there) and returns the final-norm hidden
    states ``[B, T, H]`` float32; the array may be a buffer reused by the next call.
    """

    def begin(self, attention_mask: np.ndarray, max_len: int) -> None: ...

    def forward(
        self, inputs_embeds: np.ndarray, positions: np.ndarray, start: int
    ) -> np.ndarray: ...


def prompt_positions(mask: np.ndarray) -> np.ndarray:
    """Position ids of a left-padded prompt, as the reference: ``cumsum(mask) - 1``, pads 1."""
    pos = np.cumsum(mask, axis=-1) - 1
    return np.where(mask == 0, 1, pos).astype(np.int64)


def run_generation(
    stack: StackBackend,
    prompt_embeds: np.ndarray,
    attention_mask: np.ndarray,
    caps: np.ndarray,
    params: SamplingParams,
    rng: np.random.Generator,
    eos_id: int,
    *,
    next_embed: Callable[[np.ndarray], np.ndarray],
    logits: Callable[[np.ndarray], np.ndarray],
    num_vq: int,
    on_frames: FramesCallback | None = None,
    stream_every: int = 24,
    min_new: np.ndarray | None = None,
) -> list[GenerationResult]:
    """Decode a left-padded batch; see the module docstring.

    ``num_vq`` > 0: code stage (``logits`` gives ``[B, Q, V]``, ``next_embed`` takes ``[B, Q]``
    codes); 0: text stage (``[B, V]`` logits, ``next_embed`` takes ``[B]`` ids). ``caps`` is
    each item's maximum number of kept frames; ``min_new`` each item's number of first steps
    at which the end token is suppressed (default ``params.min_new_tokens`` for all).
    """
    B, T, H = prompt_embeds.shape
    caps = np.asarray(caps, np.int64).reshape(B)
    max_new = int(caps.max())
    Q = max(num_vq, 1)
    if stream_every < 1:
        raise ValueError("stream_every must be >= 1")
    row_temp = params.row_temperatures(B * Q)
    greedy_rows = row_temp == 0
    lengths = attention_mask.sum(axis=1).astype(np.int64)
    mins = (
        np.full(B, params.min_new_tokens, np.int64)
        if min_new is None
        else np.asarray(min_new, np.int64).reshape(B)
    )

    stack.begin(attention_mask, T + max_new)
    h = stack.forward(prompt_embeds, prompt_positions(attention_mask), 0)[:, -1].copy()

    hist = np.zeros((B, Q, max_new), np.int64)
    hiddens = np.zeros((B, max_new, H), np.float32)
    n_out = np.zeros(B, np.int64)
    reported = np.zeros(B, np.int64)
    done = np.zeros(B, bool)
    finished = np.zeros(B, bool)
    step_pos = np.empty((B, 1), np.int64)

    def emit(b: int, final: bool) -> None:
        if on_frames is None:
            return
        lo, hi = int(reported[b]), int(n_out[b])
        ids = hist[b, :, lo:hi].T if num_vq else hist[b, 0, lo:hi]
        on_frames(b, ids.copy(), hiddens[b, lo:hi].copy(), final)
        reported[b] = hi

    for i in range(max_new):
        hiddens[:, i] = h
        lg = logits(h).reshape(B, Q, -1)
        proc = process_logits(lg, hist[:, :, :i], params)
        if params.suppress_eos:
            proc[..., eos_id] = -np.inf
        else:
            proc[i < mins, :, eos_id] = -np.inf
        tok = draw(proc.reshape(B * Q, -1), rng, greedy_rows).reshape(B, Q)
        hist[:, :, i] = tok
        ended = (tok == eos_id).any(axis=1)
        for b in np.flatnonzero(~done):
            if ended[b]:
                done[b] = finished[b] = True
            else:
                n_out[b] += 1
                done[b] = n_out[b] >= caps[b]
            if done[b]:
                emit(int(b), True)
            elif n_out[b] - reported[b] >= stream_every:
                emit(int(b), False)
        if done.all():
            break
        x = next_embed(tok if num_vq else tok[:, 0]).astype(np.float32, copy=False)
        step_pos[:, 0] = lengths + i
        h = stack.forward(x.reshape(B, 1, H), step_pos, T + i)[:, 0].copy()

    out = []
    for b in range(B):
        n = int(n_out[b])
        ids = hist[b, :, :n].T.copy() if num_vq else hist[b, 0, :n].copy()
        out.append(
            GenerationResult(ids=ids, hidden=hiddens[b, :n].copy(), finished=bool(finished[b]))
        )
    return out
