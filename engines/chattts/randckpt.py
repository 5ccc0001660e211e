"""Random-weight ChatTTS checkpoints in the official layout, full size or small.

The real weights may not be redistributed, but speed and memory figures need models of the real
size. This writes a model directory with the genuine tokenizer and a GPT config (copied from a
folder that has them), and random safetensors with exactly the official tensor names, shapes
and dtype (float32) -- names as in the official files (and the tiny test checkpoint), full sizes
from the reference's config defaults (GPT from ``config.json``; Decoder idim 384, hidden 512,
12 layers, bottleneck 128; DVAE idim 512, hidden 256, 12 layers, encoder odim 1024, grouped FSQ
dim 1024 in 2 groups of 2 residual quantizers with 4 levels; Vocos dim 512, intermediate 1536,
8 layers, n_fft 1024, 100 mel bins). It then writes the directory's own ``sha256.json``, so the
engine verifies it like any model. The audio is noise; the compute is the real one.

Values are scaled like an initialised network (small normal weights, unit norms, Hann windows),
so activations stay finite through every layer.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.assets import write_manifest

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


@dataclass(frozen=True)
class Sizes:
    """Every size of a ChatTTS checkpoint (defaults: the official model)."""

    hidden: int = 768
    intermediate: int = 3072
    layers: int = 20
    heads: int = 12
    vocab_size: int = 32000  # Llama embed_tokens rows (present in the file, unused)
    num_text_tokens: int = 21178
    num_audio_tokens: int = 626
    num_vq: int = 4
    dec_bn: int = 128
    dec_hidden: int = 512
    dec_layers: int = 12
    dvae_idim: int = 512
    dvae_bn: int = 128
    dvae_hidden: int = 256
    dvae_layers: int = 12
    enc_odim: int = 1024
    vq_groups: int = 2
    vq_levels: int = 4
    vocos_dim: int = 512
    vocos_intermediate: int = 1536
    vocos_layers: int = 8
    n_mels: int = 100
    n_fft: int = 1024

    @property
    def dec_idim(self) -> int:
        """The Decoder reads each GPT hidden state as two mel-rate frames of half its size."""
        return self.hidden // 2

    @classmethod
    def small(cls, **kw: int) -> Sizes:
        """Tiny sizes for tests (the same as ``shared/chattts/tiny``), overridable."""
        base = cls(
            hidden=32,
            intermediate=64,
            layers=2,
            heads=4,
            vocab_size=16,
            dec_bn=8,
            dec_hidden=32,
            dec_layers=2,
            dvae_idim=32,
            dvae_bn=8,
            dvae_hidden=32,
            dvae_layers=2,
            enc_odim=64,
            vocos_dim=32,
            vocos_intermediate=64,
            vocos_layers=2,
        )
        return replace(base, **kw)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def normal(self, shape: tuple[int, ...], std: float) -> np.ndarray:
        a = self.rng.standard_normal(shape, dtype=np.float32)
        a *= np.float32(std)
        return a

    def uniform(self, shape: tuple[int, ...], lo: float, hi: float) -> np.ndarray:
        return self.rng.uniform(lo, hi, shape).astype(np.float32)


def _ones(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


def _zeros(*shape: int) -> np.ndarray:
    return np.zeros(shape, np.float32)


def _hann(n: int) -> np.ndarray:
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


def gpt_tensors(s: Sizes, g: _Gen) -> dict[str, np.ndarray]:
    h, i = s.hidden, s.intermediate
    t: dict[str, np.ndarray] = {"embed_tokens.weight": g.normal((s.vocab_size, h), 0.02)}
    for n in range(s.layers):
        p = f"layers.{n}."
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[p + f"self_attn.{name}.weight"] = g.normal((h, h), 0.02)
        t[p + "mlp.gate_proj.weight"] = g.normal((i, h), 0.02)
        t[p + "mlp.up_proj.weight"] = g.normal((i, h), 0.02)
        t[p + "mlp.down_proj.weight"] = g.normal((h, i), 0.02)
        t[p + "input_layernorm.weight"] = _ones(h)
        t[p + "post_attention_layernorm.weight"] = _ones(h)
    t["norm.weight"] = _ones(h)
    return t


def embed_tensors(s: Sizes, g: _Gen) -> dict[str, np.ndarray]:
    h = s.hidden
    pre = "parametrizations.weight.original"
    t = {"emb_text.weight": g.normal((s.num_text_tokens, h), 0.02)}
    for q in range(s.num_vq):
        t[f"emb_code.{q}.weight"] = g.normal((s.num_audio_tokens, h), 0.02)
        t[f"head_code.{q}.{pre}0"] = g.uniform((s.num_audio_tokens, 1), 0.5, 1.5)
        t[f"head_code.{q}.{pre}1"] = g.normal((s.num_audio_tokens, h), 0.02)
    t[f"head_text.{pre}0"] = g.uniform((s.num_text_tokens, 1), 0.5, 1.5)
    t[f"head_text.{pre}1"] = g.normal((s.num_text_tokens, h), 0.02)
    return t


def _convnext(prefix: str, dim: int, inter: int, g: _Gen, scale_name: str) -> dict:
    return {
        f"{prefix}.dwconv.weight": g.normal((dim, 1, 7), 0.1),
        f"{prefix}.dwconv.bias": _zeros(dim),
        f"{prefix}.norm.weight": _ones(dim),
        f"{prefix}.norm.bias": _zeros(dim),
        f"{prefix}.pwconv1.weight": g.normal((inter, dim), 0.02),
        f"{prefix}.pwconv1.bias": _zeros(inter),
        f"{prefix}.pwconv2.weight": g.normal((dim, inter), 0.02),
        f"{prefix}.pwconv2.bias": _zeros(dim),
        f"{prefix}.{scale_name}": np.full(dim, 0.1, np.float32),
    }


def _dvae_stack(
    prefix: str, idim: int, odim: int, hidden: int, bn: int, layers: int, g: _Gen
) -> dict[str, np.ndarray]:
    t = {
        f"{prefix}.conv_in.0.weight": g.normal((bn, idim, 3), 0.05),
        f"{prefix}.conv_in.0.bias": _zeros(bn),
        f"{prefix}.conv_in.2.weight": g.normal((hidden, bn, 3), 0.05),
        f"{prefix}.conv_in.2.bias": _zeros(hidden),
        f"{prefix}.conv_out.weight": g.normal((odim, hidden, 1), 0.05),
    }
    for n in range(layers):
        t.update(_convnext(f"{prefix}.decoder_block.{n}", hidden, 4 * hidden, g, "weight"))
    return t


def _mel_fb(s: Sizes, g: _Gen) -> np.ndarray:
    return g.uniform((s.n_fft // 2 + 1, s.n_mels), 0.0, 0.01)


def decoder_tensors(s: Sizes, g: _Gen) -> dict[str, np.ndarray]:
    t = {"coef": g.uniform((1, s.n_mels, 1), 0.5, 1.5)}
    t.update(
        _dvae_stack("decoder", s.dec_idim, s.dec_idim, s.dec_hidden, s.dec_bn, s.dec_layers, g)
    )
    t["out_conv.weight"] = g.normal((s.n_mels, s.dec_idim, 3), 0.05)
    return t


def dvae_tensors(s: Sizes, g: _Gen) -> dict[str, np.ndarray]:
    d = s.dvae_idim
    gdim = s.enc_odim // s.vq_groups
    t = {"coef": g.uniform((1, s.n_mels, 1), 0.5, 1.5)}
    t.update(_dvae_stack("decoder", d, d, s.dvae_hidden, s.dvae_bn, s.dvae_layers, g))
    t.update(_dvae_stack("encoder", d, s.enc_odim, s.dvae_hidden, s.dvae_bn, s.dvae_layers, g))
    t["downsample_conv.0.weight"] = g.normal((d, s.n_mels, 3), 0.05)
    t["downsample_conv.0.bias"] = _zeros(d)
    t["downsample_conv.2.weight"] = g.normal((d, d, 4), 0.05)
    t["downsample_conv.2.bias"] = _zeros(d)
    t["out_conv.weight"] = g.normal((s.n_mels, d, 3), 0.05)
    t["preprocessor_mel.mel_spec.mel_scale.fb"] = _mel_fb(s, g)
    t["preprocessor_mel.mel_spec.spectrogram.window"] = _hann(s.n_fft)
    for grp in range(s.vq_groups):
        p = f"vq_layer.quantizer.rvqs.{grp}."
        t[p + "project_in.weight"] = g.normal((s.vq_levels, gdim), 0.05)
        t[p + "project_in.bias"] = _zeros(s.vq_levels)
        t[p + "project_out.weight"] = g.normal((gdim, s.vq_levels), 0.05)
        t[p + "project_out.bias"] = _zeros(gdim)
    return t


def vocos_tensors(s: Sizes, g: _Gen) -> dict[str, np.ndarray]:
    d = s.vocos_dim
    t = {
        "backbone.embed.weight": g.normal((d, s.n_mels, 7), 0.05),
        "backbone.embed.bias": _zeros(d),
        "backbone.norm.weight": _ones(d),
        "backbone.norm.bias": _zeros(d),
        "backbone.final_layer_norm.weight": _ones(d),
        "backbone.final_layer_norm.bias": _zeros(d),
        "feature_extractor.mel_spec.mel_scale.fb": _mel_fb(s, g),
        "feature_extractor.mel_spec.spectrogram.window": _hann(s.n_fft),
        "head.istft.window": _hann(s.n_fft),
        "head.out.weight": g.normal((s.n_fft + 2, d), 0.02),
        "head.out.bias": _zeros(s.n_fft + 2),
    }
    for n in range(s.vocos_layers):
        t.update(_convnext(f"backbone.convnext.{n}", d, s.vocos_intermediate, g, "gamma"))
    return t


FILES: dict[str, Callable[[Sizes, _Gen], dict[str, np.ndarray]]] = {
    "asset/gpt/model.safetensors": gpt_tensors,
    "asset/Embed.safetensors": embed_tensors,
    "asset/Decoder.safetensors": decoder_tensors,
    "asset/DVAE.safetensors": dvae_tensors,
    "asset/Vocos.safetensors": vocos_tensors,
}


def gpt_config(base: dict, s: Sizes) -> dict:
    """The genuine config with the sizes of ``s`` (unchanged for the full size)."""
    cfg = dict(base)
    cfg.update(
        hidden_size=s.hidden,
        intermediate_size=s.intermediate,
        num_hidden_layers=s.layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.heads,
        vocab_size=s.vocab_size,
        num_text_tokens=s.num_text_tokens,
        num_audio_tokens=s.num_audio_tokens,
        num_vq=s.num_vq,
    )
    return cfg


def make_checkpoint(
    out_dir: str | os.PathLike[str],
    source_dir: str | os.PathLike[str],
    *,
    sizes: Sizes | None = None,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Write a random checkpoint into ``out_dir`` (created; existing asset files replaced).

    ``source_dir``: a model directory (or the folder holding ``asset/``) with the genuine
    ``asset/tokenizer/*`` and ``asset/gpt/config.json``; only those are read from it.
    """
    from safetensors.numpy import save_file

    s = sizes or Sizes()
    if s.hidden % 2 or s.hidden % s.heads:
        raise ValueError("hidden must be even and divisible by heads")
    src = Path(source_dir)
    out = Path(out_dir)
    (out / "asset" / "gpt").mkdir(parents=True, exist_ok=True)
    (out / "asset" / "tokenizer").mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(src / "asset" / "tokenizer" / name, out / "asset" / "tokenizer" / name)
    base = json.loads((src / "asset" / "gpt" / "config.json").read_text(encoding="utf-8"))
    cfg = gpt_config(base, s)
    cfg_path = out / "asset" / "gpt" / "config.json"
    if cfg == base:  # keep the genuine bytes (and so its official hash) at full size
        shutil.copyfile(src / "asset" / "gpt" / "config.json", cfg_path)
    else:
        cfg_path.write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    for k, (rel, make) in enumerate(FILES.items()):
        if progress:
            progress(f"writing {rel}")
        tensors = make(s, _Gen(seed * 1000 + k))
        tmp = out / (rel + ".part")
        save_file(tensors, str(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, out / rel)
        del tensors
    (out / "randckpt.json").write_text(
        json.dumps({"seed": seed, "sizes": asdict(s)}, indent=2) + "\n", encoding="utf-8"
    )
    if progress:
        progress("hashing")
    write_manifest(out)
    return out
