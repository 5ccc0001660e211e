"""The one shared engine of ``mixvox serve``: loaded once, fed from a bounded queue.

Why threads and not the event loop: synthesis is seconds of CPU (or GPU) work per request and
would freeze every other connection (a known flaw of some TTS servers' examples). Two worker
threads form a pipeline:

* **prepare**: routes and chunks the next request's text (language spans, normalization, G2P:
  pure CPU in Python) while
* **synthesize** runs the engine for the current request, encodes each piece and hands the
  bytes to the request's asyncio queue as soon as they exist.

Requests are served in arrival order. ``max_queue`` bounds how many wait (beyond the one being
synthesized and the one prepared); a full queue is refused up front (HTTP 429) instead of
piling up memory and latency. A request whose client went away (or whose deadline passed) is
cancelled: skipped if it is still waiting, and otherwise its engine stream is closed at the
next piece, which stops the engine's own decode loop.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mixvox.encoders import StreamEncoder
from mixvox.interfaces import MixvoxError
from mixvox.pipeline import Router, Synthesizer
from mixvox.subtitles import Prepared, Timeline, options_for, prepare, render

log = logging.getLogger("mixvox.server")


class QueueFull(MixvoxError):
    """Too many requests are waiting; ``retry_after`` is a guess in seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the speech queue is full; try again later")
        self.retry_after = retry_after


class NotReady(MixvoxError):
    """The engine is still loading (or failed to load)."""


@dataclass
class Job:
    """One synthesis request travelling through the worker threads."""

    text: str
    fmt: str
    overrides: dict[str, Any]
    loop: asyncio.AbstractEventLoop
    raw: bool = False
    router: Router | None = None
    captioned: bool = False
    deadline: float = float("inf")
    out: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)
    cancel: threading.Event = field(default_factory=threading.Event)
    prepared: list[Prepared] | None = None
    timeline: Timeline | None = None
    audio_seconds: float = 0.0
    sample_rate: int = 0
    output_rate: int = 0  # the encoded audio's rate (pcm and opus may be resampled)
    status: str = "queued"  # queued, running, done, cancelled, timeout, error
    error: BaseException | None = None

    def emit(self, item: Any) -> None:
        """Hand ``item`` (bytes, :data:`END` or an exception) to the request's event loop."""
        try:
            self.loop.call_soon_threadsafe(self.out.put_nowait, item)
        except RuntimeError:  # the loop is gone (server stopping): nobody listens any more
            self.cancel.set()

    def stopped(self) -> bool:
        if self.cancel.is_set():
            return True
        if time.monotonic() > self.deadline:
            self.status = "timeout"
            return True
        return False


#: The last item of every job's stream.
END = object()


class Worker:
    """Loads the engine (in the background) and runs jobs through prepare -> synthesize."""

    def __init__(
        self,
        build: Callable[[], Synthesizer],
        *,
        max_queue: int = 16,
        on_load_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        self._build = build
        self.max_queue = max_queue
        self.tts: Synthesizer | None = None
        self.state = "loading"  # loading, ready, failed, closed
        self.load_error: str | None = None
        self.load_seconds: float | None = None
        self._on_load_error = on_load_error
        self._prep_q: queue.Queue[Job | None] = queue.Queue()
        self._synth_q: queue.Queue[Job | None] = queue.Queue(maxsize=1)
        self._lock = threading.Lock()
        self._waiting = 0  # submitted, not yet synthesizing
        self._busy = 0  # 0 or 1: being synthesized
        self._job_seconds = 1.0  # running average of a job's synthesis time (for Retry-After)
        self._threads: list[threading.Thread] = []

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> None:
        t = threading.Thread(target=self._load, name="mixvox-load", daemon=True)
        t.start()
        self._threads.append(t)

    def _load(self) -> None:
        t0 = time.perf_counter()
        try:
            self.tts = self._build()
        except BaseException as exc:  # reported through /health and the serve command
            self.state = "failed"
            self.load_error = str(exc) or type(exc).__name__
            log.error("engine failed to load: %s", self.load_error)
            if self._on_load_error is not None:
                self._on_load_error(exc)
            return
        try:  # load the frontends now (jieba, G2P tables), not on the first request
            self.tts.router.chunks(self.tts.route("预热 warm up 1."))
        except Exception as exc:  # only a warm-up: a real request reports real trouble
            log.warning("warm-up failed: %s: %s", type(exc).__name__, exc)
        self.load_seconds = time.perf_counter() - t0
        for name, target in (
            ("mixvox-prepare", self._prepare_loop),
            ("mixvox-synth", self._synth_loop),
        ):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        self.state = "ready"
        log.info("engine %s ready in %.1f s", self.tts.engine_name, self.load_seconds)

    def close(self) -> None:
        """Stop the threads after the jobs already accepted, then close the engine."""
        if self.state == "closed":
            return
        was_ready = self.state == "ready"
        self.state = "closed"
        if was_ready:
            self._prep_q.put(None)
            for t in self._threads:
                if t.name != "mixvox-load":
                    t.join(timeout=30)
        if self.tts is not None:
            try:
                self.tts.close()
            except Exception as exc:  # closing must not hide the shutdown itself
                log.warning("closing the engine failed: %s", exc)

    # -- submitting --------------------------------------------------------------------------

    @property
    def queue_depth(self) -> int:
        return self._waiting

    @property
    def busy(self) -> int:
        return self._busy

    def submit(self, job: Job) -> None:
        if self.state == "loading":
            raise NotReady("the engine is still loading; try again in a few seconds")
        if self.state != "ready":
            raise NotReady(f"the engine is not available: {self.load_error or self.state}")
        with self._lock:
            if self._waiting >= self.max_queue:
                wait = (self._waiting + self._busy) * self._job_seconds
                raise QueueFull(max(1, int(wait + 0.999)))
            self._waiting += 1
        self._prep_q.put(job)

    # -- the threads -------------------------------------------------------------------------

    def _prepare_loop(self) -> None:
        assert self.tts is not None
        while True:
            job = self._prep_q.get()
            if job is None:
                self._synth_q.put(None)
                return
            if not job.stopped():
                try:
                    job.prepared = list(prepare(self.tts, job.text, raw=job.raw, router=job.router))
                except BaseException as exc:
                    job.error = exc
            self._synth_q.put(job)

    def _synth_loop(self) -> None:
        assert self.tts is not None
        while True:
            job = self._synth_q.get()
            if job is None:
                return
            with self._lock:
                self._waiting -= 1
                self._busy = 1
            t0 = time.perf_counter()
            try:
                self._run(job)
            finally:
                with self._lock:
                    self._busy = 0
                took = time.perf_counter() - t0
                self._job_seconds = 0.8 * self._job_seconds + 0.2 * took

    def _run(self, job: Job) -> None:
        tts = self.tts
        assert tts is not None
        if job.error is not None:
            job.status = "error"
            job.emit(job.error)
            return
        if job.stopped():
            if job.status != "timeout":
                job.status = "cancelled"
            job.emit(END)
            return
        job.status = "running"
        rate = tts.sample_rate
        job.sample_rate = rate
        enc = StreamEncoder(job.fmt, rate)
        job.output_rate = enc.output_rate
        job.timeline = Timeline(job.text, rate) if job.captioned else None
        opts = options_for(tts, dict(job.overrides))
        frames = 0
        try:
            for prep in job.prepared or []:
                gen = render(tts, prep, opts)
                try:
                    for piece, chunk in gen:
                        if job.stopped():
                            break
                        frames += len(piece.samples)
                        if job.timeline is not None:
                            job.timeline.add(piece, chunk, prep.offset)
                        data = enc.write(piece.samples)
                        if data:
                            job.emit(data)
                finally:
                    gen.close()  # stops the engine's decode if we broke out early
                if job.stopped():
                    break
            job.audio_seconds = frames / rate if rate else 0.0
            if job.stopped():
                if job.status != "timeout":
                    job.status = "cancelled"
                job.emit(END)
                return
            if frames:
                tail = enc.close()
                if tail:
                    job.emit(tail)
            job.status = "done"
            job.emit(END)
        except BaseException as exc:
            job.audio_seconds = frames / rate if rate else 0.0
            job.status = "error"
            job.error = exc
            log.warning("synthesis failed: %s: %s", type(exc).__name__, exc)
            job.emit(exc)
