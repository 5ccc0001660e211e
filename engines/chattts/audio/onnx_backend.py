"""ONNX graphs of the ChatTTS audio models, built without torch, and their ORT runners.

Graphs (stable I/O names, dynamic batch and length):

* ``chattts-decoder``: ``hidden`` float32 [B, T, H], ``lengths`` int64 [B] -> ``mel``
  float32 [B, n_mels, 2T].
* ``chattts-dvae``: ``codes`` int64 [B, T, G*R], ``lengths`` -> ``mel``. The grouped residual
  FSQ is a Gather per (group, quantizer) on precomputed tables plus the projection bias
  (see ``weights.FSQWeights``).
* ``chattts-vocos``: ``mel`` float32 [B, n_mels, F], ``lengths`` int64 [B] (mel frames) ->
  ``real``, ``imag`` float32 [B, F, n_fft//2+1] (the ISTFT input; the ISTFT is numpy).

``lengths`` builds a [B, 1, T] mask applied before every conv with a kernel wider than one,
so a padded batch item reads zeros past its end exactly as its unbatched decode does.
GELU is the exact erf form (opset 17 has no Gelu op; ORT fuses the pattern). The layer scale
of each ConvNeXt block is folded into its second pointwise layer. Graphs are cached on disk
by :func:`~mixvox.engines.chattts.onnx_graph.cached_graph`, keyed by the weights' SHA-256
and :data:`BUILDER_VERSION`.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from mixvox.engines.chattts.audio.models import StreamStage
from mixvox.engines.chattts.audio.vocos import MAG_CLIP, VocosWeights
from mixvox.engines.chattts.audio.weights import (
    LN_EPS,
    AudioModelError,
    ConvNeXtWeights,
    MelDecoderWeights,
)
from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph

#: Bump when the graphs change, so cached graphs from an older builder are never reused.
BUILDER_VERSION = "audio-2"


# --------------------------------------------------------------------------- graph pieces


def _gelu(g: GraphBuilder, x: str) -> str:
    """0.5 * x * (1 + erf(x / sqrt 2)): torch's default (exact) GELU."""
    e = g.op("Erf", g.op("Mul", x, g.const("inv_sqrt2", np.float32(1 / math.sqrt(2)))))
    half = g.op("Mul", x, g.const("half", np.float32(0.5)))
    return g.op("Mul", half, g.op("Add", e, g.const("one", np.float32(1.0))))


def _mask(g: GraphBuilder, lengths: str, like: str, factor: int) -> str:
    """Float mask [B, T, 1] (1 where t < lengths*factor) for a tensor ``like`` [B, T, C]."""
    t = g.op("Gather", g.op("Shape", like), g.const("ax1", np.int64(1)), axis=0)
    ar = g.op("Range", g.const("zero", np.int64(0)), t, g.const("one", np.int64(1)))
    lens = lengths
    if factor != 1:
        lens = g.op("Mul", lengths, g.const(f"x{factor}", np.int64(factor)))
    less = g.op(
        "Less",
        g.op("Unsqueeze", ar, g.const("ax0", np.array([0], np.int64))),
        g.op("Unsqueeze", lens, g.const("ax1", np.array([1], np.int64))),
    )
    return g.op(
        "Unsqueeze",
        g.op("Cast", less, to=onnx.TensorProto.FLOAT),
        g.const("ax2", np.array([2], np.int64)),
    )


def _conv(
    g: GraphBuilder,
    x: str,
    w: np.ndarray,
    b: np.ndarray | None,
    mask: str | None,
    hint: str,
    *,
    dilation: int = 1,
    depthwise: bool = False,
) -> str:
    """'Same' Conv1d on channels-last x [B, T, C_in] -> [B, T, C_out], as a sum over taps.

    Tap k reads x shifted by (k - K//2) * dilation: one Slice of the zero-padded input, then
    a per-channel Mul (depthwise) or a MatMul (dense). ORT's grouped Conv runs one tiny GEMM
    per channel, which made the 512-channel depthwise convs the bottleneck; elementwise taps
    and GEMMs are fast and keep the whole stack channels-last (no transposes around
    LayerNorm and the pointwise layers).
    """
    k = int(w.shape[-1])
    w64 = w.astype(np.float64)
    if k == 1:
        return _linear(g, x, w64[:, :, 0], b, hint)
    if mask is not None:
        x = g.op("Mul", x, mask)
    span = dilation * (k - 1)  # 2 * pad
    pad = span // 2
    xp = g.op("Pad", x, g.const("pads_" + str(pad), np.array([0, pad, 0, 0, pad, 0], np.int64)))
    acc = None
    for i in range(k):
        start = i * dilation
        end = start - span if start < span else np.iinfo(np.int64).max
        tap = g.op(
            "Slice",
            xp,
            g.const(f"s{start}", np.array([start], np.int64)),
            g.const(f"e{end}", np.array([end], np.int64)),
            g.const("axis1", np.array([1], np.int64)),
        )
        if depthwise:
            term = g.op("Mul", tap, g.const(f"{hint}_w{i}", w[:, 0, i].astype(np.float32)))
        else:
            term = _linear(g, tap, w64[:, :, i], None, f"{hint}_w{i}")
        acc = term if acc is None else g.op("Add", acc, term)
    assert acc is not None
    if b is not None:
        acc = g.op("Add", acc, g.const(hint + "_b", b.astype(np.float32)))
    return acc


def _layer_norm(g: GraphBuilder, x: str, w: np.ndarray, b: np.ndarray, hint: str) -> str:
    return g.op(
        "LayerNormalization",
        x,
        g.const(hint + "_g", w.astype(np.float32)),
        g.const(hint + "_b", b.astype(np.float32)),
        axis=-1,
        epsilon=LN_EPS,
    )


def _linear(g: GraphBuilder, x: str, w: np.ndarray, b: np.ndarray | None, hint: str) -> str:
    """x @ w.T (+ b) for a torch-layout weight w [out, in]."""
    y = g.op("MatMul", x, g.const(hint + "_w", np.ascontiguousarray(w.T, dtype=np.float32)))
    return y if b is None else g.op("Add", y, g.const(hint + "_b", b.astype(np.float32)))


def _convnext(g: GraphBuilder, x: str, blk: ConvNeXtWeights, mask: str | None, hint: str) -> str:
    """ConvNeXt block on channels-last x [B, T, C]."""
    y = _conv(g, x, blk.dw_w, blk.dw_b, mask, hint + "_dw", dilation=blk.dilation, depthwise=True)
    y = _layer_norm(g, y, blk.ln_w, blk.ln_b, hint + "_ln")
    y = _gelu(g, _linear(g, y, blk.pw1_w, blk.pw1_b, hint + "_pw1"))
    w2, b2 = blk.pw2_w.astype(np.float64), blk.pw2_b.astype(np.float64)
    if blk.scale is not None:  # fold the layer scale: (W x + b) * s == (s W) x + s b
        w2, b2 = w2 * blk.scale[:, None], b2 * blk.scale
    return g.op("Add", x, _linear(g, y, w2, b2, hint + "_pw2"))


# --------------------------------------------------------------------------- builders


def _mel_input(g: GraphBuilder, w: MelDecoderWeights, name: str | None = None) -> str:
    """Declare the decoder input (``hidden`` or ``codes`` unless ``name`` is given); return
    the name of the features [B, T, 2C] (the FSQ dequantised codes for the DVAE)."""
    if w.fsq is None:
        return g.input(name or "hidden", np.float32, ["batch", "frames", w.in_features])
    codes = g.input(name or "codes", np.int64, ["batch", "frames", w.fsq.n_columns])
    parts = []
    for gi, (tables, bias) in enumerate(zip(w.fsq.tables, w.fsq.biases, strict=True)):
        acc = g.const(f"fsq{gi}_b", bias)
        for r, tb in enumerate(tables):
            col = g.const(f"col{gi}{r}", np.int64(gi * len(tables) + r))
            idx = g.op("Gather", codes, col, axis=2)
            acc = g.op("Add", acc, g.op("Gather", g.const(f"fsq{gi}{r}", tb), idx, axis=0))
        parts.append(acc)
    return g.op("Concat", *parts, axis=-1) if len(parts) > 1 else parts[0]


def _mel_front(
    g: GraphBuilder, w: MelDecoderWeights, feats: str, mask_of: Any
) -> tuple[str, str | None]:
    """Upsample to the mel grid, then conv_in (Conv, GELU, Conv): [B,T,2C] -> [B,2T,hidden].

    Channels-last, the reference's split of the 2C channels into frames 2t (first half) and
    2t+1 (second half) is a plain reshape [B, T, 2C] -> [B, 2T, C].
    """
    x = g.op("Reshape", feats, g.const("shape_b2tc", np.array([0, -1, w.idim], np.int64)))
    mask = mask_of(x) if mask_of is not None else None
    y = _conv(g, x, w.conv_in0_w, w.conv_in0_b, mask, "in0")
    return _conv(g, _gelu(g, y), w.conv_in2_w, w.conv_in2_b, mask, "in2"), mask


def _mel_back(g: GraphBuilder, w: MelDecoderWeights, y: str, mask: str | None) -> str:
    """conv_out (k1) + out_conv + coef: [B, 2T, hidden] -> [B, 2T, n_mels]."""
    y = _conv(g, y, w.conv_out_w, None, mask, "conv_out")
    y = _conv(g, y, w.out_conv_w, None, mask, "out_conv")
    return g.op("Mul", y, g.const("coef", w.coef.astype(np.float32)))


def build_mel_graph(w: MelDecoderWeights) -> onnx.ModelProto:
    """Decoder (``w.kind == "hidden"``) or DVAE (``"codes"``) graph; see module docstring."""
    g = GraphBuilder("chattts-decoder" if w.kind == "hidden" else "chattts-dvae")
    lengths = g.input("lengths", np.int64, ["batch"])
    feats = _mel_input(g, w)
    y, mask = _mel_front(g, w, feats, lambda x: _mask(g, lengths, x, 2))
    for i, blk in enumerate(w.blocks):
        y = _convnext(g, y, blk, mask, f"blk{i}")
    mel = g.op("Transpose", _mel_back(g, w, y, mask), perm=[0, 2, 1])
    g.output(mel, "mel", np.float32, ["batch", w.n_mels, "mel_frames"])
    return g.build(doc=f"ChatTTS {w.kind} -> mel, builder {BUILDER_VERSION}")


def _vocos_front(g: GraphBuilder, v: VocosWeights, mel: str, mask: str | None) -> str:
    """Embed conv + LayerNorm: channels-last mel [B, F, n_mels] -> [B, F, dim]."""
    x = _conv(g, mel, v.embed_w, v.embed_b, mask, "embed")
    return _layer_norm(g, x, v.norm_w, v.norm_b, "norm")


def _vocos_head(g: GraphBuilder, v: VocosWeights, x: str) -> tuple[str, str]:
    """Final LayerNorm + ISTFT head: [B, F, dim] -> (real, imag) [B, F, n_bins]."""
    x = _layer_norm(g, x, v.final_w, v.final_b, "final")
    nb = v.n_bins
    logmag = _linear(g, x, v.head_w[:nb], v.head_b[:nb], "head_mag")
    phase = _linear(g, x, v.head_w[nb:], v.head_b[nb:], "head_phase")
    mag = g.op("Min", g.op("Exp", logmag), g.const("mag_clip", np.float32(MAG_CLIP)))
    return g.op("Mul", mag, g.op("Cos", phase)), g.op("Mul", mag, g.op("Sin", phase))


def build_vocos_graph(v: VocosWeights) -> onnx.ModelProto:
    """Vocos backbone + ISTFT head up to the complex spectrum (real, imag [B, F, bins])."""
    g = GraphBuilder("chattts-vocos")
    mel = g.input("mel", np.float32, ["batch", v.n_mels, "frames"])
    lengths = g.input("lengths", np.int64, ["batch"])
    x = g.op("Transpose", mel, perm=[0, 2, 1])
    mask = _mask(g, lengths, x, 1)
    x = _vocos_front(g, v, x, mask)
    for i, blk in enumerate(v.blocks):
        x = _convnext(g, x, blk, mask, f"blk{i}")
    re, im = _vocos_head(g, v, x)
    g.output(re, "real", np.float32, ["batch", "frames", v.n_bins])
    g.output(im, "imag", np.float32, ["batch", "frames", v.n_bins])
    return g.build(doc=f"ChatTTS Vocos -> spectrum, builder {BUILDER_VERSION}")


def stage_graphs(kind: str, w: MelDecoderWeights | VocosWeights) -> list[tuple[str, int, int, Any]]:
    """Layer-wise graphs for streaming: (name, radius, up, build()) per stage.

    Each graph maps one channels-last window ``x`` [1, T, C] -> ``y`` [1, up*T, C'] with
    'same' zero padding and no mask (a streaming window holds only real frames). Mel stacks:
    [input + conv_in], one per ConvNeXt block, [conv_out + out_conv]; Vocos: [embed + norm],
    blocks, [norm + head] (``y`` = real and imaginary parts side by side, [1, F, 2*n_bins]).
    """
    out: list[tuple[str, int, int, Any]] = []

    def block_stage(blk: ConvNeXtWeights) -> Any:
        def build() -> onnx.ModelProto:
            c = int(blk.dw_w.shape[0])
            g = GraphBuilder("stage")
            x = g.input("x", np.float32, [1, "frames", c])
            g.output(_convnext(g, x, blk, None, "blk"), "y", np.float32, [1, "frames", c])
            return g.build()

        return build

    if isinstance(w, MelDecoderWeights):

        def front() -> onnx.ModelProto:
            g = GraphBuilder("stage")
            y, _ = _mel_front(g, w, _mel_input(g, w, "x"), None)
            g.output(y, "y", np.float32, [1, "frames", int(w.conv_in2_w.shape[0])])
            return g.build()

        def back() -> onnx.ModelProto:
            g = GraphBuilder("stage")
            x = g.input("x", np.float32, [1, "frames", int(w.conv_out_w.shape[1])])
            g.output(_mel_back(g, w, x, None), "y", np.float32, [1, "frames", w.n_mels])
            return g.build()

        r_front = w.conv_in0_w.shape[-1] // 2 + w.conv_in2_w.shape[-1] // 2
        out.append((f"{kind}-in", int(r_front), 2, front))
        for i, blk in enumerate(w.blocks):
            out.append((f"{kind}-blk{i}", blk.radius, 1, block_stage(blk)))
        r_back = w.conv_out_w.shape[-1] // 2 + w.out_conv_w.shape[-1] // 2
        out.append((f"{kind}-out", int(r_back), 1, back))
        return out

    v = w

    def vfront() -> onnx.ModelProto:
        g = GraphBuilder("stage")
        x = g.input("x", np.float32, [1, "frames", v.n_mels])
        g.output(_vocos_front(g, v, x, None), "y", np.float32, [1, "frames", v.dim])
        return g.build()

    def vhead() -> onnx.ModelProto:
        g = GraphBuilder("stage")
        x = g.input("x", np.float32, [1, "frames", v.dim])
        re, im = _vocos_head(g, v, x)
        g.output(g.op("Concat", re, im, axis=-1), "y", np.float32, [1, "frames", 2 * v.n_bins])
        return g.build()

    out.append(("vocos-in", v.embed_w.shape[-1] // 2, 1, vfront))
    for i, blk in enumerate(v.blocks):
        out.append((f"vocos-blk{i}", blk.radius, 1, block_stage(blk)))
    out.append(("vocos-head", 0, 1, vhead))
    return out


# --------------------------------------------------------------------------- runner


def make_session(path: Path, *, device: str = "cpu", threads: int | None = None) -> Any:
    """An ORT session with all graph optimisations; CUDA EP first when asked and present."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = int(threads) if threads else min(os.cpu_count() or 1, 8)
    so.inter_op_num_threads = 1
    # No busy-waiting: the streaming vocoder alternates between ~24 small sessions (and the
    # GPT's), and idle pools spinning on the same cores slowed each run ~10x.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    providers: list[str | tuple[str, dict[str, int]]] = ["CPUExecutionProvider"]
    if device.startswith("cuda"):
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise AudioModelError("device 'cuda' requested but onnxruntime has no CUDA provider")
        dev_id = int(device.split(":")[1]) if ":" in device else 0
        providers = [("CUDAExecutionProvider", {"device_id": dev_id}), "CPUExecutionProvider"]
    elif device != "cpu":
        raise AudioModelError(f"unknown ONNX device {device!r} (use 'cpu' or 'cuda[:N]')")
    from mixvox.engines.chattts.onnx_graph import graph_source

    return ort.InferenceSession(graph_source(path), sess_options=so, providers=providers)


class OnnxAudioBackend:
    """ONNX Runtime runner of the three graphs (sessions made once, reused for every call)."""

    name = "onnx"

    def __init__(
        self,
        decoder: MelDecoderWeights | None,
        dvae: MelDecoderWeights | None,
        vocos: VocosWeights,
        *,
        device: str = "cpu",
        cache_dir: Path | str | None = None,
        threads: int | None = None,
    ) -> None:
        self.graph_paths: dict[str, Path] = {}
        self._sessions: dict[str, Any] = {}
        self._stages: dict[str, list[StreamStage]] = {}
        self._weights: dict[str, MelDecoderWeights | VocosWeights] = {"vocos": vocos}
        self._weights.update({w.kind: w for w in (decoder, dvae) if w is not None})
        self._cache_dir, self._device, self._threads = cache_dir, device, threads
        for w in (decoder, dvae):
            if w is None:
                continue
            name = "chattts-decoder" if w.kind == "hidden" else "chattts-dvae"
            p = cached_graph(
                name,
                {"weights": w.sha256, "builder": BUILDER_VERSION},
                functools.partial(build_mel_graph, w),
                cache_dir,
            )
            self.graph_paths[w.kind] = p
            self._sessions[w.kind] = make_session(p, device=device, threads=threads)
        p = cached_graph(
            "chattts-vocos",
            {"weights": vocos.sha256, "builder": BUILDER_VERSION},
            lambda: build_vocos_graph(vocos),
            cache_dir,
        )
        self.graph_paths["vocos"] = p
        self._sessions["vocos"] = make_session(p, device=device, threads=threads)

    def stream_stages(self, kind: str) -> list[StreamStage]:
        """Layer-wise sessions for the streaming vocoder (built and cached on first use)."""
        if kind in self._stages:
            return self._stages[kind]
        w = self._weights.get(kind)
        if w is None:
            raise AudioModelError(f"no model loaded for {kind!r}")
        stages = []
        for name, radius, up, build in stage_graphs(kind, w):
            path = cached_graph(
                f"chattts-stage-{name}",
                {"weights": w.sha256, "builder": BUILDER_VERSION},
                build,
                self._cache_dir,
            )
            sess = make_session(path, device=self._device, threads=self._threads)

            def fn(x: np.ndarray, sess: Any = sess) -> np.ndarray:
                return sess.run(["y"], {"x": np.ascontiguousarray(x[None])})[0][0]

            stages.append(StreamStage(name, radius, up, fn))
        self._stages[kind] = stages
        return stages

    def mel(self, kind: str, x: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        sess = self._sessions.get(kind)
        if sess is None:
            raise AudioModelError(f"no mel decoder loaded for source {kind!r}")
        feed = {
            "hidden" if kind == "hidden" else "codes": np.ascontiguousarray(x),
            "lengths": np.asarray(lengths, dtype=np.int64),
        }
        return sess.run(["mel"], feed)[0]

    def spec(self, mel: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        feed = {
            "mel": np.ascontiguousarray(mel, dtype=np.float32),
            "lengths": np.asarray(lengths, dtype=np.int64),
        }
        re, im = self._sessions["vocos"].run(["real", "imag"], feed)
        return np.swapaxes(re, 1, 2), np.swapaxes(im, 1, 2)
