"""Weights of the ChatTTS Decoder (GPT hidden states -> mel) and DVAE (codes -> mel).

This module parses the checkpoints (shared by the onnx and torch backends), holds the FSQ
tables and the receptive-field arithmetic, and checks model inputs. What the engine uses
(:mod:`mixvox.engines.chattts.audio`)::

    from mixvox.engines.chattts.audio import load_audio_models, StreamingVocoder

    models = load_audio_models(asset_dir, runtime)   # or backend="onnx", device="cpu"
    mel = models.decode_hidden(hidden)        # [T, H] -> [n_mels, 2T]   ([B,T,H] -> [B,n_mels,2T])
    mel = models.decode_codes(codes)          # [T, 4] int -> [n_mels, 2T] ([B,T,4] -> [B,...])
    wav = models.vocode(mel)                  # [n_mels, F] -> float32 [(F - 1) * 256]
    wav = models.hidden_to_wav(hidden)        # decode_hidden + vocode
    wav = models.codes_to_wav(codes)          # decode_codes + vocode
    wavs = models.hidden_to_wav_batch([h1, h2, ...])   # list of float32 waveforms
    wavs = models.codes_to_wav_batch([c1, c2, ...])

    sv = StreamingVocoder(models, source="hidden", first_chunk_frames=8, chunk_frames=16,
                          lookahead_frames=None)   # None = exact (51 code frames, full model)
    for frames in gpt_steps:                  # [n, H] hiddens (or [n, 4] codes) as they come
        piece = sv.feed(frames)               # float32 samples, possibly empty
    piece = sv.finish()                       # the rest; all pieces == whole decode

Facts matched from the reference (ChatTTS 0.2.5 ``model/dvae.py`` + ``core.py``, Vocos 0.1.0):

* Both Decoder and DVAE are a ``DVAEDecoder`` stack: Conv1d(k3) -> GELU -> Conv1d(k3) ->
  ``n_layer`` ConvNeXt blocks (depthwise conv kernel 7, **dilation 2**, LayerNorm eps 1e-6,
  Linear x4 -> GELU(erf) -> Linear, per-channel layer scale ``weight``, residual) ->
  Conv1d(k1, no bias); then ``out_conv`` Conv1d(k3, no bias) to 100 mel bins, times ``coef``.
  The dilation is not visible in the weights; it is the reference default (2).
* The 2x upsampling happens *before* the stack: the input channels [2C] at frame t are split
  in two halves, the first half becomes mel-grid frame 2t and the second half frame 2t+1.
* The DVAE turns codes into features with a grouped residual FSQ (G groups, R residual
  quantizers, levels 5,5,5,5 -> 625 codes; id 625 is the GPT's end token and is rejected
  here): column ``g*R + r`` of a code frame is quantizer r of group g; a code's level digits
  (base 5, least significant first) map to -1..1, quantizer r is scaled by ``5**-r``, the R
  terms are summed and projected by the group's ``project_out``; groups are concatenated.
* Reference batching pads every item to the longest one and decodes the padding too, which
  changes the tail of shorter items. Here a batch decode masks the padding at every conv, so
  each item equals its own single decode (what an unbatched reference call gives).
* The mel goes to Vocos unscaled; Vocos' ISTFT (center=True) yields ``(F - 1) * hop`` samples
  for F mel frames (512 samples per code frame, minus one hop overall).

Sizes (hidden dims, layer counts, kernel sizes, mel bins, n_fft) all come from tensor shapes.
The ONNX graphs are in ``onnx_backend``, the torch modules in ``torch_backend``, Vocos and the
numpy ISTFT in ``vocos``, the :class:`~.models.AudioModels` facade in ``models`` and the
loader in ``loader``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.assets import sha256_file

#: ConvNeXt depthwise-conv dilation of the Decoder/DVAE stacks (reference default, not stored).
STACK_DILATION = 2
#: FSQ levels of each quantizer (reference default ``VQ.levels``; only their count is stored).
FSQ_LEVELS = (5, 5, 5, 5)
#: Residual quantizers per group (reference default ``VQ.R``; G is read from the weights).
FSQ_RESIDUALS = 2
#: LayerNorm epsilon used by every ConvNeXt block and Vocos norm.
LN_EPS = 1e-6

SOURCES = ("hidden", "codes")


class AudioModelError(ValueError):
    """Bad input to an audio model or an unusable checkpoint (clear message, never a crash)."""


# --------------------------------------------------------------------------- weights


@dataclass(frozen=True)
class ConvNeXtWeights:
    """One ConvNeXt block. ``dw_w`` is [C, 1, K]; ``pw1_w`` [I, C]; ``pw2_w`` [C, I]."""

    dw_w: np.ndarray
    dw_b: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    pw1_w: np.ndarray
    pw1_b: np.ndarray
    pw2_w: np.ndarray
    pw2_b: np.ndarray
    scale: np.ndarray | None
    dilation: int

    @property
    def radius(self) -> int:
        """Frames of context on each side this block reads (dilation * (kernel // 2))."""
        return self.dilation * (self.dw_w.shape[-1] // 2)


@dataclass(frozen=True)
class FSQWeights:
    """Grouped residual FSQ dequantisation as per-(group, quantizer) lookup tables.

    ``tables[g][r]`` is [n_codes, dim/G]: ``scale_r * project_out_g(codebook[c])`` without the
    bias; ``biases[g]`` is project_out_g's bias. The sum over r plus the bias is exactly the
    reference ``project_out(sum_r scale_r * codebook[c_r])`` (a linear map), up to float
    rounding order.
    """

    tables: tuple[tuple[np.ndarray, ...], ...]
    biases: tuple[np.ndarray, ...]
    n_codes: int

    @property
    def groups(self) -> int:
        return len(self.tables)

    @property
    def residuals(self) -> int:
        return len(self.tables[0])

    @property
    def n_columns(self) -> int:
        """Codes per frame (G * R; 4 for ChatTTS, matching the GPT's num_vq)."""
        return self.groups * self.residuals


@dataclass(frozen=True)
class MelDecoderWeights:
    """Decoder or DVAE (decode path): input features [2C] per code frame -> [n_mels, 2T] mel."""

    kind: str  # "hidden" (Decoder) or "codes" (DVAE)
    conv_in0_w: np.ndarray
    conv_in0_b: np.ndarray
    conv_in2_w: np.ndarray
    conv_in2_b: np.ndarray
    blocks: tuple[ConvNeXtWeights, ...]
    conv_out_w: np.ndarray  # [C_out, hidden, 1], no bias
    out_conv_w: np.ndarray  # [n_mels, C_out, K], no bias
    coef: np.ndarray  # [n_mels]
    fsq: FSQWeights | None
    sha256: str

    @property
    def idim(self) -> int:
        """Channels per mel-grid frame entering the stack (half of the per-code-frame input)."""
        return int(self.conv_in0_w.shape[1])

    @property
    def in_features(self) -> int:
        """Features per code frame: GPT hidden size for the Decoder, VQ dim for the DVAE."""
        return 2 * self.idim

    @property
    def n_mels(self) -> int:
        return int(self.out_conv_w.shape[0])

    @property
    def radius(self) -> int:
        """Receptive-field radius on the mel grid (frames each side an output frame reads)."""
        r = self.conv_in0_w.shape[-1] // 2 + self.conv_in2_w.shape[-1] // 2
        r += sum(b.radius for b in self.blocks)
        r += self.conv_out_w.shape[-1] // 2 + self.out_conv_w.shape[-1] // 2
        return int(r)


def load_tensors(path: Path) -> dict[str, np.ndarray]:
    """Read a safetensors file as float32 numpy arrays (fp16/bf16 checkpoints are upcast)."""
    if not path.is_file():
        raise AudioModelError(f"missing checkpoint file: {path}")
    from safetensors import safe_open

    out: dict[str, np.ndarray] = {}
    try:
        with safe_open(str(path), framework="numpy") as fh:
            for name in fh.keys():
                arr = fh.get_tensor(name)
                out[name] = arr.astype(np.float32) if arr.dtype.kind == "f" else arr
    except Exception as exc:  # safetensors raises its own error types
        if "bfloat16" in str(exc) or "bf16" in str(exc).lower():
            out = _load_bf16(path)
        else:
            raise AudioModelError(f"cannot read {path.name}: {exc}") from exc
    return out


def _load_bf16(path: Path) -> dict[str, np.ndarray]:
    """numpy has no bfloat16: decode the raw safetensors layout by hand (rare; CPU only)."""
    import json
    import struct

    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
    out: dict[str, np.ndarray] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        buf = raw[base + a : base + b]
        if meta["dtype"] == "BF16":
            u = np.frombuffer(buf, dtype=np.uint16).astype(np.uint32) << 16
            arr = u.view(np.float32)
        elif meta["dtype"] in kinds:
            arr = np.frombuffer(buf, dtype=kinds[meta["dtype"]])
        else:
            raise AudioModelError(f"{path.name}: unsupported dtype {meta['dtype']} in {name}")
        arr = arr.reshape(meta["shape"])
        out[name] = arr.astype(np.float32) if arr.dtype.kind == "f" else arr.copy()
    return out


def _get(t: dict[str, np.ndarray], name: str, file: str) -> np.ndarray:
    try:
        return t[name]
    except KeyError:
        raise AudioModelError(
            f"{file}: tensor {name!r} missing (not a ChatTTS checkpoint?)"
        ) from None


def parse_convnext_blocks(
    t: dict[str, np.ndarray], prefix: str, file: str, *, scale_key: str, dilation: int
) -> tuple[ConvNeXtWeights, ...]:
    """Collect ``{prefix}{i}.*`` blocks in index order (the count comes from the keys)."""
    idx = sorted({int(k[len(prefix) :].split(".")[0]) for k in t if k.startswith(prefix)})
    if idx != list(range(len(idx))) or not idx:
        raise AudioModelError(f"{file}: ConvNeXt blocks under {prefix!r} are missing or sparse")
    blocks = []
    for i in idx:
        p = f"{prefix}{i}."
        scale = t.get(p + scale_key)
        blocks.append(
            ConvNeXtWeights(
                dw_w=_get(t, p + "dwconv.weight", file),
                dw_b=_get(t, p + "dwconv.bias", file),
                ln_w=_get(t, p + "norm.weight", file),
                ln_b=_get(t, p + "norm.bias", file),
                pw1_w=_get(t, p + "pwconv1.weight", file),
                pw1_b=_get(t, p + "pwconv1.bias", file),
                pw2_w=_get(t, p + "pwconv2.weight", file),
                pw2_b=_get(t, p + "pwconv2.bias", file),
                scale=scale,
                dilation=dilation,
            )
        )
    return tuple(blocks)


def fsq_codebook(levels: Sequence[int] = FSQ_LEVELS) -> np.ndarray:
    """Implicit FSQ codebook [prod(levels), len(levels)]: digit d of index i -> 2d/(L-1) - 1."""
    lv = np.asarray(levels, dtype=np.int64)
    basis = np.cumprod(np.concatenate([[1], lv[:-1]]))
    idx = np.arange(int(np.prod(lv)), dtype=np.int64)[:, None]
    digits = (idx // basis) % lv
    return (digits * (2.0 / (lv - 1)) - 1.0).astype(np.float64)


def parse_fsq(t: dict[str, np.ndarray], file: str) -> FSQWeights:
    prefix = "vq_layer.quantizer.rvqs."
    groups = sorted({int(k[len(prefix) :].split(".")[0]) for k in t if k.startswith(prefix)})
    if groups != list(range(len(groups))) or not groups:
        raise AudioModelError(f"{file}: no grouped FSQ ('{prefix}*') found")
    levels = FSQ_LEVELS
    cb = fsq_codebook(levels)
    lv = np.asarray(levels, dtype=np.float64)
    tables, biases = [], []
    for g in groups:
        w = _get(t, f"{prefix}{g}.project_out.weight", file).astype(np.float64)  # [D/G, 4]
        b = _get(t, f"{prefix}{g}.project_out.bias", file)
        if w.shape[1] != len(levels):
            raise AudioModelError(f"{file}: FSQ codebook dim {w.shape[1]} != {len(levels)} levels")
        # quantizer r is scaled by levels**-r (per codebook dim) before the shared projection
        tables.append(tuple(((cb * lv**-r) @ w.T).astype(np.float32) for r in range(FSQ_RESIDUALS)))
        biases.append(b.astype(np.float32))
    return FSQWeights(tuple(tables), tuple(biases), n_codes=int(cb.shape[0]))


def parse_mel_decoder(path: Path, kind: str, sha256: str | None = None) -> MelDecoderWeights:
    """Read ``Decoder.safetensors`` (kind "hidden") or ``DVAE.safetensors`` (kind "codes").

    ``sha256``: the file's hash when the caller already verified it (else it is hashed here).
    """
    if kind not in SOURCES:
        raise AudioModelError(f"kind must be one of {SOURCES}, got {kind!r}")
    t = load_tensors(path)
    f = path.name
    blocks = parse_convnext_blocks(
        t, "decoder.decoder_block.", f, scale_key="weight", dilation=STACK_DILATION
    )
    coef = _get(t, "coef", f).reshape(-1)
    w = MelDecoderWeights(
        kind=kind,
        conv_in0_w=_get(t, "decoder.conv_in.0.weight", f),
        conv_in0_b=_get(t, "decoder.conv_in.0.bias", f),
        conv_in2_w=_get(t, "decoder.conv_in.2.weight", f),
        conv_in2_b=_get(t, "decoder.conv_in.2.bias", f),
        blocks=blocks,
        conv_out_w=_get(t, "decoder.conv_out.weight", f),
        out_conv_w=_get(t, "out_conv.weight", f),
        coef=coef,
        fsq=parse_fsq(t, f) if kind == "codes" else None,
        sha256=sha256 or sha256_file(path),
    )
    if coef.shape[0] != w.n_mels:
        raise AudioModelError(f"{f}: coef has {coef.shape[0]} bins, out_conv {w.n_mels}")
    if w.fsq is not None:
        feat = sum(tb[0].shape[1] for tb in w.fsq.tables)
        if feat != w.in_features:
            raise AudioModelError(f"{f}: FSQ gives {feat} features, decoder wants {w.in_features}")
    return w


# --------------------------------------------------------------------------- numpy helpers


def dequantize_codes(codes: np.ndarray, fsq: FSQWeights) -> np.ndarray:
    """Codes [..., T, G*R] -> VQ features [..., T, dim] (reference ``GFSQ._embed``, numpy)."""
    codes = check_codes(codes, fsq)
    parts = []
    for g in range(fsq.groups):
        acc = fsq.biases[g].astype(np.float32).copy()
        for r in range(fsq.residuals):
            acc = acc + fsq.tables[g][r][codes[..., g * fsq.residuals + r]]
        parts.append(acc)
    return np.concatenate(parts, axis=-1).astype(np.float32)


def check_codes(codes: np.ndarray, fsq: FSQWeights) -> np.ndarray:
    """Validate a code array (integer, last dim G*R, ids in [0, n_codes)) and return int64."""
    a = np.asarray(codes)
    if a.dtype.kind not in "iu":
        raise AudioModelError(f"codes must be integers, got dtype {a.dtype}")
    if a.ndim < 2 or a.shape[-1] != fsq.n_columns:
        raise AudioModelError(f"codes must be [..., T, {fsq.n_columns}], got shape {a.shape}")
    if a.size and (a.min() < 0 or a.max() >= fsq.n_codes):
        raise AudioModelError(
            f"code ids must be in [0, {fsq.n_codes}) (id {fsq.n_codes} is the end token: "
            f"cut the stream before it); got range [{a.min()}, {a.max()}]"
        )
    return a.astype(np.int64)


def check_hidden(hidden: np.ndarray, in_features: int) -> np.ndarray:
    a = np.asarray(hidden)
    if a.dtype.kind != "f":
        raise AudioModelError(f"hidden states must be floating point, got dtype {a.dtype}")
    if a.ndim < 2 or a.shape[-1] != in_features:
        raise AudioModelError(f"hidden states must be [..., T, {in_features}], got {a.shape}")
    a = a.astype(np.float32)
    if a.size and not np.isfinite(a).all():
        raise AudioModelError("hidden states contain NaN or Inf")
    return a
