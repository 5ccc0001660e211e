"""ChatTTS audio side, part 2: Vocos (mel -> 24 kHz waveform) weights and the numpy ISTFT.

Vocos as ChatTTS configures it (``vocos`` 0.1.0 ``VocosBackbone`` + ``ISTFTHead``, no
AdaLayerNorm): Conv1d(n_mels -> dim, k7, pad 3) -> LayerNorm -> N ConvNeXt blocks (depthwise
k7, dilation 1, LayerNorm eps 1e-6, Linear -> GELU(erf) -> Linear, layer scale ``gamma``,
residual) -> final LayerNorm -> Linear(dim -> n_fft + 2). The head splits that into log
magnitude and phase halves: ``S = min(exp(m), 100) * (cos p + i sin p)``, and the waveform is
``torch.istft(S, n_fft, hop, window=hann, center=True)``.

The ISTFT here is that exact operation in numpy: per-frame inverse real FFT (imaginary parts
of the DC and Nyquist bins ignored, as pocketfft does), times the window, overlap-add,
divided by the overlap-added squared window, then ``n_fft // 2`` samples trimmed at both ends
of the padded signal, so F frames give ``(F - 1) * hop`` samples. :class:`StreamingISTFT`
does the same incrementally and gives identical samples (the envelope is computed from the
frame count, never from a running estimate).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.assets import sha256_file
from mixvox.engines.chattts.audio.weights import (
    AudioModelError,
    ConvNeXtWeights,
    _get,
    load_tensors,
    parse_convnext_blocks,
)

#: ISTFT hop (reference FourierHeadInitArgs.hop_length; not stored in the weights). With
#: the 2x upsampling of the decoders one code frame is 2 * 256 = 512 samples at 24 kHz.
VOCOS_HOP = 256
#: Magnitude clip of the ISTFT head (``torch.clip(exp(mag), max=1e2)`` in Vocos).
MAG_CLIP = 100.0


@dataclass(frozen=True)
class VocosWeights:
    embed_w: np.ndarray  # [dim, n_mels, K]
    embed_b: np.ndarray
    norm_w: np.ndarray
    norm_b: np.ndarray
    blocks: tuple[ConvNeXtWeights, ...]
    final_w: np.ndarray
    final_b: np.ndarray
    head_w: np.ndarray  # [n_fft + 2, dim]
    head_b: np.ndarray
    window: np.ndarray  # [n_fft] (float64 copy of the checkpoint's hann window)
    hop: int
    sha256: str

    @property
    def n_mels(self) -> int:
        return int(self.embed_w.shape[1])

    @property
    def dim(self) -> int:
        return int(self.embed_w.shape[0])

    @property
    def n_fft(self) -> int:
        return int(self.head_w.shape[0]) - 2

    @property
    def n_bins(self) -> int:
        return self.n_fft // 2 + 1

    @property
    def radius(self) -> int:
        """Mel frames each side one spectrum frame depends on (embed conv + blocks)."""
        return int(self.embed_w.shape[-1] // 2 + sum(b.radius for b in self.blocks))


def parse_vocos(path: Path, sha256: str | None = None) -> VocosWeights:
    """Read ``Vocos.safetensors``; sizes come from the tensor shapes.

    ``sha256``: the file's hash when the caller already verified it (else it is hashed here).
    """
    t = load_tensors(path)
    f = path.name
    head_w = _get(t, "head.out.weight", f)
    n_fft = head_w.shape[0] - 2
    window = t.get("head.istft.window")
    if window is None:  # torch.hann_window(n_fft) (periodic), as the Vocos module builds it
        window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    if window.shape != (n_fft,):
        raise AudioModelError(f"{f}: ISTFT window has shape {window.shape}, n_fft is {n_fft}")
    if n_fft % VOCOS_HOP:
        raise AudioModelError(f"{f}: n_fft {n_fft} is not a multiple of the hop {VOCOS_HOP}")
    return VocosWeights(
        embed_w=_get(t, "backbone.embed.weight", f),
        embed_b=_get(t, "backbone.embed.bias", f),
        norm_w=_get(t, "backbone.norm.weight", f),
        norm_b=_get(t, "backbone.norm.bias", f),
        blocks=parse_convnext_blocks(t, "backbone.convnext.", f, scale_key="gamma", dilation=1),
        final_w=_get(t, "backbone.final_layer_norm.weight", f),
        final_b=_get(t, "backbone.final_layer_norm.bias", f),
        head_w=head_w,
        head_b=_get(t, "head.out.bias", f),
        window=np.asarray(window, dtype=np.float64),
        hop=VOCOS_HOP,
        sha256=sha256 or sha256_file(path),
    )


# --------------------------------------------------------------------------- ISTFT


def _frames(real: np.ndarray, imag: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Spectrum [n_bins, F] -> windowed time frames [F, n_fft] (float64)."""
    spec = real.astype(np.float64) + 1j * imag.astype(np.float64)
    return np.fft.irfft(spec, n=window.shape[0], axis=0).T * window


def _envelope(p0: int, p1: int, n_frames: int, window: np.ndarray, hop: int) -> np.ndarray:
    """Sum of squared windows of frames [0, n_frames) at padded positions [p0, p1)."""
    p = np.arange(p0, p1)
    w2 = window**2
    env = np.zeros(p.shape[0], dtype=np.float64)
    for i in range(window.shape[0] // hop):
        f = p // hop - i
        ok = (f >= 0) & (f < n_frames)
        env[ok] += w2[p[ok] - f[ok] * hop]
    return env


def _normalise(y: np.ndarray, env: np.ndarray) -> np.ndarray:
    if env.size and env.min() <= 1e-11:  # torch.istft's NOLA check
        raise AudioModelError("ISTFT window envelope vanishes (NOLA violated)")
    return (y / env).astype(np.float32)


def istft(real: np.ndarray, imag: np.ndarray, window: np.ndarray, hop: int) -> np.ndarray:
    """``torch.istft(real + i*imag, n_fft, hop, window=window, center=True)`` for [n_bins, F].

    Returns float32 [(F - 1) * hop]. Vectorised: one batched irfft, then n_fft/hop shifted
    block additions for the overlap-add.
    """
    n_fft = window.shape[0]
    n_frames = real.shape[-1]
    if real.shape != imag.shape or real.ndim != 2 or real.shape[0] != n_fft // 2 + 1:
        raise AudioModelError(f"spectrum must be [{n_fft // 2 + 1}, F], got {real.shape}")
    if n_frames == 0:
        return np.zeros(0, np.float32)
    k = n_fft // hop
    blocks = _frames(real, imag, window).reshape(n_frames, k, hop)
    y = np.zeros((n_frames + k - 1, hop), dtype=np.float64)
    for i in range(k):
        y[i : i + n_frames] += blocks[:, i]
    start, n_out = n_fft // 2, (n_frames - 1) * hop
    y = y.reshape(-1)[start : start + n_out]
    return _normalise(y, _envelope(start, start + n_out, n_frames, window, hop))


class StreamingISTFT:
    """Incremental :func:`istft`: push spectrum frames in order, get final samples back.

    After F frames, padded positions below ``F * hop`` can receive no more overlap, so output
    samples below ``F * hop - n_fft // 2`` are final; :meth:`finish` releases the rest up to
    ``(F - 1) * hop``. The concatenated output equals ``istft`` of all frames (same float64
    arithmetic; only the order of additions may differ).
    """

    def __init__(self, window: np.ndarray, hop: int) -> None:
        self.window = np.asarray(window, dtype=np.float64)
        self.hop = hop
        self.n_fft = self.window.shape[0]
        if self.n_fft % hop:
            raise AudioModelError("n_fft must be a multiple of the hop")
        self.frames = 0  # frames pushed
        self.emitted = 0  # output samples returned
        self._base = 0  # padded position of _acc[0]
        self._acc = np.zeros(0, dtype=np.float64)

    def push(self, real: np.ndarray, imag: np.ndarray) -> np.ndarray:
        """Add frames [n_bins, n]; return the output samples that became final (float32)."""
        n = real.shape[-1]
        if n:
            fr = _frames(real, imag, self.window)  # [n, n_fft]
            end = (self.frames + n - 1) * self.hop + self.n_fft  # padded end of last frame
            grow = end - (self._base + self._acc.shape[0])
            if grow > 0:
                self._acc = np.concatenate([self._acc, np.zeros(grow)])
            k = self.n_fft // self.hop
            blocks = fr.reshape(n, k, self.hop)
            off = self.frames * self.hop - self._base
            view = self._acc[off : off + (n + k - 1) * self.hop].reshape(n + k - 1, self.hop)
            for i in range(k):
                view[i : i + n] += blocks[:, i]
            self.frames += n
        final = min(self.frames * self.hop - self.n_fft // 2, (self.frames - 1) * self.hop)
        return self._emit(final)

    def finish(self) -> np.ndarray:
        """No more frames: return the remaining samples up to ``(F - 1) * hop``."""
        return self._emit((self.frames - 1) * self.hop)

    def _emit(self, upto: int) -> np.ndarray:
        if upto <= self.emitted:
            return np.zeros(0, np.float32)
        half = self.n_fft // 2
        p0, p1 = self.emitted + half, upto + half
        y = self._acc[p0 - self._base : p1 - self._base]
        out = _normalise(y, _envelope(p0, p1, self.frames, self.window, self.hop))
        self.emitted = upto
        drop = p1 - self._base
        self._acc = self._acc[drop:]
        self._base = p1
        return out
