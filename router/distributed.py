"""Batch synthesis on a Ray cluster: ``mixvox batch SCRIPT -o DIR --ray [ADDRESS]``.

Why Ray, and why this shape: narration users outgrow one machine and already run Ray
clusters, so mixvox scales out on Ray rather than on a scheduler of its own, while keeping
every promise of the local batch (:mod:`mixvox.batch`): numbered files, the JSONL manifest,
resume, atomic writes, the failure summary and the exit code. Those promises are kept by
the *driver*, which alone writes files and the manifest with the same functions as the
local batch; the cluster only computes.

* Routing and normalization run as Ray **tasks** (light CPU work, retried if a worker
  dies); each worker process keeps one :class:`~mixvox.pipeline.Router` per lexicon set.
* Synthesis runs in long-lived **engine actors** (one per GPU with ``gpus_per_worker=1``,
  or one per ``cpus_per_worker`` cores), each loading its engine once. Lines go to the
  actors in small batches, and each actor gets the routed batch as an object reference, so
  routing of later lines overlaps synthesis.
* Faults: actors restart (``max_restarts``) and their unfinished batch is retried
  (``max_task_retries``); a line that fails for its own reasons comes back as an error
  value, is reported once and never retried. A driver killed mid-run resumes from the
  manifest like the local batch.
* Back-pressure: the script is streamed from disk and at most ``2 x workers`` batches are
  in flight, so the driver's memory does not grow with the script.

The model directory and lexicon files must be visible at the same path on every node (a
shared file system); Ray must be installed on every node with the same mixvox version.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from mixvox.audio import Audio
from mixvox.batch import (
    MANIFEST,
    BatchItem,
    BatchLock,
    BatchResult,
    ManifestLog,
    SynthFactory,
    _progress,
    check_settings,
    clean_partials,
    fingerprint,
    iter_script_file,
    read_manifest_state,
    runs_by,
    success_record,
    triage,
)
from mixvox.interfaces import MixvoxError

#: Batches in flight per engine actor: one being synthesized, one routed and waiting.
INFLIGHT_PER_WORKER = 2


class RayUnavailable(MixvoxError):
    """Ray is not installed, or no cluster could be reached."""


@dataclass(frozen=True)
class SynthSpec:
    """A picklable recipe for a :class:`~mixvox.Synthesizer` (the Python API's factory).

    ``SynthSpec("espeak", lexicons=("my.toml",))(None)`` builds the Synthesizer on whichever
    node calls it; engine options are passed through as keyword arguments.
    """

    engine: str | None = None
    lexicons: tuple[str, ...] = ()
    speaker: str | None = None
    seed: int | None = None
    max_chunk_chars: int | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, engine: str | None = None) -> Any:
        from mixvox.pipeline import Synthesizer

        return Synthesizer(
            engine or self.engine,
            speaker=self.speaker,
            seed=self.seed,
            lexicons=self.lexicons,
            max_chunk_chars=self.max_chunk_chars,
            **self.options,
        )


@dataclass
class Routed:
    """One line after the routing task: what the engine actor speaks (or why not)."""

    item: BatchItem
    target: Any = None  # an Utterance, or the text itself with ``raw``
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0  # this line's share of its routing task


@dataclass
class Spoken:
    """One line after synthesis: samples for the driver to write, or the line's error."""

    item: BatchItem
    samples: np.ndarray | None = None
    sample_rate: int = 0
    engine: str | None = None
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    route_seconds: float = 0.0
    synth_seconds: float = 0.0


# ---------------------------------------------------------------------------------------------
# What runs on the cluster (plain functions and classes; wrapped by ray.remote at run time,
# so importing this module never needs Ray)
# ---------------------------------------------------------------------------------------------

_ROUTERS: dict[tuple[str, ...], Any] = {}


def route_lines(lexicons: Sequence[str], items: list[BatchItem], raw: bool) -> list[Routed]:
    """Route a batch of lines (a Ray task). Each worker process keeps its routers."""
    out: list[Routed] = []
    if raw:
        return [Routed(item, item.text) for item in items]
    t0 = time.perf_counter()
    key = tuple(lexicons)
    router = _ROUTERS.get(key)
    if router is None:
        from mixvox.pipeline import Router

        router = _ROUTERS[key] = Router(lexicons=key)
    for item in items:
        try:
            utt = router.route(item.text)
        except Exception as exc:  # one bad line must not sink its batch
            out.append(Routed(item, error=_describe(exc)))
            continue
        out.append(Routed(item, utt, [f"{w.code}: {w.message}" for w in utt.warnings]))
    share = (time.perf_counter() - t0) / max(len(out), 1)
    for r in out:
        r.seconds = share
    return out


class EngineWorker:
    """A long-lived engine actor: loads each engine once and speaks routed lines."""

    def __init__(self, make_synth: SynthFactory, default_engine: str | None) -> None:
        self.make_synth = make_synth
        self.default_engine = default_engine
        self.synths: dict[str | None, Any] = {}
        self.errors: dict[str | None, str] = {}

    def pid(self) -> int:
        return os.getpid()

    def _synth(self, name: str | None) -> Any:
        if name in self.errors:
            raise MixvoxError(self.errors[name])
        if name not in self.synths:
            try:
                self.synths[name] = self.make_synth(name)
            except MixvoxError as exc:
                self.errors[name] = str(exc)
                raise
        return self.synths[name]

    def synthesize(self, routed: list[Routed], overrides: dict[str, Any]) -> list[Spoken]:
        """Speak a batch of routed lines. Runs of lines for the same engine with the same
        options go to ``synthesize_batch`` together where the synthesizer decodes several at
        once (one decoder batch, as the local batch does); the rest one by one."""
        out: list[Spoken | None] = [None] * len(routed)
        jobs: list[tuple[int, str | None, Any, dict[str, Any]]] = []
        for k, r in enumerate(routed):
            item = r.item
            if r.error is not None:
                out[k] = Spoken(item, error=r.error, route_seconds=r.seconds)
                continue
            name = item.engine or self.default_engine
            kwargs = dict(overrides)
            if item.speaker is not None:
                kwargs["speaker"] = item.speaker
            if item.seed is not None:
                kwargs["seed"] = item.seed
            try:
                tts = self._synth(name)
            except Exception as exc:
                out[k] = Spoken(item, engine=name, error=_describe(exc))
                continue
            jobs.append((k, name, tts, kwargs))
        for run in runs_by(jobs, lambda job: (job[2], job[3])):
            tts, kwargs = run[0][2], run[0][3]
            t0 = time.perf_counter()
            if len(run) > 1 and getattr(tts, "batch_size", 1) > 1:
                results: list[Any] = tts.synthesize_batch(
                    [routed[k].target for k, *_ in run], **kwargs
                )
                each = (time.perf_counter() - t0) / len(run)
                for (k, name, _, _), res in zip(run, results, strict=True):
                    out[k] = self._spoken(routed[k], name, tts, res, each)
                continue
            for k, name, _, _ in run:
                t0 = time.perf_counter()
                try:
                    res = tts.synthesize(routed[k].target, **kwargs)
                except Exception as exc:
                    res = exc
                out[k] = self._spoken(routed[k], name, tts, res, time.perf_counter() - t0)
        return [s for s in out if s is not None]

    @staticmethod
    def _spoken(r: Routed, name: str | None, tts: Any, res: Any, seconds: float) -> Spoken:
        """One line's result: its audio, or its error (nothing said is an error too)."""
        if not isinstance(res, Exception) and len(res) == 0:
            why = "; ".join(r.warnings) or "no speakable text"
            res = MixvoxError(f"nothing to say ({why})")
        if isinstance(res, Exception):
            return Spoken(r.item, engine=name, error=_describe(res))
        return Spoken(
            r.item,
            np.ascontiguousarray(res.samples, dtype=np.float32),
            res.sample_rate,
            getattr(tts, "engine_name", name),
            r.warnings,
            route_seconds=r.seconds,
            synth_seconds=seconds,
        )

    def close(self) -> None:
        for tts in self.synths.values():
            try:
                tts.close()
            except Exception:
                pass


def _describe(exc: BaseException) -> str:
    if isinstance(exc, MixvoxError | OSError | ValueError):
        return str(exc) or type(exc).__name__
    return f"internal error: {type(exc).__name__}: {exc}"


# ---------------------------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "--ray needs Ray, which is not installed: pip install 'mixvox[ray]'"
        ) from None
    return ray


def connect(address: str | None, *, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address`` (``auto``: ``RAY_ADDRESS``) or start a local one.

    Returns whether this call started Ray (and so the caller shuts it down).
    """
    ray = _import_ray()
    if ray.is_initialized():
        return False
    common: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR"}
    try:
        if address is None or address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, **common)
        else:
            ray.init(address=address, **common)
    except ConnectionError as exc:
        where = "RAY_ADDRESS" if address == "auto" else repr(address)
        raise RayUnavailable(
            f"no Ray cluster at {where}: {exc}. Start one with `ray start --head`, or omit "
            "the address to start a local cluster for this run"
        ) from None
    return True


def _batches(items: Iterable[BatchItem], size: int) -> Iterator[list[BatchItem]]:
    batch: list[BatchItem] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _worker_count(ray: Any, cpus: float, gpus: float) -> int:
    res = ray.cluster_resources()
    if gpus > 0:
        n = int(res.get("GPU", 0) // gpus)
        if n < 1:
            raise RayUnavailable(
                f"the Ray cluster has {res.get('GPU', 0):g} GPU(s); an engine worker asks "
                f"for {gpus:g}"
            )
        return n
    return max(1, int(res.get("CPU", 1) // max(cpus, 1e-9)))


def run_on_ray(
    script: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    make_synth: SynthFactory,
    *,
    lexicons: Sequence[str] = (),
    jsonl: bool = False,
    fmt: str = "wav",
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: float = 1.0,
    gpus_per_worker: float = 0.0,
    lines_per_task: int = 8,
    default_engine: str | None = None,
    overrides: dict[str, Any] | None = None,
    force: bool = False,
    progress: bool = True,
    max_restarts: int = 3,
    stderr: TextIO | None = None,
    settings: Mapping[str, Any] | None = None,
    resume_changed: bool = False,
) -> BatchResult:
    """Speak every line of the script file into ``out_dir`` on a Ray cluster.

    ``make_synth`` must be picklable: it travels to the engine actors. ``lexicons`` must be
    the lexicon files ``make_synth`` uses, so that routing on the
    cluster matches what a local batch would do. Returns the same :class:`BatchResult` as
    :func:`mixvox.batch.run_batch`.
    """
    ray = _import_ray()
    err = stderr or sys.stderr
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lock = BatchLock(out)  # one run per output folder, as for a local batch
    lock.__enter__()
    clean_partials(out)
    manifest = out / MANIFEST
    state = read_manifest_state(manifest)
    records, bad = state.records, state.bad
    fp, norm = fingerprint(settings or {})
    if not force and not resume_changed:  # the same rule as a local batch, before writing
        try:
            check_settings(
                iter_script_file(script, jsonl=jsonl, fmt=fmt),
                state,
                fp,
                norm,
                out,
                default_engine,
            )
        except BaseException:
            lock.__exit__(None, None, None)
            raise
    if bad:
        print(
            f"mixvox: manifest {manifest} had {bad} unreadable line(s); they are dropped",
            file=err,
            flush=True,
        )
    total = sum(1 for _ in iter_script_file(script, jsonl=jsonl, fmt=fmt))
    result = BatchResult(total=total, manifest=manifest)
    opts = dict(overrides or {})
    raw = bool(opts.get("raw"))
    # ray.init installs its own SIGTERM/SIGINT handlers and shutdown leaves them: put back
    # the caller's once the run is over (a library must not change its host's signals)
    handlers = _signal_handlers()
    try:
        started = connect(address)
    except BaseException:
        lock.__exit__(None, None, None)
        _restore_signal_handlers(handlers)
        raise
    log = ManifestLog(manifest, records, dict(state.settings))
    log.add_settings(fp, norm)
    bar = _progress(total, progress)
    pending: dict[Any, tuple[int, list[BatchItem]]] = {}
    actors: list[Any] = []
    audio_seconds = 0.0
    t0 = time.monotonic()

    def fail(item: BatchItem, message: str, engine: str | None) -> None:
        rec: dict[str, Any] = {"line": item.line, "text": item.text, "error": message, "fp": fp}
        if engine:
            rec["engine"] = engine
        log.add(rec)
        result.failed.append((item.line, message))

    timings = result.timings
    for key in ("route", "synthesize", "write", "wait"):
        timings[key] = 0.0

    def finish(spoken: Spoken) -> None:
        nonlocal audio_seconds
        item = spoken.item
        timings["route"] += spoken.route_seconds
        timings["synthesize"] += spoken.synth_seconds
        t_write = time.perf_counter()
        if spoken.error is not None or spoken.samples is None:
            fail(item, spoken.error or "no audio", spoken.engine)
        else:
            audio = Audio(spoken.samples, spoken.sample_rate)
            try:
                audio.save(out / item.file)
            except Exception as exc:
                fail(item, _describe(exc), spoken.engine)
            else:
                rec = success_record(item, audio.duration, spoken.engine, spoken.warnings)
                rec["bytes"] = (out / item.file).stat().st_size
                rec["fp"] = fp
                log.add(rec)
                result.done += 1
                audio_seconds += audio.duration
        timings["write"] += time.perf_counter() - t_write
        bar.update(1)
        elapsed = max(time.monotonic() - t0, 1e-9)
        bar.set_postfix_str(f"{audio_seconds / elapsed:.2f} audio-s/s", refresh=False)

    def drain_one() -> None:
        t_wait = time.perf_counter()
        ready, _ = ray.wait(list(pending), num_returns=1)
        timings["wait"] += time.perf_counter() - t_wait
        ref = ready[0]
        idx, batch = pending.pop(ref)
        inflight[idx] -= 1
        try:
            spoken_list = ray.get(ref)
        except ray.exceptions.RayError as exc:  # the worker died for good (restarts used up)
            message = f"engine worker failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            for item in batch:
                fail(item, message, item.engine or default_engine)
                bar.update(1)
            return
        for spoken in spoken_list:
            finish(spoken)

    try:
        n = workers or _worker_count(ray, cpus_per_worker, gpus_per_worker)
        worker_cls = ray.remote(EngineWorker).options(
            num_cpus=cpus_per_worker,
            num_gpus=gpus_per_worker,
            max_restarts=max_restarts,
            max_task_retries=max_restarts,
        )
        # Routing asks for no CPU reservation: it is light, and engine actors may hold every
        # core of a small cluster; reserving would starve the routing behind them.
        route_task = ray.remote(num_cpus=0, max_retries=max_restarts)(route_lines)
        # The factory is passed by value (it is small): an actor restarted after a crash
        # rebuilds from its own copy, not from an object-store entry that may be gone.
        actors = [worker_cls.remote(make_synth, default_engine) for _ in range(n)]
        inflight = [0] * n
        lex = list(lexicons)

        def todo() -> Iterator[BatchItem]:
            for item in iter_script_file(script, jsonl=jsonl, fmt=fmt):
                if triage(item, records, out, default_engine, fp, force, result, fail):
                    yield item
                else:
                    bar.update(1)

        for batch in _batches(todo(), max(1, lines_per_task)):
            while len(pending) >= INFLIGHT_PER_WORKER * n:
                drain_one()
            idx = min(range(n), key=inflight.__getitem__)
            routed = route_task.remote(lex, batch, raw)
            ref = actors[idx].synthesize.remote(routed, opts)
            pending[ref] = (idx, batch)
            inflight[idx] += 1
        while pending:
            drain_one()
    except KeyboardInterrupt:
        result.interrupted = True
        for ref in pending:
            ray.cancel(ref, force=True)
    finally:
        bar.close()
        log.close()
        lock.__exit__(None, None, None)
        for actor in actors:
            try:
                ray.kill(actor)
            except Exception:
                pass
        if started:
            ray.shutdown()
        _restore_signal_handlers(handlers)
    return result


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: dict[int, Any]) -> None:
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


def synthesize_script(
    script: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    engine: str | None = None,
    lexicons: Sequence[str] = (),
    speaker: str | None = None,
    seed: int | None = None,
    address: str | None = None,
    workers: int | None = None,
    cpus_per_worker: float = 1.0,
    gpus_per_worker: float = 0.0,
    jsonl: bool | None = None,
    fmt: str = "wav",
    force: bool = False,
    progress: bool = False,
    **engine_options: Any,
) -> BatchResult:
    """The Python face of ``mixvox batch --ray``: speak a script file on a Ray cluster.

    >>> res = synthesize_script("script.txt", "out/", engine="espeak", address="auto")
    >>> res.ok, res.done, res.failed
    """
    spec = SynthSpec(engine, tuple(lexicons), speaker, seed, None, dict(engine_options))
    if jsonl is None:
        jsonl = str(script).lower().endswith(".jsonl")
    return run_on_ray(
        script,
        out_dir,
        spec,
        lexicons=list(lexicons),
        jsonl=jsonl,
        fmt=fmt,
        address=address,
        workers=workers,
        cpus_per_worker=cpus_per_worker,
        gpus_per_worker=gpus_per_worker,
        default_engine=engine,
        force=force,
        progress=progress,
    )


def spool_stdin(stream: Any, directory: str | os.PathLike[str]) -> Path:
    """Copy a script from stdin to a file (the cluster path streams the script twice)."""
    fd, name = tempfile.mkstemp(prefix=".stdin-script.", dir=directory)
    with os.fdopen(fd, "wb") as fh:
        shutil.copyfileobj(stream, fh)
    return Path(name)
