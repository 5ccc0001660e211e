"""ChatTTS audio side, part 1: Decoder (GPT hidden states -> mel) and DVAE (codes -> mel).

Public API (everything the engine needs from the audio side)::

    from mixvox.engines.chattts.decoder import load_audio_models, AudioModels

    models = load_audio_models(asset_dir, backend="onnx", device="cpu", cache_dir=None)
    mel = models.decode_hidden(hidden)        # [T, H] -> [n_mels, 2T]   ([B,T,H] -> [B,n_mels,2T])
    mel = models.decode_codes(codes)          # [T, 4] int -> [n_mels, 2T] ([B,T,4] -> [B,...])
    wav = models.vocode(mel)                  # [n_mels, F] -> float32 [(F - 1) * 256]
    wav = models.hidden_to_wav(hidden)        # decode_hidden + vocode
    wav = models.codes_to_wav(codes)          # decode_codes + vocode
    wavs = models.hidden_to_wav_batch([h1, h2, ...])   # list of float32 waveforms
    wavs = models.codes_to_wav_batch([c1, c2, ...])

    from mixvox.engines.chattts.streaming import StreamingVocoder
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
The ONNX graphs are in ``audio_onnx``, the torch modules in ``audio_torch`` and the ISTFT in
numpy in ``vocos``; this module holds the weight parsing shared by both backends, the FSQ
tables, receptive-field arithmetic and the :class:`AudioModels` facade.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from mixvox.engines.chattts.vocos import VocosWeights

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


def load_tensors(path: Path, expected: str | None = None) -> tuple[dict[str, np.ndarray], str]:
    """Read a safetensors file as float32 numpy arrays (fp16/bf16 checkpoints are upcast) and
    the SHA-256 of the bytes read (:func:`~mixvox.engines.chattts.assets.read_asset`: from disk,
    or decrypted from memory). ``expected``: the hash a verification vouched for."""
    from mixvox.engines.chattts.assets import is_in_memory, read_asset

    if not is_in_memory(path) and not path.is_file():
        raise AudioModelError(f"missing checkpoint file: {path}")
    from safetensors.numpy import load

    raw, digest = read_asset(path, expected)
    out: dict[str, np.ndarray] = {}
    try:
        for name, arr in load(raw).items():
            out[name] = arr.astype(np.float32) if arr.dtype.kind == "f" else arr
    except Exception as exc:  # safetensors raises its own error types
        if "bfloat16" in str(exc) or "bf16" in str(exc).lower():
            out = _load_bf16(raw)
        else:
            raise AudioModelError(f"cannot read {path.name}: {exc}") from exc
    return out, digest


def _load_bf16(raw: bytes) -> dict[str, np.ndarray]:
    """numpy has no bfloat16: decode the raw safetensors layout by hand (rare; CPU only)."""
    import json
    import struct

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
            raise AudioModelError(f"unsupported dtype {meta['dtype']} in {name}")
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
    t, digest = load_tensors(path, sha256)
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
        sha256=digest,  # of the bytes read: the graph cache key
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


# --------------------------------------------------------------------------- backends + facade


@dataclass(frozen=True)
class StreamStage:
    """One layer group of a conv stack, run on windows by the streaming vocoder.

    ``fn`` maps one item's channels-last window to its 'same'-padded output: the first mel
    stage takes frames [T, C] (hidden float32 or codes int64) and returns [up*T, C']; every
    later stage takes [T, C] float32 and returns [T, C']. ``radius``: frames each side an
    output reads (on the output grid); ``up``: output frames per input frame (2 for the
    first mel stage). Vocos' last stage returns real and imaginary parts side by side:
    [T, 2 * n_bins].
    """

    name: str
    radius: int
    up: int
    fn: Callable[[np.ndarray], np.ndarray]


class AudioBackend(Protocol):
    """What ``audio_onnx.OnnxAudioBackend`` and ``audio_torch.TorchAudioBackend`` provide.

    All arrays are numpy; ``lengths`` are valid frames per item (code frames for the mel
    decoders, mel frames for Vocos); positions past an item's length are ignored and the
    outputs there are unspecified.
    """

    name: str

    def mel(self, kind: str, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """``kind`` "hidden": x [B,T,H] float32; "codes": x [B,T,G*R] int64 -> [B,n_mels,2T]."""
        ...

    def spec(self, mel: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mel [B,n_mels,F] -> (real, imag) of the ISTFT input, each [B, n_fft//2+1, F]."""
        ...

    def stream_stages(self, kind: str) -> list[StreamStage]:
        """The layer-wise split of "hidden"/"codes" (-> mel) or "vocos" (mel -> spectrum)."""
        ...


class AudioModels:
    """Decoder + DVAE + Vocos of one checkpoint behind one backend (load once, reuse).

    Thread-safety: ONNX Runtime sessions may be called from several threads; the torch
    backend runs under ``torch.inference_mode``. Waveforms are float32 at
    :attr:`sample_rate`.
    """

    sample_rate = 24000

    def __init__(
        self,
        backend: AudioBackend,
        decoder: MelDecoderWeights | None,
        dvae: MelDecoderWeights | None,
        vocos: VocosWeights,
    ) -> None:
        self.backend = backend
        self.decoder_weights = decoder
        self.dvae_weights = dvae
        self.vocos_weights = vocos

    # -- sizes -------------------------------------------------------------------------
    @property
    def hop(self) -> int:
        return self.vocos_weights.hop

    @property
    def samples_per_frame(self) -> int:
        """Samples per code frame (2 mel frames): 512 for ChatTTS."""
        return 2 * self.vocos_weights.hop

    @property
    def n_mels(self) -> int:
        return self.vocos_weights.n_mels

    def weights_for(self, source: str) -> MelDecoderWeights:
        w = {"hidden": self.decoder_weights, "codes": self.dvae_weights}.get(source)
        if source not in SOURCES:
            raise AudioModelError(f"source must be one of {SOURCES}, got {source!r}")
        if w is None:
            raise AudioModelError(f"this checkpoint has no model for source {source!r}")
        return w

    def receptive_field(self, source: str) -> dict[str, int]:
        """Context each side, per stage: mel-grid radii and the total in code frames.

        ``decoder``: mel frames the Decoder/DVAE reads each side of an output frame;
        ``vocos``: mel frames the Vocos backbone reads each side of a spectrum frame;
        ``istft``: later spectrum frames overlapping a sample (n_fft/hop - 1);
        ``code_frames``: code frames of context (each side) that make streamed output exact,
        ceil((decoder + vocos) / 2): what :class:`StreamingVocoder` holds back by default.
        Full ChatTTS: decoder 75, vocos 27, istft 3, code_frames 51 (about 1.1 s of audio).
        """
        r_dec = self.weights_for(source).radius
        r_voc = self.vocos_weights.radius
        r_ist = self.vocos_weights.n_fft // self.vocos_weights.hop - 1
        return {
            "decoder": r_dec,
            "vocos": r_voc,
            "istft": r_ist,
            "code_frames": -(-(r_dec + r_voc) // 2),
        }

    def warmup(self, streaming: bool = True) -> None:
        """Run every model once on a few frames (graph optimisation, allocator, CUDA kernels
        happen here instead of in the first request); with ``streaming`` also build the
        layer-wise stream stages."""
        from mixvox.engines.chattts.streaming import StreamingVocoder

        for source, w in (("hidden", self.decoder_weights), ("codes", self.dvae_weights)):
            if w is None:
                continue
            if w.fsq is None:
                x = np.zeros((4, w.in_features), np.float32)
                self.hidden_to_wav(x)
            else:
                x = np.zeros((4, w.fsq.n_columns), np.int64)
                self.codes_to_wav(x)
            if streaming:
                sv = StreamingVocoder(self, source, first_chunk_frames=1, chunk_frames=1)
                sv.feed(x)
                sv.finish()

    # -- mel -----------------------------------------------------------------------------
    def decode_hidden(self, hidden: np.ndarray, lengths: Sequence[int] | None = None) -> np.ndarray:
        """GPT hidden states [T, H] -> mel [n_mels, 2T]; or [B, T, H] -> [B, n_mels, 2T].

        For a batch, ``lengths`` (default: all T) gives each item's valid frames; each item's
        mel over its 2*length frames equals its own unbatched decode (the rest is zero).
        """
        w = self.weights_for("hidden")
        x = check_hidden(hidden, w.in_features)
        return self._mel("hidden", x, lengths)

    def decode_codes(self, codes: np.ndarray, lengths: Sequence[int] | None = None) -> np.ndarray:
        """Audio codes [T, G*R] (ints in [0, 625)) -> mel [n_mels, 2T]; batched like above."""
        w = self.weights_for("codes")
        assert w.fsq is not None
        x = check_codes(codes, w.fsq)
        return self._mel("codes", x, lengths)

    def _mel(self, kind: str, x: np.ndarray, lengths: Sequence[int] | None) -> np.ndarray:
        single = x.ndim == 2
        if single:
            x = x[None]
        if x.ndim != 3:
            raise AudioModelError(f"expected [T, C] or [B, T, C], got shape {x.shape}")
        lens = _lengths(lengths, x.shape[0], x.shape[1])
        if x.shape[1] == 0:
            out = np.zeros((x.shape[0], self.n_mels, 0), np.float32)
        else:
            out = self.backend.mel(kind, x, lens)
            _zero_tail(out, 2 * lens)
        return out[0] if single else out

    # -- vocoder ---------------------------------------------------------------------------
    def spectrum(
        self, mel: np.ndarray, lengths: Sequence[int] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Mel [B, n_mels, F] -> (real, imag) [B, n_fft//2+1, F] (Vocos backbone + head)."""
        mel = _check_mel(mel, self.n_mels)
        lens = _lengths(lengths, mel.shape[0], mel.shape[2])
        return self.backend.spec(mel, lens)

    def vocode(self, mel: np.ndarray, lengths: Sequence[int] | None = None) -> np.ndarray:
        """Mel [n_mels, F] -> float32 waveform [(F-1)*hop] (Vocos, ISTFT with center=True).

        A batch [B, n_mels, F] with ``lengths`` returns a list of per-item waveforms.
        """
        from mixvox.engines.chattts.vocos import istft

        mel = np.asarray(mel)
        single = mel.ndim == 2
        m = _check_mel(mel[None] if single else mel, self.n_mels)
        lens = _lengths(lengths, m.shape[0], m.shape[2])
        if m.shape[2] == 0:
            wavs = [np.zeros(0, np.float32) for _ in range(m.shape[0])]
        else:
            re, im = self.backend.spec(m, lens)
            vw = self.vocos_weights
            wavs = [
                istft(re[i, :, : lens[i]], im[i, :, : lens[i]], vw.window, vw.hop)
                for i in range(m.shape[0])
            ]
        return wavs[0] if single else wavs  # type: ignore[return-value]

    def hidden_to_wav(self, hidden: np.ndarray) -> np.ndarray:
        """[T, H] hidden states -> waveform [(2T-1)*hop] (reference ``_decode_to_wavs``)."""
        return self.vocode(self.decode_hidden(hidden))

    def codes_to_wav(self, codes: np.ndarray) -> np.ndarray:
        """[T, G*R] codes -> waveform [(2T-1)*hop] (reference path with use_decoder=False)."""
        return self.vocode(self.decode_codes(codes))

    def hidden_to_wav_batch(self, items: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Several [T_i, H] hidden-state arrays decoded as one padded batch (exact per item)."""
        x, lens = _pad_batch(items, np.float32)
        if x is None:
            return []
        mel = self.decode_hidden(x, lens)
        return self.vocode(mel, [2 * n for n in lens])  # type: ignore[return-value]

    def codes_to_wav_batch(self, items: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Several [T_i, G*R] code arrays decoded as one padded batch (exact per item)."""
        x, lens = _pad_batch(items, np.int64)
        if x is None:
            return []
        mel = self.decode_codes(x, lens)
        return self.vocode(mel, [2 * n for n in lens])  # type: ignore[return-value]


def _lengths(lengths: Sequence[int] | None, batch: int, t: int) -> np.ndarray:
    if lengths is None:
        return np.full(batch, t, dtype=np.int64)
    lens = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if lens.shape[0] != batch:
        raise AudioModelError(f"{lens.shape[0]} lengths for a batch of {batch}")
    if lens.size and (lens.min() < 0 or lens.max() > t):
        raise AudioModelError(f"lengths must be within [0, {t}], got {lens.tolist()}")
    return lens


def _zero_tail(out: np.ndarray, lens: np.ndarray) -> None:
    for i, n in enumerate(lens):
        out[i, :, int(n) :] = 0.0


def _check_mel(mel: np.ndarray, n_mels: int) -> np.ndarray:
    m = np.asarray(mel)
    if m.ndim != 3 or m.shape[1] != n_mels:
        raise AudioModelError(f"mel must be [{n_mels}, F] or [B, {n_mels}, F], got {m.shape}")
    if m.dtype.kind != "f":
        raise AudioModelError(f"mel must be floating point, got dtype {m.dtype}")
    m = m.astype(np.float32)
    if m.size and not np.isfinite(m).all():
        raise AudioModelError("mel contains NaN or Inf")
    return m


def _pad_batch(items: Sequence[np.ndarray], dtype: Any) -> tuple[np.ndarray | None, list[int]]:
    arrs = [np.asarray(a) for a in items]
    if not arrs:
        return None, []
    for a in arrs:
        if a.ndim != 2:
            raise AudioModelError(f"each batch item must be [T, C], got shape {a.shape}")
    width = arrs[0].shape[1]
    if any(a.shape[1] != width for a in arrs):
        raise AudioModelError("batch items differ in feature width")
    lens = [int(a.shape[0]) for a in arrs]
    x = np.zeros((len(arrs), max(lens), width), dtype=arrs[0].dtype)
    for i, a in enumerate(arrs):
        x[i, : a.shape[0]] = a
    return x.astype(dtype) if x.dtype.kind != np.dtype(dtype).kind else x, lens


def load_audio_models(
    asset_dir: Path | str,
    *,
    backend: str = "onnx",
    device: str = "cpu",
    cache_dir: Path | str | None = None,
    threads: int | None = None,
    dtype: str = "float32",
    sha256: Mapping[str, str | None] | None = None,
) -> AudioModels:
    """Load Decoder, DVAE and Vocos from ``asset_dir`` (the folder holding ``*.safetensors``).

    ``backend``: "onnx" (graphs built from the weights without torch, cached under
    ``cache_dir`` keyed by the weights' SHA-256 and the builder version; ``device`` "cpu" or
    "cuda" for the CUDA execution provider) or "torch" (``device`` "cpu"/"cuda"/"cuda:N").
    ``Decoder.safetensors`` or ``DVAE.safetensors`` may be absent (that source is then
    unavailable); ``Vocos.safetensors`` is required. ``threads``: intra-op threads (default:
    ORT min(cores, 8), torch its own default). ``dtype``: torch compute dtype ("float32",
    "float16", "bfloat16"; the ONNX graphs are float32). SHA-256 pinning of assets is the
    engine's job (assets.py); this only reads the files. ``sha256``: hashes the caller has
    already verified, by file name (``{"Vocos.safetensors": "..."}``, e.g. from
    :meth:`~mixvox.engines.chattts.assets.ModelAssets.verified_sha256`); a file without one is
    hashed here, since the hashes key the cached ONNX graphs.
    """
    from mixvox.engines.chattts.vocos import parse_vocos

    asset = Path(asset_dir)
    if (asset / "asset").is_dir() and not (asset / "Vocos.safetensors").is_file():
        asset = asset / "asset"
    dec_p, dvae_p, voc_p = (asset / f"{n}.safetensors" for n in ("Decoder", "DVAE", "Vocos"))
    if not voc_p.is_file():
        raise AudioModelError(f"Vocos.safetensors not found in {asset}")
    if not dec_p.is_file() and not dvae_p.is_file():
        raise AudioModelError(f"neither Decoder.safetensors nor DVAE.safetensors in {asset}")
    known = sha256 or {}
    decoder = parse_mel_decoder(dec_p, "hidden", known.get(dec_p.name)) if dec_p.is_file() else None
    dvae = parse_mel_decoder(dvae_p, "codes", known.get(dvae_p.name)) if dvae_p.is_file() else None
    vocos = parse_vocos(voc_p, known.get(voc_p.name))
    for w in (decoder, dvae):
        if w is not None and w.n_mels != vocos.n_mels:
            raise AudioModelError(f"{w.kind} makes {w.n_mels} mel bins, Vocos wants {vocos.n_mels}")
    if backend == "onnx":
        from mixvox.engines.chattts.audio_onnx import OnnxAudioBackend

        be: AudioBackend = OnnxAudioBackend(
            decoder, dvae, vocos, device=device, cache_dir=cache_dir, threads=threads
        )
    elif backend == "torch":
        from mixvox.engines.chattts.audio_torch import TorchAudioBackend

        be = TorchAudioBackend(decoder, dvae, vocos, device=device, threads=threads, dtype=dtype)
    else:
        raise AudioModelError(f"unknown audio backend {backend!r} (use 'onnx' or 'torch')")
    return AudioModels(be, decoder, dvae, vocos)
