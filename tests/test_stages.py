"""The stage pipeline: order, back-pressure, batching, per-item errors, cancellation."""

from __future__ import annotations

import threading
import time

import pytest

from mixvox.stages import Failed, Pipeline, Stage


def test_results_in_input_order_across_uneven_stages():
    def slow_odd(x):
        if x % 2:
            time.sleep(0.002)
        return x * 10

    p = Pipeline([Stage("a", lambda x: x + 1), Stage("b", slow_odd)], maxsize=2)
    assert list(p.run(range(50))) == [(i + 1) * 10 for i in range(50)]


def test_error_in_one_item_is_reported_and_the_rest_go_on():
    def boom(x):
        if x == 3:
            raise ValueError("bad sentence")
        return x

    out = list(Pipeline([Stage("prep", lambda x: x), Stage("gpt", boom)]).run(range(6)))
    assert [o for o in out if not isinstance(o, Failed)] == [0, 1, 2, 4, 5]
    (f,) = [o for o in out if isinstance(o, Failed)]
    assert f.index == 3 and f.stage == "gpt" and isinstance(f.error, ValueError)
    assert "bad sentence" in str(f)


def test_batching_groups_waiting_items_and_isolates_failures():
    seen = []

    def batch_fn(xs):
        seen.append(len(xs))
        if 7 in xs:
            raise RuntimeError("batch with 7 fails")
        return [x * 2 for x in xs]

    gate = threading.Event()

    def prep(x):
        if x == 0:
            gate.wait(1)  # let several items queue up behind the first
        return x

    p = Pipeline([Stage("prep", prep), Stage("gpt", batch_fn, batch=4)], maxsize=8)
    it = p.run(range(12))
    gate.set()
    out = list(it)
    assert [o for o in out if not isinstance(o, Failed)] == [x * 2 for x in range(12) if x != 7]
    assert [o.index for o in out if isinstance(o, Failed)] == [7]
    assert max(seen) > 1  # some calls really were batched


def test_a_batch_retried_one_by_one_keeps_returned_errors_as_failures():
    """A batch function that raises for the batch is retried item by item; an item whose
    retry *returns* an exception (the batch functions report per-item errors that way) is a
    failure, not a value passed on to the next stage."""

    def batch_fn(xs):
        if len(xs) > 1:
            raise RuntimeError("the whole batch failed")
        return [ValueError(f"bad {xs[0]}") if xs[0] % 2 else xs[0] * 10]

    gate = threading.Event()

    def prep(x):
        if x == 0:
            gate.wait(1)
        return x

    got_next: list = []
    p = Pipeline(
        [Stage("prep", prep), Stage("gpt", batch_fn, batch=4), Stage("next", got_next.append)],
        maxsize=8,
    )
    it = p.run(range(6))
    gate.set()
    out = list(it)
    assert [o.index for o in out if isinstance(o, Failed)] == [1, 3, 5]
    assert all(isinstance(o.error, ValueError) for o in out if isinstance(o, Failed))
    assert got_next == [0, 20, 40]


def test_gather_waits_a_little_for_a_fuller_group():
    """A batching stage with ``gather`` waits (briefly) for more items instead of starting
    with the first one alone; without it the first group is the first item only."""

    def prep(x):
        time.sleep(0.1)  # items arrive one by one, 100 ms apart
        return x

    sizes: dict[float, list[int]] = {}
    for gather in (0.0, 2.0):
        seen: list[int] = []

        def batch_fn(xs, seen=seen):
            seen.append(len(xs))
            time.sleep(0.05)
            return xs

        p = Pipeline([Stage("prep", prep), Stage("b", batch_fn, batch=4, gather=gather)], maxsize=8)
        assert list(p.run(range(8))) == list(range(8))
        sizes[gather] = seen
    assert sizes[0.0][0] == 1
    assert sizes[2.0][0] == 4 and sum(sizes[2.0]) == 8


def test_back_pressure_bounds_work_in_flight():
    produced = []

    def items():
        for i in range(100):
            produced.append(i)
            yield i

    p = Pipeline([Stage("a", lambda x: x)], maxsize=2)
    it = p.run(items())
    next(it)
    time.sleep(0.1)
    # feed queue (2) + stage holding one + output queue (2) + the one consumed, and no more
    assert len(produced) <= 8
    it.close()


def test_cancel_stops_all_threads():
    started = threading.Event()

    def slow(x):
        started.set()
        time.sleep(0.01)
        return x

    p = Pipeline([Stage("slow", slow)], maxsize=1)
    it = p.run(iter(range(10_000)))
    next(it)
    started.wait(1)
    it.close()  # the consumer goes away: everything stops
    for t in p._threads:
        assert not t.is_alive()


def test_a_thread_outliving_the_stop_wait_takes_no_more_items(monkeypatch):
    """A stage still busy when the stop's wait ends finishes its item and stops there: it is
    not woken to go on with the next items (before, the run's cancel flag was reset after the
    joins, and such a thread carried on after the stop)."""
    import mixvox.stages

    monkeypatch.setattr(mixvox.stages, "DEFAULT_STOP_WAIT", 0.05)
    holding, release = threading.Event(), threading.Event()
    seen: list[int] = []

    def stuck(x):
        seen.append(x)
        if x == 1:
            holding.set()
            release.wait(5)
        return x

    p = Pipeline([Stage("a", lambda x: x), Stage("stuck", stuck)], maxsize=1)
    it = p.run(iter(range(100)))
    assert next(it) == 0
    assert holding.wait(5)
    it.close()  # the stop: waits 0.05 s for "stuck", which holds item 1
    late = p._threads[-1]
    assert late.is_alive()  # still in its item when the wait ended
    release.set()
    late.join(5)
    assert not late.is_alive() and seen == [0, 1]
    # a later run of the same pipeline is not stopped by the old run's flag
    assert list(p.run(range(3))) == [0, 1, 2]


def test_a_stage_stop_wait_is_honoured(monkeypatch):
    """The consumer waits for a stage with a long ``stop_wait`` to finish its item (a file
    being written lands whole instead of being left half done)."""
    import mixvox.stages

    monkeypatch.setattr(mixvox.stages, "DEFAULT_STOP_WAIT", 0.05)
    holding = threading.Event()
    finished: list[int] = []

    def write(x):
        if x == 1:
            holding.set()
            time.sleep(0.5)
        finished.append(x)
        return x

    p = Pipeline([Stage("write", write, stop_wait=30)], maxsize=1)
    it = p.run(range(10))
    assert next(it) == 0
    assert holding.wait(5)
    it.close()
    assert finished == [0, 1] and not p._threads[-1].is_alive()


def test_an_interrupt_while_the_threads_start_stops_those_already_started(monkeypatch):
    """Ctrl-C or SIGTERM (raised in the consumer) can arrive while ``run`` starts its threads;
    the ones already started must be stopped, not left running (they went on writing the next
    lines' files after the batch had returned: a rare CI failure)."""
    seen: list[int] = []
    real_start = threading.Thread.start

    def start(self):
        if self.name == "mixvox-last":
            raise KeyboardInterrupt  # as a signal handler would, inside start()
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    p = Pipeline([Stage("first", lambda x: seen.append(x) or x), Stage("last", lambda x: x)])
    with pytest.raises(KeyboardInterrupt):
        next(p.run(iter(range(1000))))
    started = [t for t in p._threads if t.ident is not None]
    assert len(started) == 2 and not any(t.is_alive() for t in started)
    n = len(seen)
    time.sleep(0.2)
    assert len(seen) == n < 1000  # nothing more is taken after the stop


def test_failing_input_iterator_is_reported():
    def items():
        yield 1
        raise OSError("disk went away")

    out = list(Pipeline([Stage("a", lambda x: x)]).run(items()))
    assert out[0] == 1 and isinstance(out[1], Failed) and out[1].stage == "input"


def test_needs_a_stage():
    with pytest.raises(ValueError):
        Pipeline([])


def test_keyboard_interrupt_in_a_stage_reaches_the_consumer():
    def stop(x):
        if x == 2:
            raise KeyboardInterrupt
        return x

    p = Pipeline([Stage("a", stop)])
    got = []
    with pytest.raises(KeyboardInterrupt):
        for v in p.run(range(10)):
            got.append(v)
    assert got == [0, 1]
    assert not any(t.is_alive() for t in p._threads)
