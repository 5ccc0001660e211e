"""Overlapping pipeline stages connected by bounded queues.

Why: synthesis has three very different kinds of work — text preparation (Python, CPU),
GPT decoding (GPU or many CPU threads) and Decoder+vocoder (GPU or CPU). Run one after the
other, each waits for the others; run as stages in threads, text for sentence *n+1* is prepared
while sentence *n* decodes and sentence *n-1* is vocoded, and a long script keeps the
accelerator busy.

Properties this module guarantees (tested in ``tests/test_stages.py``):

* **Back-pressure.** Every queue is bounded (``maxsize``): a fast producer blocks instead of
  filling memory with prepared work.
* **Order.** Results come out in input order, whatever order the stages finish in.
* **Per-item errors.** An exception in any stage for one item becomes a :class:`Failed`
  result for that item; the other items go on.
* **Batching.** A stage may take up to ``batch`` items that are already waiting and process
  them together (the GPT stage decodes several sentences as one batch).
* **Cancellation.** ``cancel()`` (or closing the result iterator, or an exception in the
  consumer) stops every stage promptly. The consumer waits up to each stage's ``stop_wait``
  for the item that stage holds (a file being written is finished, not cut). A thread still
  busy when that wait ends finishes its item and then stops: each run has its own cancel
  flag, never reset, so such a thread never takes another item (before, a late thread was
  woken by the next run's reset and went on with the next lines after a stop).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

_DONE = object()

#: How long a stop waits, by default, for a stage's thread to finish the item it holds.
DEFAULT_STOP_WAIT = 5.0


@dataclass
class Failed:
    """The result of an item that failed: which stage, and the exception."""

    index: int
    item: Any
    stage: str
    error: BaseException

    def __str__(self) -> str:
        return (
            f"item {self.index} failed in {self.stage}: {type(self.error).__name__}: {self.error}"
        )


@dataclass
class Stage:
    """A stage: ``fn(item) -> item`` or, with ``batch > 1``, ``fn([items]) -> [items]``.

    ``stop_wait`` (seconds; default :data:`DEFAULT_STOP_WAIT`) bounds how long a stop waits for
    this stage's current item: long for a stage that writes files (an fsync on a busy disk can
    take tens of seconds, and a cut write leaves a ``.part``), short for one that may compute
    for minutes.
    """

    name: str
    fn: Callable[[Any], Any]
    batch: int = 1
    stop_wait: float | None = None
    #: With ``batch > 1``: how long (seconds) to wait for more items when fewer than
    #: ``batch`` are waiting. 0 (the default) never waits; a little helps the first group,
    #: which otherwise starts alone while the stage before it is still warming up.
    gather: float = 0.0


@dataclass
class _Fatal:
    """A BaseException (Ctrl-C) raised inside a stage, on its way to the consumer."""

    error: BaseException


@dataclass
class _Envelope:
    index: int
    value: Any
    failed: Failed | None = None


class Cancelled(Exception):
    """Raised inside stages when the pipeline is cancelled."""


class Pipeline:
    """Run ``stages`` over items in threads; iterate over ``run(items)`` for results in order."""

    def __init__(self, stages: Sequence[Stage], *, maxsize: int = 4) -> None:
        if not stages:
            raise ValueError("a pipeline needs at least one stage")
        self.stages = list(stages)
        self.maxsize = max(1, maxsize)
        self._cancel = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    # -- plumbing -------------------------------------------------------------------------------

    def _put(self, q: queue.Queue, obj: Any, cancel: threading.Event) -> bool:
        while not cancel.is_set():
            try:
                q.put(obj, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _get(self, q: queue.Queue, cancel: threading.Event) -> Any:
        while not cancel.is_set():
            try:
                return q.get(timeout=0.05)
            except queue.Empty:
                continue
        raise Cancelled

    def _feed(self, items: Iterable[Any], out: queue.Queue, cancel: threading.Event) -> None:
        try:
            for i, item in enumerate(items):
                if not self._put(out, _Envelope(i, item), cancel):
                    return
        except BaseException as exc:  # the input iterator itself failed
            self._put(out, _Envelope(-1, None, Failed(-1, None, "input", exc)), cancel)
        self._put(out, _DONE, cancel)

    def _work(
        self, stage: Stage, inq: queue.Queue, out: queue.Queue, cancel: threading.Event
    ) -> None:
        try:
            self._work_loop(stage, inq, out, cancel)
        except BaseException as exc:  # KeyboardInterrupt/SystemExit in a stage: pass it on,
            self._put(out, _Fatal(exc), cancel)  # after the items before it, to the consumer

    def _work_loop(
        self, stage: Stage, inq: queue.Queue, out: queue.Queue, cancel: threading.Event
    ) -> None:
        try:
            while True:
                env = self._get(inq, cancel)
                if env is _DONE or isinstance(env, _Fatal):
                    self._put(out, env, cancel)
                    return
                group = [env]
                done_after: Any = None
                # take what is already waiting; wait for more only up to ``gather`` seconds
                deadline = time.monotonic() + stage.gather
                while len(group) < stage.batch:
                    try:
                        left = deadline - time.monotonic()
                        nxt = inq.get(timeout=left) if left > 0 else inq.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is _DONE or isinstance(nxt, _Fatal):
                        done_after = nxt  # forwarded after this group
                        break
                    group.append(nxt)
                live = [e for e in group if e.failed is None]
                if live:
                    self._process(stage, live)
                for e in group:
                    if not self._put(out, e, cancel):
                        return
                if done_after is not None:
                    self._put(out, done_after, cancel)
                    return
        except Cancelled:
            return

    def _process(self, stage: Stage, live: list[_Envelope]) -> None:
        if stage.batch > 1:
            try:
                outs = stage.fn([e.value for e in live])
                if len(outs) != len(live):
                    raise RuntimeError(f"stage {stage.name} returned {len(outs)} for {len(live)}")
                for e, v in zip(live, outs, strict=True):
                    if isinstance(v, BaseException):
                        e.failed = Failed(e.index, e.value, stage.name, v)
                    else:
                        e.value = v
                return
            except Exception as exc:
                if len(live) == 1:
                    live[0].failed = Failed(live[0].index, live[0].value, stage.name, exc)
                    return
                # retry one by one so that one bad item does not fail its batch-mates
            for e in live:
                try:
                    v = stage.fn([e.value])[0]
                except Exception as exc:
                    v = exc
                if isinstance(v, BaseException):  # returned or raised: this item failed
                    e.failed = Failed(e.index, e.value, stage.name, v)
                else:
                    e.value = v
            return
        for e in live:
            try:
                e.value = stage.fn(e.value)
            except Exception as exc:
                e.failed = Failed(e.index, e.value, stage.name, exc)

    # -- public ---------------------------------------------------------------------------------

    def run(self, items: Iterable[Any]) -> Generator[Any, None, None]:
        """Yield each item's final value (or a :class:`Failed`) in input order."""
        queues: list[queue.Queue[Any]] = [
            queue.Queue(self.maxsize) for _ in range(len(self.stages) + 1)
        ]
        if self._threads:  # a run before this one: its flag stays set for its late threads
            self._cancel = threading.Event()
        cancel = self._cancel  # this run's own, never reset (see the module docstring)
        self._threads = [
            threading.Thread(
                target=self._feed,
                args=(items, queues[0], cancel),
                daemon=True,
                name="mixvox-feed",
            )
        ]
        waits = [DEFAULT_STOP_WAIT]
        for k, st in enumerate(self.stages):
            self._threads.append(
                threading.Thread(
                    target=self._work,
                    args=(st, queues[k], queues[k + 1], cancel),
                    daemon=True,
                    name=f"mixvox-{st.name}",
                )
            )
            waits.append(DEFAULT_STOP_WAIT if st.stop_wait is None else st.stop_wait)
        pending: dict[int, _Envelope] = {}
        nxt = 0
        try:
            # Started inside the try: a signal (SIGTERM as StopRequested) may arrive while the
            # threads start, and the ones already running must then be stopped too.
            for t in self._threads:
                t.start()
            while True:
                try:
                    env = self._get(queues[-1], cancel)
                except Cancelled:
                    return
                if env is _DONE:
                    break
                if isinstance(env, _Fatal):
                    raise env.error
                if env.index < 0:  # the input failed: report and stop
                    yield env.failed
                    break
                pending[env.index] = env
                while nxt in pending:
                    e = pending.pop(nxt)
                    yield e.failed if e.failed is not None else e.value
                    nxt += 1
        finally:
            cancel.set()
            for t, wait in zip(self._threads, waits, strict=True):
                if t.ident is not None:  # started
                    t.join(timeout=wait)
