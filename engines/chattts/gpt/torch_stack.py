"""The ChatTTS Llama stack in plain torch (optional extra), with a static preallocated KV cache.

torch is imported lazily (inside functions) so that importing this module never needs it.

Layout matches the ONNX graph: one cache tensor ``[L, 2, B, heads, S, head_dim]`` and a key
mask ``[B, S]`` (bool, False = prompt padding), allocated once per (batch, max length).

Two entry points on tensors, meant to be the base of a CUDA-graph decode path:

* ``prefill(model, inputs_embeds, positions, cache)`` writes slots ``[0, T)``;
* ``decode_step(model, inputs_embeds, positions, cache, cache_position)`` writes the one slot
  given by the *tensor* ``cache_position`` (``[1]`` int64) and attends over the whole static
  cache under the mask, so every shape and address is fixed from step to step (capturable);
  pass ``attend_len`` (a python int) instead to attend only over the filled prefix, which is
  faster on CPU where nothing is captured.

``TorchStack`` adapts them to the numpy ``StackBackend`` protocol used by the decode loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

    from mixvox.engines.chattts.gpt.weights import GPTConfig, GPTWeights

__all__ = ["KVCache", "TorchGPTModel", "TorchStack", "decode_step", "forward", "prefill"]

_LAYER_KEYS = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
    "input_layernorm",
    "post_attention_layernorm",
)


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "the torch GPT backend needs torch (pip install 'mixvox[torch]')"
        ) from exc
    return torch


_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


class TorchGPTModel:
    """The stack's weights as tensors on one device/dtype, plus the rotary inverse
    frequencies. Linear weights keep the torch ``[out, in]`` layout (``F.linear``)."""

    def __init__(
        self, weights: GPTWeights, *, device: str = "cpu", precision: str = "fp32"
    ) -> None:
        torch = _torch()
        if precision not in _DTYPES:
            raise ValueError(f"torch GPT precision must be one of {sorted(_DTYPES)}")
        if precision != "fp32" and not device.startswith("cuda"):
            raise ValueError(f"precision {precision} needs a cuda device")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError("device cuda requested but torch sees no CUDA device")
        self.config: GPTConfig = weights.config
        self.device = torch.device(device)
        self.dtype = getattr(torch, _DTYPES[precision])
        cfg = self.config

        def t(a: np.ndarray) -> Any:  # a torch.Tensor (torch is imported lazily here)
            return torch.from_numpy(np.ascontiguousarray(a)).to(self.device, self.dtype)

        self.layers = [{k: t(lw[k]) for k in _LAYER_KEYS} for lw in weights.layers]
        self.norm = t(weights.norm)
        D = cfg.head_dim
        self.inv_freq = 1.0 / (
            cfg.rope_theta ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D)
        ).to(self.device)
        self.eps = cfg.rms_norm_eps


@dataclass
class KVCache:
    """Static cache: ``kv`` ``[L, 2, B, heads, S, D]`` and ``key_mask`` ``[B, S]`` (bool)."""

    kv: torch.Tensor
    key_mask: torch.Tensor

    @classmethod
    def allocate(cls, model: TorchGPTModel, batch: int, max_len: int) -> KVCache:
        torch = _torch()
        cfg = model.config
        kv = torch.zeros(
            (cfg.num_layers, 2, batch, cfg.num_heads, max_len, cfg.head_dim),
            dtype=model.dtype,
            device=model.device,
        )
        mask = torch.ones((batch, max_len), dtype=torch.bool, device=model.device)
        return cls(kv, mask)

    @property
    def batch(self) -> int:
        return int(self.kv.shape[2])

    @property
    def max_len(self) -> int:
        return int(self.kv.shape[4])


def _rms(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    torch = _torch()
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return w * xf.to(x.dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    torch = _torch()
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward(
    model: TorchGPTModel,
    inputs_embeds: torch.Tensor,
    positions: torch.Tensor,
    cache: KVCache,
    cache_position: torch.Tensor,
    attend_len: int | None = None,
) -> torch.Tensor:
    """Run ``T`` new positions (cache slots ``cache_position`` ``[T]``) through the stack.

    Keys/values are written into ``cache`` in place; attention covers slots
    ``[0, attend_len)`` (or the whole cache when ``None``) under ``key_mask`` and causality
    (slot ``j`` is visible to the query in slot ``s`` iff ``j <= s``). Returns the final-norm
    hidden states ``[B, T, H]`` in the model dtype.
    """
    torch = _torch()
    F = torch.nn.functional
    cfg = model.config
    B, T, _ = inputs_embeds.shape
    nh, D = cfg.num_heads, cfg.head_dim
    S = cache.max_len if attend_len is None else attend_len
    kidx = torch.arange(S, device=model.device)
    valid = (kidx[None, :] <= cache_position[:, None])[None] & cache.key_mask[:, None, :S]
    bias = torch.zeros(valid.shape, dtype=model.dtype, device=model.device)
    bias.masked_fill_(~valid, torch.finfo(model.dtype).min)
    bias = bias[:, None]  # [B, 1, T, S]
    freqs = positions.to(torch.float32)[..., None] * model.inv_freq  # [B, T, D/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos().to(model.dtype)[:, None]
    sin = emb.sin().to(model.dtype)[:, None]
    h = inputs_embeds.to(model.dtype)
    for i, lw in enumerate(model.layers):
        n = _rms(h, lw["input_layernorm"], model.eps)
        q = F.linear(n, lw["q_proj"]).view(B, T, nh, D).transpose(1, 2)
        k = F.linear(n, lw["k_proj"]).view(B, T, nh, D).transpose(1, 2)
        v = F.linear(n, lw["v_proj"]).view(B, T, nh, D).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        cache.kv[i, 0].index_copy_(2, cache_position, k)
        cache.kv[i, 1].index_copy_(2, cache_position, v)
        keys = cache.kv[i, 0, :, :, :S]
        vals = cache.kv[i, 1, :, :, :S]
        att = F.scaled_dot_product_attention(q, keys, vals, attn_mask=bias)
        att = att.transpose(1, 2).reshape(B, T, nh * D)
        h = h + F.linear(att, lw["o_proj"])
        n = _rms(h, lw["post_attention_layernorm"], model.eps)
        h = h + F.linear(
            F.silu(F.linear(n, lw["gate_proj"])) * F.linear(n, lw["up_proj"]), lw["down_proj"]
        )
    return _rms(h, model.norm, model.eps)


def prefill(
    model: TorchGPTModel, inputs_embeds: torch.Tensor, positions: torch.Tensor, cache: KVCache
) -> torch.Tensor:
    """The prompt pass: slots ``[0, T)``, attending only over the prompt."""
    torch = _torch()
    T = inputs_embeds.shape[1]
    cp = torch.arange(T, device=model.device)
    return forward(model, inputs_embeds, positions, cache, cp, attend_len=T)


def decode_step(
    model: TorchGPTModel,
    inputs_embeds: torch.Tensor,
    positions: torch.Tensor,
    cache: KVCache,
    cache_position: torch.Tensor,
    attend_len: int | None = None,
) -> torch.Tensor:
    """One decode step (``inputs_embeds`` ``[B, 1, H]``) at slot ``cache_position`` ``[1]``."""
    return forward(model, inputs_embeds, positions, cache, cache_position, attend_len)


class TorchStack:
    """``StackBackend`` over torch: numpy in/out, tensors and the cache stay on the device."""

    def __init__(
        self,
        weights: GPTWeights,
        *,
        precision: str = "fp32",
        device: str = "cpu",
        threads: int | None = None,
        warmup: bool = True,
    ) -> None:
        torch = _torch()
        if threads:
            torch.set_num_threads(threads)
        self.model = TorchGPTModel(weights, device=device, precision=precision)
        self.cache: KVCache | None = None
        self._limit = 0
        if warmup:  # first-call costs (allocator, kernels) are paid at load, not on the user
            H = weights.config.hidden_size
            self.begin(np.ones((1, 4), np.int64), 8)
            self.forward(np.zeros((1, 4, H), np.float32), np.arange(4)[None], 0)
            self.forward(np.zeros((1, 1, H), np.float32), np.array([[4]]), 4)

    def begin(self, attention_mask: np.ndarray, max_len: int) -> None:
        torch = _torch()
        B, T = attention_mask.shape
        if max_len < T:
            raise ValueError(f"max_len {max_len} < prompt length {T}")
        c = self.cache
        if c is None or c.batch != B or c.max_len < max_len:
            S = max_len if c is None or c.batch != B else max(max_len, c.max_len)
            self.cache = c = KVCache.allocate(self.model, B, S)
        c.key_mask.fill_(True)
        c.key_mask[:, :T] = torch.from_numpy(np.asarray(attention_mask) != 0).to(c.key_mask)
        self._limit = max_len

    def forward(self, inputs_embeds: np.ndarray, positions: np.ndarray, start: int) -> np.ndarray:
        torch = _torch()
        c = self.cache
        if c is None:
            raise RuntimeError("begin() must be called first")
        B, T, _ = inputs_embeds.shape
        if B != c.batch or start + T > self._limit:
            raise ValueError("batch differs from begin() or the cache would overflow")
        dev = self.model.device
        with torch.inference_mode():
            x = torch.from_numpy(np.ascontiguousarray(inputs_embeds, np.float32)).to(dev)
            p = torch.from_numpy(np.ascontiguousarray(positions, np.int64)).to(dev)
            if start == 0:
                out = prefill(self.model, x, p, c)
            else:
                cp = torch.arange(start, start + T, device=dev)
                out = forward(self.model, x, p, c, cp, attend_len=start + T)
            return out.float().cpu().numpy()
