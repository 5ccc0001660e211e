"""GPU-resident streaming vocoder: fixed windows, one CUDA graph per chunk size, own stream.

:class:`~.streaming.StreamingVocoder` walks the conv stacks layer by layer on windows whose
sizes change every step, with a host round trip per stage: right for the CPU, slow on a GPU
(~40 small synchronised launches per piece). :class:`WindowVocoder` instead decodes each
piece of ``N`` code frames from one **fixed window** of ``ctx + N + ctx`` frames through
Decoder (or DVAE) -> Vocos -> inverse FFT -> overlap-add in a single call, so the whole
piece is one CUDA graph replay (captured at load for every chunk size in
``chunk_sizes``), on its own CUDA stream (it overlaps the GPT's decoding), reading frames
that never leave the device and writing only the PCM piece back.

Why a fixed window is exact: every op is a 'same'-padded conv or per-frame. A mask of the
frames inside the utterance (positions before frame 0, and past the last frame received,
are zero) is applied before every conv, exactly as the batched whole decode masks padded
items, so a window reproduces the zero padding of the utterance's ends. An output sample
reads spectrum frames ``k/2 - 1`` either side of its code frame (``k = n_fft / hop``), each
of those ``r_voc`` mel frames of Vocos context and ``r_dec`` of Decoder context; so
``ctx = (r_dec + r_voc + k/2 - 1) // 2 + 1`` code frames each side (52 at full size) make
the centre ``N`` frames equal to the whole decode (float rounding aside; tested).

Reduced look-ahead: a window can run before its right context has arrived; the frames not
yet received are then masked like an utterance end, so samples near the newest frames are
approximate. :class:`WindowStream` with ``lookahead_frames < ctx`` does that for every
piece; :class:`~.faststart.FastStartVocoder` (``make_stream=``) uses it for the start only
and cross-fades into the exact stream, as on the CPU.

On the CPU (tests, CI) the same code runs eagerly: no stream, no graphs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mixvox.engines.chattts.audio.models import AudioModels
from mixvox.engines.chattts.audio.weights import (
    SOURCES,
    AudioModelError,
    check_codes,
    check_hidden,
)

__all__ = [
    "CHUNK_SIZES",
    "DeviceFrames",
    "WindowStream",
    "WindowVocoder",
]

#: Chunk sizes (code frames) with a captured graph; a piece of n frames runs in the smallest
#: size >= n (longer runs are split), so any piece size works.
CHUNK_SIZES = (8, 16, 32, 64)


@dataclass
class DeviceFrames:
    """GPT frames that stay on the device: ``data`` [n, C] (torch); ``ready`` a CUDA event
    recorded on the producer's stream once ``data`` is written (None: ready now)."""

    data: Any
    ready: Any = None

    def __len__(self) -> int:
        return int(self.data.shape[0])

    def numpy(self) -> np.ndarray:
        """A host copy (synchronises; for ``save_codes``, not for the audio path)."""
        if self.ready is not None:
            self.ready.synchronize()
        t = self.data
        return (t.float() if t.is_floating_point() else t).cpu().numpy()


def _wait(event: Any) -> None:
    """Wait for a CUDA event without holding the GIL (the GPT thread needs it)."""
    while not event.query():
        time.sleep(0.0002)


class WindowVocoder:
    """Decoder/DVAE + Vocos + ISTFT of one checkpoint as fixed-window pieces (see module).

    ``models``: :class:`AudioModels` on the torch backend (its weights, on its device and
    dtype, are used in place: no second copy). ``chunk_sizes``: pieces with a graph each.
    ``max_frames``: the longest utterance (code frames) a :class:`WindowStream` can take.
    ``graphs``: capture CUDA graphs (default: on CUDA); ``warmup``: capture / run every size
    now, so the first request is as fast as the next ones. Thread-safe: pieces of several
    streams run one at a time (a lock), each stream has its own frame buffer.
    """

    def __init__(
        self,
        models: AudioModels,
        source: str = "hidden",
        *,
        chunk_sizes: Sequence[int] = CHUNK_SIZES,
        max_frames: int = 2304,
        graphs: bool | None = None,
        warmup: bool = True,
    ) -> None:
        be: Any = models.backend  # the torch backend (checked here), not the protocol
        if not hasattr(be, "mel_masked") or not hasattr(be, "torch"):
            raise AudioModelError("the window vocoder needs the torch audio backend")
        if source not in SOURCES:
            raise AudioModelError(f"source must be one of {SOURCES}, got {source!r}")
        sizes = sorted({int(n) for n in chunk_sizes})
        if not sizes or sizes[0] < 1:
            raise AudioModelError("chunk_sizes must be positive frame counts")
        if max_frames < 1:
            raise AudioModelError("max_frames must be >= 1")
        torch = be.torch
        self.torch, self.backend, self.models, self.source = torch, be, models, source
        self.device, self.dtype = be.device, be.dtype
        self.cuda = self.device.type == "cuda"
        self.use_graphs = self.cuda if graphs is None else bool(graphs) and self.cuda
        self.sizes = sizes
        self.max_frames = int(max_frames)
        w = models.weights_for(source)
        vw = models.vocos_weights
        self.hop, self.n_fft, self.spf = vw.hop, vw.n_fft, models.samples_per_frame
        k = self.n_fft // self.hop
        self._k = k
        #: code frames of context each side that make a piece exact
        self.ctx = (w.radius + vw.radius + k // 2 - 1) // 2 + 1
        self.width = w.fsq.n_columns if w.fsq is not None else w.in_features
        self._in_dtype = torch.long if w.fsq is not None else self.dtype
        dev = self.device
        self.stream = torch.cuda.Stream(dev) if self.cuda else None
        self._lock = threading.Lock()
        self._off = torch.zeros((), dtype=torch.long, device=dev)
        self._hi = torch.zeros((), dtype=torch.long, device=dev)
        self._win = {n: self._zeros(self._window_len(n)) for n in sizes}
        self._ar = {n: torch.arange(self._window_len(n), device=dev) for n in sizes}
        nb = self.n_fft // 2 + 1
        dc = torch.ones(nb, 1, device=dev)
        dc[0] = dc[-1] = 0.0  # imaginary parts of DC and Nyquist are ignored (as numpy)
        self._dc = dc
        self._window = be._voc["window"].float()
        self._w2 = self._window**2
        self._stage = torch.zeros(
            (self.max_frames + sizes[-1]) * self.spf, dtype=torch.float32, device=dev
        )
        self._host = (
            torch.zeros(self._stage.shape[0], dtype=torch.float32, pin_memory=True)
            if self.cuda
            else None
        )
        self._graphs: dict[int, Any] = {}
        self._outs: dict[int, Any] = {}
        self._free: list[Any] = []  # frame buffers of finished streams, reused
        self.graph_error: str | None = None
        if warmup:
            self.warmup()

    # -- buffers --------------------------------------------------------------------------------
    def _window_len(self, n: int) -> int:
        return self.ctx + n + self.ctx

    def _zeros(self, t: int) -> Any:
        return self.torch.zeros((t, self.width), dtype=self._in_dtype, device=self.device)

    def buffer(self) -> Any:
        """A zeroed frame buffer for one stream: ``ctx`` leading zero frames, then frames."""
        with self._lock:
            buf = self._free.pop() if self._free else None
        with self.torch.inference_mode():
            if buf is None:
                return self._zeros(self.ctx + self.max_frames + self.sizes[-1] + self.ctx)
            buf.zero_()  # on the current (audio) stream, before the new frames are written
        return buf

    def release(self, buf: Any) -> None:
        with self._lock:
            if len(self._free) < 4:
                self._free.append(buf)

    # -- the piece ------------------------------------------------------------------------------
    def _compute(self, n: int) -> Any:
        """Samples of code frames [e, e + n) from the window in ``_win[n]``, where
        ``_off`` = e - ctx and ``_hi`` = frames valid (static tensors: graph-capturable)."""
        torch, be = self.torch, self.backend
        x = self._win[n]
        pos = self._ar[n] + self._off
        valid = (pos >= 0) & (pos < self._hi)
        mm = valid[:, None].expand(-1, 2).reshape(1, 1, -1).to(self.dtype)  # mel grid [1,1,2W]
        mel = be.mel_masked(self.source, x[None], mm)
        re, im = be.spec_masked(mel, mm)  # float32 [1, n_bins, 2W]
        spec = torch.complex(re[0], im[0] * self._dc)
        fm = mm[0, 0].float()
        frames = torch.fft.irfft(spec, n=self.n_fft, dim=0).T * (self._window * fm[:, None])
        env = fm[:, None] * self._w2[None]
        f, k, hop = frames.shape[0], self._k, self.hop
        y = torch.zeros((f + k - 1, hop), dtype=torch.float32, device=self.device)
        e = torch.zeros_like(y)
        fb, eb = frames.reshape(f, k, hop), env.reshape(f, k, hop)
        for i in range(k):
            y[i : i + f] += fb[:, i]
            e[i : i + f] += eb[:, i]
        q0 = 2 * hop * self.ctx + self.n_fft // 2
        seg = slice(q0, q0 + n * self.spf)
        return y.reshape(-1)[seg] / e.reshape(-1)[seg].clamp_min(1e-11)

    def _capture(self, n: int) -> None:
        torch = self.torch
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(2):  # allocator, cuFFT plans, kernels: before the capture
                self._compute(n)
        torch.cuda.current_stream(self.device).wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, pool=self._pool):
            out = self._compute(n)
        self._graphs[n], self._outs[n] = g, out

    def warmup(self) -> None:
        """Capture every chunk size's graph (CUDA) and run one short stream through each
        path, so no capture, plan or allocation is left for the first request."""
        torch = self.torch
        with torch.inference_mode():
            if self.use_graphs and not self._graphs:
                self._pool = torch.cuda.graph_pool_handle()
                try:
                    for n in self.sizes:
                        self._capture(n)
                except Exception as exc:  # pragma: no cover - depends on the GPU stack
                    self._graphs.clear()
                    self._outs.clear()
                    self.graph_error = f"{type(exc).__name__}: {exc}"
                    self.use_graphs = False
            zeros = np.zeros(
                (min(self.max_frames, self.ctx + 2 * self.sizes[-1]), self.width), np.float32
            )
            st = WindowStream(self, first_chunk_frames=1, chunk_frames=1)
            st.feed(zeros.astype(np.int64) if self._in_dtype == torch.long else zeros)
            st.finish()
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def run(self, buf: Any, done: int, upto: int, valid: int, keep: int) -> np.ndarray:
        """Samples of code frames [done, upto) of the stream in ``buf`` (``valid`` frames
        received), the first ``keep`` of them, as float32 numpy."""
        torch = self.torch
        with self._lock, torch.inference_mode():
            ctx = torch.cuda.stream(self.stream) if self.stream is not None else _Null()
            with ctx:
                total, e = 0, done
                self._hi.fill_(valid)
                while e < upto:
                    r = upto - e
                    n = next((s for s in self.sizes if s >= r), self.sizes[-1])
                    m = min(r, n)
                    self._win[n].copy_(buf[e : e + self._window_len(n)])
                    self._off.fill_(e - self.ctx)
                    if n in self._graphs:
                        self._graphs[n].replay()
                        out = self._outs[n]
                    else:
                        out = self._compute(n)
                    self._stage[total : total + m * self.spf].copy_(out[: m * self.spf])
                    total += m * self.spf
                    e += m
                total = min(total, keep)
                if self._host is None:
                    return self._stage[:total].numpy().copy()
                self._host[:total].copy_(self._stage[:total], non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(self.stream)
            _wait(ev)
            return self._host[:total].numpy().copy()


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None


class WindowStream:
    """One utterance through a :class:`WindowVocoder`: the :class:`~.streaming.
    StreamingVocoder` interface (``feed`` / ``finish``, same settings and output).

    ``feed`` takes numpy frames ([n, C] or [C], checked like the CPU path) or
    :class:`DeviceFrames` (GPT output left on the device; not re-checked, so no sync).
    ``lookahead_frames``: None (exact: ``ctx`` frames of right context) or fewer.
    """

    def __init__(
        self,
        vocoder: WindowVocoder,
        *,
        first_chunk_frames: int = 8,
        chunk_frames: int = 16,
        lookahead_frames: int | None = None,
    ) -> None:
        if first_chunk_frames < 1 or chunk_frames < 1:
            raise AudioModelError("first_chunk_frames and chunk_frames must be >= 1")
        if lookahead_frames is not None and lookahead_frames < 0:
            raise AudioModelError("lookahead_frames must be >= 0 (or None for exact output)")
        self.vocoder = vocoder
        self.first_chunk_frames = first_chunk_frames
        self.chunk_frames = chunk_frames
        self.exact_lookahead = vocoder.ctx
        self.exact = lookahead_frames is None or lookahead_frames >= vocoder.ctx
        self.lookahead = vocoder.ctx if self.exact else int(lookahead_frames or 0)
        self.spf = vocoder.spf
        self._buf: Any = None
        self.frames_received = 0
        self.frames_done = 0
        self.samples_emitted = 0
        self.finished = False

    def _append(self, frames: Any) -> None:
        v, torch = self.vocoder, self.vocoder.torch
        if isinstance(frames, DeviceFrames):
            t, ready = frames.data, frames.ready
            if t.ndim == 1:
                t = t[None]
            if t.ndim != 2 or t.shape[1] != v.width:
                raise AudioModelError(f"frames must be [n, {v.width}], got {tuple(t.shape)}")
        else:
            a = np.asarray(frames)
            if a.ndim == 1:
                a = a[None]
            w = v.models.weights_for(v.source)
            if w.fsq is None:
                a = check_hidden(a, w.in_features)
            else:
                a = check_codes(a, w.fsq)
            t, ready = torch.from_numpy(np.ascontiguousarray(a)), None
        n = int(t.shape[0])
        if not n:
            return
        if ready is None and t.device.type == "cuda" and v.stream is not None:
            ready = torch.cuda.Event()  # written on the caller's stream: wait for it
            ready.record()
        if self.frames_received + n > v.max_frames:
            raise AudioModelError(
                f"utterance longer than the window vocoder's {v.max_frames} frames"
            )
        with torch.inference_mode():
            ctx = torch.cuda.stream(v.stream) if v.stream is not None else _Null()
            with ctx:
                if self._buf is None:
                    self._buf = v.buffer()
                if ready is not None and v.stream is not None:
                    v.stream.wait_event(ready)
                lo = v.ctx + self.frames_received
                self._buf[lo : lo + n].copy_(t, non_blocking=True)
                if v.stream is not None and t.device.type == "cuda":
                    t.record_stream(v.stream)  # the producer's allocator must wait for us
        self.frames_received += n

    def feed(self, frames: Any) -> np.ndarray:
        """Add new frames; return newly final samples (may be empty)."""
        if self.finished:
            raise AudioModelError("feed() after finish(): start a new stream")
        self._append(frames)
        want = self.first_chunk_frames if self.samples_emitted == 0 else self.chunk_frames
        # at least the newest frame waits for finish(): the whole decode ends half a frame
        # early, so a stream that emitted everything could not end at the right length
        fin = max(0, self.frames_received - max(1, self.lookahead))
        if fin - self.frames_done < want:
            return np.zeros(0, np.float32)
        return self._run(fin, ended=False)

    def finish(self) -> np.ndarray:
        """End of stream: every remaining sample ((2n - 1) * hop in all, as the whole decode)."""
        if self.finished:
            return np.zeros(0, np.float32)
        self.finished = True
        out = np.zeros(0, np.float32)
        if self.frames_received:
            out = self._run(self.frames_received, ended=True)
        if self._buf is not None:
            self.vocoder.release(self._buf)
            self._buf = None
        return out

    def _run(self, upto: int, ended: bool) -> np.ndarray:
        n = self.frames_received
        keep = (upto - self.frames_done) * self.spf
        if ended:  # the whole decode ends half a code frame early ((2n - 1) * hop samples)
            keep = n * self.spf - self.vocoder.hop - self.samples_emitted
        out = self.vocoder.run(self._buf, self.frames_done, upto, n, keep)
        self.frames_done = upto
        self.samples_emitted += out.shape[0]
        return out
