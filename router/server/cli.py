"""The ``mixvox serve`` command (registered in :mod:`mixvox.cli` with one line).

The engine flags are the ones ``mixvox say`` takes (``--engine``, ``--speaker``, the engine
options...), through the same helpers, so the server and the CLI build engines alike. The
server's own modules (FastAPI, uvicorn) are imported only when the command runs: they are the
optional extra ``mixvox[server]``.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import click

from mixvox.cli import CliError, handle_errors, load_config, settings_from, synth_options
from mixvox.server.security import check_bind, is_loopback, load_keys

log = logging.getLogger("mixvox.server")


class _JsonLines(logging.Formatter):
    """Access lines are JSON already; everything else becomes a JSON line too."""

    def format(self, record: logging.LogRecord) -> str:
        msg = record.getMessage()
        if record.name == "mixvox.server.access":
            return msg
        return json.dumps(
            {"level": record.levelname.lower(), "logger": record.name, "message": msg},
            ensure_ascii=False,
        )


def _setup_logging(level: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLines())
    for name in ("mixvox.server", "uvicorn", "uvicorn.error"):
        lg = logging.getLogger(name)
        lg.handlers[:] = [handler]
        lg.setLevel(level)
        lg.propagate = False
    logging.getLogger("mixvox.server.access").setLevel(logging.INFO)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="TCP port (0: any free port; the chosen one is printed).",
)
@click.option(
    "--api-key-file",
    type=click.Path(dir_okay=False),
    help="File with API keys, one per line (mode 600). Keys also come from $MIXVOX_API_KEYS.",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="Allow listening on a non-loopback address without keys (anyone can use it).",
)
@click.option(
    "--max-queue",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Requests that may wait for the engine; more get 429.",
)
@click.option(
    "--max-input-chars",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="Longest input text (413 beyond).",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=256),
    default=64 * 1024,
    show_default=True,
    help="Largest request body (413 beyond).",
)
@click.option(
    "--max-ssml-depth",
    type=click.IntRange(min=1),
    default=32,
    show_default=True,
    help="Deepest SSML element nesting.",
)
@click.option(
    "--request-timeout",
    type=click.FloatRange(min=0.1),
    default=300.0,
    show_default=True,
    help="Seconds a request may take, queueing included (also the drain time on SIGTERM).",
)
@click.option(
    "--max-per-key",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Requests one API key may have in flight at once.",
)
@click.option(
    "--lexicon-dir",
    type=click.Path(file_okay=False, exists=True),
    help="Folder of lexicon files that requests may name in `lexicon` (by file stem).",
)
@click.option("--log-text", is_flag=True, help="Put the input text into the request log lines.")
@synth_options()
@handle_errors
def serve(
    host: str,
    port: int,
    api_key_file: str | None,
    insecure_no_auth: bool,
    max_queue: int,
    max_input_chars: int,
    max_body_bytes: int,
    max_ssml_depth: int,
    request_timeout: float,
    max_per_key: int,
    lexicon_dir: str | None,
    log_text: bool,
    **opts: Any,
) -> None:
    """Run a local OpenAI-compatible speech server (POST /v1/audio/speech) with a web page.

    \b
    mixvox serve                                  # http://127.0.0.1:8000/
    MIXVOX_API_KEYS=... mixvox serve --host 0.0.0.0
    curl -s localhost:8000/v1/audio/speech -H 'Content-Type: application/json' \\
      -d '{"input": "今天的 meeting 改到 3:30 PM", "response_format": "wav"}' > out.wav

    Bound to loopback without keys it runs open; on any other address it needs keys
    (MIXVOX_API_KEYS or --api-key-file), or --insecure-no-auth.
    """
    try:
        import uvicorn

        from mixvox.server.app import ServerConfig, State, create_app
    except ImportError as exc:
        raise CliError(
            f"mixvox serve needs the server extra ({exc.name} is missing): "
            "pip install 'mixvox[server]'"
        ) from None
    from mixvox.server.security import KeyRing
    from mixvox.server.worker import Worker

    keys = load_keys(api_key_file)
    why = check_bind(host, keys, insecure_no_auth)
    if why:
        raise CliError(why)
    verbose = logging.getLogger().getEffectiveLevel() <= logging.DEBUG
    _setup_logging(logging.DEBUG if verbose else logging.INFO)
    if not keys and not is_loopback(host):
        click.echo(
            f"mixvox: WARNING: --insecure-no-auth: listening on {host} with NO authentication; "
            "anyone who can reach this address can use this server",
            err=True,
        )
    settings = settings_from(opts, "serve")
    cfg_file = load_config()
    named = cfg_file.get("voices") or {}
    cfg = ServerConfig(
        max_input_chars=max_input_chars,
        max_body_bytes=max_body_bytes,
        max_ssml_depth=max_ssml_depth,
        request_timeout=request_timeout,
        max_per_key=max_per_key,
        log_text=log_text,
        lexicon_dir=Path(lexicon_dir) if lexicon_dir else None,
        base_lexicons=list(settings.lexicons),
        defaults=dict(settings.overrides),
        frontend_options=dict(settings.frontend_options),
    )
    server_box: dict[str, Any] = {}
    load_error: list[BaseException] = []

    def on_load_error(exc: BaseException) -> None:
        load_error.append(exc)
        srv = server_box.get("server")
        if srv is not None:
            srv.should_exit = True

    worker = Worker(settings.build, max_queue=max_queue, on_load_error=on_load_error)
    state = State(worker, cfg, KeyRing.of(keys), dict(named))
    app = create_app(state)

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    auth = f"{len(keys)} API key(s)" if keys else "no authentication"
    click.echo(f"mixvox: serving on http://{shown}:{bound}/ ({auth}); loading the engine", err=True)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(max(1, request_timeout)),
        server_header=False,
    )
    server = uvicorn.Server(config)
    server_box["server"] = server
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if load_error:
        raise CliError(f"the engine failed to load: {load_error[0]}")
