"""Batch synthesis: one utterance per script line, resumable, with a JSONL manifest.

Why the care: batch jobs run for hours over thousands of lines. They get interrupted (Ctrl-C,
SIGTERM, a full disk, a bad line), and rerunning must neither redo finished work nor trust
half-written files, nor keep audio made with other settings. So:

* one run at a time per output folder: an exclusive lock (:class:`BatchLock`, ``filelock``);
  a second run stops at once with a clear message;
* leftover ``.NAME.XXXX.part`` files of a killed run are removed at start (under the lock);
* every audio file is written atomically (:meth:`mixvox.audio.Audio.save`);
* every finished line is appended to ``manifest.jsonl`` with a checksum (``crc``) and
  fsync'd before the next one starts, so a torn last line is detected and dropped; at the end
  the manifest is compacted atomically, one record per line number;
* the manifest records a *settings fingerprint* (:func:`fingerprint`: engine, backend,
  precision, voice, speed, seed, lexicon contents, mixvox version, ...); a resume with other
  settings stops before writing anything (:class:`SettingsChanged`) unless told to redo all
  (``force``) or only the lines made with other settings (``resume_changed``);
* a line is skipped on resume only when its record says it succeeded with the same text,
  options and settings, and its file is still there with the recorded length;
* SIGTERM and SIGHUP stop the run like Ctrl-C (:func:`stop_on_signals`).

The pieces (:func:`read_script`, :func:`fingerprint`, :class:`ManifestLog`,
:func:`read_manifest_state`, :class:`BatchLock`, :func:`clean_partials`) are importable on
their own for other batch drivers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from mixvox.audio import FORMATS, atomic_write_bytes
from mixvox.interfaces import MixvoxError
from mixvox.stages import Failed, Pipeline, Stage

MANIFEST = "manifest.jsonl"
#: The lock file that keeps two runs out of one output folder.
LOCK_NAME = ".mixvox-batch.lock"


class BatchLocked(MixvoxError):
    """Another run holds the output folder."""


class SettingsChanged(MixvoxError):
    """A resume with settings other than those that made the recorded audio (exit status 2)."""

    exit_code = 2

    def __init__(self, message: str, changed: list[str]) -> None:
        super().__init__(message)
        self.changed = changed


#: Keys a JSONL script line may carry.
JSONL_KEYS = frozenset({"text", "speaker", "engine", "seed", "file"})

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,199}")


@dataclass
class BatchItem:
    """One script line to speak (or a line that could not even be read: ``error`` set)."""

    line: int
    text: str
    file: str = ""
    speaker: str | None = None
    engine: str | None = None
    seed: int | None = None
    error: str | None = None
    #: Why the line is not spoken at all (only quotes/punctuation): counted, not failed.
    skip: str | None = None


class ScriptItems(list):
    """The items of a script, plus what was left out: ``comments`` (``#`` lines)."""

    comments: int = 0


@dataclass
class BatchResult:
    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)
    interrupted: bool = False
    manifest: Path | None = None
    #: Lines with nothing speakable (only quotes/punctuation), skipped.
    unspeakable: int = 0
    #: ``#`` comment lines of the script.
    comments: int = 0
    #: The signal that stopped the run (SIGTERM, SIGHUP), if one did.
    signal: int | None = None
    #: Seconds spent per stage (filled by the cluster path: route, synthesize, write, wait).
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted


def number_width(n_lines: int) -> int:
    """Digits in file names: 4 (``0001``) and more once the script has over 9999 lines."""
    return max(4, len(str(max(n_lines, 1))))


def _describe_decode_error(raw: bytes, exc: UnicodeDecodeError) -> str:
    bad = raw[exc.start : exc.end].hex(" ")
    return f"not valid UTF-8 (byte(s) {bad} at byte offset {exc.start})"


def _check_file_name(name: object, fmt_ext: str) -> str:
    """A JSONL ``file`` value as a safe name inside the output folder (adds the extension)."""
    if not isinstance(name, str) or not name:
        raise ValueError("'file' must be a non-empty string")
    if not _SAFE_NAME.fullmatch(name) or ".." in name:
        raise ValueError(
            f"'file' {name!r} must be a plain file name (letters, digits, '.', '_', '-'; "
            "no folders)"
        )
    if name == MANIFEST or name.startswith(MANIFEST):
        raise ValueError(f"'file' {name!r} would clash with the manifest")
    suffix = Path(name).suffix.lower()
    if suffix in FORMATS:
        return name
    return name + fmt_ext


def _parse_jsonl(item: BatchItem, text: str, fmt_ext: str) -> None:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        item.error = f"invalid JSON: {exc.msg} (column {exc.colno})"
        return
    if not isinstance(obj, dict):
        item.error = 'a JSONL script line must be an object like {"text": "..."}'
        return
    unknown = sorted(set(obj) - JSONL_KEYS)
    if unknown:
        item.error = f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(JSONL_KEYS))})"
        return
    txt = obj.get("text")
    if not isinstance(txt, str):
        item.error = "'text' is missing or not a string"
        return
    item.text = txt
    for key in ("speaker", "engine"):
        val = obj.get(key)
        if val is not None and not isinstance(val, str):
            item.error = f"{key!r} must be a string"
            return
        setattr(item, key, val)
    seed = obj.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        item.error = "'seed' must be an integer"
        return
    item.seed = seed
    if "file" in obj:
        try:
            item.file = _check_file_name(obj["file"], fmt_ext)
        except ValueError as exc:
            item.error = str(exc)


def speakable(text: str) -> bool:
    """Whether ``text`` has anything but punctuation, quotes, spaces and control characters."""
    return any(unicodedata.category(ch)[0] not in "PZC" for ch in text)


def is_comment(raw: bytes) -> bool:
    """Whether a physical script line is a ``#`` comment (counted in the summary)."""
    return raw.removeprefix(b"\xef\xbb\xbf").strip().startswith(b"#")


def parse_line(
    idx: int, raw: bytes, *, width: int, jsonl: bool, fmt: str = "wav"
) -> BatchItem | None:
    """One physical script line (1-based ``idx``) as an item, or ``None`` for blank/comment.

    A line that is not UTF-8, not valid JSON (in JSONL mode) or has bad options becomes an
    item with ``error`` set, so it is reported with its line number while the others go on.
    """
    fmt_ext = "." + fmt.lower()
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if idx == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # UTF-8 byte-order mark from some editors
    item = BatchItem(line=idx, text="", file=f"{idx:0{width}d}{fmt_ext}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        item.text = raw.decode("utf-8", errors="replace")
        item.error = _describe_decode_error(raw, exc)
        return item
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    if jsonl:
        item.text = stripped  # replaced by the object's text once it parses
        _parse_jsonl(item, stripped, fmt_ext)
    else:
        item.text = text
    if item.error is None and not item.text.strip():
        item.error = "empty text"
    if item.error is None and not speakable(item.text):
        item.skip = "only punctuation"  # skipped and counted, not a failure
    return item


def iter_script(
    lines: Iterable[bytes], *, n_lines: int, jsonl: bool, fmt: str = "wav"
) -> Iterator[BatchItem]:
    """Items of a script given as physical lines, lazily (a script of any size streams).

    ``n_lines`` (the physical line count) fixes the width of the numbered file names, so a
    streaming reader counts lines first (:func:`count_script_lines`).
    """
    width = number_width(n_lines)
    used: dict[str, int] = {}
    for idx, raw in enumerate(lines, 1):
        item = parse_line(idx, raw, width=width, jsonl=jsonl, fmt=fmt)
        if item is None:
            continue
        if item.error is None:
            key = item.file.casefold()
            if key in used:
                item.error = f"file name {item.file!r} already used by line {used[key]}"
            else:
                used[key] = idx
        yield item


def count_script_lines(path: str | os.PathLike[str]) -> int:
    """Physical lines of a script file, read in blocks (the file is never held whole)."""
    from .safeio import check_regular

    check_regular(path, "script")  # a FIFO or /dev/zero is refused, never read
    n = 0
    last = b"\n"
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def iter_script_file(
    path: str | os.PathLike[str], *, jsonl: bool, fmt: str = "wav"
) -> Iterator[BatchItem]:
    """Items of a script file, streamed line by line (two passes: count, then parse)."""
    n_lines = count_script_lines(path)
    with open(path, "rb") as fh:
        yield from iter_script(fh, n_lines=n_lines, jsonl=jsonl, fmt=fmt)


def read_script(data: bytes, *, jsonl: bool, fmt: str = "wav") -> tuple[ScriptItems, int]:
    """Parse a whole script into items and return them with its physical line count.

    Blank lines and lines starting with ``#`` are skipped (see :func:`parse_line`; comments
    are counted in ``items.comments``); a line of only quotes/punctuation has ``skip`` set.
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line does not start another
    items = ScriptItems(iter_script(lines, n_lines=len(lines), jsonl=jsonl, fmt=fmt))
    items.comments = sum(1 for raw in lines if is_comment(raw))
    return items, len(lines)


# ---------------------------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------------------------


def record_crc(record: Mapping[str, Any]) -> str:
    """The checksum of a manifest record (all fields but ``crc``, canonical JSON)."""
    body = {k: v for k, v in record.items() if k != "crc"}
    blob = json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def _encode_record(record: Mapping[str, Any]) -> bytes:
    rec = {k: v for k, v in record.items() if k != "crc"}
    rec["crc"] = record_crc(rec)
    return (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass
class ManifestState:
    """What a manifest says: records by line, settings by fingerprint, bad line count."""

    records: dict[int, dict[str, Any]] = field(default_factory=dict)
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    bad: int = 0


def read_manifest_state(path: Path) -> ManifestState:
    """Parse a manifest; a line that is not JSON or fails its checksum is counted as bad.

    A torn last line (power cut or SIGKILL during an append) is thereby dropped. Records of
    older manifests (no ``crc``) are accepted as they are.
    """
    from .safeio import read_bounded

    state = ManifestState()
    if not os.path.lexists(path):
        return state
    data = read_bounded(path, "manifest")  # a FIFO or device here is refused, never read
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            if not isinstance(rec, dict):
                raise TypeError("not an object")
            if "crc" in rec and rec["crc"] != record_crc(rec):
                raise ValueError("checksum mismatch")
            if rec.get("kind") == "settings":
                if not isinstance(rec.get("fp"), str) or not isinstance(rec.get("settings"), dict):
                    raise TypeError("bad settings record")
                state.settings[rec["fp"]] = rec["settings"]
                continue
            line = rec["line"]
            if not isinstance(line, int):
                raise TypeError("line is not an int")
        except (ValueError, KeyError, TypeError):
            state.bad += 1
            continue
        rec.pop("crc", None)
        state.records[line] = rec
    return state


def read_manifest(path: Path) -> tuple[dict[int, dict[str, Any]], int]:
    """Records by line number (the last record of a line wins) and the count of bad lines."""
    state = read_manifest_state(path)
    return state.records, state.bad


def write_manifest(
    path: Path,
    records: dict[int, dict[str, Any]],
    settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Rewrite the manifest atomically: the settings records in use, then one record per line
    number, in line order, each with its checksum."""
    used = {r.get("fp") for r in records.values()}
    head = [
        {"kind": "settings", "fp": fp, "settings": dict(st)}
        for fp, st in (settings or {}).items()
        if fp in used
    ]
    body = b"".join(_encode_record(r) for r in head)
    body += b"".join(_encode_record(records[k]) for k in sorted(records))
    atomic_write_bytes(path, body)


class ManifestLog:
    """Appends records durably (flush + fsync per record) and remembers them for the rewrite."""

    def __init__(
        self,
        path: Path,
        records: dict[int, dict[str, Any]],
        settings: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.path = path
        self.records = records
        self.settings = settings if settings is not None else {}
        self._lock = threading.Lock()
        self._fh = open(path, "ab")  # closed in close()

    def _append(self, record: Mapping[str, Any]) -> None:
        with self._lock:
            self._fh.write(_encode_record(record))
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def add_settings(self, fp: str, settings: Mapping[str, Any]) -> None:
        """Record the settings fingerprint the following records refer to."""
        self._append({"kind": "settings", "fp": fp, "settings": dict(settings)})
        self.settings[fp] = dict(settings)

    def add(self, record: dict[str, Any]) -> None:
        self._append(record)
        self.records[record["line"]] = record

    def close(self) -> None:
        self._fh.close()
        write_manifest(self.path, self.records, self.settings)


_ManifestLog = ManifestLog  # the old private name


# ---------------------------------------------------------------------------------------------
# Settings fingerprint, lock, leftovers, signals
# ---------------------------------------------------------------------------------------------


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's contents (lexicons are fingerprinted by what they say)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fingerprint(settings: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(hash, normalized settings)`` of everything that shapes the audio.

    Callers pass the engine, backend, precision, device, voice, speed, seed, sampling options,
    lexicon contents hashes and the mixvox version; ``None`` values are dropped.
    """
    norm = json.loads(json.dumps({k: v for k, v in settings.items() if v is not None}, default=str))
    blob = json.dumps(norm, sort_keys=True).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16], norm


def describe_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """``["speed: 1.0 -> 1.5", ...]``: what differs between two settings records."""
    if old is None:
        return ["settings: not recorded (made by an older mixvox)"]
    out = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            out.append(f"{key}: {old.get(key, 'default')} -> {new.get(key, 'default')}")
    return out


def batch_settings(cli_settings: Any, fmt: str, version: str) -> dict[str, Any]:
    """The fingerprint inputs of a CLI batch run (a ``SynthSettings``): engine and factory
    options, voice, seed, per-call options (speed, sampling, ...), chunking, lexicon contents
    (by hash, in order), output format and the mixvox version."""
    lex = []
    for path in cli_settings.lexicons:
        try:
            lex.append(file_digest(path))
        except OSError:
            lex.append(f"unreadable:{path}")
    req = cli_settings.request
    # engine options from flags, -O pairs and the config's [engine.<name>] tables; how the
    # weights are checked or unlocked does not change the audio
    engine_opts = {**req.options, **req.flags, **req.call_flags}
    for key in ("verify", "reverify", "key_file", "save_codes"):
        engine_opts.pop(key, None)
    return {
        "engine": cli_settings.engine or "auto",
        **engine_opts,
        "engine_tables": {k: dict(v) for k, v in sorted(req.tables.items())} or None,
        "voice": cli_settings.speaker,
        "seed": cli_settings.seed,
        **{k: v for k, v in cli_settings.overrides.items() if k != "save_codes"},
        "max_chunk_chars": cli_settings.max_chunk_chars,
        "lexicons": lex or None,
        # frontend options change what is said; only when set, so older manifests still match
        **(
            {"frontend": {k: v.values() for k, v in sorted(fo.items())}}
            if (fo := getattr(cli_settings, "frontend_options", None))
            else {}
        ),
        "format": fmt,
        "mixvox": version,
    }


def check_settings(
    items: Iterable[BatchItem],
    state: ManifestState,
    fp: str,
    settings: Mapping[str, Any],
    out: Path,
    default_engine: str | None,
) -> None:
    """Raise :class:`SettingsChanged` when a finished line of ``out`` was made with settings
    other than ``settings`` (fingerprint ``fp``), naming what changed."""
    changed_fps: set[str | None] = set()
    for item in items:
        rec = state.records.get(item.line)
        if item.error is None and item.skip is None and rec and rec.get("fp") != fp:
            if is_complete(rec, item, out, item.engine or default_engine):
                changed_fps.add(rec.get("fp"))
    if not changed_fps:
        return
    changes: list[str] = []
    for old_fp in sorted(changed_fps, key=str):
        old = state.settings.get(old_fp) if old_fp else None
        changes.extend(c for c in describe_changes(old, settings) if c not in changes)
    raise SettingsChanged(
        f"{out} holds audio made with other settings ({'; '.join(changes)}); nothing was "
        "written. Use --force to redo every line, or --resume-changed to redo only the "
        "lines made with other settings.",
        changes,
    )


class BatchLock:
    """An exclusive lock on an output folder (``filelock``: ``fcntl``/``msvcrt``).

    Held for the whole run, so two runs can never interleave their records and files.
    """

    def __init__(self, out_dir: Path) -> None:
        import filelock

        self.path = Path(out_dir) / LOCK_NAME
        self._lock = filelock.FileLock(str(self.path), timeout=0)

    def __enter__(self) -> BatchLock:
        import filelock

        try:
            self._lock.acquire()
        except filelock.Timeout:
            raise BatchLocked(
                f"another mixvox batch is writing to {self.path.parent} (it holds "
                f"{self.path}); wait for it to finish or use another --output-dir"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


_PART = re.compile(r"\..+\.part")


def clean_partials(out_dir: Path) -> list[str]:
    """Remove ``.NAME.XXXX.part`` files a killed run left behind; returns their names."""
    removed = []
    for p in Path(out_dir).iterdir():
        if _PART.fullmatch(p.name) and p.is_file() and not p.is_symlink():
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p.name)
    return sorted(removed)


#: How long the engine stage waits for a full group of lines when fewer are ready (seconds):
#: routing a line takes milliseconds, so at the start the first group fills in this time
#: instead of the first line decoding alone.
BATCH_GATHER = 0.2

#: How long a stopped run waits for the file being written (seconds). A write is finished, not
#: cut: an fsync on a busy disk can take tens of seconds, and the file then lands whole (its
#: line is not in the manifest, so a resumed run makes it again). Past this wait the run
#: returns and the ``.part`` is removed at the next start.
WRITE_STOP_WAIT = 120.0


T = TypeVar("T")


def runs_by(seq: Sequence[T], key: Callable[[T], tuple]) -> Iterator[list[T]]:
    """Consecutive items whose ``key`` is equal (compared with ``is`` for the first element,
    the synthesizer, and ``==`` for the rest), as lists: the lines that can be given to one
    engine together. Used by the local batch and by the Ray actors."""
    run: list[T] = []
    for x in seq:
        if run:
            a, b = key(run[0]), key(x)
            if not (a[0] is b[0] and a[1:] == b[1:]):
                yield run
                run = []
        run.append(x)
    if run:
        yield run


class StopRequested(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: stop like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into :class:`StopRequested` in the main thread while inside."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    old = {}

    def handler(signum: int, frame: Any) -> None:
        raise StopRequested(signum)

    for sig in wanted:
        old[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def triage(
    item: BatchItem,
    records: Mapping[int, dict[str, Any]],
    out: Path,
    default_engine: str | None,
    fp: str,
    force: bool,
    result: BatchResult,
    fail: Callable[[BatchItem, str, str | None], None],
) -> bool:
    """Whether ``item`` is still to be spoken; otherwise it is counted in ``result`` (a bad
    line failed, a punctuation-only line as unspeakable, a line finished by an earlier run
    with the same settings ``fp`` as skipped). The local and the cluster batch share it."""
    if item.error is not None:
        fail(item, item.error, None)
        return False
    if item.skip is not None:  # only punctuation: skipped and counted
        result.unspeakable += 1
        return False
    rec = records.get(item.line)
    engine_name = item.engine or default_engine
    if not force and is_complete(rec, item, out, engine_name) and (rec or {}).get("fp") == fp:
        result.skipped += 1
        return False
    return True


def is_complete(
    record: dict[str, Any] | None, item: BatchItem, out_dir: Path, engine: str | None = None
) -> bool:
    """Whether a previous run already produced ``item`` (same text and options, file present).

    ``engine`` is the engine asked for (``None``: whichever is best, so any engine counts).
    """
    if not record or record.get("error") or not record.get("file"):
        return False
    if record.get("text") != item.text or record.get("file") != item.file:
        return False
    for key in ("speaker", "seed"):
        if record.get(key) != getattr(item, key):
            return False
    if engine is not None and record.get("engine") != engine:
        return False
    path = out_dir / record["file"]
    try:
        st = path.stat()
    except OSError:
        return False
    if not path.is_file():
        return False
    size = record.get("bytes")
    return size is None or st.st_size == size


def success_record(
    item: BatchItem, duration: float, engine: str | None, warnings: list[str]
) -> dict[str, Any]:
    """The manifest record of a line whose audio file was written."""
    rec: dict[str, Any] = {
        "line": item.line,
        "text": item.text,
        "file": item.file,
        "duration": round(duration, 3),
        "engine": engine,
    }
    if item.speaker is not None:
        rec["speaker"] = item.speaker
    if item.seed is not None:
        rec["seed"] = item.seed
    if warnings:
        rec["warnings"] = warnings
    return rec


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------

#: ``make_synth(engine_name_or_None) -> Synthesizer``; tests inject fakes through the registry.
SynthFactory = Callable[[str | None], Any]


def _progress(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(
        total=total,
        file=sys.stderr,
        unit="line",
        disable=None if enabled else True,
        dynamic_ncols=True,
    )


def _note(stream: TextIO, message: str) -> None:
    print(message, file=stream, flush=True)


def run_batch(
    items: Iterable[BatchItem],
    out_dir: str | os.PathLike[str],
    make_synth: SynthFactory,
    *,
    default_engine: str | None = None,
    overrides: dict[str, object] | None = None,
    force: bool = False,
    progress: bool = True,
    stderr: TextIO | None = None,
    settings: Mapping[str, Any] | None = None,
    resume_changed: bool = False,
    subtitles: str | None = None,
    batch_lines: int = 8,
) -> BatchResult:
    """Speak every item into ``out_dir`` and keep ``out_dir/manifest.jsonl`` up to date.

    ``make_synth`` is called once per distinct engine name (``None`` = the default engine)
    and its result reused. ``settings``: what shapes the audio (:func:`fingerprint`); a
    resume whose recorded settings differ raises :class:`SettingsChanged` before anything is
    written, unless ``force`` (redo all) or ``resume_changed`` (redo the lines made with other
    settings). Raises :class:`BatchLocked` when another run holds ``out_dir``. Failures are
    recorded and reported; ``KeyboardInterrupt``, SIGTERM and SIGHUP stop the run after the
    manifest is made consistent (``result.interrupted``, ``result.signal``). ``subtitles``
    (``"srt"`` or ``"vtt"``) also writes each line's captions beside its audio file.
    ``batch_lines``: at most this many lines waiting for the engine are given to it at once;
    an engine that can (``Synthesizer.synthesize_batch``) decodes them as one batch, several
    times the throughput of one line at a time; 1 turns that off.
    """
    if batch_lines < 1:
        raise ValueError("batch_lines must be >= 1")
    err = stderr or sys.stderr
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with BatchLock(out):
        return _run_locked(
            items,
            out,
            make_synth,
            default_engine=default_engine,
            overrides=overrides,
            force=force,
            progress=progress,
            err=err,
            settings=settings or {},
            resume_changed=resume_changed,
            subtitles=subtitles,
            batch_lines=batch_lines,
        )


def _run_locked(
    items: Iterable[BatchItem],
    out: Path,
    make_synth: SynthFactory,
    *,
    default_engine: str | None,
    overrides: dict[str, object] | None,
    force: bool,
    progress: bool,
    err: TextIO,
    settings: Mapping[str, Any],
    resume_changed: bool,
    subtitles: str | None,
    batch_lines: int,
) -> BatchResult:
    removed = clean_partials(out)
    if removed:
        _note(err, f"mixvox: removed {len(removed)} unfinished file(s) of an earlier run")
    manifest = out / MANIFEST
    state = read_manifest_state(manifest)
    records = state.records
    if state.bad:
        _note(
            err, f"mixvox: manifest {manifest} had {state.bad} unreadable line(s); they are dropped"
        )
    comments = getattr(items, "comments", 0)
    items = list(items)
    fp, norm = fingerprint(settings)
    result = BatchResult(total=len(items), manifest=manifest, comments=comments)
    if not force and not resume_changed:  # decided before anything is written
        check_settings(items, state, fp, norm, out, default_engine)
    synths: dict[str | None, Any] = {}
    synth_errors: dict[str | None, str] = {}
    log = ManifestLog(manifest, records, dict(state.settings))
    log.add_settings(fp, norm)
    bar = _progress(len(items), progress)

    def synth_for(name: str | None) -> Any:
        if name in synth_errors:
            raise MixvoxError(synth_errors[name])
        if name not in synths:
            try:
                synths[name] = make_synth(name)
            except MixvoxError as exc:
                synth_errors[name] = str(exc)
                raise
        return synths[name]

    def fail(item: BatchItem, message: str, engine: str | None) -> None:
        rec: dict[str, Any] = {"line": item.line, "text": item.text, "error": message, "fp": fp}
        if engine:
            rec["engine"] = engine
        log.add(rec)
        result.failed.append((item.line, message))

    def prepare(item: BatchItem) -> tuple:
        """Stage 1 (text): pick the synthesizer, route the text, collect its warnings."""
        engine_name = item.engine or default_engine
        try:
            tts = synth_for(engine_name)
        except MixvoxError as exc:
            raise _LineError(engine_name, str(exc)) from None
        # options another engine takes are dropped with one notice by the Synthesizer itself
        kwargs = dict(overrides or {})
        if item.speaker is not None:
            kwargs["speaker"] = item.speaker
        if item.seed is not None:
            kwargs["seed"] = item.seed
        warnings_text: list[str] = []
        if kwargs.get("raw"):
            target: Any = item.text
            router = getattr(tts, "router", None)
            if router is not None:
                warnings_text = [f"{w.code}: {w.message}" for w in router.raw(item.text).warnings]
        else:
            target = tts.route(item.text)
            warnings_text = [f"{w.code}: {w.message}" for w in target.warnings]
        return item, engine_name, tts, target, kwargs, warnings_text

    def synthesize(job: tuple) -> tuple:
        """Stage 2 (engine): audio for one line."""
        item, engine_name, tts, target, kwargs, warnings_text = job
        try:
            if subtitles:
                from mixvox.audio import Audio
                from mixvox.subtitles import Timeline, timed_stream

                timeline = Timeline(item.text, tts.sample_rate)
                pieces = timed_stream(tts, target, timeline, **kwargs)
                audio = Audio.concat([Audio(p.samples, p.sample_rate) for p in pieces])
                warnings_text = (warnings_text, timeline.finish())
            else:
                audio = tts.synthesize(target, **kwargs)
        except Exception as exc:
            raise _LineError(engine_name, exc) from exc
        if len(audio) == 0:
            why = "; ".join(warnings_text) or "no speakable text"
            raise _LineError(engine_name, MixvoxError(f"nothing to say ({why})"))
        return item, engine_name, tts, audio, warnings_text

    def synthesize_lines(jobs: list[tuple]) -> list[tuple | BaseException]:
        """Stage 2, several lines: runs of lines for the same engine with the same options
        go to ``synthesize_batch`` together where the synthesizer has it (one GPT batch);
        the rest one by one. Each line's result or error is its own."""
        out: list[tuple | BaseException] = []
        for run in runs_by(jobs, lambda job: (job[2], job[4])):
            _, engine_name, tts, _, kwargs, _ = run[0]
            if subtitles or len(run) == 1 or getattr(tts, "batch_size", 1) <= 1:
                for job in run:
                    try:
                        out.append(synthesize(job))
                    except Exception as exc:
                        out.append(exc)
                continue
            audios = tts.synthesize_batch([job[3] for job in run], **kwargs)
            for job, audio in zip(run, audios, strict=True):
                if isinstance(audio, BaseException):
                    out.append(_LineError(engine_name, audio))
                else:
                    out.append((job[0], engine_name, tts, audio, job[5]))
        return out

    def write(job: tuple) -> tuple:
        """Stage 3 (disk): the atomic file write."""
        item, engine_name, tts, audio, warnings_text = job
        try:
            if subtitles:
                from mixvox.subtitles import write_subtitles

                warnings_text, segments = warnings_text
                write_subtitles((out / item.file).with_suffix("." + subtitles), segments)
            audio.save(out / item.file)
        except Exception as exc:
            raise _LineError(engine_name, exc) from exc
        return item, engine_name, tts, audio, warnings_text

    todo: list[BatchItem] = []
    stack = contextlib.ExitStack()
    try:
        for item in items:
            if triage(item, records, out, default_engine, fp, force, result, fail):
                todo.append(item)
            else:
                bar.update(1)
        # Lines go to the engine several at a time only when the default engine decodes them
        # together (probed here: it is loaded for the first line anyway); otherwise one at a
        # time, so that an interrupt inside the engine keeps the lines finished before it.
        at_once = 1
        if batch_lines > 1 and not subtitles and any(not it.engine for it in todo):
            try:
                with stop_on_signals():  # a SIGTERM while the engine loads stops like Ctrl-C
                    if getattr(synth_for(default_engine), "batch_size", 1) > 1:
                        at_once = batch_lines
            except MixvoxError:
                pass  # recorded: the lines that need it fail with this message
        # Text preparation, synthesis and writing overlap (bounded queues, results in order):
        # the next lines are routed while this one is synthesized.
        pipe = Pipeline(
            [
                Stage("prepare", prepare),
                Stage("synthesize", synthesize_lines, batch=at_once, gather=BATCH_GATHER)
                if at_once > 1
                else Stage("synthesize", synthesize),
                Stage("write", write, stop_wait=WRITE_STOP_WAIT),
            ],
            maxsize=max(2, at_once),
        )
        results = pipe.run(todo)
        stack.callback(results.close)  # on a stop: wait for the stage threads (no .part left)
        with stop_on_signals():
            for item, res in zip(todo, results, strict=True):
                if isinstance(res, Failed):
                    error: BaseException | str = res.error
                    engine_name = item.engine or default_engine
                    if isinstance(error, _LineError):
                        engine_name, error = error.engine, error.error
                    if isinstance(error, MixvoxError | OSError | ValueError | str):
                        fail(item, str(error) or type(error).__name__, engine_name)
                    else:  # a bug on one line must not end a long batch
                        fail(item, f"internal error: {type(error).__name__}: {error}", engine_name)
                else:
                    _, engine_name, tts, audio, warnings_text = res
                    engine_used = getattr(tts, "engine_name", engine_name)
                    rec = success_record(item, audio.duration, engine_used, warnings_text)
                    rec["bytes"] = (out / item.file).stat().st_size
                    rec["fp"] = fp
                    log.add(rec)
                    result.done += 1
                bar.update(1)
    except StopRequested as exc:
        result.interrupted = True
        result.signal = exc.signum
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        stack.close()
        bar.close()
        log.close()
        for tts in synths.values():
            try:
                tts.close()
            except Exception:  # closing must not hide the run's own outcome
                pass
    return result


class _LineError(Exception):
    """A failure of one line, with the engine it was for (for the manifest)."""

    def __init__(self, engine: str | None, error: BaseException | str) -> None:
        super().__init__(str(error))
        self.engine = engine
        self.error = error


def summary_lines(result: BatchResult, limit: int = 50) -> Iterator[str]:
    """Human summary: counts, then each failure by line number (first ``limit``)."""
    extra = ""
    if result.unspeakable:
        extra += f"; {result.unspeakable} skipped (only punctuation)"
    if result.comments:
        extra += f"; {result.comments} comment line(s)"
    yield (
        f"{result.done} done, {result.skipped} skipped (already done), "
        f"{len(result.failed)} failed, of {result.total} line(s){extra}"
    )
    for line, msg in sorted(result.failed)[:limit]:
        yield f"  line {line}: {msg}"
    if len(result.failed) > limit:
        yield f"  ... and {len(result.failed) - limit} more (see the manifest)"
    if result.signal is not None:
        name = signal.Signals(result.signal).name
        yield (
            f"stopped by {name}: the manifest is consistent; run the same command again to resume"
        )
    elif result.interrupted:
        yield "interrupted: the manifest is consistent; run the same command again to resume"
