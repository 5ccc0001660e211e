"""The ``--ray`` flags of ``mixvox batch`` and the command's cluster path.

Kept apart from :mod:`mixvox.cli` so that the CLI imports nothing of Ray until ``--ray`` is
given, and so that the batch command stays one function with one local and one cluster path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def ray_options(fn: F) -> F:
    """Add ``--ray [ADDRESS]``, ``--ray-workers``, ``--ray-cpus-per-worker``, ``--ray-gpus-per-worker``."""
    opts = [
        click.option(
            "--ray",
            "ray_address",
            is_flag=False,
            flag_value="local",
            default=None,
            metavar="[ADDRESS]",
            help=(
                "Run on a Ray cluster: host:port, 'auto' (RAY_ADDRESS), or no value for a "
                "local cluster started for this run (needs mixvox[ray])."
            ),
        ),
        click.option(
            "--ray-workers",
            type=click.IntRange(min=1),
            help="Engine actors (default: one per GPU, or one per --ray-cpus-per-worker cores).",
        ),
        click.option(
            "--ray-cpus-per-worker",
            "ray_cpus",
            type=click.FloatRange(min=0),
            default=1.0,
            show_default=True,
            help="CPU cores each engine actor reserves.",
        ),
        click.option(
            "--ray-gpus-per-worker",
            "ray_gpus",
            type=click.FloatRange(min=0),
            default=0.0,
            show_default=True,
            help="GPUs each engine actor reserves (1 for one actor per GPU).",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


def batch_on_ray(
    script: str,
    output_dir: str,
    *,
    fmt: str,
    jsonl: bool | None,
    force: bool,
    quiet: bool,
    settings: Any,
    resume_changed: bool = False,
    address: str,
    workers: int | None,
    cpus_per_worker: float,
    gpus_per_worker: float,
    lines_per_task: int = 8,
) -> None:
    """``mixvox batch --ray``: the cluster run, its summary and its exit code.

    ``lines_per_task`` (``--batch-lines``): the lines an engine actor gets at once, which it
    decodes together where its engine can, as the local batch does."""
    from mixvox import __version__
    from mixvox.batch import batch_settings, summary_lines
    from mixvox.distributed import run_on_ray, spool_stdin

    Path(output_dir).mkdir(parents=True, exist_ok=True)
    spooled: Path | None = None
    if script == "-":
        spooled = spool_stdin(sys.stdin.buffer, output_dir)
        path: str | os.PathLike[str] = spooled
    else:
        path = script
    if jsonl is None:
        jsonl = script.lower().endswith(".jsonl")
    try:
        result = run_on_ray(
            path,
            output_dir,
            settings.build,
            lexicons=list(settings.lexicons),
            jsonl=jsonl,
            fmt=fmt,
            address=address,
            workers=workers,
            cpus_per_worker=cpus_per_worker,
            gpus_per_worker=gpus_per_worker,
            default_engine=settings.engine if settings.engine_named else None,
            overrides=settings.overrides,
            force=force,
            progress=not quiet,
            settings=batch_settings(settings, fmt, __version__),
            resume_changed=resume_changed,
            lines_per_task=lines_per_task,
        )
    finally:
        if spooled is not None:
            spooled.unlink(missing_ok=True)
    if result.total == 0:
        raise click.ClickException(
            f"{script}: no lines to speak (blank lines and # comments are skipped)"
        )
    for line in summary_lines(result):
        click.echo(f"mixvox: {line}" if not line.startswith("  ") else line, err=True)
    if result.interrupted:
        raise click.exceptions.Exit(130)
    if result.failed:
        raise click.exceptions.Exit(1)
