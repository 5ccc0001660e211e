"""Incremental vocoding: GPT frames (hidden states or codes) in, waveform pieces out.

Every stage is a stack of 'same'-padded convolutions plus per-frame ops, so an output frame
depends only on a fixed window of input frames (the receptive field). Frames are final once
their whole window has arrived; :class:`StreamingVocoder` computes each frame once, from a
window of the buffered input with full left context and enough right context:

* mel stage (Decoder / DVAE): radius ``r_dec`` on the mel grid = conv_in (1 + 1) + n_layer *
  dilation * (kernel // 2) + conv_out (0) + out_conv (1). Full model: 2 + 12*2*3 + 1 = 75.
* Vocos stage: radius ``r_voc`` = embed (3) + n_layer * 3. Full model: 3 + 8*3 = 27.
* ISTFT: a sample is final once every frame overlapping it arrived (n_fft/hop - 1 = 3 frames).

So the full model needs 75 + 27 = 102 mel frames, 51 code frames (~1.1 s of audio), of right
context for exact output (DESIGN's "about 52"); the ISTFT then holds back the overlap of the
last frames (n_fft/2 samples) until the next ones arrive. The tiny test model needs 12. In
exact mode (``lookahead_frames=None``) the concatenated pieces equal the whole-utterance
decode up to float rounding (windows go through the same graphs at other lengths). A smaller
``lookahead_frames`` lowers the latency: frames are then finalised with partial right context
(zero padding, like an utterance end), computed once and never revised, so pieces still join
without gaps or overlaps, but the samples near each join differ from a whole decode (by how
much depends on the weights; with the random tiny weights the difference is large).

The work is split layer by layer (``AudioBackend.stream_stages``: one graph per ConvNeXt
block, plus the input and output convs of each stack). Each stage waits for its own radius
of right context and keeps only the inputs its next window can read, so every frame of every
layer is computed once plus ``2 * radius`` frames of overlap per step (radius 6 per Decoder
block, 3 per Vocos block) instead of re-decoding the prefix or a whole receptive field.
"""

from __future__ import annotations

import numpy as np

from mixvox.engines.chattts.audio.models import AudioModels, StreamStage
from mixvox.engines.chattts.audio.vocos import StreamingISTFT
from mixvox.engines.chattts.audio.weights import (
    SOURCES,
    AudioModelError,
    check_codes,
    check_hidden,
)


class _StageState:
    """Window bookkeeping of one stage: buffered final inputs, outputs produced so far.

    Output frame m (on this stage's output grid, ``up`` per input frame) reads inputs
    (m - radius) // up .. (m + radius) // up; it is final once those inputs are final, or
    once the stream ended (zero padding past the end, as in the whole decode). ``lookahead``
    (<= radius) is the right context actually waited for.
    """

    def __init__(self, stage: StreamStage, lookahead: int) -> None:
        self.stage = stage
        self.lookahead = lookahead
        self.buf: np.ndarray | None = None
        self.base = 0  # global index of buf's first frame
        self.n_in = 0  # inputs received
        self.done = 0  # outputs produced

    def final(self, n_in: int, ended: bool) -> int:
        up = self.stage.up
        return up * n_in if ended else max(0, up * n_in - self.lookahead)

    def push(self, x: np.ndarray, ended: bool) -> np.ndarray | None:
        """Add final inputs [n, C]; return the new final outputs [m, C'] (None if none)."""
        if x.shape[0]:
            self.buf = x if self.buf is None else np.concatenate([self.buf, x], axis=0)
            self.n_in += x.shape[0]
        fin, up, r = self.final(self.n_in, ended), self.stage.up, self.stage.radius
        if fin <= self.done:
            return None
        assert self.buf is not None
        lo = max(0, (self.done - r) // up)
        hi = min(self.n_in, (fin - 1 + r) // up + 1)
        y = self.stage.fn(self.buf[lo - self.base : hi - self.base])
        out = y[self.done - up * lo : fin - up * lo]
        self.done = fin
        keep = max(0, (fin - r) // up)  # first input the next window can need
        self.buf = self.buf[keep - self.base :]
        self.base = keep
        return out


def _share(budget: int, radii: list[int]) -> list[int]:
    """Split ``budget`` look-ahead frames over stages in proportion to their radii, summing to
    the budget (largest remainders first; each at most its radius). Plain floor division gave
    most 6-radius Decoder blocks nothing for small budgets, so look-ahead 4 and 8 acted alike.
    """
    total = sum(radii)
    exact = [r * budget / total for r in radii]
    las = [int(x) for x in exact]
    order = sorted(range(len(radii)), key=lambda i: las[i] - exact[i])
    for i in order[: max(0, budget - sum(las))]:
        las[i] = min(radii[i], las[i] + 1)
    return las


class StreamingVocoder:
    """Feed frames as the GPT produces them; get new float32 waveform pieces back.

    ``source``: "hidden" (GPT hidden states [n, H] through the Decoder, the reference's
    default ``use_decoder=True``) or "codes" ([n, 4] ints through the DVAE).
    ``first_chunk_frames`` / ``chunk_frames``: a piece is returned once at least that many
    code frames' worth of samples (512 each) are final (first piece / later pieces); smaller
    pieces are held back, :meth:`finish` returns the rest. ``lookahead_frames``: right
    context (code frames) waited for before samples are final; None = the exact receptive
    field (:meth:`AudioModels.receptive_field`), smaller = earlier but approximate.

    Work is layer by layer (``AudioBackend.stream_stages``): each stage keeps only the
    inputs its next window needs and computes every output frame once, so a step costs
    about ``new + 2 * radius`` frames per layer instead of re-decoding the prefix.
    """

    def __init__(
        self,
        models: AudioModels,
        source: str = "hidden",
        *,
        first_chunk_frames: int = 8,
        chunk_frames: int = 16,
        lookahead_frames: int | None = None,
    ) -> None:
        if source not in SOURCES:
            raise AudioModelError(f"source must be one of {SOURCES}, got {source!r}")
        if first_chunk_frames < 1 or chunk_frames < 1:
            raise AudioModelError("first_chunk_frames and chunk_frames must be >= 1")
        if lookahead_frames is not None and lookahead_frames < 0:
            raise AudioModelError("lookahead_frames must be >= 0 (or None for exact output)")
        self.models = models
        self.source = source
        self.weights = models.weights_for(source)
        stages = models.backend.stream_stages(source) + models.backend.stream_stages("vocos")
        total = sum(st.radius for st in stages)  # mel frames of right context for exactness
        self.exact_lookahead = models.receptive_field(source)["code_frames"]
        self.exact = lookahead_frames is None or 2 * lookahead_frames >= total
        if self.exact:
            las = [st.radius for st in stages]
        else:  # share the budget in proportion to each stage's radius
            las = _share(2 * int(lookahead_frames or 0), [st.radius for st in stages])
        self._stages = [_StageState(st, la) for st, la in zip(stages, las, strict=True)]
        self.first_chunk_frames = first_chunk_frames
        self.chunk_frames = chunk_frames
        self.spf = models.samples_per_frame
        vw = models.vocos_weights
        self._n_bins = vw.n_bins
        self._istft = StreamingISTFT(vw.window, vw.hop)
        self._pending: list[np.ndarray] = []  # input frames not yet pushed into stage 0
        self.frames_received = 0
        self.samples_emitted = 0
        self.finished = False

    # -- bookkeeping ------------------------------------------------------------------------
    def final_samples(self, ended: bool = False) -> int:
        """Samples final after the frames received so far (closed form, runs nothing)."""
        n = self.frames_received
        for st in self._stages:
            n = st.final(n, ended)
        hop, n_fft = self._istft.hop, self._istft.n_fft
        if ended:
            return max(0, (n - 1) * hop)
        return max(0, min(n * hop - n_fft // 2, (n - 1) * hop))

    def _check(self, frames: np.ndarray) -> np.ndarray:
        a = np.asarray(frames)
        if a.ndim == 1:
            a = a[None]
        if self.source == "hidden":
            return check_hidden(a, self.weights.in_features)
        assert self.weights.fsq is not None
        return check_codes(a, self.weights.fsq)

    # -- public -------------------------------------------------------------------------------
    def feed(self, frames: np.ndarray) -> np.ndarray:
        """Add new frames ([n, C] or one [C]); return newly final samples (may be empty)."""
        if self.finished:
            raise AudioModelError("feed() after finish(): start a new StreamingVocoder")
        a = self._check(frames)
        if a.shape[0]:
            self._pending.append(a)
            self.frames_received += a.shape[0]
        want = self.first_chunk_frames if self.samples_emitted == 0 else self.chunk_frames
        if self.final_samples() - self.samples_emitted < want * self.spf:
            return np.zeros(0, np.float32)
        return self._advance(False)

    def finish(self) -> np.ndarray:
        """End of stream: return every remaining sample (decoded with the utterance's end)."""
        if self.finished:
            return np.zeros(0, np.float32)
        out = self._advance(True)
        self.finished = True
        for st in self._stages:
            st.buf = None
        return out

    # -- work ----------------------------------------------------------------------------------
    def _advance(self, ended: bool) -> np.ndarray:
        if self._pending:
            x: np.ndarray | None = np.concatenate(self._pending, axis=0)
            self._pending = []
        else:
            x = np.zeros((0, 1), np.float32)
        for st in self._stages:
            x = st.push(np.zeros((0, 0), np.float32) if x is None else x, ended)
        out = np.zeros(0, np.float32)
        if x is not None:
            nb = self._n_bins
            out = self._istft.push(x[:, :nb].T, x[:, nb:].T)
        if ended:
            tail = self._istft.finish()
            out = np.concatenate([out, tail]) if out.size else tail
        self.samples_emitted += out.shape[0]
        return out
