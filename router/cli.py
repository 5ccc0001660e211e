"""The ``mixvox`` command line: ``say``, ``batch``, ``route``, ``engines``, ``plugins``.

Engines add their own commands (``mixvox download``, ``mixvox speaker``) through the
``mixvox_register_commands`` hook, called once when this module builds the group.

Errors a user can cause (bad input, a missing model, an unwritable file) end with one line
on stderr and a non-zero exit, never a traceback; ``--debug`` (or ``MIXVOX_DEBUG=1``) shows
tracebacks of unexpected failures for bug reports. Engine options reach the engine only when
given, so each engine keeps its own defaults: the flags each engine contributes (see
:mod:`mixvox.cliflags`), ``-O KEY=VALUE`` and the config's ``[engine.<name>]`` table are
validated by the chosen engine's options class (:mod:`mixvox.choice`) before it loads.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import signal
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any, BinaryIO, TypeVar

import click

from mixvox import __version__
from mixvox.audio import FORMATS, Audio, format_for, save_stream
from mixvox.choice import EngineRequest, prepare
from mixvox.cliflags import (
    add_engine_flags,
    click_error,
    option_pairs_param,
    split_flag_values,
)
from mixvox.display import engine_status, format_issue, format_table, format_utterance, safe
from mixvox.errors import MixvoxError, OptionError, notify
from mixvox.ir import Issue, Utterance
from mixvox.keys_cli import register as register_key_commands
from mixvox.options import parse_pairs
from mixvox.pipeline import Router, Synthesizer
from mixvox.plugins.config import Config
from mixvox.plugins.config import load_config as _load_config_file
from mixvox.registry import Registry, get_registry
from mixvox.safeio import read_bounded, read_stream_bounded

log = logging.getLogger("mixvox.cli")
config_log = logging.getLogger("mixvox.config")

F = TypeVar("F", bound=Callable[..., Any])

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


# ---------------------------------------------------------------------------------------------
# Error handling and small I/O helpers
# ---------------------------------------------------------------------------------------------


class CliError(click.ClickException):
    """A user-facing error: printed as ``Error: <message>``, exit status 1."""


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    flag = bool(root and isinstance(root.obj, dict) and root.obj.get("debug"))
    return flag or os.environ.get("MIXVOX_DEBUG", "") not in ("", "0")


def handle_errors(fn: F) -> F:
    """Turn expected exceptions into clean CLI errors (no traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except MixvoxError as exc:
            code = getattr(exc, "exit_code", 1)  # key/encryption errors: 2
            raise (CliError(str(exc)) if code == 1 else click_error(str(exc), code)) from None
        except UnicodeDecodeError as exc:
            raise CliError(f"input is not valid UTF-8: {exc}") from None
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, as Unix tools do, and keep
            # Python from complaining when it flushes stdout at exit.
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            raise click.exceptions.Exit(141) from None
        except OSError as exc:
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise CliError(f"{exc.strerror or exc}{where}") from None
        except KeyboardInterrupt as exc:
            signum = getattr(exc, "signum", None)  # SIGTERM/SIGHUP (mixvox.batch.stop_on_signals)
            if signum is not None:
                name = signal.Signals(signum).name
                click.echo(f"mixvox: stopped by {name}; no partial file was left", err=True)
                raise click.exceptions.Exit(128 + signum) from None
            click.echo("mixvox: interrupted", err=True)
            raise click.exceptions.Exit(130) from None
        except Exception as exc:
            if _debug():
                raise
            raise CliError(
                f"internal error: {type(exc).__name__}: {exc} "
                "(run with --debug for the traceback and please report it)"
            ) from None

    return wrapper  # type: ignore[return-value]


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    click.echo(f"mixvox: warning: {message}", err=True)


def binary_stream(name: str) -> BinaryIO:
    """The binary side of ``stdin``/``stdout`` (click's ``get_binary_stream`` is deprecated
    in click 8.5; ``CliRunner`` swaps ``sys.stdin``/``sys.stdout`` for ones with a buffer)."""
    stream = sys.stdin if name == "stdin" else sys.stdout
    return stream.buffer


def check_arg_text(text: str, what: str = "TEXT") -> str:
    """Reject command-line text that was not valid UTF-8 (Python keeps it as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise CliError(f"{what} is not valid UTF-8") from None
    return text


#: The most text ``say -`` reads from stdin (a runaway pipe must not eat the memory).
MAX_TEXT_BYTES = 256 * 1024 * 1024


def read_stdin_text() -> str:
    data = read_stream_bounded(binary_stream("stdin"), "text", MAX_TEXT_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(
            f"stdin is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    return text.removeprefix("\ufeff")


def get_text(text: str) -> str:
    """``-`` reads all of stdin, anything else is the text itself."""
    return read_stdin_text() if text == "-" else check_arg_text(text)


# ---------------------------------------------------------------------------------------------
# Configuration and engine construction
# ---------------------------------------------------------------------------------------------


def load_config() -> dict[str, Any]:
    """The user's config file as a plain dict (``{}`` when there is none).

    Read through :func:`mixvox.plugins.config.load_config` (``MIXVOX_CONFIG`` or the user
    config dir); flags given on the command line always beat it.
    """
    cfg = _load_config_file()
    if isinstance(cfg, Mapping):
        return dict(cfg)
    return asdict(cfg)


def engine_tables(cfg: Config | Mapping[str, Any], registry: Registry) -> dict[str, dict[str, Any]]:
    """The config's ``[engine.<name>]`` tables, plus older ``[<engine name>]`` tables.

    A top-level table named after a registered engine is read as its engine table, with a
    deprecation notice (it was the only form before engine tables); its unknown keys are
    only logged, as they always were. Other unknown tables are logged as unknown keys.
    """
    if not isinstance(cfg, Config):
        return {k: dict(v) for k, v in (cfg.get("engines") or {}).items()}
    out = {name: dict(t) for name, t in cfg.engines.items()}
    for name, table in cfg.tables.items():
        info = registry.engine(name)
        if info is None:
            config_log.warning("config %s: unknown key %r ignored", cfg.path, name)
            continue
        if name in out:
            notify(f"config {cfg.path}: [{name}] ignored: [engine.{name}] is set")
            continue
        notify(f"config {cfg.path}: [{name}] is deprecated; write it as [engine.{name}]")
        known = info.options_keys()
        keys = set(table) if known is None else set(known)
        for key in sorted(set(table) - keys):
            config_log.warning("config %s: unknown key %r ignored", cfg.path, f"{name}.{key}")
        out[name] = {k: v for k, v in table.items() if k in keys}
    return out


def lexicon_files(flags: Iterable[str], cfg: Mapping[str, Any]) -> list[str]:
    """``--lexicon`` files, then the config's: earlier files win, so flags beat the config."""
    from_cfg = cfg.get("lexicons") or []
    if isinstance(from_cfg, str | os.PathLike):
        from_cfg = [from_cfg]
    return [*flags, *(str(p) for p in from_cfg)]


class SynthSettings:
    """Everything needed to build Synthesizers: CLI flags merged over the config file."""

    def __init__(
        self,
        *,
        engine: str | None,
        speaker: str | None,
        seed: int | None,
        lexicons: tuple[str, ...],
        max_chunk_chars: int | None,
        request: EngineRequest,
        overrides: dict[str, Any],
        cfg: Config | None = None,
        frontend_options: dict[str, Any] | None = None,
    ) -> None:
        cfg = cfg or Config()
        self.engine = engine or cfg.engine or None
        self.engine_named = self.engine is not None and self.engine != "auto"
        self.speaker = speaker if speaker is not None else cfg.speaker
        self.seed = seed if seed is not None else getattr(cfg, "seed", None)
        self.lexicons = lexicon_files(lexicons, {"lexicons": cfg.lexicons})
        self.max_chunk_chars = max_chunk_chars or cfg.max_chunk_chars or None
        self.request = request
        self.overrides = overrides
        self.cfg = cfg
        self.frontend_options = frontend_options or {}  # validated (mixvox.frontend_options)
        self._announced = False

    def build(self, engine: str | None = None) -> Synthesizer:
        """A Synthesizer for ``engine`` (``None``: the configured or best available one)."""
        name = engine or self.engine
        named = engine is not None or self.engine_named
        tts = Synthesizer(
            name,
            speaker=self.speaker,
            seed=self.seed,
            lexicons=self.lexicons,
            max_chunk_chars=self.max_chunk_chars,
            engine_request=self.request,
            frontend_options=self.frontend_options,
        )
        reason = tts.fallback_reason
        if not named and reason and not self._announced:
            self._announced = True  # once per command, however many lines a batch has
            click.echo(fallback_message(tts.engine_name, reason, get_registry()), err=True)
        return tts


def fallback_message(engine: str, reason: str, registry: Registry | None = None) -> str:
    """The one-line note when a better engine was passed over, with what to do about it."""
    msg = f"mixvox: using the {engine} engine because {reason}."
    for info in registry.engines_by_priority() if registry is not None else []:
        if not info.hint or f"{info.name}: " not in reason:
            continue
        # a reason that already names the hint's commands (`mixvox download`) needs no repeat
        commands = re.findall(r"`[^`]+`", info.hint)
        if info.hint not in reason and not (commands and all(c in reason for c in commands)):
            msg += " " + info.hint
    return msg


def synth_options() -> Callable[[F], F]:
    """The core options shared by ``say`` and ``batch``; engines add their own flags later
    (:func:`mixvox.cliflags.add_engine_flags`, called by :func:`register_plugin_commands`)."""
    opts = [
        click.option(
            "-e", "--engine", help="Engine name (default: best available; see `mixvox engines`)."
        ),
        click.option(
            "-s", "--speaker", help="Speaker (engine-specific: a voice string, a variant like f3)."
        ),
        click.option(
            "-l",
            "--lexicon",
            "lexicons",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False),
            help="Pronunciation lexicon file (repeatable; earlier files win).",
        ),
        click.option("--seed", type=int, help="Random seed for sampling engines."),
        click.option(
            "--max-chunk-chars",
            type=click.IntRange(min=1),
            help="Longest text piece sent to the engine at once.",
        ),
        click.option(
            "--speed",
            type=click.FloatRange(min=0.1, max=3.0),
            help="Speaking rate, 1 = normal (0.1 to 3).",
        ),
        click.option(
            "--raw",
            is_flag=True,
            default=False,
            help="Send the text as is: no routing or normalization.",
        ),
    ]

    def deco(fn: F) -> F:
        for opt in reversed(opts):
            fn = opt(fn)
        return fn

    return deco


def settings_from(opts: dict[str, Any], command: str) -> SynthSettings:
    """Split the options into the engine request and per-call overrides (given ones only)."""
    overrides: dict[str, Any] = {}
    if opts.get("speed") is not None:
        overrides["speed"] = opts["speed"]
    if opts.get("raw"):
        overrides["raw"] = True
    flags, call_flags = split_flag_values(command, opts)
    try:
        pairs = parse_pairs(opts.get("engine_option_pairs") or ())
    except OptionError as exc:
        raise click.BadParameter(str(exc), param_hint="'-O' / '--option'") from None
    cfg = _load_config_file()
    request = EngineRequest(
        options=pairs,
        flags=flags,
        call_flags=call_flags,
        tables=engine_tables(cfg, get_registry()),
        source=f"config {cfg.path}" if cfg.path else "",
        base_dir=cfg.path.parent if cfg.path else None,
    )
    return SynthSettings(
        engine=opts.get("engine"),
        speaker=opts.get("speaker"),
        seed=opts.get("seed"),
        lexicons=tuple(opts.get("lexicons") or ()),
        max_chunk_chars=opts.get("max_chunk_chars"),
        request=request,
        overrides=overrides,
        cfg=cfg,
        frontend_options=_frontend_options(command, opts, cfg),
    )


def _frontend_options(command: str, opts: Mapping[str, Any], cfg: Config) -> dict[str, Any]:
    """The config's ``[frontend.<lang>]`` tables, ``-F`` pairs and frontend flags, validated."""
    from mixvox.frontend_options import from_cli

    source = f"config {cfg.path}" if cfg.path else ""
    base = cfg.path.parent if cfg.path else None
    return from_cli(command, opts, cfg.frontends, get_registry(), source=source, base_dir=base)


# ---------------------------------------------------------------------------------------------
# The group
# ---------------------------------------------------------------------------------------------


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "-V", "--version", prog_name="mixvox")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("--debug", is_flag=True, help="Show tracebacks of unexpected errors.")
@click.pass_context
def main(ctx: click.Context, verbose: int, debug: bool) -> None:
    """Offline text-to-speech for mixed Chinese/English text.

    \b
    Exit status: 0 done; 1 error (input with nothing to speak, e.g. empty, whitespace or
    punctuation only; invalid UTF-8; a missing model; an unwritable file; a failed batch
    line); 2 usage error; 130 interrupted.
    """
    ctx.obj = {"debug": debug}
    if verbose:
        logging.basicConfig(
            level=logging.DEBUG if verbose > 1 else logging.INFO,
            format="mixvox: %(name)s: %(levelname)s: %(message)s",
            stream=sys.stderr,
        )
    # Engine warnings (ignored options, unknown speaker) as one readable line each.
    ctx.with_resource(warnings.catch_warnings())
    warnings.showwarning = _show_warning


# ---------------------------------------------------------------------------------------------
# say
# ---------------------------------------------------------------------------------------------


#: Warnings printed one per line by ``say``; the rest are counted by code (a long text full
#: of emoji would otherwise flood the terminal).
MAX_PRINTED_ISSUES = 50


def _print_issues(issues: list[Issue]) -> None:
    for issue in issues[:MAX_PRINTED_ISSUES]:
        click.echo(f"mixvox: warning: {format_issue(issue)}", err=True)
    rest = issues[MAX_PRINTED_ISSUES:]
    if rest:
        counts: dict[str, int] = {}
        for issue in rest:
            counts[issue.code] = counts.get(issue.code, 0) + 1
        detail = ", ".join(f"{n} {code}" for code, n in sorted(counts.items()))
        click.echo(f"mixvox: warning: … and {len(rest)} more warnings ({detail})", err=True)


def _save_stream(pieces: Iterator[Audio], path: str, fmt: str) -> tuple[int, int]:
    """Write audio pieces to ``path`` as they come (see :func:`mixvox.audio.save_stream`)."""
    return save_stream(pieces, path, fmt)


def _write_audio(audio: Audio, output: str, fmt: str | None) -> None:
    if output == "-":
        stdout = binary_stream("stdout")
        stdout.write(audio.to_bytes((fmt or "wav").upper()))
        stdout.flush()
    else:
        audio.save(output, fmt.upper() if fmt else None)


def _out_format(output: str, fmt: str | None) -> str:
    """The output format, lower case (checked before synthesis, not after)."""
    from mixvox.encoders import format_for_path

    if fmt:
        return fmt.lower()
    if output == "-":
        return "wav"
    found = format_for_path(output)
    if found:
        return found
    try:
        return format_for(output).lower()
    except MixvoxError:
        exts = ", ".join(sorted({*FORMATS, ".mp3", ".opus", ".pcm"}))
        raise CliError(f"cannot tell the audio format of {output!r}: use one of {exts}") from None


@main.command()
@click.argument("text")
@click.option(
    "-o",
    "--output",
    required=True,
    help="Output file (.wav, .flac, .ogg, .mp3, .opus, .pcm), or - for stdout (streamed).",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(
        sorted({*(e.lstrip(".") for e in FORMATS), "mp3", "opus", "pcm"}), case_sensitive=False
    ),
    help="Audio format (default: from the file extension; WAV for stdout). "
    "pcm: raw 16-bit 24 kHz mono.",
)
@click.option(
    "--subtitles",
    type=click.Path(dir_okay=False),
    help="Also write timed captions of the text (.srt or .vtt).",
)
@click.option("-q", "--quiet", is_flag=True, help="No summary line on stderr.")
@synth_options()
@handle_errors
def say(
    text: str, output: str, fmt: str | None, subtitles: str | None, quiet: bool, **opts: Any
) -> None:
    """Speak TEXT (or stdin with -) into a file.

    \b
    mixvox say "今天的 meeting 改到 3:30 PM" -o out.wav
    echo "你好 world" | mixvox say - -o - > out.wav
    mixvox say "你好 world" -o - -f pcm | aplay -f S16_LE -r 24000   # plays as it is made
    """
    from mixvox.encoders import MEDIA_TYPES, save_encoded, write_stream
    from mixvox.subtitles import Timeline, subtitle_writer, timed_stream, write_subtitles

    if output == "-" and sys.stdout.isatty():
        raise CliError("refusing to write audio to a terminal; redirect stdout or use -o FILE")
    out_fmt = _out_format(output, fmt)
    if subtitles:
        subtitle_writer(subtitles)  # a bad extension fails before synthesis
    settings = settings_from(opts, "say")
    body = get_text(text)
    if not body.strip():
        raise CliError("no text to speak")
    from .batch import stop_on_signals

    # SIGTERM/SIGHUP stop like Ctrl-C: the temporary file is removed, exit 128 + signal
    with stop_on_signals(), settings.build() as tts:
        overrides = dict(settings.overrides)
        target: str | Utterance = body
        issues: list[Issue] = []
        if not overrides.get("raw"):
            target = tts.route(body)
            issues = list(target.warnings)
            _print_issues(issues)
        else:  # the text goes as is, but what cannot be spoken (NUL, controls) is still said
            _print_issues(list(tts.router.raw(body).warnings))
        timeline = Timeline(body, tts.sample_rate) if subtitles else None
        stream: Iterator[Any] = (
            timed_stream(tts, target, timeline, **overrides)
            if timeline is not None
            else tts.stream(target, **overrides)
        )
        rate = tts.sample_rate
        if output == "-" and out_fmt in MEDIA_TYPES:  # streamed: a player starts at once
            stdout = binary_stream("stdout")
            frames = write_stream((p.samples for p in stream), rate, out_fmt, stdout)
        elif output == "-":  # ogg: written whole
            audio = Audio.concat([Audio(p.samples, p.sample_rate) for p in stream], rate)
            frames = len(audio)
            if frames:
                _write_audio(audio, output, out_fmt)
        elif out_fmt in MEDIA_TYPES and out_fmt not in ("wav", "flac"):  # mp3, opus, pcm
            frames = save_encoded((p.samples for p in stream), rate, out_fmt, output)
        else:  # files are written piece by piece: memory stays bounded however long the text
            pieces = (Audio(p.samples, p.sample_rate) for p in stream)
            frames, rate = _save_stream(pieces, output, out_fmt.upper())
        engine = tts.engine_name
    if frames == 0:
        hint = " (see the warnings above)" if issues else ""
        raise CliError(f"nothing to speak in the text{hint}")
    if timeline is not None and subtitles:
        write_subtitles(subtitles, timeline.finish())
    if not quiet:
        where = "stdout" if output == "-" else output
        click.echo(f"mixvox: wrote {where} ({frames / rate:.2f} s, {engine})", err=True)


# ---------------------------------------------------------------------------------------------
# batch
# ---------------------------------------------------------------------------------------------


from mixvox.distributed_cli import ray_options  # noqa: E402  (the --ray flags of batch)


@main.command()
@click.argument("script", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o",
    "--output-dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the audio files and manifest.jsonl.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["wav", "flac"], case_sensitive=False),
    default="wav",
    show_default=True,
)
@click.option(
    "--jsonl",
    "jsonl",
    flag_value=True,
    default=None,
    help="Script lines are JSON objects (default for .jsonl files).",
)
@click.option(
    "--text", "jsonl", flag_value=False, help="Script lines are plain text (even for .jsonl files)."
)
@click.option(
    "--subtitles",
    type=click.Choice(["srt", "vtt"], case_sensitive=False),
    help="Also write captions beside each audio file (0001.srt ...).",
)
@click.option("--force", is_flag=True, help="Redo lines that a previous run finished.")
@click.option(
    "--resume-changed",
    is_flag=True,
    help="Resume even though settings changed: redo only the lines made with other settings.",
)
@click.option(
    "--batch-lines",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Lines given to the engine at once; an engine that can decodes them as one batch (several "
    "times the throughput; each line sounds as alone with the same seed). 1: one at a time.",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@ray_options
@synth_options()
@handle_errors
def batch(
    script: str,
    output_dir: str,
    fmt: str,
    jsonl: bool | None,
    subtitles: str | None,
    force: bool,
    resume_changed: bool,
    batch_lines: int,
    quiet: bool,
    ray_address: str | None,
    ray_workers: int | None,
    ray_cpus: float,
    ray_gpus: float,
    **opts: Any,
) -> None:
    """Speak every line of SCRIPT into OUTPUT_DIR (0001.wav, 0002.wav, ...).

    Blank lines and # comments are skipped; files are named by line number. A JSONL script
    has one object per line: {"text": ..., "speaker": ..., "engine": ..., "seed": ...,
    "file": ...}. Rerunning resumes: lines recorded as done in manifest.jsonl are skipped.
    """
    from mixvox.batch import SettingsChanged, batch_settings, read_script, run_batch, summary_lines

    if ray_address is not None:
        from mixvox.distributed_cli import batch_on_ray

        if subtitles:
            raise CliError("--subtitles does not work with --ray yet; run without --ray")

        ray_settings = settings_from(opts, "batch")
        if ray_settings.frontend_options:  # the cluster's routing tasks would not see them
            raise CliError(
                "frontend options ([frontend.<lang>], -F, --no-number-and) do not work with "
                "--ray yet; run without --ray"
            )
        batch_on_ray(
            script,
            output_dir,
            fmt=fmt.lower(),
            jsonl=jsonl,
            force=force,
            quiet=quiet,
            settings=ray_settings,
            resume_changed=resume_changed,
            address=ray_address,
            workers=ray_workers,
            cpus_per_worker=ray_cpus,
            gpus_per_worker=ray_gpus,
            lines_per_task=batch_lines,
        )
        return
    if script == "-":
        data = read_stream_bounded(binary_stream("stdin"), "script")
    else:
        data = read_bounded(script, "script")
    if jsonl is None:
        jsonl = script.lower().endswith(".jsonl")
    settings = settings_from(opts, "batch")
    items, _n = read_script(data, jsonl=jsonl, fmt=fmt.lower())
    if not items:
        raise CliError(f"{script}: no lines to speak (blank lines and # comments are skipped)")

    def make(name: str | None) -> Synthesizer:
        return settings.build(name)

    try:
        result = run_batch(
            items,
            output_dir,
            make,
            default_engine=settings.engine if settings.engine_named else None,
            overrides=settings.overrides,
            force=force,
            progress=not quiet,
            subtitles=subtitles.lower() if subtitles else None,
            settings=batch_settings(settings, fmt.lower(), __version__),
            resume_changed=resume_changed,
            batch_lines=batch_lines,
        )
    except SettingsChanged as exc:
        click.echo(f"Error: {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    for line in summary_lines(result):
        click.echo(f"mixvox: {line}" if not line.startswith("  ") else line, err=True)
    if result.signal is not None:
        raise click.exceptions.Exit(128 + result.signal)
    if result.interrupted:
        raise click.exceptions.Exit(130)
    if result.failed:
        raise click.exceptions.Exit(1)


# ---------------------------------------------------------------------------------------------
# route
# ---------------------------------------------------------------------------------------------


def error_object(text: str, message: str, code: str = "error") -> dict[str, Any]:
    """The ``route --json`` object for a line that could not be analysed."""
    issue = Issue(code, message, text, 0, len(text))
    return Utterance(text, [], [issue]).to_dict()


def route_line(router: Router, raw: bytes) -> dict[str, Any]:
    """Analyse one stdin line; never raises, so every input line yields one object."""
    try:
        text = raw.decode("utf-8")
        bad: str | None = None
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        bad = f"line is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); invalid bytes read as U+FFFD"
    try:
        obj = router.route(text).to_dict()
    except MixvoxError as exc:  # invalid SSML: the message names line and column
        obj = error_object(text, str(exc), getattr(exc, "code", "error"))
    except Exception as exc:  # one bad line must not cost the others their output
        obj = error_object(text, f"analysis failed: {type(exc).__name__}: {exc}")
    if bad:
        obj["warnings"].insert(0, Issue("invalid-utf8", bad, text, 0, len(text)).to_dict())
    return obj


#: Line separators that ``json.dumps(ensure_ascii=False)`` leaves raw but that
#: ``str.splitlines()`` (and JavaScript) treat as line ends: escaped so that one object stays
#: one line for every reader.
_LINE_SEPARATORS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def _dump(obj: dict[str, Any]) -> bytes:
    text = json.dumps(obj, ensure_ascii=False).translate(_LINE_SEPARATORS)
    # Lone surrogates cannot be UTF-8: write them as JSON escapes (``\ud800``), which is what
    # ``json.loads`` reads back, rather than fail on output.
    return text.encode("utf-8", "backslashreplace") + b"\n"


@main.command()
@click.argument("text")
@click.option(
    "--json", "as_json", is_flag=True, help="JSON output; with -, one object per stdin line."
)
@click.option(
    "-l",
    "--lexicon",
    "lexicons",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Pronunciation lexicon file (repeatable).",
)
@handle_errors
def route(text: str, as_json: bool, lexicons: tuple[str, ...], **opts: Any) -> None:
    """Show how TEXT is analysed: sentences, language spans, words, pronunciations.

    With --json and -, every stdin line gives exactly one JSON object on stdout (blank lines
    too), so the output lines up with the input. Without --json, - reads all of stdin.
    """
    cfg = _load_config_file()
    router = Router(
        lexicons=lexicon_files(lexicons, {"lexicons": cfg.lexicons}),
        frontend_options=_frontend_options("route", opts, cfg),
    )
    out = binary_stream("stdout")
    if as_json and text == "-":
        stdin = binary_stream("stdin")
        for n, raw in enumerate(stdin):
            if n == 0:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # byte-order mark, as for say/batch
            if raw.endswith(b"\n"):
                raw = raw[:-1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            out.write(_dump(route_line(router, raw)))
            out.flush()
        return
    body = get_text(text)
    if as_json:
        try:
            obj = router.route(body).to_dict()
        except Exception as exc:
            obj = error_object(body, f"analysis failed: {type(exc).__name__}: {exc}")
        out.write(_dump(obj))
        out.flush()
        return
    utt = router.route(body)
    try:
        chunks = router.chunks(utt)  # also sets the break levels shown per word
    except Exception as exc:  # prosody trouble must not hide the analysis itself
        log.warning("prosody failed: %s: %s", type(exc).__name__, exc)
        chunks = None
    click.echo(format_utterance(utt, chunks))


# ---------------------------------------------------------------------------------------------
# engines / plugins
# ---------------------------------------------------------------------------------------------


@main.command()
@handle_errors
def engines() -> None:
    """List the registered engines and whether each can run here."""
    reg = get_registry()
    cfg = _load_config_file()  # the config's [engine.<name>] tables count (e.g. model_dir)
    request = EngineRequest(
        tables=engine_tables(cfg, reg),
        source=f"config {cfg.path}" if cfg.path else "",
        base_dir=cfg.path.parent if cfg.path else None,
    )
    rows = []
    chosen: str | None = None
    for info in reg.engines_by_priority():
        try:
            status = engine_status(info, prepare(info, request).options)
        except MixvoxError as exc:
            status = f"unavailable: {exc}"
        if chosen is None and status == "available":
            chosen = info.name
        rows.append([info.name, str(info.priority), safe(info.description), status])
    if not rows:
        raise CliError("no engines are registered (see `mixvox plugins`)")
    for r in rows:
        if r[0] == chosen:
            r[0] += " *"
    click.echo(format_table(rows, ["ENGINE", "PRIORITY", "DESCRIPTION", "STATUS"]))
    click.echo("* used when no --engine is given" if chosen else "no engine can run here")


@main.command()
@handle_errors
def plugins() -> None:
    """List every plugin: module, distribution, and whether it loaded."""
    reg = get_registry()
    rows = []
    for rec in sorted(reg.plugins.values(), key=lambda r: (not r.builtin, r.name)):
        if rec.error:
            status = ("loaded, but " if rec.loaded else "") + f"error: {rec.error}"
        else:
            status = "loaded" if rec.loaded else "not loaded"
        kind = "builtin" if rec.builtin else "plugin"
        rows.append([rec.name, kind, rec.module, rec.distribution or "-", safe(status)])
    click.echo(format_table(rows, ["NAME", "KIND", "MODULE", "DISTRIBUTION", "STATUS"]))


# ---------------------------------------------------------------------------------------------
# Plugin commands
# ---------------------------------------------------------------------------------------------

register_key_commands(main)  # keygen, encrypt-model, decrypt-model (mixvox.keys_cli)
from mixvox.server.cli import serve as _serve  # noqa: E402  (needs the helpers above)

main.add_command(_serve)
BUILTIN_COMMANDS = frozenset(main.commands)


def register_plugin_commands(group: click.Group) -> None:
    """Let plugins add commands; a plugin may not replace a built-in command."""
    before = dict(group.commands)
    try:
        reg = get_registry()
    except Exception as exc:  # the CLI must still start to show `mixvox plugins`
        log.warning("could not load plugins: %s", exc)
        return
    for _ in reg.call_all("mixvox_register_commands", cli=group):
        pass
    for name in ("say", "batch", "serve"):
        cmd = group.commands.get(name)
        if cmd is not None and not any(p.name == "engine_option_pairs" for p in cmd.params):
            cmd.params.append(option_pairs_param())
            add_engine_flags(cmd, reg)
    from mixvox.frontend_options import add_frontend_flags

    for name in ("say", "batch", "route", "serve"):  # -F and frontend flags (--no-number-and)
        if name in group.commands:
            add_frontend_flags(group.commands[name], reg)
    for name in BUILTIN_COMMANDS:
        if group.commands.get(name) is not before[name]:
            log.warning(
                "a plugin tried to replace the built-in command %r; kept the built-in", name
            )
            group.commands[name] = before[name]


register_plugin_commands(main)
