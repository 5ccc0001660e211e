"""Batch synthesis: one utterance per script line, resumable, with a JSONL manifest.

Why the care: batch jobs run for hours over thousands of lines. They get interrupted (Ctrl-C,
a full disk, a bad line), and rerunning must neither redo finished work nor trust half-written
files. So every audio file is written atomically (:meth:`mixvox.audio.Audio.save`), every
finished line is appended to ``manifest.jsonl`` and fsync'd before the next one starts, and
at the end the manifest is rewritten atomically, one record per line number. A line is
skipped on resume only when its record says it succeeded, the text is unchanged and the
file is still there.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mixvox.audio import FORMATS, atomic_write_bytes
from mixvox.interfaces import MixvoxError
from mixvox.stages import Failed, Pipeline, Stage

MANIFEST = "manifest.jsonl"

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


@dataclass
class BatchResult:
    total: int = 0
    done: int = 0
    skipped: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)
    interrupted: bool = False
    manifest: Path | None = None
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


def read_script(data: bytes, *, jsonl: bool, fmt: str = "wav") -> tuple[list[BatchItem], int]:
    """Parse a whole script into items and return them with its physical line count.

    Blank lines and lines starting with ``#`` are skipped (see :func:`parse_line`).
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last line does not start another
    return list(iter_script(lines, n_lines=len(lines), jsonl=jsonl, fmt=fmt)), len(lines)


# ---------------------------------------------------------------------------------------------
# Manifest
# ---------------------------------------------------------------------------------------------


def read_manifest(path: Path) -> tuple[dict[int, dict[str, Any]], int]:
    """Records by line number (the last record of a line wins) and the count of bad lines.

    A torn last line (power cut during an append) is counted as bad and otherwise ignored.
    """
    records: dict[int, dict[str, Any]] = {}
    bad = 0
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return records, 0
    for raw in data.splitlines():
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
            line = rec["line"]
            if not isinstance(line, int):
                raise TypeError("line is not an int")
        except (ValueError, KeyError, TypeError):
            bad += 1
            continue
        records[line] = rec
    return records, bad


def write_manifest(path: Path, records: dict[int, dict[str, Any]]) -> None:
    """Rewrite the manifest atomically: one record per line number, in line order."""
    body = "".join(
        json.dumps(records[k], ensure_ascii=False) + "\n" for k in sorted(records)
    ).encode("utf-8")
    atomic_write_bytes(path, body)


class _ManifestLog:
    """Appends records durably (flush + fsync per record) and remembers them for the rewrite."""

    def __init__(self, path: Path, records: dict[int, dict[str, Any]]) -> None:
        self.path = path
        self.records = records
        self._fh = open(path, "ab")  # closed in close()

    def add(self, record: dict[str, Any]) -> None:
        self._fh.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.records[record["line"]] = record

    def close(self) -> None:
        self._fh.close()
        write_manifest(self.path, self.records)


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
    return (out_dir / record["file"]).is_file()


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
    subtitles: str | None = None,
) -> BatchResult:
    """Speak every item into ``out_dir`` and keep ``out_dir/manifest.jsonl`` up to date.

    ``make_synth`` is called once per distinct engine name (``None`` = the default engine)
    and its result reused. Failures are recorded and reported; ``KeyboardInterrupt`` stops the
    run after the manifest is made consistent (``result.interrupted``). ``subtitles``
    (``"srt"`` or ``"vtt"``) also writes each line's captions beside its audio file.
    """
    err = stderr or sys.stderr
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = out / MANIFEST
    records, bad = read_manifest(manifest)
    if bad:
        _note(err, f"mixvox: manifest {manifest} had {bad} unreadable line(s); they are dropped")
    items = list(items)
    result = BatchResult(total=len(items), manifest=manifest)
    synths: dict[str | None, Any] = {}
    synth_errors: dict[str | None, str] = {}
    log = _ManifestLog(manifest, records)
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
        rec: dict[str, Any] = {"line": item.line, "text": item.text, "error": message}
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
        kwargs = dict(overrides or {})
        if item.speaker is not None:
            kwargs["speaker"] = item.speaker
        if item.seed is not None:
            kwargs["seed"] = item.seed
        warnings_text: list[str] = []
        if kwargs.get("raw"):
            target: Any = item.text
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
    try:
        for item in items:
            if item.error is not None:
                fail(item, item.error, None)
                bar.update(1)
                continue
            engine_name = item.engine or default_engine
            if not force and is_complete(records.get(item.line), item, out, engine_name):
                result.skipped += 1
                bar.update(1)
                continue
            todo.append(item)
        # Text preparation, synthesis and writing overlap (bounded queues, results in order):
        # the next lines are routed while this one is synthesized.
        pipe = Pipeline(
            [Stage("prepare", prepare), Stage("synthesize", synthesize), Stage("write", write)],
            maxsize=2,
        )
        for item, res in zip(todo, pipe.run(todo), strict=True):
            if isinstance(res, Failed):
                err = res.error
                engine_name = item.engine or default_engine
                if isinstance(err, _LineError):
                    engine_name, err = err.engine, err.error
                if isinstance(err, MixvoxError | OSError | ValueError) or isinstance(err, str):
                    fail(item, str(err) or type(err).__name__, engine_name)
                else:  # a bug on one line must not end a long batch
                    fail(item, f"internal error: {type(err).__name__}: {err}", engine_name)
            else:
                _, engine_name, tts, audio, warnings_text = res
                engine_used = getattr(tts, "engine_name", engine_name)
                log.add(success_record(item, audio.duration, engine_used, warnings_text))
                result.done += 1
            bar.update(1)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
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
    yield (
        f"{result.done} done, {result.skipped} skipped (already done), "
        f"{len(result.failed)} failed, of {result.total} line(s)"
    )
    for line, msg in sorted(result.failed)[:limit]:
        yield f"  line {line}: {msg}"
    if len(result.failed) > limit:
        yield f"  ... and {len(result.failed) - limit} more (see the manifest)"
    if result.interrupted:
        yield "interrupted: the manifest is consistent; run the same command again to resume"
