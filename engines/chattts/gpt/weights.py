"""The ChatTTS GPT's sizes and weights: ``asset/gpt/config.json``, ``gpt/model.safetensors``
and ``Embed.safetensors``, read once into float32 numpy arrays.

The GPT is a Llama decoder stack (``asset/gpt/model.safetensors``; its ``embed_tokens`` is
unused) between ChatTTS's own embeddings and heads (``asset/Embed.safetensors``):

* ``emb_text`` ``[num_text_tokens, H]`` embeds prompt tokens (and refine-stage tokens);
* ``emb_code.{q}`` ``[num_audio_tokens, H]``: a code-stage step's input is the *sum* of the
  ``num_vq`` code embeddings of the previous frame;
* ``head_text`` / ``head_code.{q}`` are weight-normed linears (``original0`` = g ``[out, 1]``,
  ``original1`` = v ``[out, H]``, norm over dim 1 of v per output row). They are folded once
  at load: ``W = g * v / ||v||_row``.

All sizes come from ``asset/gpt/config.json`` and the tensor shapes. Every GPT runner (the
host-loop :class:`~mixvox.engines.chattts.gpt.model.GPT` over any stack, the CUDA-graph
runner) starts from these classes.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["GPTConfig", "GPTWeights", "weights_sha256"]


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
        path = Path(asset_dir) / "gpt" / "config.json"
        try:
            cfg = json.loads(path.read_text(encoding="utf-8"))
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

        ``gpt_sha256``: the already verified SHA-256 of ``gpt/model.safetensors`` (the graph
        cache key); computed from the file when not given.
        """
        from safetensors.numpy import load_file

        asset_dir = Path(asset_dir)
        cfg = config or GPTConfig.from_asset_dir(asset_dir)
        gpt_path = asset_dir / "gpt" / "model.safetensors"
        emb_path = asset_dir / "Embed.safetensors"
        for p in (gpt_path, emb_path):
            if not p.is_file():
                raise FileNotFoundError(f"ChatTTS weights missing: {p}")
        sd = load_file(str(gpt_path))
        es = load_file(str(emb_path))
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
            gpt_sha256 or weights_sha256(gpt_path),
        )
