"""torch backend of the ChatTTS audio models (optional extra; torch is imported lazily).

Same math as the ONNX graphs (``onnx_backend``), written with ``torch.nn.functional`` on the
parsed numpy weights, so no reference code or module classes are needed. Runs on CPU or CUDA
(``device="cuda"``); :meth:`TorchAudioBackend.wav_torch` also does the ISTFT on the device
with ``torch.istft`` for the GPU pipeline, while :class:`~mixvox.engines.chattts.audio.models.
AudioModels` uses the shared numpy ISTFT so both backends give the same samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mixvox.engines.chattts.audio.models import StreamStage
from mixvox.engines.chattts.audio.vocos import MAG_CLIP, VocosWeights
from mixvox.engines.chattts.audio.weights import (
    LN_EPS,
    AudioModelError,
    ConvNeXtWeights,
    MelDecoderWeights,
)


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise AudioModelError(
            "the torch audio backend needs torch (pip install 'torch==2.13.0'); "
            "use backend='onnx' otherwise"
        ) from exc
    return torch


class TorchAudioBackend:
    """Decoder/DVAE/Vocos as torch functions; see ``models.AudioBackend`` for the contract."""

    name = "torch"

    def __init__(
        self,
        decoder: MelDecoderWeights | None,
        dvae: MelDecoderWeights | None,
        vocos: VocosWeights,
        *,
        device: str = "cpu",
        threads: int | None = None,
        dtype: str = "float32",
    ) -> None:
        torch = _torch()
        self.torch = torch
        try:
            self.device = torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise AudioModelError(f"bad torch device {device!r}: {exc}") from exc
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise AudioModelError("device 'cuda' requested but torch sees no CUDA device")
        if threads:
            torch.set_num_threads(int(threads))
        dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
        if dtype not in dtypes:
            raise AudioModelError(f"dtype must be one of {sorted(dtypes)}, got {dtype!r}")
        self.dtype = dtypes[dtype]
        self._mel_w = {w.kind: self._mel_params(w) for w in (decoder, dvae) if w is not None}
        self._mel_src = {w.kind: w for w in (decoder, dvae) if w is not None}
        self._voc = self._vocos_params(vocos)
        self.vocos_weights = vocos

    # -- parameter conversion ----------------------------------------------------------------
    def _t(self, a: np.ndarray | None, dtype: Any = None) -> Any:
        if a is None:
            return None
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device, dtype or self.dtype)

    def _block(self, b: ConvNeXtWeights) -> dict[str, Any]:
        return {
            "dw_w": self._t(b.dw_w),
            "dw_b": self._t(b.dw_b),
            "dil": b.dilation,
            "ln_w": self._t(b.ln_w),
            "ln_b": self._t(b.ln_b),
            "pw1_w": self._t(b.pw1_w),
            "pw1_b": self._t(b.pw1_b),
            "pw2_w": self._t(b.pw2_w),
            "pw2_b": self._t(b.pw2_b),
            "scale": self._t(b.scale),
        }

    def _mel_params(self, w: MelDecoderWeights) -> dict[str, Any]:
        p: dict[str, Any] = {
            "in0_w": self._t(w.conv_in0_w),
            "in0_b": self._t(w.conv_in0_b),
            "in2_w": self._t(w.conv_in2_w),
            "in2_b": self._t(w.conv_in2_b),
            "blocks": [self._block(b) for b in w.blocks],
            "out_w": self._t(w.conv_out_w),
            "post_w": self._t(w.out_conv_w),
            "coef": self._t(w.coef).view(1, -1, 1),
            "fsq": None,
        }
        if w.fsq is not None:
            p["fsq"] = (
                [[self._t(tb) for tb in g] for g in w.fsq.tables],
                [self._t(b) for b in w.fsq.biases],
            )
        return p

    def _vocos_params(self, v: VocosWeights) -> dict[str, Any]:
        return {
            "embed_w": self._t(v.embed_w),
            "embed_b": self._t(v.embed_b),
            "norm_w": self._t(v.norm_w),
            "norm_b": self._t(v.norm_b),
            "blocks": [self._block(b) for b in v.blocks],
            "final_w": self._t(v.final_w),
            "final_b": self._t(v.final_b),
            "head_w": self._t(v.head_w),
            "head_b": self._t(v.head_b),
            "window": self._t(v.window, self.torch.float32),
        }

    # -- building blocks ----------------------------------------------------------------------
    def _mask(self, lengths: Any, t: int) -> Any:
        ar = self.torch.arange(t, device=self.device)
        return (ar[None, :] < lengths[:, None]).to(self.dtype)[:, None, :]  # [B,1,T]

    def _conv(self, x: Any, w: Any, b: Any, mask: Any, *, dil: int = 1, groups: int = 1) -> Any:
        """Conv1d with 'same' zero padding; masking first makes padded items exact."""
        k = w.shape[-1]
        if k > 1 and mask is not None:
            x = x * mask
        return self.torch.nn.functional.conv1d(
            x, w, b, padding=dil * (k // 2), dilation=dil, groups=groups
        )

    def _convnext(self, x: Any, p: dict[str, Any], mask: Any) -> Any:
        f = self.torch.nn.functional
        y = self._conv(x, p["dw_w"], p["dw_b"], mask, dil=p["dil"], groups=x.shape[1])
        y = y.transpose(1, 2)
        y = f.layer_norm(y, (y.shape[-1],), p["ln_w"], p["ln_b"], LN_EPS)
        y = f.linear(f.gelu(f.linear(y, p["pw1_w"], p["pw1_b"])), p["pw2_w"], p["pw2_b"])
        if p["scale"] is not None:
            y = y * p["scale"]
        return x + y.transpose(1, 2)

    # -- public contract ------------------------------------------------------------------------
    def _features(self, p: dict[str, Any], x: Any) -> Any:
        """Codes -> FSQ features (DVAE); hidden states pass through. [B,T,*] -> [B,T,2C]."""
        if p["fsq"] is None:
            return x.to(self.dtype)
        f = self.torch.nn.functional
        tables, biases = p["fsq"]
        r = len(tables[0])
        parts = []
        for g, (tg, bg) in enumerate(zip(tables, biases, strict=True)):
            acc = bg
            for j in range(r):
                acc = acc + f.embedding(x[..., g * r + j], tg[j])
            parts.append(acc)
        return self.torch.cat(parts, dim=-1)

    def _front(self, p: dict[str, Any], x: Any, lengths: Any | None) -> tuple[Any, Any]:
        """[B,T,2C] features -> 2x upsampled, conv_in applied: [B, hidden, 2T] (+ mask)."""
        mask = None if lengths is None else self._mask(2 * lengths, 2 * x.shape[1])
        return self._front_masked(p, x, mask), mask

    def _front_masked(self, p: dict[str, Any], x: Any, mask: Any | None) -> Any:
        """:meth:`_front` with a given mel-grid mask [B,1,2T] (None: no masking)."""
        b, t, c = x.shape
        # 2x upsampling: channel halves become mel-grid frames 2t and 2t+1
        x = x.transpose(1, 2).reshape(b, 2, c // 2, t).permute(0, 2, 3, 1).reshape(b, c // 2, 2 * t)
        y = self._conv(x, p["in0_w"], p["in0_b"], mask)
        return self._conv(self.torch.nn.functional.gelu(y), p["in2_w"], p["in2_b"], mask)

    def _back(self, p: dict[str, Any], y: Any, mask: Any) -> Any:
        y = self._conv(y, p["out_w"], None, mask)
        y = self._conv(y, p["post_w"], None, mask)
        return y * p["coef"]

    def _vfront(self, mel: Any, mask: Any) -> Any:
        f, p = self.torch.nn.functional, self._voc
        x = self._conv(mel.to(self.dtype), p["embed_w"], p["embed_b"], mask)
        x = f.layer_norm(x.transpose(1, 2), (x.shape[1],), p["norm_w"], p["norm_b"], LN_EPS)
        return x.transpose(1, 2)

    def _vhead(self, x: Any) -> tuple[Any, Any]:
        f, p = self.torch.nn.functional, self._voc
        x = f.layer_norm(x.transpose(1, 2), (x.shape[1],), p["final_w"], p["final_b"], LN_EPS)
        h = f.linear(x, p["head_w"], p["head_b"]).transpose(1, 2).float()
        nb = h.shape[1] // 2
        mag = self.torch.clip(self.torch.exp(h[:, :nb]), max=MAG_CLIP)
        ph = h[:, nb:]
        return mag * self.torch.cos(ph), mag * self.torch.sin(ph)

    def mel_torch(self, kind: str, x: Any, lengths: Any) -> Any:
        """Torch tensors in/out: x [B,T,H] float (or [B,T,G*R] long codes) -> [B,n_mels,2T]."""
        p = self._mel_w.get(kind)
        if p is None:
            raise AudioModelError(f"no mel decoder loaded for source {kind!r}")
        y, mask = self._front(p, self._features(p, x), lengths)
        for blk in p["blocks"]:
            y = self._convnext(y, blk, mask)
        return self._back(p, y, mask)

    def mel_masked(self, kind: str, x: Any, mask: Any) -> Any:
        """As :meth:`mel_torch` with a mel-grid mask [B,1,2T] of valid frames (any pattern:
        the window vocoder masks frames before an utterance's start and past its end)."""
        p = self._mel_w.get(kind)
        if p is None:
            raise AudioModelError(f"no mel decoder loaded for source {kind!r}")
        y = self._front_masked(p, self._features(p, x), mask)
        for blk in p["blocks"]:
            y = self._convnext(y, blk, mask)
        return self._back(p, y, mask)

    def spec_torch(self, mel: Any, lengths: Any) -> tuple[Any, Any]:
        """Torch mel [B,n_mels,F] -> (real, imag) [B,n_fft//2+1,F] (float32)."""
        return self.spec_masked(mel, self._mask(lengths, mel.shape[-1]))

    def spec_masked(self, mel: Any, mask: Any) -> tuple[Any, Any]:
        """As :meth:`spec_torch` with a mask [B,1,F] of valid mel frames."""
        x = self._vfront(mel, mask)
        for blk in self._voc["blocks"]:
            x = self._convnext(x, blk, mask)
        return self._vhead(x)

    def stream_stages(self, kind: str) -> list[StreamStage]:
        """Layer-wise functions for the streaming vocoder (see ``decoder.StreamStage``)."""
        torch = self.torch

        def wrap(fn: Any, first: bool = False) -> Any:
            """numpy [T, C] (channels-last) -> fn on [1, C, T] (or [1, T, C] features for
            the first mel stage) -> numpy [T', C']."""

            def run(x: np.ndarray) -> np.ndarray:
                with torch.inference_mode():
                    xt = torch.from_numpy(np.ascontiguousarray(x)).to(self.device)[None]
                    y = fn(xt if first else xt.transpose(1, 2))
                    return y[0].transpose(0, 1).float().cpu().numpy()

            return run

        def block(blk: dict[str, Any]) -> Any:
            return wrap(lambda x: self._convnext(x.to(self.dtype), blk, None))

        if kind == "vocos":
            v = self.vocos_weights
            st = [
                StreamStage(
                    "vocos-in", v.embed_w.shape[-1] // 2, 1, wrap(lambda x: self._vfront(x, None))
                )
            ]
            for i, (bw, blk) in enumerate(zip(v.blocks, self._voc["blocks"], strict=True)):
                st.append(StreamStage(f"vocos-blk{i}", bw.radius, 1, block(blk)))
            st.append(
                StreamStage("vocos-head", 0, 1, wrap(lambda x: torch.cat(self._vhead(x), dim=1)))
            )
            return st
        p, w = self._mel_w.get(kind), self._mel_src.get(kind)
        if p is None or w is None:
            raise AudioModelError(f"no mel decoder loaded for source {kind!r}")
        r_front = w.conv_in0_w.shape[-1] // 2 + w.conv_in2_w.shape[-1] // 2
        st = [
            StreamStage(
                f"{kind}-in",
                int(r_front),
                2,
                wrap(lambda x: self._front(p, self._features(p, x), None)[0], first=True),
            )
        ]
        for i, (bw, blk) in enumerate(zip(w.blocks, p["blocks"], strict=True)):
            st.append(StreamStage(f"{kind}-blk{i}", bw.radius, 1, block(blk)))
        r_back = w.conv_out_w.shape[-1] // 2 + w.out_conv_w.shape[-1] // 2
        st.append(
            StreamStage(
                f"{kind}-out", int(r_back), 1, wrap(lambda x: self._back(p, x.to(self.dtype), None))
            )
        )
        return st

    def wav_torch(self, mel: Any) -> Any:
        """Torch mel [B,n_mels,F] (all items full length) -> waveform [B,(F-1)*hop] on device."""
        torch = self.torch
        lengths = torch.full((mel.shape[0],), mel.shape[-1], device=self.device)
        re, im = self.spec_torch(mel, lengths)
        v = self.vocos_weights
        return torch.istft(
            torch.complex(re, im), v.n_fft, v.hop, v.n_fft, self._voc["window"], center=True
        )

    def mel(self, kind: str, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        torch = self.torch
        with torch.inference_mode():
            xt = torch.from_numpy(np.ascontiguousarray(x)).to(self.device)
            lt = torch.from_numpy(np.asarray(lengths, dtype=np.int64)).to(self.device)
            return self.mel_torch(kind, xt, lt).float().cpu().numpy()

    def spec(self, mel: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        torch = self.torch
        with torch.inference_mode():
            mt = torch.from_numpy(np.ascontiguousarray(mel, dtype=np.float32)).to(self.device)
            lt = torch.from_numpy(np.asarray(lengths, dtype=np.int64)).to(self.device)
            re, im = self.spec_torch(mt, lt)
            return re.cpu().numpy(), im.cpu().numpy()
