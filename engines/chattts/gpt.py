"""The ChatTTS GPT: config, weights, embeddings (with speaker injection), heads, public runner.

The GPT is a Llama decoder stack (``asset/gpt/model.safetensors``; its ``embed_tokens`` is
unused) between ChatTTS's own embeddings and heads (``asset/Embed.safetensors``):

* ``emb_text`` ``[num_text_tokens, H]`` embeds prompt tokens (and refine-stage tokens);
* ``emb_code.{q}`` ``[num_audio_tokens, H]``: a code-stage step's input is the *sum* of the
  ``num_vq`` code embeddings of the previous frame;
* ``head_text`` / ``head_code.{q}`` are weight-normed linears (``original0`` = g ``[out, 1]``,
  ``original1`` = v ``[out, H]``, norm over dim 1 of v per output row). They are folded once
  at load: ``W = g * v / ||v||_row``.

All sizes come from ``asset/gpt/config.json`` and the tensor shapes.

Public API (what the engine codes against)::

    cfg = GPTConfig.from_asset_dir(asset_dir)
    gpt = load_gpt(asset_dir, backend="onnx" | "torch", precision="fp32" | "int8" | "fp16"
                   | "bf16", device="cpu" | "cuda", cache_dir=None, threads=None,
                   gpt_sha256=None)
    emb = gpt.embed(ids [B,T], spk_emb=None | [H] | [B,H], spk_emb_token_id=None)  # [B,T,H]
    hid = gpt.hidden(emb, attention_mask [B,T])                                     # [B,T,H]
    gpt.code_logits(hid [...,H]) -> [..., num_vq, num_audio_tokens]
    gpt.text_logits(hid [...,H]) -> [..., num_text_tokens]
    results = gpt.generate(prompts: list[1-D int array], stage="code" | "refine",
                           spk_emb=None, spk_emb_token_id=None, params=SamplingParams(...),
                           rng=np.random.default_rng(seed), max_new_tokens=None | int | list,
                           on_frames=None, stream_every=24, min_new_tokens=None)
    results[i].ids      # code stage: [T, num_vq] int64 codes (end frame excluded);
                        # refine: [T] int64 (end token excluded)
    results[i].hidden   # [T, H] float32: results[i].hidden[t] produced ids[t] (the Decoder
                        # consumes exactly these, as the reference does)
    results[i].finished # True when the item emitted its end token (False: hit its cap)

``on_frames(item_index, new_ids, new_hidden, done)`` is called during ``generate`` whenever an
item has ``stream_every`` new frames, and once more when it ends (``done=True``, possibly with
zero new frames), so the engine can stream without re-decoding the prefix.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from mixvox.engines.chattts.generate import (
    FramesCallback,
    GenerationResult,
    StackBackend,
    prompt_positions,
    run_generation,
)
from mixvox.engines.chattts.sampler import SamplingParams

__all__ = [
    "GPT",
    "FramesCallback",
    "GPTConfig",
    "GPTWeights",
    "GenerationResult",
    "SamplingParams",
    "load_gpt",
    "normalize_speaker",
    "prompt_positions",
    "weights_sha256",
]

Stage = Literal["code", "refine"]


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of the GPT, read from ``asset/gpt/config.json`` (a Llama config + ChatTTS keys)."""

    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    rms_norm_eps: float
    rope_theta: float
    max_position_embeddings: int
    num_text_tokens: int
    num_audio_tokens: int
    num_vq: int

    @classmethod
    def from_dict(cls, cfg: dict) -> GPTConfig:
        try:
            hidden = int(cfg["hidden_size"])
            heads = int(cfg["num_attention_heads"])
            kv = int(cfg.get("num_key_value_heads") or heads)
            if cfg.get("rope_scaling"):
                raise ValueError("rope_scaling is not supported")
            if cfg.get("hidden_act", "silu") != "silu":
                raise ValueError(f"hidden_act {cfg.get('hidden_act')!r} is not supported")
            if cfg.get("attention_bias") or cfg.get("mlp_bias"):
                raise ValueError("attention/mlp biases are not supported")
            if kv != heads:
                raise ValueError(
                    "grouped-query attention (num_key_value_heads != "
                    "num_attention_heads) is not supported"
                )
            head_dim = int(cfg.get("head_dim") or hidden // heads)
            if head_dim * heads != hidden:
                raise ValueError(f"hidden_size {hidden} != heads {heads} x head_dim {head_dim}")
            return cls(
                hidden_size=hidden,
                num_layers=int(cfg["num_hidden_layers"]),
                num_heads=heads,
                num_kv_heads=kv,
                head_dim=head_dim,
                intermediate_size=int(cfg["intermediate_size"]),
                rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
                rope_theta=float(cfg.get("rope_theta", 10000.0)),
                max_position_embeddings=int(cfg.get("max_position_embeddings", 4096)),
                num_text_tokens=int(cfg["num_text_tokens"]),
                num_audio_tokens=int(cfg["num_audio_tokens"]),
                num_vq=int(cfg.get("num_vq", 4)),
            )
        except KeyError as exc:
            raise ValueError(f"GPT config lacks {exc.args[0]!r}") from None

    @classmethod
    def from_asset_dir(cls, asset_dir: str | Path) -> GPTConfig:
        from mixvox.engines.chattts.assets import read_asset_text

        path = Path(asset_dir) / "gpt" / "config.json"
        try:
            cfg = json.loads(read_asset_text(path))
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read GPT config {path}: {exc}") from exc
        try:
            return cls.from_dict(cfg)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @property
    def eos_code(self) -> int:
        """The code-stage end code (``num_audio_tokens - 1``, 625)."""
        return self.num_audio_tokens - 1


_SHA_CACHE: dict[tuple[str, int, int], str] = {}
_SHA_LOCK = threading.Lock()


def weights_sha256(path: str | Path) -> str:
    """SHA-256 of a weights file, computed once per (path, size, mtime) in this process.

    Used as the graph cache key, so a graph built from other weights is never reused.
    """
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _SHA_LOCK:
        if key in _SHA_CACHE:
            return _SHA_CACHE[key]
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _SHA_LOCK:
        _SHA_CACHE[key] = digest
    return digest


def _fold_weight_norm(g: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``torch.nn.utils.parametrizations.weight_norm`` with dim 0: per output row."""
    norm = np.sqrt(np.sum(v.astype(np.float64) ** 2, axis=1, keepdims=True))
    return (g.astype(np.float64).reshape(-1, 1) * v / norm).astype(np.float32)


@dataclass
class GPTWeights:
    """All GPT tensors as float32 numpy arrays, heads folded.

    ``layers[i]`` maps the Llama names (``q_proj``, ``k_proj``, ``v_proj``, ``o_proj``,
    ``gate_proj``, ``up_proj``, ``down_proj`` as ``[out, in]``; ``input_layernorm``,
    ``post_attention_layernorm``) to arrays; ``norm`` is the final RMSNorm.
    """

    config: GPTConfig
    layers: list[dict[str, np.ndarray]]
    norm: np.ndarray
    emb_text: np.ndarray  # [V_text, H]
    emb_code: np.ndarray  # [Q, V_audio, H]
    head_text: np.ndarray  # [V_text, H]
    head_code: np.ndarray  # [Q, V_audio, H]
    gpt_sha256: str

    @classmethod
    def load(
        cls, asset_dir: str | Path, config: GPTConfig | None = None, gpt_sha256: str | None = None
    ) -> GPTWeights:
        """Read ``gpt/model.safetensors`` and ``Embed.safetensors`` (safetensors only).

        ``gpt_sha256``: the already verified SHA-256 of ``gpt/model.safetensors``; the graph
        cache key is the hash of the bytes actually read, which is this one only when a
        remembered verdict vouches for the file as it is read (else the bytes are hashed).
        """
        from mixvox.engines.chattts.assets import is_in_memory, load_safetensors

        asset_dir = Path(asset_dir)
        cfg = config or GPTConfig.from_asset_dir(asset_dir)
        gpt_path = asset_dir / "gpt" / "model.safetensors"
        emb_path = asset_dir / "Embed.safetensors"
        for p in (gpt_path, emb_path):
            if not is_in_memory(p) and not p.is_file():
                raise FileNotFoundError(f"ChatTTS weights missing: {p}")
        sd, gpt_sha256 = load_safetensors(gpt_path, gpt_sha256)
        es, _ = load_safetensors(emb_path, need_hash=False)
        H, Q = cfg.hidden_size, cfg.num_vq

        def get(d: dict, name: str, shape: tuple[int, ...], src: Path) -> np.ndarray:
            if name not in d:
                raise ValueError(f"{src.name}: tensor {name!r} missing")
            a = d[name]
            if tuple(a.shape) != shape:
                raise ValueError(
                    f"{src.name}: {name} has shape {tuple(a.shape)}, config expects {shape}"
                )
            return np.ascontiguousarray(a, dtype=np.float32)

        inter, kvd = cfg.intermediate_size, cfg.num_kv_heads * cfg.head_dim
        shapes = {
            "self_attn.q_proj.weight": (H, H),
            "self_attn.k_proj.weight": (kvd, H),
            "self_attn.v_proj.weight": (kvd, H),
            "self_attn.o_proj.weight": (H, H),
            "mlp.gate_proj.weight": (inter, H),
            "mlp.up_proj.weight": (inter, H),
            "mlp.down_proj.weight": (H, inter),
            "input_layernorm.weight": (H,),
            "post_attention_layernorm.weight": (H,),
        }
        layers = []
        for i in range(cfg.num_layers):
            layers.append(
                {
                    k.split(".")[-2]: get(sd, f"layers.{i}.{k}", s, gpt_path)
                    for k, s in shapes.items()
                }
            )
        norm = get(sd, "norm.weight", (H,), gpt_path)
        VT, VA = cfg.num_text_tokens, cfg.num_audio_tokens
        emb_text = get(es, "emb_text.weight", (VT, H), emb_path)
        emb_code = np.stack([get(es, f"emb_code.{q}.weight", (VA, H), emb_path) for q in range(Q)])
        pre = "parametrizations.weight.original"
        head_text = _fold_weight_norm(
            get(es, f"head_text.{pre}0", (VT, 1), emb_path),
            get(es, f"head_text.{pre}1", (VT, H), emb_path),
        )
        head_code = np.stack(
            [
                _fold_weight_norm(
                    get(es, f"head_code.{q}.{pre}0", (VA, 1), emb_path),
                    get(es, f"head_code.{q}.{pre}1", (VA, H), emb_path),
                )
                for q in range(Q)
            ]
        )
        return cls(
            cfg,
            layers,
            norm,
            emb_text,
            emb_code,
            head_text,
            head_code,
            gpt_sha256,
        )


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
        rng: np.random.Generator | None = None,
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
                logits=self.code_logits,
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


def load_gpt(
    asset_dir: str | Path,
    *,
    backend: str = "onnx",
    precision: str = "fp32",
    device: str = "cpu",
    cache_dir: str | Path | None = None,
    threads: int | None = None,
    gpt_sha256: str | None = None,
) -> GPT:
    """Load the GPT from an asset folder (hashes already verified by the caller).

    ``backend="onnx"``: ONNX Runtime on CPU, ``precision`` ``fp32`` or ``int8`` (8-bit
    weights in blocks of 128, int8 matmul kernels; see :mod:`.gpt_onnx`); graphs are built
    without torch and cached under ``cache_dir`` (default: the user cache) keyed by the
    weights' SHA-256, builder version and options.
    ``backend="torch"``: torch (optional extra) on ``device`` ``cpu`` or ``cuda``,
    ``precision`` ``fp32`` (``fp16``/``bf16`` on cuda). ``threads`` overrides the intra-op
    thread count (default: physical cores). ``gpt_sha256``: the verified SHA-256 of
    ``gpt/model.safetensors`` if the caller has it (saves hashing the file again).
    """
    weights = GPTWeights.load(asset_dir, gpt_sha256=gpt_sha256)
    if backend == "onnx":
        from mixvox.engines.chattts.gpt_onnx import OnnxStack

        stack: StackBackend = OnnxStack(
            weights, precision=precision, device=device, cache_dir=cache_dir, threads=threads
        )
    elif backend == "torch":
        from mixvox.engines.chattts.gpt_torch import TorchStack

        stack = TorchStack(weights, precision=precision, device=device, threads=threads)
    else:
        raise ValueError(f"unknown GPT backend {backend!r} (onnx or torch)")
    return GPT(weights, stack, backend)
