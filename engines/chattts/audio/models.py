"""The ChatTTS audio models behind one backend: :class:`AudioModels` (the facade the engine and
the streaming vocoder use), the :class:`AudioBackend` protocol the onnx and torch backends
implement, and :class:`StreamStage`, one layer group of a conv stack for streaming.

``AudioModels`` turns GPT hidden states (Decoder) or codes (DVAE) into mel and mel into a
24 kHz waveform (Vocos + the numpy ISTFT, the same samples for both backends); batches are
masked per item, so each item equals its own unbatched decode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mixvox.engines.chattts.audio.vocos import VocosWeights, istft
from mixvox.engines.chattts.audio.weights import (
    SOURCES,
    AudioModelError,
    MelDecoderWeights,
    check_codes,
    check_hidden,
)

__all__ = ["AudioBackend", "AudioModels", "StreamStage"]


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
    """What ``onnx_backend.OnnxAudioBackend`` and ``torch_backend.TorchAudioBackend`` provide.

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
        happen here instead of in the first request); with ``streaming`` also build and run
        the layer-wise stream stages the streaming vocoder uses."""
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
                y: np.ndarray = x
                for stage in self.backend.stream_stages(source) + self.backend.stream_stages(
                    "vocos"
                ):
                    y = stage.fn(y)

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
