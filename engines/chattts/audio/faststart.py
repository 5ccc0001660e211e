"""A fast first chunk: reduced look-ahead at the start, cross-faded into the exact stream.

Exact streaming (:class:`~.streaming.StreamingVocoder` with ``lookahead_frames=None``) waits
for the vocoder's whole receptive field of right context (51 code frames at full size,
about 1.1 s of audio) before its first sample is final, so on the CPU the first audio comes
after ~1 s. :class:`FastStartVocoder` runs two streams over the same frames:

* an **approximate** stream with a small look-ahead (``first_lookahead_frames``, e.g. 8):
  its samples are final early (zero padding stands in for the frames not yet decoded), so
  the first piece comes after ``first_chunk_frames + first_lookahead_frames`` frames, and
  its later pieces follow every ``first_chunk_frames`` frames, up to ``approx_frames``
  frames of audio (default: the exact look-ahead, 51 frames = 1.1 s at full size);
* the **exact** stream, fed the same frames. Once the approximate part has stopped and the
  exact stream has samples up to its end plus ``crossfade_samples``, the output fades
  linearly from the approximate samples to the exact ones over that window, and from then
  on only the exact stream runs: every sample after the fade equals the exact decode (float
  rounding aside).

Why the approximate part must stop: it runs ``lookahead - first_lookahead`` frames ahead of
the exact stream, so the exact stream only catches up once it is held. Held at ``a`` frames
of audio, playback does not starve if the GPT decodes ``R`` frames/s with ``a >= (exact
look-ahead - first_chunk - first_lookahead) * 46.875 / (R - 46.875)``: 31 frames at 100
frames/s (CPU int8), 16 at 150; the default 51 covers ``R >= 79`` with the default sizes.

The approximate part's difference from the exact decode is measured by
``bench/first_chunk.py`` (waveform and log-spectrum error) so users can choose. It costs a
second vocoder pass over those first frames.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from mixvox.engines.chattts.audio.models import AudioModels
from mixvox.engines.chattts.audio.streaming import StreamingVocoder
from mixvox.engines.chattts.audio.weights import AudioModelError

#: Default cross-fade between the approximate start and the exact stream (samples, ~43 ms).
CROSSFADE_SAMPLES = 1024


class FastStartVocoder:
    """Same interface as :class:`StreamingVocoder` (``feed`` / ``finish``); see the module.

    ``first_lookahead_frames``: right context (code frames) of the approximate start, ``>= 0``
    and smaller than the exact look-ahead (else this is plain exact streaming).
    ``chunk_frames``: piece size once exact. ``crossfade_samples``: length of the fade.
    ``approx_frames``: most code frames of approximate audio (None: the exact look-ahead).
    ``make_stream``: builds the two streams from ``first_chunk_frames``, ``chunk_frames`` and
    ``lookahead_frames`` keywords (default: :class:`StreamingVocoder` on ``models``;
    the GPU path passes :class:`~.window.WindowStream`, which has the same interface).
    """

    def __init__(
        self,
        models: AudioModels,
        source: str = "hidden",
        *,
        first_lookahead_frames: int = 8,
        first_chunk_frames: int = 8,
        chunk_frames: int = 16,
        crossfade_samples: int = CROSSFADE_SAMPLES,
        approx_frames: int | None = None,
        make_stream: Callable[..., Any] | None = None,
    ) -> None:
        if first_lookahead_frames < 0:
            raise AudioModelError("first_lookahead_frames must be >= 0")
        if crossfade_samples < 0:
            raise AudioModelError("crossfade_samples must be >= 0")
        if approx_frames is not None and approx_frames < 1:
            raise AudioModelError("approx_frames must be >= 1 (or None)")
        if make_stream is None:
            make_stream = functools.partial(StreamingVocoder, models, source)
        # fine-grained until the switch (so it is not delayed), chunk_frames after it
        self.exact = make_stream(first_chunk_frames=1, chunk_frames=1)
        self.chunk_frames = chunk_frames
        self.approx: Any = make_stream(
            first_chunk_frames=first_chunk_frames,
            chunk_frames=first_chunk_frames,
            lookahead_frames=first_lookahead_frames,
        )
        if self.approx.exact:  # the reduced look-ahead is no reduction: nothing to do
            self.approx = None
        self.fade = int(crossfade_samples)
        spf = models.samples_per_frame
        self.first_chunk_samples = first_chunk_frames * spf
        self.approx_limit = (approx_frames or self.exact.exact_lookahead) * spf
        self._ap = np.zeros(0, np.float32)  # approximate samples not yet emitted
        self._ex = np.zeros(0, np.float32)  # exact samples not yet emitted
        self._ap_base = 0  # global index of _ap[0]
        self._ex_base = 0  # global index of _ex[0]
        self.emitted = 0  # samples returned so far
        self.switched_at: int | None = 0 if self.approx is None else None
        self.finished = False

    @property
    def frames_received(self) -> int:
        return self.exact.frames_received

    def feed(self, frames: np.ndarray) -> np.ndarray:
        """Add new frames; return newly final samples (may be empty)."""
        if self.finished:
            raise AudioModelError("feed() after finish(): start a new vocoder")
        ex = self.exact.feed(frames)
        if self.approx is None:
            self.emitted += ex.size
            return ex
        self._ex = np.concatenate([self._ex, ex])
        self._ap = np.concatenate([self._ap, self.approx.feed(frames)])
        return self._step(ended=False)

    def finish(self) -> np.ndarray:
        """End of stream: the rest, exact (fading from the approximate start if still in it)."""
        if self.finished:
            return np.zeros(0, np.float32)
        self.finished = True
        ex = self.exact.finish()
        if self.approx is None:
            self.emitted += ex.size
            return ex
        self._ex = np.concatenate([self._ex, ex])
        self._ap = np.concatenate([self._ap, self.approx.finish()])
        return self._step(ended=True)

    def _step(self, ended: bool) -> np.ndarray:
        assert self.approx is not None
        e = self.emitted
        ex_end = self._ex_base + self._ex.size
        ap_end = self._ap_base + self._ap.size
        if ended:  # everything is final: fade over what the approximate stream has left
            return self._switch(e, min(self.fade, max(0, ap_end - e)))
        if e == 0 and ex_end > 0:  # exact audio before any approximate piece: no fade needed
            return self._switch(0, 0)
        if e > 0 and ex_end >= e + self.fade and ap_end >= e + self.fade:
            return self._switch(e, self.fade)
        # still approximate: emit all but the fade window, once the first piece is big enough
        upto = min(ap_end - self.fade, self.approx_limit)
        if upto <= e or (e == 0 and upto < self.first_chunk_samples):
            return np.zeros(0, np.float32)
        out = self._ap[e - self._ap_base : upto - self._ap_base]
        self.emitted = upto
        return out

    def _switch(self, e: int, fade: int) -> np.ndarray:
        """Fade from approximate to exact over [e, e + fade), then exact only."""
        assert self.approx is not None
        ex = self._ex[e - self._ex_base :]
        ap = self._ap[e - self._ap_base : e - self._ap_base + fade]
        fade = min(fade, ap.size, ex.size)
        out = ex.copy()
        if fade:
            r = (np.arange(fade, dtype=np.float32) + 0.5) / fade
            out[:fade] = (1 - r) * ap[:fade] + r * ex[:fade]
        self.approx = None
        self.exact.chunk_frames = self.chunk_frames
        self.switched_at = e
        self._ap = self._ex = np.zeros(0, np.float32)
        self.emitted = e + out.size
        return out
