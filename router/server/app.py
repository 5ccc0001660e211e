"""The ASGI app of ``mixvox serve`` (FastAPI): endpoints, limits, errors, logs, metrics.

Endpoints: ``POST /v1/audio/speech`` (OpenAI's body; audio streamed as it is made),
``POST /v1/audio/captioned`` (JSON: base64 audio + timed segments), ``POST /v1/route`` (the
analysis), ``GET /v1/models``, ``GET /v1/audio/voices``, ``GET /health``, ``GET /metrics``
and ``GET /`` (the web page).

Every error is OpenAI-shaped JSON ``{"error": {"message", "type", "code"}}``; nothing answers
with a traceback, and bad input is a 4xx, never a 500. Each request is logged as one JSON line
(logger ``mixvox.server.access``) without its text unless ``log_text`` is set, and never with
a key (only its position, ``key1``...).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.resources
import json
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mixvox.encoders import MEDIA_TYPES
from mixvox.interfaces import MixvoxError
from mixvox.pipeline import Router
from mixvox.server.metrics import Metrics
from mixvox.server.security import KeyRing
from mixvox.server.voices import UnknownVoice, Voices
from mixvox.server.worker import END, Job, NotReady, QueueFull, Worker

access_log = logging.getLogger("mixvox.server.access")
log = logging.getLogger("mixvox.server")

#: Model ids accepted in ``model`` (OpenAI's names too, so unchanged apps work).
MODEL_IDS = ("mixvox", "tts-1", "tts-1-hd", "gpt-4o-mini-tts")
LEXICON_SUFFIXES = (".toml", ".tsv", ".txt")


@dataclass
class ServerConfig:
    """Limits and switches of one server (the ``serve`` flags)."""

    max_input_chars: int = 4096
    max_body_bytes: int = 64 * 1024
    max_ssml_depth: int = 32
    request_timeout: float = 300.0
    max_per_key: int = 4
    log_text: bool = False
    lexicon_dir: Path | None = None
    base_lexicons: list[str] = field(default_factory=list)  # lexicon files every request uses
    defaults: dict[str, Any] = field(default_factory=dict)  # per-call overrides from the CLI
    #: validated frontend options ([frontend.<lang>], -F, --no-number-and) for every Router
    frontend_options: dict[str, Any] = field(default_factory=dict)


class ApiError(Exception):
    """An error answered as OpenAI-shaped JSON."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str,
        type_: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.type = status, message, code, type_
        self.headers = headers or {}


def error_body(message: str, type_: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": None}}


def error_response(exc: ApiError) -> JSONResponse:
    return JSONResponse(
        error_body(exc.message, exc.type, exc.code), status_code=exc.status, headers=exc.headers
    )


# ---------------------------------------------------------------------------------------------
# Request bodies
# ---------------------------------------------------------------------------------------------


class SpeechRequest(BaseModel):
    """OpenAI's ``/v1/audio/speech`` body plus ``lexicon``, ``seed``, ``ssml``."""

    model_config = ConfigDict(extra="forbid")

    model: str = "mixvox"
    input: str = Field(min_length=1)
    voice: str = "default"
    response_format: Literal["wav", "mp3", "opus", "flac", "pcm"] = "mp3"
    speed: float = Field(1.0, ge=0.25, le=3.0)
    stream_format: Literal["audio"] | None = None
    lexicon: list[str] = Field(default_factory=list, max_length=8)
    seed: int | None = Field(None, ge=0, le=2**31 - 1)
    ssml: bool = False


class RouteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str = Field(min_length=1)
    lexicon: list[str] = Field(default_factory=list, max_length=8)


# ---------------------------------------------------------------------------------------------
# ASGI middleware: body limit + the one log line per request
# ---------------------------------------------------------------------------------------------


class BodyTooLarge(Exception):
    pass


class Gate:
    """Pure ASGI middleware (streams and disconnects pass through untouched, unlike
    ``BaseHTTPMiddleware``): refuses bodies over the limit with 413 and logs every request."""

    def __init__(self, app: ASGIApp, cfg: ServerConfig, metrics: Metrics) -> None:
        self.app = app
        self.cfg = cfg
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        t0 = time.perf_counter()
        info: dict[str, Any] = {}
        scope.setdefault("state", {})["log"] = info
        scope["state"]["t0"] = t0
        status = {"code": 0, "started": False}
        limit = self.cfg.max_body_bytes
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        too_big = False
        if declared is not None:
            try:
                too_big = int(declared) > limit
            except ValueError:
                too_big = False
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge
            return msg

        async def logged_send(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                status["code"] = msg["status"]
                status["started"] = True
            await send(msg)

        async def refuse() -> None:
            body = json.dumps(
                error_body(
                    f"request body over {limit} bytes", "invalid_request_error", "body_too_large"
                )
            ).encode()
            await logged_send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await logged_send({"type": "http.response.body", "body": body})

        try:
            if too_big:
                await refuse()
            else:
                try:
                    await self.app(scope, limited_receive, logged_send)
                except BodyTooLarge:
                    if not status["started"]:
                        await refuse()
        finally:
            path = scope.get("path", "")
            endpoint = path if path in _ENDPOINTS else "other"
            code = status["code"] or 499
            self.metrics.request(endpoint, code)
            line = {
                "ts": round(time.time(), 3),
                "method": scope.get("method"),
                "path": endpoint,
                "status": code,
                "ms": round((time.perf_counter() - t0) * 1000, 1),
                **info,
            }
            if not self.cfg.log_text:
                line.pop("text", None)
            access_log.info(json.dumps(line, ensure_ascii=False))


_ENDPOINTS = {
    "/",
    "/app.js",
    "/style.css",
    "/health",
    "/metrics",
    "/v1/models",
    "/v1/audio/voices",
    "/v1/audio/speech",
    "/v1/audio/captioned",
    "/v1/route",
}


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------

_TAG = re.compile(r"<(/?)([A-Za-z][\w:.-]*)[^<>]*?(/?)>")


def ssml_depth(text: str) -> int:
    """Deepest element nesting of ``text`` (a cheap scan, before any parser sees it)."""
    depth = best = 0
    for m in _TAG.finditer(text):
        closing, _name, selfclosing = m.groups()
        if closing:
            depth = max(0, depth - 1)
        elif not selfclosing:
            depth += 1
            best = max(best, depth)
    return best


def _ssml_supported() -> bool:
    import importlib.util

    return importlib.util.find_spec("mixvox.ssml") is not None


def _static(name: str) -> bytes:
    return importlib.resources.files("mixvox.server").joinpath("static").joinpath(name).read_bytes()


class State:
    """What the endpoints share: worker, keys, voices, lexicons, per-key slots, metrics."""

    def __init__(
        self,
        worker: Worker,
        cfg: ServerConfig,
        keys: KeyRing,
        named_voices: dict[str, str],
        metrics: Metrics | None = None,
    ) -> None:
        self.worker = worker
        self.cfg = cfg
        self.keys = keys
        self.named_voices = named_voices
        self.metrics = metrics or Metrics()
        self.in_flight: Counter[str] = Counter()
        self._voices: Voices | None = None
        self._routers: dict[tuple[str, ...], Router] = {}
        self._analysis_routers: dict[tuple[str, ...], Router] = {}
        self._router_lock = threading.Lock()
        self._route_lock = threading.Lock()
        self._analysis: Router | None = None

    def voices(self) -> Voices:
        if self._voices is None:
            tts = self.worker.tts
            engine_voices = getattr(tts.engine, "voices", None) if tts is not None else None
            if engine_voices is not None:
                engine_voices = list(engine_voices)
            self._voices = Voices(self.named_voices, engine_voices)
        return self._voices

    def lexicon_files(self) -> dict[str, Path]:
        d = self.cfg.lexicon_dir
        if d is None or not d.is_dir():
            return {}
        return {p.stem: p for p in sorted(d.iterdir()) if p.suffix.lower() in LEXICON_SUFFIXES}

    def _router(self, names: list[str], cache: dict[tuple[str, ...], Router]) -> Router | None:
        if not names:
            return None
        files = self.lexicon_files()
        unknown = [n for n in names if n not in files]
        if unknown:
            known = ", ".join(sorted(files)) or "none"
            raise ApiError(
                400, f"unknown lexicon {unknown[0]!r} (available: {known})", "unknown_lexicon"
            )
        key = tuple(dict.fromkeys(names))
        with self._router_lock:
            rt = cache.get(key)
            if rt is None:
                try:
                    rt = Router(
                        lexicons=[*(files[n] for n in key), *self.cfg.base_lexicons],
                        frontend_options=self.cfg.frontend_options,
                    )
                except MixvoxError as exc:
                    raise ApiError(400, str(exc), "bad_lexicon") from None
                cache[key] = rt
            return rt

    def router_for(self, names: list[str]) -> Router | None:
        """A Router with the named lexicons before the server's (``None``: the default).

        Used by the worker's prepare thread only; ``/v1/route`` has its own Routers, so the
        two never share a frontend between threads.
        """
        return self._router(names, self._routers)

    def analysis_router(self, names: list[str]) -> Router:
        rt = self._router(names, self._analysis_routers)
        if rt is not None:
            return rt
        with self._router_lock:
            if self._analysis is None:
                self._analysis = Router(
                    lexicons=self.cfg.base_lexicons, frontend_options=self.cfg.frontend_options
                )
            return self._analysis


# ---------------------------------------------------------------------------------------------
# The app
# ---------------------------------------------------------------------------------------------


def create_app(state: State) -> FastAPI:
    """The FastAPI app over ``state`` (its worker is started and closed by the app's lifespan)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if state.worker.state == "loading" and not state.worker._threads:
            state.worker.start()
        yield
        await asyncio.to_thread(state.worker.close)

    app = FastAPI(
        title="mixvox",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    cfg = state.cfg
    metrics = state.metrics

    # -- errors --------------------------------------------------------------------------------

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        request.scope["state"]["log"]["error"] = exc.code
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            msg = err.get("msg", "invalid")
            if err.get("type") == "extra_forbidden":
                msg = "unknown field"
            parts.append(f"{where}: {msg}")
        request.scope["state"]["log"]["error"] = "invalid_request"
        return JSONResponse(
            error_body(
                "; ".join(parts) or "invalid request", "invalid_request_error", "invalid_request"
            ),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            error_body(str(exc.detail), "invalid_request_error", code),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s: %s", type(exc).__name__, exc)
        return JSONResponse(
            error_body("internal error (see the server log)", "server_error", "internal_error"),
            status_code=500,
        )

    # -- auth ----------------------------------------------------------------------------------

    def auth(request: Request) -> str:
        if not state.keys.enabled:
            return "open"
        who = state.keys.match(request.headers.get("authorization"))
        if who is None:
            raise ApiError(
                401,
                "missing or invalid API key (send Authorization: Bearer <key>)",
                "invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"},
            )
        request.scope["state"]["log"]["key"] = who
        return who

    # -- the page and the small endpoints ------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(_static("index.html"))

    @app.get("/app.js", include_in_schema=False)
    async def page_js() -> Response:
        return Response(_static("app.js"), media_type="text/javascript")

    @app.get("/style.css", include_in_schema=False)
    async def page_css() -> Response:
        return Response(_static("style.css"), media_type="text/css")

    @app.get("/health")
    async def health() -> JSONResponse:
        w = state.worker
        tts = w.tts
        eng = tts.engine if tts is not None else None
        body = {
            "status": {"ready": "ok"}.get(w.state, w.state),
            "engine": tts.engine_name if tts is not None else None,
            "backend": getattr(eng, "backend", None),
            "device": getattr(eng, "device", "cpu" if eng is not None else None),
            "sample_rate": tts.sample_rate if tts is not None else None,
            "queue_depth": w.queue_depth,
            "busy": w.busy,
            "max_queue": w.max_queue,
            "auth": state.keys.enabled,
        }
        if w.load_error:
            body["error"] = w.load_error
        return JSONResponse(body, status_code=200 if w.state == "ready" else 503)

    @app.get("/metrics")
    async def prom(_who: str = Depends(auth)) -> PlainTextResponse:
        text = metrics.render(state.worker.queue_depth, sum(state.in_flight.values()))
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4")

    @app.get("/v1/models")
    async def models(_who: str = Depends(auth)) -> dict[str, Any]:
        created = 0
        return {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": created, "owned_by": "mixvox"}
                for m in MODEL_IDS
            ],
        }

    def ready_or_503() -> None:
        w = state.worker
        if w.state == "loading":
            raise ApiError(
                503, "the engine is still loading", "loading", "server_error", {"Retry-After": "5"}
            )
        if w.state != "ready":
            raise ApiError(
                503,
                f"the engine is not available: {w.load_error or w.state}",
                "unavailable",
                "server_error",
            )

    @app.get("/v1/audio/voices")
    async def voices(_who: str = Depends(auth)) -> dict[str, Any]:
        ready_or_503()
        tts = state.worker.tts
        return {
            "engine": tts.engine_name if tts else None,
            "voices": state.voices().listing(),
        }

    @app.post("/v1/route")
    async def route(
        body: RouteRequest, request: Request, _who: str = Depends(auth)
    ) -> JSONResponse:
        check_input(body.input, request)
        rt = await asyncio.to_thread(state.analysis_router, body.lexicon)

        def run() -> dict[str, Any]:
            with state._route_lock:  # one analysis at a time on this router
                utt = rt.route(body.input)
                try:
                    chunks = rt.chunks(utt)
                except Exception:  # the spans matter more than the chunk cuts
                    chunks = []
            d = utt.to_dict()
            d["chunks"] = [
                {"index": c.index, "start": c.start, "end": c.end, "spoken": c.spoken}
                for c in chunks
            ]
            return d

        return JSONResponse(await asyncio.to_thread(run))

    # -- speech --------------------------------------------------------------------------------

    def check_input(text: str, request: Request) -> None:
        info = request.scope["state"]["log"]
        info["chars"] = len(text)
        info["text"] = text
        if len(text) > cfg.max_input_chars:
            raise ApiError(
                413,
                f"input is {len(text)} characters; this server takes at most {cfg.max_input_chars}",
                "input_too_long",
            )
        if "\x00" in text:
            raise ApiError(400, "input contains a NUL character", "invalid_input")

    def make_job(body: SpeechRequest, request: Request, captioned: bool) -> Job:
        info = request.scope["state"]["log"]
        info.update(format=body.response_format, voice=body.voice[:40])
        check_input(body.input, request)
        ready_or_503()
        if body.model not in MODEL_IDS and body.model != (
            state.worker.tts and state.worker.tts.engine_name
        ):
            raise ApiError(
                400,
                f"unknown model {body.model!r} (use one of {', '.join(MODEL_IDS)})",
                "model_not_found",
            )
        looks_ssml = body.input.lstrip().startswith("<speak")
        if body.ssml or looks_ssml:
            if not looks_ssml:
                raise ApiError(
                    400, "ssml is true but the input does not start with <speak>", "invalid_ssml"
                )
            if re.search(r"<!(DOCTYPE|ENTITY)", body.input, re.IGNORECASE):
                raise ApiError(
                    400, "SSML with DOCTYPE or ENTITY declarations is refused", "invalid_ssml"
                )
            depth = ssml_depth(body.input)
            if depth > cfg.max_ssml_depth:
                raise ApiError(
                    400,
                    f"SSML nests {depth} elements deep; this server takes at most {cfg.max_ssml_depth}",
                    "ssml_too_deep",
                )
            if not _ssml_supported():
                raise ApiError(
                    400, "SSML input is not supported by this mixvox build", "ssml_unsupported"
                )
        try:
            speaker = state.voices().resolve(body.voice)
        except UnknownVoice as exc:
            raise ApiError(400, str(exc), "unknown_voice") from None
        overrides = dict(cfg.defaults)
        overrides.pop("raw", None)
        if "speed" in body.model_fields_set:  # else the serve command's --speed, if any
            overrides["speed"] = body.speed
        if speaker is not None:
            overrides["speaker"] = speaker
        if body.seed is not None:
            overrides["seed"] = body.seed
        router = state.router_for(body.lexicon)
        return Job(
            text=body.input,
            fmt=body.response_format,
            overrides=overrides,
            loop=asyncio.get_running_loop(),
            router=router,
            captioned=captioned,
            deadline=time.monotonic() + cfg.request_timeout,
        )

    class Slot:
        """A per-key concurrency slot, released exactly once."""

        def __init__(self, who: str) -> None:
            # Without keys there is no "key" to limit: the queue bound alone applies.
            if state.keys.enabled and state.in_flight[who] >= cfg.max_per_key:
                raise ApiError(
                    429,
                    f"at most {cfg.max_per_key} requests at a time per key",
                    "too_many_requests",
                    "rate_limit_error",
                    {"Retry-After": "1"},
                )
            self.who = who
            state.in_flight[who] += 1
            self.held = True

        def release(self) -> None:
            if self.held:
                self.held = False
                state.in_flight[self.who] -= 1

    def submit(job: Job) -> None:
        try:
            state.worker.submit(job)
        except QueueFull as exc:
            raise ApiError(
                429,
                str(exc),
                "queue_full",
                "rate_limit_error",
                {"Retry-After": str(exc.retry_after)},
            ) from None
        except NotReady as exc:
            raise ApiError(503, str(exc), "loading", "server_error", {"Retry-After": "5"}) from None

    async def next_item(job: Job) -> Any:
        left = job.deadline - time.monotonic()
        try:
            return await asyncio.wait_for(job.out.get(), timeout=max(0.001, left))
        except asyncio.TimeoutError:
            job.cancel.set()
            raise ApiError(504, "the request timed out", "timeout", "server_error") from None

    def failure(exc: BaseException) -> ApiError:
        if isinstance(exc, MixvoxError):
            return ApiError(400, str(exc), "synthesis_failed")
        log.error("synthesis error: %s: %s", type(exc).__name__, exc)
        return ApiError(
            500,
            "internal error during synthesis (see the server log)",
            "internal_error",
            "server_error",
        )

    @app.post("/v1/audio/speech")
    async def speech(body: SpeechRequest, request: Request, who: str = Depends(auth)) -> Response:
        job = make_job(body, request, captioned=False)
        info = request.scope["state"]["log"]
        t0 = request.scope["state"]["t0"]
        slot = Slot(who)
        try:
            submit(job)
            first = await next_item(job)
        except BaseException:
            job.cancel.set()
            slot.release()
            raise
        if isinstance(first, BaseException):
            slot.release()
            raise failure(first)
        if first is END:
            slot.release()
            info["status"] = job.status
            raise ApiError(
                400, "nothing to speak in the input (see POST /v1/route)", "nothing_to_speak"
            )
        fb = time.perf_counter() - t0
        metrics.first_byte_latency(fb)
        info["first_byte_ms"] = round(fb * 1000, 1)

        async def body_iter() -> AsyncIterator[bytes]:
            finished = False
            try:
                yield first
                while True:
                    try:
                        item = await next_item(job)
                    except ApiError:  # the deadline passed mid-stream: end the audio there
                        job.status = "timeout"
                        return
                    if item is END:
                        finished = job.status == "done"
                        return
                    if isinstance(item, BaseException):
                        return  # headers are gone: end the stream early (logged below)
                    yield item
            finally:
                if not finished and job.status not in ("done", "error"):
                    job.cancel.set()
                    if job.status != "timeout":  # the client went away
                        metrics.cancel()
                        job.status = "cancelled"
                metrics.audio(job.audio_seconds)
                info.update(result=job.status, audio_s=round(job.audio_seconds, 3))
                slot.release()

        headers = {"X-Mixvox-Engine": state.worker.tts.engine_name if state.worker.tts else ""}
        if body.response_format == "pcm":
            headers["X-Sample-Rate"] = "24000"
        return StreamingResponse(
            body_iter(), media_type=MEDIA_TYPES[body.response_format], headers=headers
        )

    @app.post("/v1/audio/captioned")
    async def captioned(
        body: SpeechRequest, request: Request, who: str = Depends(auth)
    ) -> JSONResponse:
        job = make_job(body, request, captioned=True)
        info = request.scope["state"]["log"]
        slot = Slot(who)
        parts: list[bytes] = []
        done = False
        try:
            submit(job)
            while True:
                item = await next_item(job)
                if item is END:
                    done = True
                    break
                if isinstance(item, BaseException):
                    done = True
                    raise failure(item)
                parts.append(item)
        finally:
            if not done:
                job.cancel.set()
                metrics.cancel()
            slot.release()
            metrics.audio(job.audio_seconds)
            info.update(result=job.status, audio_s=round(job.audio_seconds, 3))
        if not parts:
            raise ApiError(
                400, "nothing to speak in the input (see POST /v1/route)", "nothing_to_speak"
            )
        segments = job.timeline.finish() if job.timeline is not None else []
        rate = job.output_rate
        return JSONResponse(
            {
                "format": body.response_format,
                "media_type": MEDIA_TYPES[body.response_format],
                "sample_rate": rate,
                "duration": round(job.audio_seconds, 3),
                "audio": base64.b64encode(b"".join(parts)).decode("ascii"),
                "segments": [s.to_dict() for s in segments],
            }
        )

    return Gate(app, cfg, metrics)
