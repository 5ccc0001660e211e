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
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64)
LEN_BUCKETS = (128, 256, 512, 1024, 2048, 4096)


@dataclass
class CudaSampling:
    """Sampling parameters (the reference's defaults for the code stage)."""

    temperature: Sequence[float] | float = 0.3
    top_p: float = 0.7
    top_k: int = 20
    repetition_penalty: float = 1.05
    penalty_window: int = 16
    min_keep: int = 3
    eos_id: int = 625
    suppress_eos: bool = False
    greedy: bool = False  # argmax; equal to the reference at temperature -> 0


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


@dataclass
class _Slot:
    req: CodeRequest
    emitted: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


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


class CudaGPT:
    """The GPT of one ChatTTS checkpoint on one CUDA device, ready for graph-captured decoding.

    ``generate(requests, sampling)`` decodes any number of code-stage requests with continuous
    batching over at most ``max_batch`` slots and returns their codes and hidden states;
    ``on_frames(tag, codes, hidden)`` is called with new frames every ``sync_every`` steps for
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
        compile_fused: bool = True,
        sync_every: int = 16,
    ) -> None:
        from safetensors.torch import load_file

        if precision not in DTYPES:
            raise ValueError(f"precision must be one of {sorted(DTYPES)}, not {precision!r}")
        self.device = torch.device(device)
        self.dtype = DTYPES[precision]
        self.use_graphs = use_graphs and self.device.type == "cuda"
        self.sync_every = max(1, int(sync_every))
        asset = Path(asset_dir)
        import json

        cfg = json.loads((asset / "gpt" / "config.json").read_text())
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

        gpt = load_file(str(asset / "gpt" / "model.safetensors"))
        emb = load_file(str(asset / "Embed.safetensors"))
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

        if compile_fused and self.device.type == "cuda":
            try:
                self._add_rmsnorm = torch.compile(_add_rmsnorm, dynamic=True, fullgraph=True)
                self._rmsnorm = torch.compile(_rmsnorm, dynamic=True, fullgraph=True)
                self._rope = torch.compile(_rope, dynamic=True, fullgraph=True)
                self._silu_mul = torch.compile(_silu_mul, dynamic=True, fullgraph=True)
            except Exception:  # no Triton: plain kernels
                compile_fused = False
        if not (compile_fused and self.device.type == "cuda"):
            self._add_rmsnorm, self._rmsnorm = _add_rmsnorm, _rmsnorm
            self._rope, self._silu_mul = _rope, _silu_mul
        self.compiled = compile_fused and self.device.type == "cuda"

        self.capacity = 0
        self._graphs: dict[tuple[int, int], torch.cuda.CUDAGraph] = {}
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
        self.eos_block = torch.zeros((), dtype=torch.bool, device=dev)
        self.capacity = slots

    def memory_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.k, self.v, self.out_hidden))

    def close(self) -> None:
        """Free GPU memory (weights, cache, graphs)."""
        self._graphs.clear()
        for name in list(vars(self)):
            if isinstance(getattr(self, name), torch.Tensor | list):
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

    def prefill(self, slots: list[int], embeds: list[torch.Tensor]) -> None:
        """Run prompts (right-padded batch, causal) into their slots' cache rows."""
        n = len(slots)
        T = max(e.shape[0] for e in embeds)
        if T + 1 >= self.max_len:
            raise ValueError(f"prompt of {T} tokens exceeds the cache length {self.max_len}")
        nh, hd, H = self.num_heads, self.head_dim, self.hidden_size
        x = torch.zeros(n, T, H, device=self.device, dtype=self.dtype)
        for i, e in enumerate(embeds):
            x[i, : e.shape[0]] = e.to(self.dtype)
        cos = self.cos[:T].view(1, 1, T, hd)
        sin = self.sin[:T].view(1, 1, T, hd)
        rows = torch.tensor(slots, device=self.device)
        h = x
        for li, p in enumerate(self.layers):
            normed = _rmsnorm(h, p["ln1"], self.eps)
            qkv = F.linear(normed, p["qkv"]).view(n, T, 3, nh, hd).permute(2, 0, 3, 1, 4)
            q, k, v = _rope(qkv[0], cos, sin), _rope(qkv[1], cos, sin), qkv[2]
            self.k[li, rows, :, :T] = k
            self.v[li, rows, :, :T] = v
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + F.linear(att.transpose(1, 2).reshape(n, T, H), p["o"])
            normed = _rmsnorm(h, p["ln2"], self.eps)
            h = h + F.linear(_silu_mul(F.linear(normed, p["gu"])), p["down"])
        hidden = _rmsnorm(h, self.norm, self.eps)
        lens = torch.tensor([e.shape[0] for e in embeds], device=self.device)
        self.h_last[rows] = hidden[torch.arange(n, device=self.device), lens - 1]
        self.pos[rows] = lens
        self.step[rows] = 0
        self.finished[rows] = False
        self.end_step[rows] = -1
        self.hist[rows] = self.num_audio

    def _sample(self, b: int) -> torch.Tensor:
        """Codes for slots ``[:b]`` from their last hidden states (all on the GPU)."""
        V, nq = self.num_audio, self.num_vq
        hidden = self.h_last[:b]
        step = self.step[:b]
        at = step.clamp(max=self.max_len - 1)
        self.out_hidden[:b].scatter_(
            1, at.view(b, 1, 1).expand(b, 1, self.hidden_size), hidden.unsqueeze(1)
        )
        logits = F.linear(hidden.float(), self.head_code).view(b, nq, V)
        logits = logits / self.temperature.view(1, nq, 1)
        counts = torch.zeros(b, nq, V + 1, device=self.device)
        counts.scatter_add_(2, self.hist[:b], torch.ones_like(self.hist[:b], dtype=counts.dtype))
        alpha = torch.pow(self.penalty, counts[..., :V])
        logits = torch.where(logits < 0, logits * alpha, logits / alpha)
        # top-p (as transformers' TopPLogitsWarper, min 3 kept) ...
        sorted_l, order = torch.sort(logits, dim=-1)
        cum = sorted_l.softmax(-1).cumsum(-1)
        drop = cum <= (1 - self.top_p)
        drop[..., -3:] = False
        logits = logits.masked_fill(drop.scatter(-1, order, drop), -math.inf)
        # ... then top-k (at least 3 kept)
        kth = torch.topk(logits, 20, dim=-1).values  # <= 20: top_k larger than 20 is clamped
        k_idx = (self.top_k.clamp(min=3, max=20) - 1).view(1, 1, 1).expand(b, nq, 1)
        logits = logits.masked_fill(logits < kth.gather(-1, k_idx), -math.inf)
        block = (step < self.min_new[:b]) | self.eos_block
        eos_col = logits[..., self.eos_id_ : self.eos_id_ + 1]
        logits[..., self.eos_id_ : self.eos_id_ + 1] = torch.where(
            block.view(b, 1, 1), torch.full_like(eos_col, -math.inf), eos_col
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
        pos = self.pos[:b]
        self.h_last[:b] = self._layers_decode(x, pos.clamp(max=L - 1), b, L)
        self.pos[:b] += 1
        self.step[:b] += 1

    def _run_steps(self, b: int, L: int, n: int) -> None:
        if not self.use_graphs:
            for _ in range(n):
                self._step(b, L)
            return
        key = (b, L)
        g = self._graphs.get(key)
        if g is None:
            g = self._capture(b, L)
        for _ in range(n):
            g.replay()

    def _capture(self, b: int, L: int) -> torch.cuda.CUDAGraph:
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
        with torch.cuda.graph(g):
            self._step(b, L)
        for t, v in zip(self._state(), saved, strict=True):
            t.copy_(v)
        self._graphs[(b, L)] = g
        return g

    def _state(self) -> list[torch.Tensor]:
        return [self.h_last, self.pos, self.step, self.finished, self.end_step, self.hist]

    def warmup(self, batches: Sequence[int] = (1,), lengths: Sequence[int] = (256,)) -> None:
        """Capture graphs (and compile kernels) ahead of the first request."""
        for b in batches:
            self._alloc(b)
            for L in lengths:
                if self.use_graphs:
                    self._capture(_bucket(b, BATCH_BUCKETS), _bucket(L, LEN_BUCKETS))
                else:
                    self._step(_bucket(b, BATCH_BUCKETS), _bucket(L, LEN_BUCKETS))
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
        self.top_p.fill_(float(s.top_p))
        if s.top_k > 20:
            raise ValueError("top_k above 20 is not supported by the CUDA graph sampler")
        self.top_k.fill_(int(s.top_k))
        self.greedy.fill_(bool(greedy))
        self.eos_block.fill_(bool(s.suppress_eos))
        if s.eos_id != self.eos_id_ or s.penalty_window != 16 or s.min_keep != 3:
            raise ValueError("the CUDA sampler is built for eos 625, window 16 and min_keep 3")

    def generate(
        self,
        requests: Sequence[CodeRequest],
        sampling: CudaSampling,
        *,
        seed: int | None = None,
        max_batch: int | None = None,
        on_frames: Callable[[Any, torch.Tensor, torch.Tensor], None] | None = None,
    ) -> list[CodeResult]:
        """Decode all ``requests`` (continuous batching) and return results in input order."""
        if not requests:
            return []
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
        queue = deque(enumerate(requests))
        slots: list[_Slot | None] = [None] * cap
        results: list[CodeResult | None] = [None] * len(requests)
        index_of: dict[int, int] = {}
        host_pos = [0] * cap
        host_step = [0] * cap

        def refill() -> None:
            free = [i for i in range(cap) if slots[i] is None]
            new_slots, embeds = [], []
            while free and queue:
                i = free.pop(0)
                j, req = queue.popleft()
                slots[i] = _Slot(req)
                index_of[i] = j
                new_slots.append(i)
                embeds.append(req.embeds)
                host_pos[i] = req.embeds.shape[0]
                host_step[i] = 0
            if new_slots:
                self.prefill(new_slots, embeds)
                rows = torch.tensor(new_slots, device=self.device)
                self.min_new[rows] = torch.tensor(
                    [slots[i].req.min_new for i in new_slots],
                    device=self.device,  # type: ignore[union-attr]
                )

        refill()
        while any(s is not None for s in slots):
            active = [i for i, s in enumerate(slots) if s is not None]
            b = _bucket(max(active) + 1, BATCH_BUCKETS)
            remaining = min(slots[i].req.max_new - host_step[i] for i in active)  # type: ignore[union-attr]
            n = max(1, min(self.sync_every, remaining))
            L = _bucket(max(host_pos[i] for i in active) + n + 1, LEN_BUCKETS)
            L = min(L, self.max_len)
            self._run_steps(b, L, n)
            for i in range(b):
                host_pos[i] += n
                host_step[i] += n
            fin = self.finished[:b].tolist()  # the one host sync per window
            ends = self.end_step[:b].tolist()
            for i in active:
                slot = slots[i]
                assert slot is not None
                done = fin[i] or host_step[i] >= slot.req.max_new
                upto = ends[i] if fin[i] else min(host_step[i], slot.req.max_new)
                if on_frames is not None and upto > slot.emitted:
                    on_frames(
                        slot.req.tag,
                        self.out_codes[i, slot.emitted : upto],
                        self.out_hidden[i, slot.emitted : upto].float(),
                    )
                    slot.emitted = upto
                if done:
                    results[index_of[i]] = CodeResult(
                        tag=slot.req.tag,
                        codes=self.out_codes[i, :upto].clone(),
                        hidden=self.out_hidden[i, :upto].float(),
                        finished=bool(fin[i]),
                    )
                    slots[i] = None
                    host_pos[i] = 0
                    self.pos[i] = 0
            if queue:
                refill()
        return [r for r in results if r is not None]
