"""ChatTTS GPT decoding on an NVIDIA GPU: static KV cache, the whole step in one CUDA graph.

Why a separate runner from the portable torch backend: on a GPU the decode step of this small
model (20 Llama layers, hidden 768) is bound by kernel launches and memory reads, not maths.
What makes it fast is therefore structural:

* **Static memory.** One KV cache ``[layers, 2, slots, heads, max_len, head_dim]`` is allocated
  per capacity and reused (the memory pool); positions, step counters, the repetition-penalty
  history, end flags and output buffers are device tensors of fixed shape.
* **One graph per step.** Sampling (4 heads, temperature, repetition penalty over the last 16
  frames, top-p then top-k with at least 3 kept, the draw), the next input (sum of 4 code
  embeddings) and the 20 layers run on the GPU and are captured once per (batch bucket,
  length bucket) in a CUDA graph. The host only replays graphs and looks at the end flags
  every ``sync_every`` steps.
* **Fewer kernels.** Q/K/V and gate/up projections are fused matmuls; RMSNorm, residual adds,
  RoPE and SiLU·up are fused by ``torch.compile`` (Triton) when available.
* **Per-slot positions.** Each batch slot holds one request at its own position (no left
  padding), so a finished slot is refilled with a new request while the others go on
  (continuous batching). Prefill of new requests is batched with right padding, which is
  exact under a causal mask.

Sampling is exact: the draw uses the exponential-race form of sampling from a categorical
(``argmax(p / E)``, ``E ~ Exp(1)``), which needs no host sync and is graph-safe.

The host side is the one decode loop of :mod:`~mixvox.engines.chattts.gpt.decode`, driven by
:class:`CudaSteps` (a window = ``sync_every`` graph replays, a slot refilled by a prefill);
the parameters are the one :class:`~mixvox.engines.chattts.gpt.sampler.SamplingParams`.
:func:`_process_logits` is the in-graph twin of the sampler's numpy processors (same order
and boundary rules, checked against the reference's processors in the tests): sampling on
the host instead would cost a device sync every step, which this runner exists to avoid.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from mixvox.engines.chattts.gpt.decode import (
    FramesCallback,
    GenerationResult,
    decode,
)
from mixvox.engines.chattts.gpt.model import GPT, Stage
from mixvox.engines.chattts.gpt.sampler import Rng, SamplingParams, first_rng
from mixvox.engines.chattts.gpt.torch_stack import TorchStack
from mixvox.engines.chattts.gpt.weights import GPTConfig, GPTWeights

__all__ = ["CodeRequest", "CodeResult", "CudaGPT", "CudaSampling", "CudaSteps", "GraphGPT"]

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
LEN_BUCKETS = (128, 256, 512, 1024, 2048, 4096)


@dataclass
class CudaSampling:
    """Sampling parameters (the reference's defaults for the code stage)."""

    temperature: Sequence[float] | float = 0.3
    top_p: float | None = 0.7
    top_k: int | None = 20
    repetition_penalty: float = 1.05
    penalty_window: int = 16
    min_keep: int = 3
    eos_id: int = 625
    suppress_eos: bool = False
    greedy: bool = False  # argmax; equal to the reference at temperature -> 0

    @classmethod
    def from_params(cls, params: SamplingParams, num_vq: int, eos_id: int) -> CudaSampling:
        """The in-graph sampler's settings for :class:`SamplingParams` (the one parameter
        type of every runner); ``eos_id`` is the stage default when ``params`` names none."""
        temps = np.broadcast_to(params.temperatures, (num_vq,))
        return cls(
            temperature=[float(t) for t in temps],
            top_p=params.top_p,
            top_k=params.top_k,
            repetition_penalty=params.repetition_penalty,
            penalty_window=params.penalty_window,
            min_keep=params.min_keep,
            eos_id=params.eos_id if params.eos_id is not None else eos_id,
            suppress_eos=params.suppress_eos,
        )


@dataclass
class CodeRequest:
    """One prompt to decode: its input embeddings and its frame bounds (the length guard)."""

    embeds: torch.Tensor  # [T, H]
    max_new: int
    min_new: int = 0
    tag: Any = None


@dataclass
class CodeResult:
    tag: Any
    codes: torch.Tensor  # [n, num_vq] int64 (on the GPU)
    hidden: torch.Tensor  # [n, H] float32 (on the GPU): the hidden that predicted each frame
    finished: bool  # ended on the end code (False: hit max_new)


def _bucket(n: int, buckets: Sequence[int]) -> int:
    for b in buckets:
        if n <= b:
            return b
    raise ValueError(f"{n} exceeds the largest bucket {buckets[-1]}")


def _rmsnorm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    # As transformers' LlamaRMSNorm: statistics in fp32, weight applied in the model dtype.
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return w * xf.to(x.dtype)


def _add_rmsnorm(h: torch.Tensor, d: torch.Tensor, w: torch.Tensor, eps: float):
    h = h + d
    return h, _rmsnorm(h, w, eps)


def _rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rot * sin


def _silu_mul(gu: torch.Tensor) -> torch.Tensor:
    g, u = gu.chunk(2, dim=-1)
    return F.silu(g) * u


def _process_logits(
    hidden: torch.Tensor,
    hist: torch.Tensor,
    head: torch.Tensor,
    temperature: torch.Tensor,
    penalty: torch.Tensor,
    top_p: torch.Tensor,
    top_k: torch.Tensor,
    topk_on: torch.Tensor,
    block_eos: torch.Tensor,
    eos_id: int,
) -> torch.Tensor:
    """Code logits after the reference's processors, as a pure (compilable) function.

    Order as the reference: divide by temperature (per codebook), repetition penalty over the
    last 16 frames (``hist``, with ``V`` as the empty marker), top-p then top-k (transformers'
    warpers, at least 3 kept), and the end code blocked while ``block_eos`` (min frames).
    """
    b = hidden.shape[0]
    nq = temperature.shape[0]
    V = head.shape[0] // nq
    logits = F.linear(hidden.float(), head).view(b, nq, V) / temperature.view(1, nq, 1)
    counts = torch.zeros(b, nq, V + 1, device=hidden.device)
    counts = counts.scatter_add(2, hist, torch.ones_like(hist, dtype=counts.dtype))
    alpha = torch.pow(penalty, counts[..., :V])
    logits = torch.where(logits < 0, logits * alpha, logits / alpha)
    sorted_l, order = torch.sort(logits, dim=-1)
    cum = sorted_l.softmax(-1).cumsum(-1)
    keep_tail = torch.arange(V, device=hidden.device) >= V - 3
    drop = (cum <= (1 - top_p)) & ~keep_tail
    logits = logits.masked_fill(drop.scatter(-1, order, drop), -math.inf)
    kth = torch.topk(logits, 20, dim=-1).values  # top_k above 20 is refused by set_sampling
    k_idx = (top_k.clamp(min=3, max=20) - 1).view(1, 1, 1).expand(b, nq, 1)
    logits = logits.masked_fill((logits < kth.gather(-1, k_idx)) & topk_on, -math.inf)
    is_eos = torch.arange(V, device=hidden.device) == eos_id
    return logits.masked_fill(is_eos.view(1, 1, V) & block_eos.view(b, 1, 1), -math.inf)


def _stack_pure(
    x: torch.Tensor,
    pos: torch.Tensor,
    cos_t: torch.Tensor,
    sin_t: torch.Tensor,
    kc: torch.Tensor,
    vc: torch.Tensor,
    layers: tuple[tuple[torch.Tensor, ...], ...],
    norm: torch.Tensor,
    eps: float,
    nh: int,
    hd: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """All layers for one new token per slot, as a pure function (no writes).

    Why pure: ``torch.compile`` can then fuse everything between the matmuls across all
    layers (norms, RoPE, the attention softmax, residual adds, SiLU gating) without having to
    reason about in-place updates of the KV cache. Attention over the cached positions
    (``< pos``) and the new token is merged with a log-sum-exp, so the new keys/values need
    not be in the cache yet; they are returned and written for all layers with one scatter.
    """
    b, H = x.shape
    L = kc.shape[3]
    cos = cos_t[pos].view(b, 1, hd)
    sin = sin_t[pos].view(b, 1, hd)
    past = torch.arange(L, device=x.device).view(1, 1, 1, L) < pos.view(b, 1, 1, 1)
    scale = hd**-0.5
    ks, vs = [], []
    h = x
    for li, (ln1, wqkv, wo, ln2, wgu, wdown) in enumerate(layers):
        n = _rmsnorm(h, ln1, eps)
        qkv = F.linear(n, wqkv).view(b, 3, nh, hd)
        q = _rope(qkv[:, 0], cos, sin)
        k = _rope(qkv[:, 1], cos, sin)
        v = qkv[:, 2]
        s_c = torch.matmul(q.unsqueeze(2), kc[li].transpose(-1, -2)).float() * scale
        s_c = s_c.masked_fill(~past, -math.inf)  # [b, nh, 1, L]
        s_n = (q.float() * k.float()).sum(-1, keepdim=True).unsqueeze(-1) * scale
        m = torch.maximum(s_c.amax(-1, keepdim=True), s_n)
        p_c = torch.exp(s_c - m)
        p_n = torch.exp(s_n - m)
        den = p_c.sum(-1, keepdim=True) + p_n
        o = torch.matmul(p_c.to(v.dtype), vc[li]).float()  # [b, nh, 1, hd]
        o = (o + p_n * v.float().unsqueeze(2)) / den
        h = h + F.linear(o.to(h.dtype).reshape(b, H), wo)
        n2 = _rmsnorm(h, ln2, eps)
        h = h + F.linear(_silu_mul(F.linear(n2, wgu)), wdown)
        ks.append(k)
        vs.append(v)
    return _rmsnorm(h, norm, eps), torch.stack(ks), torch.stack(vs)


class CudaGPT:
    """The GPT of one ChatTTS checkpoint on one CUDA device, ready for graph-captured decoding.

    ``generate(requests, sampling)`` decodes any number of code-stage requests with continuous
    batching over at most ``max_batch`` slots and returns their codes and hidden states;
    ``on_frames(tag, codes, hidden, done)`` is called with new frames every ``sync_every`` steps for
    streaming. ``close()`` frees the GPU memory.
    """

    def __init__(
        self,
        asset_dir: str | Path,
        *,
        device: str = "cuda",
        precision: str = "fp16",
        max_batch: int = 8,
        max_len: int = 2048 + 256,
        use_graphs: bool = True,
        fused: str = "ops",
        sync_every: int = 16,
    ) -> None:
        from safetensors.torch import load as load_st

        from mixvox.engines.chattts.assets import read_asset, read_asset_text

        if precision not in DTYPES:
            raise ValueError(f"precision must be one of {sorted(DTYPES)}, not {precision!r}")
        self.device = torch.device(device)
        self.dtype = DTYPES[precision]
        self.use_graphs = use_graphs and self.device.type == "cuda"
        self.sync_every = max(1, int(sync_every))
        asset = Path(asset_dir)
        import json

        cfg = json.loads(read_asset_text(asset / "gpt" / "config.json"))
        self.hidden_size = int(cfg["hidden_size"])
        self.num_layers = int(cfg["num_hidden_layers"])
        self.num_heads = int(cfg["num_attention_heads"])
        self.num_kv_heads = int(cfg.get("num_key_value_heads", self.num_heads))
        if self.num_kv_heads != self.num_heads:
            raise ValueError("grouped-query attention is not used by ChatTTS and not supported")
        self.head_dim = self.hidden_size // self.num_heads
        self.eps = float(cfg.get("rms_norm_eps", 1e-6))
        self.theta = float(cfg.get("rope_theta", 10000.0))
        self.num_vq = int(cfg.get("num_vq", 4))
        self.num_audio = int(cfg.get("num_audio_tokens", 626))

        gpt = load_st(read_asset(asset / "gpt" / "model.safetensors", need_hash=False)[0])
        emb = load_st(read_asset(asset / "Embed.safetensors", need_hash=False)[0])
        dev, dt = self.device, self.dtype

        def w(t: torch.Tensor, dtype: torch.dtype = dt) -> torch.Tensor:
            return t.to(device=dev, dtype=dtype).contiguous()

        self.layers: list[dict[str, torch.Tensor]] = []
        for i in range(self.num_layers):
            p = f"layers.{i}."
            self.layers.append(
                {
                    "ln1": w(gpt[p + "input_layernorm.weight"]),
                    "ln2": w(gpt[p + "post_attention_layernorm.weight"]),
                    "qkv": w(
                        torch.cat(
                            [gpt[p + f"self_attn.{n}_proj.weight"] for n in ("q", "k", "v")], 0
                        )
                    ),
                    "o": w(gpt[p + "self_attn.o_proj.weight"]),
                    "gu": w(
                        torch.cat(
                            [gpt[p + "mlp.gate_proj.weight"], gpt[p + "mlp.up_proj.weight"]], 0
                        )
                    ),
                    "down": w(gpt[p + "mlp.down_proj.weight"]),
                }
            )
        self.norm = w(gpt["norm.weight"])
        # Code embeddings stacked so that the next input is one gather + sum.
        self.emb_code = w(torch.cat([emb[f"emb_code.{i}.weight"] for i in range(self.num_vq)], 0))
        self.emb_text = w(emb["emb_text.weight"])
        # Weight-normed heads folded once (W = g * v / ||v||, norm over the input dim), fp32.
        heads = []
        for i in range(self.num_vq):
            g = emb[f"head_code.{i}.parametrizations.weight.original0"].float()
            v = emb[f"head_code.{i}.parametrizations.weight.original1"].float()
            heads.append(g * v / v.norm(dim=1, keepdim=True))
        self.head_code = w(torch.cat(heads, 0), torch.float32)  # [num_vq * 626, H]
        self.code_offsets = (torch.arange(self.num_vq, device=dev) * self.num_audio).view(1, -1)

        inv = 1.0 / (
            self.theta ** (torch.arange(0, self.head_dim, 2, device=dev).float() / self.head_dim)
        )
        t = torch.arange(max_len + 1, device=dev).float()
        freqs = torch.outer(t, inv)
        angles = torch.cat((freqs, freqs), dim=-1)
        self.cos = angles.cos().to(dt)
        self.sin = angles.sin().to(dt)
        self.max_len = int(max_len)

        if fused not in ("stack", "ops", "none"):
            raise ValueError("fused must be 'stack', 'ops' or 'none'")
        self.fused = fused
        self._wpack = tuple(
            (p["ln1"], p["qkv"], p["o"], p["ln2"], p["gu"], p["down"]) for p in self.layers
        )
        self._add_rmsnorm, self._rmsnorm = _add_rmsnorm, _rmsnorm
        self._rope, self._silu_mul = _rope, _silu_mul
        self._stack = _stack_pure
        self._process = _process_logits
        self.compiled = False
        if fused != "none" and self.device.type == "cuda":
            try:
                import torch._dynamo as dynamo

                # one compile per dtype and shape class; several runners may share a process
                dynamo.config.recompile_limit = max(
                    64, getattr(dynamo.config, "recompile_limit", 8)
                )
                self._process = torch.compile(_process_logits, dynamic=True, fullgraph=True)
                if fused == "stack":
                    self._stack = torch.compile(_stack_pure, dynamic=True, fullgraph=True)
                else:
                    self._add_rmsnorm = torch.compile(_add_rmsnorm, dynamic=True, fullgraph=True)
                    self._rmsnorm = torch.compile(_rmsnorm, dynamic=True, fullgraph=True)
                    self._rope = torch.compile(_rope, dynamic=True, fullgraph=True)
                    self._silu_mul = torch.compile(_silu_mul, dynamic=True, fullgraph=True)
                self.compiled = True
            except Exception:  # no Triton: plain kernels
                self.compiled = False

        self.capacity = 0
        self._graphs: dict[tuple[int, ...], torch.cuda.CUDAGraph] = {}
        #: capture a window of ``sync_every`` steps as one graph (set False for one-step
        #: graphs only: less capture time and graph memory)
        self.window_graphs = True
        #: with one request in flight, enqueue its next window before reading the end flags
        self.lookahead = True
        #: the same with several requests in flight once none waits for a slot (no refill
        #: can follow): the next window of the slots with steps left is enqueued before the
        #: end flags are read, so the GPU does not idle while the host waits for the flags'
        #: copy, reads them and runs the loop (one such gap per window at batch 64 before).
        #: A slot that drew the end code in the window just read rides along in the window
        #: run ahead (its rows are its own; the frames past its end are not read). On since
        #: the H200 run of 2026-12-02 01:00 UTC (BENCHMARKS.md, GPU session 7): batch 64
        #: 61,628 -> 66,276 frames/s, batch 8 12,954 -> 14,510; the time outside the GPU's
        #: own work per generate 20.2 -> 6.7 ms (batch 64), 14.2 -> 0.9 ms (batch 8). The
        #: price: when the last requests end by the end code, their window run ahead (up to
        #: ``sync_every`` steps) runs for nothing before the results are ready (not timed)
        self.batch_lookahead = True
        self._alloc(max_batch)

    # ------------------------------------------------------------------------------------------
    # memory pool
    # ------------------------------------------------------------------------------------------

    def _alloc(self, slots: int) -> None:
        """(Re)allocate the static buffers for ``slots`` batch slots; drops captured graphs."""
        slots = _bucket(slots, BATCH_BUCKETS)
        if slots <= self.capacity:
            return
        self._graphs.clear()
        dev, dt, H = self.device, self.dtype, self.hidden_size
        self.k = torch.zeros(
            self.num_layers,
            slots,
            self.num_heads,
            self.max_len,
            self.head_dim,
            device=dev,
            dtype=dt,
        )
        self.v = torch.zeros_like(self.k)
        self.h_last = torch.zeros(slots, H, device=dev, dtype=dt)
        self.pos = torch.zeros(slots, dtype=torch.long, device=dev)
        self.step = torch.zeros(slots, dtype=torch.long, device=dev)
        self.min_new = torch.zeros(slots, dtype=torch.long, device=dev)
        self.finished = torch.zeros(slots, dtype=torch.bool, device=dev)
        self.end_step = torch.full((slots,), -1, dtype=torch.long, device=dev)
        self.hist = torch.full(
            (slots, self.num_vq, 16), self.num_audio, dtype=torch.long, device=dev
        )
        self.out_codes = torch.zeros(slots, self.max_len, self.num_vq, dtype=torch.long, device=dev)
        self.out_hidden = torch.zeros(slots, self.max_len, H, dtype=dt, device=dev)
        self.temperature = torch.ones(self.num_vq, device=dev)
        self.penalty = torch.ones((), device=dev)
        self.top_p = torch.full((), 0.7, device=dev)
        self.top_k = torch.full((), 20, dtype=torch.long, device=dev)
        self.greedy = torch.zeros((), dtype=torch.bool, device=dev)
        self.topk_on = torch.ones((), dtype=torch.bool, device=dev)
        self.eos_block = torch.zeros((), dtype=torch.bool, device=dev)
        self.capacity = slots

    def memory_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.k, self.v, self.out_hidden))

    def close(self) -> None:
        """Free GPU memory (weights, cache, graphs)."""
        self._graphs.clear()
        for name in list(vars(self)):
            if isinstance(getattr(self, name), torch.Tensor | list | tuple):
                setattr(self, name, None)
        self.capacity = 0
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # ------------------------------------------------------------------------------------------
    # model pieces
    # ------------------------------------------------------------------------------------------

    def embed_prompt(
        self, ids: torch.Tensor, spk: torch.Tensor | None, spk_id: int | None
    ) -> torch.Tensor:
        """Text embeddings of a prompt with the L2-normalised speaker at ``[spk_emb]``."""
        ids = ids.to(self.device)
        e = self.emb_text[ids]
        if spk is not None and spk_id is not None:
            # Normalised in the vector's own dtype (fp16 for shared speaker strings), as the
            # reference does: normalising in fp32 differs by up to 2e-4.
            n = F.normalize(spk.to(self.device), p=2.0, dim=0, eps=1e-12).to(e.dtype)
            e = torch.where((ids == spk_id).unsqueeze(-1), n, e)
        return e

    def _layers_decode(self, x: torch.Tensor, pos: torch.Tensor, b: int, L: int) -> torch.Tensor:
        """One token per slot through all layers; writes K/V at ``pos`` in slots ``[:b]``."""
        nh, hd = self.num_heads, self.head_dim
        cos = self.cos[pos].view(b, 1, 1, hd)
        sin = self.sin[pos].view(b, 1, 1, hd)
        mask = torch.arange(L, device=self.device).view(1, 1, 1, L) <= pos.view(b, 1, 1, 1)
        idx = pos.view(b, 1, 1, 1).expand(b, nh, 1, hd)
        h = x
        normed = self._rmsnorm(h, self.layers[0]["ln1"], self.eps)
        for li, p in enumerate(self.layers):
            qkv = F.linear(normed, p["qkv"]).view(b, 3, nh, 1, hd)
            q = self._rope(qkv[:, 0], cos, sin)
            k = self._rope(qkv[:, 1], cos, sin)
            kc, vc = self.k[li, :b], self.v[li, :b]
            kc.scatter_(2, idx, k)
            vc.scatter_(2, idx, qkv[:, 2])
            att = F.scaled_dot_product_attention(q, kc[:, :, :L], vc[:, :, :L], attn_mask=mask)
            h, normed = self._add_rmsnorm(
                h, F.linear(att.reshape(b, -1), p["o"]), p["ln2"], self.eps
            )
            d = F.linear(self._silu_mul(F.linear(normed, p["gu"])), p["down"])
            nxt = self.layers[li + 1]["ln1"] if li + 1 < self.num_layers else self.norm
            h, normed = self._add_rmsnorm(h, d, nxt, self.eps)
        return normed

    def _forward_full(self, x: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """Causal forward over ``x`` ``[n, T, H]``; with ``rows``, K/V go to those cache rows."""
        n, T, H = x.shape
        nh, hd = self.num_heads, self.head_dim
        cos = self.cos[:T].view(1, 1, T, hd)
        sin = self.sin[:T].view(1, 1, T, hd)
        h = x.to(self.dtype)
        for li, p in enumerate(self.layers):
            normed = _rmsnorm(h, p["ln1"], self.eps)
            qkv = F.linear(normed, p["qkv"]).view(n, T, 3, nh, hd).permute(2, 0, 3, 1, 4)
            q, k, v = _rope(qkv[0], cos, sin), _rope(qkv[1], cos, sin), qkv[2]
            if rows is not None:
                self.k[li, rows, :, :T] = k
                self.v[li, rows, :, :T] = v
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + F.linear(att.transpose(1, 2).reshape(n, T, H), p["o"])
            normed = _rmsnorm(h, p["ln2"], self.eps)
            h = h + F.linear(_silu_mul(F.linear(normed, p["gu"])), p["down"])
        return _rmsnorm(h, self.norm, self.eps)

    def teacher_forced_logits(self, prompt: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        """Code logits ``[n, num_vq, V]`` for each frame of ``codes`` given the true previous
        frames: compares precisions without letting one early difference change the rest."""
        prev = self.emb_code[codes[:-1].to(self.device) + self.code_offsets].sum(1)
        x = torch.cat([prompt.to(self.device, self.dtype), prev.to(self.dtype)], 0)[None]
        hidden = self._forward_full(x)[0, prompt.shape[0] - 1 :]
        return F.linear(hidden.float(), self.head_code).view(-1, self.num_vq, self.num_audio)

    def prefill(self, slots: list[int], embeds: list[torch.Tensor]) -> None:
        """Run prompts (right-padded batch, causal) into their slots' cache rows."""
        n = len(slots)
        T = max(e.shape[0] for e in embeds)
        if T + 1 >= self.max_len:
            raise ValueError(f"prompt of {T} tokens exceeds the cache length {self.max_len}")
        x = torch.zeros(n, T, self.hidden_size, device=self.device, dtype=self.dtype)
        for i, e in enumerate(embeds):
            x[i, : e.shape[0]] = e.to(self.dtype)
        rows = torch.tensor(slots, device=self.device)
        hidden = self._forward_full(x, rows)
        lens = torch.tensor([e.shape[0] for e in embeds], device=self.device)
        self.h_last[rows] = hidden[torch.arange(n, device=self.device), lens - 1]
        self.pos[rows] = lens
        self.step[rows] = 0
        self.finished[rows] = False
        self.end_step[rows] = -1
        self.hist[rows] = self.num_audio

    def _sample(self, b: int) -> torch.Tensor:
        """Codes for slots ``[:b]`` from their last hidden states (all on the GPU)."""
        nq = self.num_vq
        hidden = self.h_last[:b]
        step = self.step[:b]
        at = step.clamp(max=self.max_len - 1)
        self.out_hidden[:b].scatter_(
            1, at.view(b, 1, 1).expand(b, 1, self.hidden_size), hidden.unsqueeze(1)
        )
        block = (step < self.min_new[:b]) | self.eos_block
        logits = self._process(
            hidden,
            self.hist[:b],
            self.head_code,
            self.temperature,
            self.penalty,
            self.top_p,
            self.top_k,
            self.topk_on,
            block,
            self.eos_id_,
        )
        probs = logits.softmax(-1)
        race = probs / torch.empty_like(probs).exponential_()
        ids = torch.where(self.greedy, logits.argmax(-1), race.argmax(-1))
        self.out_codes[:b].scatter_(1, at.view(b, 1, 1).expand(b, 1, nq), ids.unsqueeze(1))
        self.hist[:b].scatter_(2, (step % 16).view(b, 1, 1).expand(b, nq, 1), ids.unsqueeze(-1))
        ended = (ids == self.eos_id_).any(-1)
        newly = ended & ~self.finished[:b]
        self.end_step[:b] = torch.where(newly, step, self.end_step[:b])
        self.finished[:b] |= ended
        return ids

    def _step(self, b: int, L: int) -> None:
        ids = self._sample(b)
        x = self.emb_code[ids + self.code_offsets].sum(1)
        pos = self.pos[:b].clamp(max=L - 1)
        if self.fused == "stack":
            hidden, kn, vn = self._stack(
                x,
                pos,
                self.cos,
                self.sin,
                self.k[:, :b, :, :L],
                self.v[:, :b, :, :L],
                self._wpack,
                self.norm,
                self.eps,
                self.num_heads,
                self.head_dim,
            )
            nl, nh, hd = self.num_layers, self.num_heads, self.head_dim
            idx = pos.view(1, b, 1, 1, 1).expand(nl, b, nh, 1, hd)
            self.k[:, :b].scatter_(3, idx, kn.unsqueeze(3))
            self.v[:, :b].scatter_(3, idx, vn.unsqueeze(3))
            self.h_last[:b] = hidden
        else:
            self.h_last[:b] = self._layers_decode(x, pos, b, L)
        self.pos[:b] += 1
        self.step[:b] += 1

    def _run_steps(self, b: int, L: int, n: int) -> None:
        if not self.use_graphs:
            for _ in range(n):
                self._step(b, L)
            return
        # a whole window in one graph when it has the usual length (one launch per window;
        # the host stays far ahead of the GPU), else replays of the one-step graph
        if n == self.sync_every and n > 1 and self.window_graphs:
            g = self._graphs.get((b, L, n)) or self._capture(b, L, n)
            g.replay()
            return
        g = self._graphs.get((b, L)) or self._capture(b, L)
        for _ in range(n):
            g.replay()

    def _capture(self, b: int, L: int, n: int = 1) -> torch.cuda.CUDAGraph:
        # Warm up on a side stream (compiles Triton kernels, creates cuBLAS handles), with the
        # state saved and restored so that capture leaves no trace on real requests.
        saved = [t.clone() for t in self._state()]
        s = torch.cuda.Stream(self.device)
        s.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(s):
            for _ in range(2):
                self._step(b, L)
        torch.cuda.current_stream(self.device).wait_stream(s)
        g = torch.cuda.CUDAGraph()
        # thread_local: the engine vocodes on another thread while a new bucket is captured
        with torch.cuda.graph(g, capture_error_mode="thread_local"):
            for _ in range(n):
                self._step(b, L)
        for t, v in zip(self._state(), saved, strict=True):
            t.copy_(v)
        self._graphs[(b, L) if n == 1 else (b, L, n)] = g
        return g

    def _poll(self, b: int, then: Callable[[], None] | None = None) -> tuple[list[bool], list[int]]:
        """End flags and end steps of slots ``[:b]``, waiting without holding the GIL.

        ``then``: work to enqueue after the flags' copy and before waiting for it (the next
        window, run ahead so that the GPU never idles while the host looks at the flags).
        ``tolist()`` would block inside a CUDA copy with the GIL held, starving the thread
        that vocodes streamed frames; an event wait releases it.
        """
        if self.device.type != "cuda":
            # the flags of the window just run, read before ``then`` runs the next one (as
            # the CUDA copy below is ordered before it)
            flags = self.finished[:b].tolist(), self.end_step[:b].tolist()
            if then is not None:
                then()
            return flags
        host: tuple[torch.Tensor, torch.Tensor] | None = getattr(self, "_host_flags", None)
        if host is None or host[0].shape[0] < self.capacity:
            host = (
                torch.empty(self.capacity, dtype=torch.bool, pin_memory=True),
                torch.empty(self.capacity, dtype=torch.long, pin_memory=True),
            )
            self._host_flags = host
        host[0][:b].copy_(self.finished[:b], non_blocking=True)
        host[1][:b].copy_(self.end_step[:b], non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        self.flags_event = ev
        if then is not None:
            then()
        while not ev.query():  # sleeping releases the GIL for certain; a blocking wait may not
            time.sleep(0.0002)
        return host[0][:b].tolist(), host[1][:b].tolist()

    def reader_stream(self) -> torch.cuda.Stream:
        """The stream that reads streamed frames (and runs the streaming callback): it waits
        for the window whose end flags were read, not for the window enqueued after it."""
        s = getattr(self, "_reader", None)
        if s is None:
            s = self._reader = torch.cuda.Stream(self.device)
        return s

    def _state(self) -> list[torch.Tensor]:
        return [self.h_last, self.pos, self.step, self.finished, self.end_step, self.hist]

    def warmup(self, batches: Sequence[int] = (1,), lengths: Sequence[int] = (256,)) -> None:
        """Capture graphs (and compile kernels) ahead of the first request."""
        for b in batches:
            self._alloc(b)
            for L in lengths:
                if self.use_graphs:
                    bb, LL = _bucket(b, BATCH_BUCKETS), _bucket(L, LEN_BUCKETS)
                    self._capture(bb, LL)
                    if self.window_graphs and self.sync_every > 1:
                        self._capture(bb, LL, self.sync_every)
                else:
                    self._step(_bucket(b, BATCH_BUCKETS), _bucket(L, LEN_BUCKETS))
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    # ------------------------------------------------------------------------------------------
    # the host loop
    # ------------------------------------------------------------------------------------------

    eos_id_ = 625

    def set_sampling(self, s: CudaSampling) -> None:
        temp = (
            s.temperature if isinstance(s.temperature, Sequence) else [s.temperature] * self.num_vq
        )
        greedy = s.greedy or all(t <= 0 for t in temp)
        self.temperature.copy_(torch.tensor([t if t > 0 else 1.0 for t in temp]))
        self.penalty.fill_(float(s.repetition_penalty))
        self.top_p.fill_(1.0 if s.top_p is None else float(s.top_p))
        if s.top_k is not None and s.top_k > 20:
            raise ValueError("top_k above 20 is not supported by the CUDA graph sampler")
        self.topk_on.fill_(s.top_k is not None)
        self.top_k.fill_(20 if s.top_k is None else int(s.top_k))
        self.greedy.fill_(bool(greedy))
        self.eos_block.fill_(bool(s.suppress_eos))
        if s.eos_id != self.eos_id_ or s.penalty_window != 16 or s.min_keep != 3:
            raise ValueError("the CUDA sampler is built for eos 625, window 16 and min_keep 3")

    def generate(
        self,
        requests: Sequence[CodeRequest],
        sampling: CudaSampling | SamplingParams,
        *,
        seed: int | None = None,
        max_batch: int | None = None,
        on_frames: Callable[[Any, torch.Tensor, torch.Tensor, bool], None] | None = None,
        stream_every: int = 1,
    ) -> list[CodeResult]:
        """Decode all ``requests`` (continuous batching) and return results in input order.

        ``sampling``: the :class:`SamplingParams` every runner takes (or its in-graph form).
        ``on_frames(tag, codes, hidden, done)`` gets each request's new frames once it has
        ``stream_every`` of them after a window of ``sync_every`` steps, and at its end.
        """
        if not requests:
            return []
        if isinstance(sampling, SamplingParams):
            sampling = CudaSampling.from_params(sampling, self.num_vq, self.eos_id_)
        cap = max_batch or self.capacity
        self._alloc(cap)
        cap = min(cap, self.capacity)
        self.set_sampling(sampling)
        if seed is not None:
            torch.cuda.manual_seed(seed) if self.device.type == "cuda" else torch.manual_seed(seed)
        for r in requests:
            if r.max_new + r.embeds.shape[0] + self.sync_every + 2 > self.max_len:
                raise ValueError(
                    f"prompt ({r.embeds.shape[0]}) + max_new ({r.max_new}) exceeds the cache "
                    f"length {self.max_len}"
                )
        callback = on_frames
        if on_frames is not None and self.device.type == "cuda":
            user = on_frames

            def callback(tag: Any, codes: Any, hidden: Any, done: bool) -> None:
                # on the reader stream, ordered after the window just polled only: a copy
                # made here does not wait for the window enqueued ahead (``lookahead``)
                side = self.reader_stream()
                side.wait_event(self.flags_event)
                with torch.cuda.stream(side):
                    user(tag, codes, hidden, done)

        out = decode(
            CudaSteps(self, requests, cap),
            [r.max_new for r in requests],
            on_frames=callback,
            stream_every=stream_every,
            tags=[r.tag for r in requests],
        )
        return [
            CodeResult(tag=r.tag, codes=d.ids, hidden=d.hidden, finished=d.finished)
            for r, d in zip(requests, out, strict=True)
        ]


class CudaSteps:
    """The CUDA runner's step functions for :func:`~mixvox.engines.chattts.gpt.decode.decode`.

    A window is ``sync_every`` steps replayed from one captured graph (sampling included);
    each slot holds one request at its own position, so a freed slot is refilled by a
    right-padded prefill while the others go on.
    """

    def __init__(self, gpt: CudaGPT, requests: Sequence[CodeRequest], capacity: int) -> None:
        self.gpt = gpt
        self.requests = requests
        self._capacity = capacity
        self.host_pos = [0] * capacity  # host mirror of each slot's position (length bucket)
        self.cap = [0] * capacity  # frame cap of each slot's request
        self.taken = [0] * capacity  # steps run (or enqueued) since the slot's admission
        self._b = 1
        self.admitted = 0  # requests admitted so far (all: no refill can follow)
        # the window enqueued ahead by ``poll`` (active slots, steps), not yet claimed by ``run``
        self._ahead: tuple[tuple[int, ...], int] | None = None

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def window(self) -> int:
        return self.gpt.sync_every

    def admit(self, slots: Sequence[int], items: Sequence[int]) -> None:
        g = self.gpt
        embeds = [self.requests[j].embeds for j in items]
        for s, e, j in zip(slots, embeds, items, strict=True):
            self.host_pos[s] = int(e.shape[0])
            self.cap[s] = int(self.requests[j].max_new)
            self.taken[s] = 0
        self.admitted += len(items)
        g.prefill(list(slots), embeds)
        rows = torch.tensor(list(slots), device=g.device)
        g.min_new[rows] = torch.tensor([self.requests[j].min_new for j in items], device=g.device)

    def _enqueue(self, active: Sequence[int], n: int) -> None:
        g = self.gpt
        b = _bucket(max(active) + 1, BATCH_BUCKETS)
        L = min(_bucket(max(self.host_pos[i] for i in active) + n + 1, LEN_BUCKETS), g.max_len)
        g._run_steps(b, L, n)
        # (the bucket may exceed a capacity that is not a bucket: max_batch=3 runs b=4)
        for i in range(min(b, len(self.host_pos))):
            self.host_pos[i] += n
        for i in active:
            self.taken[i] += n
        self._b = b

    def run(self, active: Sequence[int], n: int) -> None:
        time.sleep(0)  # hand the GIL to a streaming consumer between windows
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            if ahead == (tuple(active), n):
                return  # already on the GPU
            # several slots ran ahead and some of them ended (end code) in the window before:
            # the others asked for at least as many steps (the fewest left among fewer slots)
            if set(active) <= set(ahead[0]) and n >= ahead[1]:
                if n > ahead[1]:
                    self._enqueue(active, n - ahead[1])
                return
            raise RuntimeError(f"window run ahead {ahead} but asked for {(tuple(active), n)}")
        self._enqueue(active, n)

    def poll(self, active: Sequence[int]) -> tuple[list[bool], list[int]]:
        g = self.gpt
        rest: tuple[int, ...] = ()
        # One request alone (the latency case): run its next window ahead, before waiting for
        # this window's end flags. If it ended, the extra window only touched its own slot,
        # which is released (or refilled by a prefill, ordered after it on the stream).
        if g.lookahead and len(active) == 1 and g.device.type == "cuda":
            rest = tuple(active)
        # Several requests, none waiting (``batch_lookahead``): the next window of the slots
        # with steps left, as long as the fewest steps left among them. A slot that ends now
        # (end code) rides along for nothing; ``run`` then gets a subset of these slots and at
        # least as many steps (what the remaining slots still need is enqueued after).
        elif g.batch_lookahead and len(active) > 1 and self.admitted >= len(self.requests):
            rest = tuple(active)
        rest = tuple(s for s in rest if self.cap[s] - self.taken[s] > 0)
        then = None
        if rest:
            n = min(self.window, min(self.cap[s] - self.taken[s] for s in rest))

            def then(rest: tuple[int, ...] = rest, n: int = n) -> None:
                self._enqueue(list(rest), n)
                self._ahead = (rest, n)

        return g._poll(self._b, then)

    def frames(self, slot: int, lo: int, hi: int, final: bool) -> tuple[torch.Tensor, torch.Tensor]:
        g = self.gpt
        if self._ahead is not None and g.device.type == "cuda":
            # a window runs ahead on the stream: copy these frames (written before the flags
            # were copied) on the reader stream, so the copy does not wait for that window;
            # ``generate`` runs the streaming callback on that stream too
            side = g.reader_stream()
            side.wait_event(g.flags_event)
            main = torch.cuda.current_stream(g.device)
            with torch.cuda.stream(side):
                codes = g.out_codes[slot, lo:hi].clone()
                hidden = g.out_hidden[slot, lo:hi].to(torch.float32, copy=True)
            codes.record_stream(main)
            hidden.record_stream(main)
            main.wait_stream(side)  # later writes to these slots come after the copies
            return codes, hidden
        if final:  # the slot's buffers are reused by the next request: copies
            return g.out_codes[slot, lo:hi].clone(), g.out_hidden[slot, lo:hi].to(
                torch.float32, copy=True
            )
        return g.out_codes[slot, lo:hi], g.out_hidden[slot, lo:hi].float()

    def release(self, slot: int) -> None:
        if self._ahead is not None and slot in self._ahead[0]:
            # its share of the window run ahead was for nothing (the request ended); the
            # window stays claimed by the other slots that ran in it
            rest = tuple(s for s in self._ahead[0] if s != slot)
            self._ahead = (rest, self._ahead[1]) if rest else None
        self.host_pos[slot] = 0
        self.taken[slot] = 0
        self.gpt.pos[slot] = 0


class GraphGPT:
    """The CUDA-graph GPT runner (a :class:`~mixvox.engines.chattts.gpt.runner.GPTRunner`).

    Prompt embeddings (speaker injection included) are made on the GPU by
    :meth:`CudaGPT.embed_prompt`, the code stage decodes with CUDA graphs and continuous
    batching, and the rarely used refine stage runs on the portable torch stack. Its host copy
    of the weights is loaded only when refine is first used, so start-up reads the weights
    once and batch-1 memory stays small.
    """

    def __init__(
        self,
        asset_dir: str | Path,
        *,
        precision: str = "fp16",
        device: str = "cuda",
        max_batch: int = 8,
        use_graphs: bool = True,
        fused: str = "ops",
        gpt_sha256: str | None = None,
    ) -> None:
        # ``gpt_sha256``: the verified hash of the GPT weights, so they are not hashed again.
        # "ops" (small compiled kernels) starts in seconds; "stack" (the whole layer stack
        # compiled) decodes ~10% faster on an H200 but compiles for about a minute.
        # gpt.triton_decode.TritonGraphGPT: the same with the fused Triton step.
        self.asset_dir = Path(asset_dir)
        self._gpt_sha256 = gpt_sha256
        self.config = GPTConfig.from_asset_dir(asset_dir)
        self.backend = "torch-cuda-graphs" if use_graphs else "torch-cuda"
        self.precision = precision
        self.device = device
        self.cuda = self._make_runner(asset_dir, device, precision, max_batch, use_graphs, fused)
        self._text_gpt: GPT | None = None
        # capture batch 1 for every length bucket now, so no capture happens mid-stream
        self.cuda.warmup((1,), [L for L in LEN_BUCKETS if L <= self.cuda.max_len])

    def _make_runner(
        self,
        asset_dir: str | Path,
        device: str,
        precision: str,
        max_batch: int,
        use_graphs: bool,
        fused: str,
    ) -> CudaGPT:
        """The code-stage runner (a subclass swaps in another :class:`CudaGPT`)."""
        return CudaGPT(
            asset_dir,
            device=device,
            precision=precision,
            max_batch=max_batch,
            use_graphs=use_graphs,
            fused=fused,
        )

    def _portable(self) -> GPT:
        if self._text_gpt is None:
            weights = GPTWeights.load(self.asset_dir, gpt_sha256=self._gpt_sha256)
            stack = TorchStack(weights, precision=self.precision, device=self.device)
            self._text_gpt = GPT(weights, stack, "torch")
        return self._text_gpt

    def code_requests(
        self,
        prompts: Sequence[np.ndarray],
        spk_emb: Any,
        spk_emb_token_id: int | None,
        params: SamplingParams,
        max_new_tokens: int | Sequence[int] | None = None,
        min_new_tokens: int | Sequence[int] | None = None,
    ) -> tuple[list[CodeRequest], CudaSampling]:
        """The code stage's requests (prompt embedded on the device, per-item caps and
        minimums) and sampling settings: shared by :meth:`generate` and the GPU hand-over
        (:func:`mixvox.engines.chattts.gpu_link.device_generate`), so both decode alike.

        A cap leaves room in the cache for the prompt and one host poll window.
        """
        arrs = [np.asarray(p).reshape(-1).astype(np.int64) for p in prompts]
        B = len(arrs)
        spks: list[np.ndarray | None]
        if isinstance(spk_emb, list | tuple):
            spks = list(spk_emb)
        elif spk_emb is None or np.asarray(spk_emb).ndim == 1:
            spks = [spk_emb] * B
        else:
            spks = list(spk_emb)
        caps = np.full(B, params.max_new_tokens, np.int64)
        if max_new_tokens is not None:
            caps = np.minimum(caps, np.broadcast_to(np.asarray(max_new_tokens, np.int64), (B,)))
        mins = np.broadcast_to(
            np.asarray(
                params.min_new_tokens if min_new_tokens is None else min_new_tokens, np.int64
            ),
            (B,),
        )
        reqs = []
        for i, a in enumerate(arrs):
            emb = self._embed(a, spks[i], spk_emb_token_id)
            cap = int(min(caps[i], self.cuda.max_len - a.size - self.cuda.sync_every - 2))
            reqs.append(CodeRequest(emb, max_new=cap, min_new=int(mins[i]), tag=i))
        samp = CudaSampling.from_params(params, self.config.num_vq, self.config.eos_code)
        return reqs, samp

    def _embed(self, ids: np.ndarray, spk: np.ndarray | None, spk_id: int | None) -> torch.Tensor:
        """Prompt embeddings ``[T, H]`` for one prompt (speaker vector or ``None``)."""
        vec = None if spk is None else torch.from_numpy(np.ascontiguousarray(spk))
        return self.cuda.embed_prompt(torch.from_numpy(ids), vec, spk_id)

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
        """As :meth:`GPTRunner.generate`; the code stage on the GPU, refine on the torch stack."""
        if stage != "code":
            return self._portable().generate(
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
        params = params or SamplingParams()
        rng = first_rng(rng)  # one seed for the GPU's counter-based noise
        reqs, samp = self.code_requests(
            prompts, spk_emb, spk_emb_token_id, params, max_new_tokens, min_new_tokens
        )
        if not reqs:
            return []
        B = len(reqs)

        def relay(tag: Any, codes: torch.Tensor, hidden: torch.Tensor, done: bool) -> None:
            if on_frames is not None:
                on_frames(tag, codes.cpu().numpy(), hidden.cpu().numpy(), done)

        res = self.cuda.generate(
            reqs,
            samp,
            seed=int(rng.integers(2**31)),
            max_batch=max(self.cuda.capacity, min(B, BATCH_BUCKETS[-1])),
            on_frames=relay if on_frames is not None else None,
            stream_every=stream_every,
        )
        return [
            GenerationResult(
                ids=r.codes.cpu().numpy(), hidden=r.hidden.cpu().numpy(), finished=r.finished
            )
            for r in res
        ]

    def close(self) -> None:
        self.cuda.close()
        self._text_gpt = None
