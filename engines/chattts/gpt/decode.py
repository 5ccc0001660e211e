"""The one GPT decode loop, and the step functions of the host-sampled backends.

Every runner decodes through :func:`decode`. What differs between backends is *how a step
is taken*, so a backend hands the loop its :class:`DecodeSteps`:

* :class:`HostSteps` (ONNX Runtime, torch, TensorRT stacks): the stack gives hidden states,
  and logits, sampling (:mod:`.sampler`) and the next input are numpy on the host, one step
  per window, so these backends decode identically;
* ``CudaSteps`` (:mod:`.cuda_graph`): sampling and the stack run on the GPU, ``sync_every``
  steps per window, captured in CUDA graphs; the host looks at the end flags once a window.

The loop owns what the runners share: which item sits in which batch slot (continuous
batching: a slot freed by a finished item takes the next waiting one, where the steps allow
it), each item's frame cap, the end rule, streaming and the results. An item ends at the
first step whose draw holds the end token (any codebook, code stage) or when it has ``cap``
frames; the end frame is not part of the result, and ``hidden[t]`` is the hidden state that
produced ``ids[t]`` (the Decoder's input). A finished item's slot keeps riding along in the
batch (its rows are independent) until the window ends.

Host steps follow the reference ``GPT.generate``: prefill the left-padded prompts once; at
step ``i`` take the hidden state of the last position, compute logits, process them, draw.
Positions: a left-padded prompt gets ``cumsum(mask) - 1`` (pads 1), and the token fed after
step ``i`` of an item with ``L`` real prompt tokens gets position ``L + i``, all items sharing
one cache slot index ``T + i`` (``T`` = padded prompt length), so host steps take the whole
batch at once and refill no slot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mixvox.engines.chattts.gpt.sampler import Rng, SamplingParams, draw, process_logits

__all__ = [
    "DecodeSteps",
    "Decoded",
    "FramesCallback",
    "GenerationResult",
    "HostSteps",
    "StackBackend",
    "decode",
    "prompt_positions",
    "run_generation",
]

#: Per-slot end flags and end steps, as ``DecodeSteps.poll`` returns them (lists or arrays).
Flags = Sequence[bool] | np.ndarray
Steps = Sequence[int] | np.ndarray

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


@dataclass
class Decoded:
    """What :func:`decode` returns per item, in the steps' own arrays (numpy or torch)."""

    ids: Any
    hidden: Any
    finished: bool


class DecodeSteps(Protocol):
    """A backend's step functions, driven by :func:`decode`.

    Slots are batch rows ``0 .. capacity - 1``. ``admit`` prefills items (indices into the
    caller's request list) into free slots; ``run`` takes ``n`` steps for every slot (the
    ``active`` ones matter, the others may ride along); ``poll`` tells, per slot, whether it
    drew the end token and at which step; ``frames`` reads frames ``[lo, hi)`` of a slot
    (``final``: the last read before the slot is released, so it must not alias a buffer
    that a later item overwrites); ``release`` frees a slot.
    """

    @property
    def capacity(self) -> int: ...

    @property
    def window(self) -> int:
        """Steps per ``run`` call at most (1 for host sampling)."""
        ...

    def admit(self, slots: Sequence[int], items: Sequence[int]) -> None: ...

    def run(self, active: Sequence[int], n: int) -> None: ...

    def poll(self, active: Sequence[int]) -> tuple[Flags, Steps]: ...

    def frames(self, slot: int, lo: int, hi: int, final: bool) -> tuple[Any, Any]: ...

    def release(self, slot: int) -> None: ...


def decode(
    steps: DecodeSteps,
    caps: Sequence[int],
    *,
    on_frames: Callable[[Any, Any, Any, bool], None] | None = None,
    stream_every: int = 1,
    tags: Sequence[Any] | None = None,
) -> list[Decoded]:
    """Decode ``len(caps)`` items through ``steps``; item ``j`` keeps at most ``caps[j]`` frames.

    ``on_frames(tag, ids, hidden, done)`` (``tag``: ``tags[j]``, default ``j``) gets an item's
    new frames once it has ``stream_every`` of them after a window, and once more when it
    ends (``done=True``, possibly with no new frames). Results come back in item order.
    """
    if stream_every < 1:
        raise ValueError("stream_every must be >= 1")
    caps = [int(c) for c in caps]
    tags = list(range(len(caps))) if tags is None else list(tags)
    queue = deque(range(len(caps)))
    item_of: list[int | None] = [None] * steps.capacity
    taken = [0] * steps.capacity  # steps run since the slot's item was admitted
    emitted = [0] * steps.capacity
    results: list[Decoded | None] = [None] * len(caps)

    def refill() -> None:
        slots, items = [], []
        for s in range(steps.capacity):
            if item_of[s] is None and queue:
                j = queue.popleft()
                item_of[s], taken[s], emitted[s] = j, 0, 0
                slots.append(s)
                items.append(j)
        if slots:
            steps.admit(slots, items)

    refill()
    while True:
        active = [s for s, j in enumerate(item_of) if j is not None]
        if not active:
            break
        remaining = min(caps[item_of[s]] - taken[s] for s in active)  # type: ignore[index]
        n = max(1, min(steps.window, remaining))
        steps.run(active, n)
        ended, end_at = steps.poll(active)
        for s in active:
            j = item_of[s]
            assert j is not None
            taken[s] += n
            done = bool(ended[s]) or taken[s] >= caps[j]
            upto = int(end_at[s]) if ended[s] else min(taken[s], caps[j])
            if on_frames is not None and (done or upto - emitted[s] >= stream_every):
                ids, hid = steps.frames(s, emitted[s], upto, False)
                on_frames(tags[j], ids, hid, done)
                emitted[s] = upto
            if done:
                ids, hid = steps.frames(s, 0, upto, True)
                results[j] = Decoded(ids, hid, bool(ended[s]))
                item_of[s] = None
                steps.release(s)
        if queue:
            refill()
    return [r for r in results if r is not None]


# ---------------------------------------------------------------------------------------------
# host-sampled steps (ONNX Runtime, torch, TensorRT stacks)
# ---------------------------------------------------------------------------------------------


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


class HostSteps:
    """Step functions of a stack whose logits are sampled on the host (numpy).

    One step: the stack's hidden state of the last position -> ``logits`` -> the processors
    and the draw of :mod:`.sampler` (every row, finished ones included, so the random stream
    does not depend on when an item ends) -> the next input (``next_embed``). The stack
    runs the next position lazily, at the start of the following step, so nothing runs after
    the last draw. All items are one left-padded batch, admitted together.
    """

    window = 1

    def __init__(
        self,
        stack: StackBackend,
        prompt_embeds: np.ndarray,
        attention_mask: np.ndarray,
        max_new: int,
        params: SamplingParams,
        rng: Rng,
        eos_id: int,
        *,
        next_embed: Callable[[np.ndarray], np.ndarray],
        logits: Callable[[np.ndarray], np.ndarray],
        num_vq: int,
        min_new: np.ndarray | None = None,
    ) -> None:
        B, T, H = prompt_embeds.shape
        self.B, self.T, self.H, self.Q = B, T, H, max(num_vq, 1)
        self.num_vq = num_vq
        self.stack, self.prompt_embeds, self.mask = stack, prompt_embeds, attention_mask
        self.params, self.rng, self.eos_id = params, rng, eos_id
        self.next_embed, self.logits = next_embed, logits
        self.greedy_rows = params.row_temperatures(B * self.Q) == 0
        self.lengths = attention_mask.sum(axis=1).astype(np.int64)
        self.mins = (
            np.full(B, params.min_new_tokens, np.int64)
            if min_new is None
            else np.asarray(min_new, np.int64).reshape(B)
        )
        self.max_new = max_new
        self.hist = np.zeros((B, self.Q, max_new), np.int64)
        self.hiddens = np.zeros((B, max_new, H), np.float32)
        self.ended = np.zeros(B, bool)
        self.end_at = np.zeros(B, np.int64)
        self.step = 0  # the next step's index (shared by all rows)
        self._h = np.zeros((B, H), np.float32)
        self._pending: np.ndarray | None = None  # the last draw, not yet run through the stack
        self._pos = np.empty((B, 1), np.int64)

    @property
    def capacity(self) -> int:
        return self.B

    def admit(self, slots: Sequence[int], items: Sequence[int]) -> None:
        if list(slots) != list(range(self.B)) or list(items) != list(range(self.B)):
            raise ValueError("host steps take the whole left-padded batch at once")
        self.stack.begin(self.mask, self.T + self.max_new)
        out = self.stack.forward(self.prompt_embeds, prompt_positions(self.mask), 0)
        self._h = out[:, -1].copy()

    def run(self, active: Sequence[int], n: int) -> None:
        for _ in range(n):
            self._one()

    def _one(self) -> None:
        i, B, Q, H = self.step, self.B, self.Q, self.H
        if self._pending is not None:
            x = self.next_embed(self._pending if self.num_vq else self._pending[:, 0])
            self._pos[:, 0] = self.lengths + i - 1
            out = self.stack.forward(
                x.astype(np.float32, copy=False).reshape(B, 1, H), self._pos, self.T + i - 1
            )
            self._h = out[:, 0].copy()
        self.hiddens[:, i] = self._h
        lg = self.logits(self._h).reshape(B, Q, -1)
        proc = process_logits(lg, self.hist[:, :, :i], self.params)
        if self.params.suppress_eos:
            proc[..., self.eos_id] = -np.inf
        else:
            proc[i < self.mins, :, self.eos_id] = -np.inf
        tok = draw(proc.reshape(B * Q, -1), self.rng, self.greedy_rows).reshape(B, Q)
        self.hist[:, :, i] = tok
        newly = (tok == self.eos_id).any(axis=1) & ~self.ended
        self.end_at[newly] = i
        self.ended |= newly
        self._pending = tok
        self.step = i + 1

    def poll(self, active: Sequence[int]) -> tuple[Flags, Steps]:
        return self.ended, self.end_at

    def frames(self, slot: int, lo: int, hi: int, final: bool) -> tuple[np.ndarray, np.ndarray]:
        ids = self.hist[slot, :, lo:hi].T if self.num_vq else self.hist[slot, 0, lo:hi]
        return ids.copy(), self.hiddens[slot, lo:hi].copy()

    def release(self, slot: int) -> None:
        """Nothing to free: the row rides along until the batch ends."""


def run_generation(
    stack: StackBackend,
    prompt_embeds: np.ndarray,
    attention_mask: np.ndarray,
    caps: np.ndarray,
    params: SamplingParams,
    rng: Rng,
    eos_id: int,
    *,
    next_embed: Callable[[np.ndarray], np.ndarray],
    logits: Callable[[np.ndarray], np.ndarray],
    num_vq: int,
    on_frames: FramesCallback | None = None,
    stream_every: int = 24,
    min_new: np.ndarray | None = None,
) -> list[GenerationResult]:
    """Decode a left-padded batch on a host-sampled stack; see the module docstring.

    ``num_vq`` > 0: code stage (``logits`` gives ``[B, Q, V]``, ``next_embed`` takes ``[B, Q]``
    codes); 0: text stage (``[B, V]`` logits, ``next_embed`` takes ``[B]`` ids). ``caps`` is
    each item's maximum number of kept frames; ``min_new`` each item's number of first steps
    at which the end token is suppressed (default ``params.min_new_tokens`` for all).
    """
    B = prompt_embeds.shape[0]
    caps = np.asarray(caps, np.int64).reshape(B)
    if stream_every < 1:
        raise ValueError("stream_every must be >= 1")
    steps = HostSteps(
        stack,
        prompt_embeds,
        attention_mask,
        int(caps.max()),
        params,
        rng,
        eos_id,
        next_embed=next_embed,
        logits=logits,
        num_vq=num_vq,
        min_new=min_new,
    )
    out = decode(steps, caps.tolist(), on_frames=on_frames, stream_every=stream_every)
    return [GenerationResult(ids=r.ids, hidden=r.hidden, finished=r.finished) for r in out]
