"""The host-loop GPT runner: numpy embeddings (with speaker injection) and heads around one
decoder stack (ONNX Runtime, torch or TensorRT), decoded by the one loop of :mod:`.decode`.

What every runner offers (:class:`~mixvox.engines.chattts.gpt.runner.GPTRunner`)::

    results = gpt.generate(prompts: list[1-D int array], stage="code" | "refine",
                           spk_emb=None, spk_emb_token_id=None, params=SamplingParams(...),
                           rng=np.random.default_rng(seed), max_new_tokens=None | int | list,
                           on_frames=None, stream_every=24, min_new_tokens=None)
    results[i].ids      # code stage: [T, num_vq] int64 codes (end frame excluded);
                        # refine: [T] int64 (end token excluded)
    results[i].hidden   # [T, H] float32: results[i].hidden[t] produced ids[t] (the Decoder
                        # consumes exactly these, as the reference does)
    results[i].finished # True when the item emitted its end token (False: hit its cap)

and, on this class, the pieces the tests compare with the reference one by one::

    emb = gpt.embed(ids [B,T], spk_emb=None | [H] | [B,H], spk_emb_token_id=None)  # [B,T,H]
    hid = gpt.hidden(emb, attention_mask [B,T])                                     # [B,T,H]
    gpt.code_logits(hid [...,H]) -> [..., num_vq, num_audio_tokens]
    gpt.text_logits(hid [...,H]) -> [..., num_text_tokens]

``on_frames(item_index, new_ids, new_hidden, done)`` is called during ``generate`` whenever an
item has ``stream_every`` new frames, and once more when it ends (``done=True``, possibly with
zero new frames), so the engine can stream without re-decoding the prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from mixvox.engines.chattts.gpt.decode import (
    FramesCallback,
    GenerationResult,
    StackBackend,
    prompt_positions,
    run_generation,
)
from mixvox.engines.chattts.gpt.sampler import Rng, SamplingParams
from mixvox.engines.chattts.gpt.weights import GPTWeights

__all__ = ["GPT", "Stage", "normalize_speaker"]

Stage = Literal["code", "refine"]


def normalize_speaker(spk_emb: np.ndarray) -> np.ndarray:
    """L2-normalise a speaker vector the way the reference does, returned as float32.

    The reference normalises in the vector's own dtype (speaker strings decode to float16),
    so a float16 vector is divided in float16: ``v / fp16(||v||)``; that rounding is part of
    the golden outputs.
    """
    v = np.asarray(spk_emb)
    if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v.astype(np.float32))):
        raise ValueError(f"speaker vector must be a finite 1-D array, got shape {v.shape}")
    dt = v.dtype if v.dtype in (np.float16, np.float32, np.float64) else np.dtype(np.float32)
    v = v.astype(dt)
    norm = np.sqrt(np.sum(v.astype(np.float64) ** 2)).astype(dt)
    norm = max(norm, dt.type(1e-12)) if dt != np.float16 else max(norm, np.float16(6e-8))
    return (v / norm).astype(np.float32)


class GPT:
    """A loaded GPT: numpy embeddings/heads + a decoder-stack backend (ONNX Runtime or torch).

    Not thread-safe: one ``generate``/``hidden`` call at a time per instance (the backend's
    KV cache and I/O buffers are reused across calls).
    """

    def __init__(self, weights: GPTWeights, stack: StackBackend, backend: str) -> None:
        self.weights = weights
        self.config = weights.config
        self.stack = stack
        self.backend = backend
        self._head_code: Callable[[np.ndarray], np.ndarray] | None = None
        self._head_text: Callable[[np.ndarray], np.ndarray] | None = None

    def close(self) -> None:
        """Free the stack's resources (TensorRT buffers, sessions) where it holds any."""
        close = getattr(self.stack, "close", None)
        if close is not None:
            close()

    def _head(self, weight: np.ndarray, out_in: bool = False) -> Callable[[np.ndarray], np.ndarray]:
        """``x @ weight`` (``x @ weight.T`` with ``out_in``): the stack's own head runner when
        it has one (ONNX: a GEMV that does not fight its thread pool, see ``OnnxHead``), else
        numpy."""
        make = getattr(self.stack, "make_head", None)
        if make is not None:
            return make(weight, out_in=out_in)
        w = weight.T if out_in else weight
        return lambda x: np.asarray(x, np.float32) @ w

    # -- embeddings and heads (numpy; cheap next to the stack) -----------------------------

    def embed(
        self,
        ids: np.ndarray,
        spk_emb: np.ndarray | Sequence[np.ndarray | None] | None = None,
        spk_emb_token_id: int | None = None,
    ) -> np.ndarray:
        """Text embeddings of ``ids`` ``[B, T]`` with the speaker injected, ``[B, T, H]``.

        Every position whose id is ``spk_emb_token_id`` is replaced by the L2-normalised
        speaker vector (``spk_emb``: one ``[H]`` vector for all items, ``[B, H]``, or a list
        with one vector or ``None`` per item). Padding ids must be valid token ids (0).
        """
        ids = np.asarray(ids)
        if ids.ndim != 2:
            raise ValueError(f"ids must be [B, T], got shape {ids.shape}")
        V = self.config.num_text_tokens
        if ids.size and (ids.min() < 0 or ids.max() >= V):
            raise ValueError(f"token id out of range [0, {V})")
        emb = self.weights.emb_text[ids]
        if spk_emb is None:
            return emb
        if spk_emb_token_id is None:
            raise ValueError("spk_emb given without spk_emb_token_id")
        B = ids.shape[0]
        if isinstance(spk_emb, np.ndarray) and spk_emb.ndim == 1:
            per_item: list[np.ndarray | None] = [spk_emb] * B
        else:
            per_item = list(spk_emb)
            if len(per_item) != B:
                raise ValueError(f"{len(per_item)} speaker vectors for {B} items")
        for b, vec in enumerate(per_item):
            if vec is None:
                continue
            n = normalize_speaker(vec)
            if n.shape != (self.config.hidden_size,):
                raise ValueError(
                    f"speaker vector has {n.shape[0]} dims, the GPT expects "
                    f"{self.config.hidden_size}"
                )
            emb[b, ids[b] == spk_emb_token_id] = n
        return emb

    def embed_codes(self, codes: np.ndarray) -> np.ndarray:
        """Sum of the ``num_vq`` code embeddings: ``[..., Q]`` int -> ``[..., H]``."""
        codes = np.asarray(codes)
        e = self.weights.emb_code
        out = e[0][codes[..., 0]]
        for q in range(1, self.config.num_vq):
            out += e[q][codes[..., q]]
        return out

    def code_logits(self, hidden: np.ndarray) -> np.ndarray:
        """The ``num_vq`` code heads: ``[..., H]`` -> ``[..., num_vq, num_audio_tokens]``."""
        h = np.asarray(hidden, dtype=np.float32)
        cfg = self.config
        if self._head_code is None:  # [H, Q*V]: one GEMM for all codebooks
            w = self.weights.head_code.reshape(-1, cfg.hidden_size)
            self._head_code = self._head(np.ascontiguousarray(w.T))
        out = self._head_code(h)
        return out.reshape(*h.shape[:-1], cfg.num_vq, cfg.num_audio_tokens)

    def _step_code_logits(self) -> Callable[[np.ndarray], np.ndarray]:
        """The code logits of the decode loop: the stack's own, computed in the step's call,
        when it has them (``OnnxStack.last_code_logits``, the int4 graph), else
        :meth:`code_logits`. The loop asks for the logits of the hidden state the stack has
        just returned, so reading the stack's last ones is the same GEMV on the same input."""
        last = getattr(self.stack, "last_code_logits", None)
        if last is None or last() is None:
            return self.code_logits
        cfg = self.config

        def fused(hidden: np.ndarray) -> np.ndarray:
            out = last()
            assert out is not None and out.shape[0] == hidden.shape[0]
            return out.reshape(hidden.shape[0], cfg.num_vq, cfg.num_audio_tokens)

        return fused

    def text_logits(self, hidden: np.ndarray) -> np.ndarray:
        """The text head: ``[..., H]`` -> ``[..., num_text_tokens]``."""
        h = np.asarray(hidden, dtype=np.float32)
        if self._head_text is None:
            self._head_text = self._head(self.weights.head_text, out_in=True)
        return self._head_text(h).astype(np.float32, copy=False)

    # -- the stack -------------------------------------------------------------------------

    def hidden(
        self, inputs_embeds: np.ndarray, attention_mask: np.ndarray | None = None
    ) -> np.ndarray:
        """Last hidden state of the Llama stack over ``[B, T, H]`` (left padding in mask)."""
        x = np.asarray(inputs_embeds, dtype=np.float32)
        if x.ndim != 3 or x.shape[-1] != self.config.hidden_size:
            raise ValueError(f"inputs_embeds must be [B, T, {self.config.hidden_size}]")
        B, T, _ = x.shape
        mask = (
            np.ones((B, T), np.int64)
            if attention_mask is None
            else np.asarray(attention_mask).astype(np.int64)
        )
        if mask.shape != (B, T):
            raise ValueError(f"attention_mask shape {mask.shape} != {(B, T)}")
        self.stack.begin(mask, T)
        return self.stack.forward(x, prompt_positions(mask), 0).copy()

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
    ) -> list[GenerationResult]:
        """Decode several prompts as one batch (left-padded), each to its own end.

        ``prompts`` are 1-D token-id arrays (variable length). ``max_new_tokens`` (one value
        or one per item) further caps ``params.max_new_tokens``; ``min_new_tokens`` (one value
        or per item) replaces ``params.min_new_tokens``: the end token is suppressed for that
        many first steps of the item (the reference's ``min_new_token``). The code stage ends
        an item at the first frame containing the end code (``params.eos_id`` or 625); the refine
        stage needs ``params.eos_id`` = the ``[Ebreak]`` id. See the module docstring for the
        results and ``on_frames``.
        """
        if stage not in ("code", "refine"):
            raise ValueError(f"stage must be 'code' or 'refine', got {stage!r}")
        params = params or SamplingParams()
        rng = rng if rng is not None else np.random.default_rng()
        if not prompts:
            return []
        if not isinstance(rng, np.random.Generator) and len(rng) != len(prompts):
            raise ValueError(f"{len(rng)} random generators for {len(prompts)} prompts")
        arrs = [np.asarray(p).reshape(-1).astype(np.int64) for p in prompts]
        if any(a.size == 0 for a in arrs):
            raise ValueError("empty prompt")
        B, T = len(arrs), max(a.size for a in arrs)
        if T >= self.config.max_position_embeddings:
            raise ValueError(
                f"prompt of {T} tokens exceeds the GPT's "
                f"{self.config.max_position_embeddings} positions; split the text"
            )
        ids = np.zeros((B, T), np.int64)
        mask = np.zeros((B, T), np.int64)
        for b, a in enumerate(arrs):
            ids[b, T - a.size :] = a
            mask[b, T - a.size :] = 1
        emb = self.embed(ids, spk_emb, spk_emb_token_id)
        caps = np.full(B, params.max_new_tokens, np.int64)
        if max_new_tokens is not None:
            extra = np.broadcast_to(np.asarray(max_new_tokens, np.int64), (B,))
            if np.any(extra < 1):
                raise ValueError("max_new_tokens must be >= 1")
            caps = np.minimum(caps, extra)
        mins = None
        if min_new_tokens is not None:
            mins = np.broadcast_to(np.asarray(min_new_tokens, np.int64), (B,)).copy()
            if np.any(mins < 0):
                raise ValueError("min_new_tokens must be >= 0")
        limit = self.config.max_position_embeddings
        if T + int(caps.max()) > limit:
            caps = np.minimum(caps, max(1, limit - T))
        if stage == "code":
            eos = params.eos_id if params.eos_id is not None else self.config.eos_code
            return run_generation(
                self.stack,
                emb,
                mask,
                caps,
                params,
                rng,
                eos,
                next_embed=self.embed_codes,
                logits=self._step_code_logits(),
                num_vq=self.config.num_vq,
                on_frames=on_frames,
                stream_every=stream_every,
                min_new=mins,
            )
        if params.eos_id is None:
            raise ValueError("refine stage needs params.eos_id (the [Ebreak] token id)")
        if params.temperatures.size != 1:
            raise ValueError("refine stage takes one temperature, not one per codebook")
        return run_generation(
            self.stack,
            emb,
            mask,
            caps,
            params,
            rng,
            params.eos_id,
            next_embed=lambda t: self.weights.emb_text[t],
            logits=self.text_logits,
            num_vq=0,
            on_frames=on_frames,
            stream_every=stream_every,
            min_new=mins,
        )
