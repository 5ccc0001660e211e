"""The pipeline: text -> sentences/spans -> frontends -> prosody -> engine -> audio."""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from mixvox.audio import Audio, check_samples
from mixvox.choice import EngineRequest, choose_engine, split_call
from mixvox.errors import MixvoxError, notify
from mixvox.frontend_options import FrontendOptionsArg, build_frontend_options
from mixvox.interfaces import (
    AudioChunk,
    Engine,
    FrontendContext,
    LexEntry,
    Lexicon,
    SynthesisOptions,
)
from mixvox.ir import CTRL, Chunk, Utterance, Word
from mixvox.overrides import fill_builtin_spoken
from mixvox.registry import Registry, get_registry
from mixvox.ssml import is_ssml, route_ssml
from mixvox.stages import Failed, Pipeline, Stage

__all__ = ["Router", "Synthesizer", "choose_engine", "load_lexicons", "route", "synthesize"]

log = logging.getLogger("mixvox")

DEFAULT_MAX_CHUNK_CHARS = 120


def load_lexicons(
    files: Iterable[str | os.PathLike[str]] = (),
    registry: Registry | None = None,
    entries: Mapping[str, Mapping[str, LexEntry]] | None = None,
) -> dict[str, Lexicon]:
    """Merged lexicons per language: ``entries`` and ``files`` first, then plugin lexicons."""
    from mixvox.plugins.lexicons import load_lexicon_file

    reg = registry or get_registry()
    layers: dict[str, list[Mapping[str, LexEntry]]] = {}
    for lang, table in (entries or {}).items():
        layers.setdefault(lang, []).append(table)
    for path in files:
        for lang, table in load_lexicon_file(path).items():
            layers.setdefault(lang, []).append(table)
    out: dict[str, Lexicon] = {}
    langs = set(layers) | set(reg.frontends)
    for lang in sorted(langs):
        lex = Lexicon(lang, layers.get(lang, []))
        for _name, table in reg.call_all("mixvox_lexicon", lang=lang):
            lex.add_layer(table)
        out[lang] = lex
    return out


class Router:
    """Turns text into an analysed :class:`~mixvox.ir.Utterance`.

    Holds the frontends and merged lexicons so that repeated calls do not reload them.
    """

    def __init__(
        self,
        *,
        lexicons: Iterable[str | os.PathLike[str]] = (),
        registry: Registry | None = None,
        frontend_options: FrontendOptionsArg | None = None,
    ) -> None:
        """``frontend_options``: per language, the frontend's options (``{"en": {"number_and":
        False}}``), validated here, before anything loads (:mod:`mixvox.frontend_options`)."""
        self.registry = registry or get_registry()
        self.frontend_options = build_frontend_options(self.registry, frontend_options)
        self.lexicons = load_lexicons(lexicons, self.registry)
        self._frontends: dict[str, object] = {}

    def _frontend(self, lang: str):
        fe = self._frontends.get(lang)
        if fe is None:
            info = self.registry.frontend(lang)
            if info is None:
                return None
            if info.options is not None:  # a frontend with options gets them, defaults or not
                opts = self.frontend_options.get(lang) or build_frontend_options(
                    self.registry, {lang: {}}
                ).get(lang)
                fe = info.factory(opts)
            else:
                fe = info.factory()
            self._frontends[lang] = fe
        return fe

    def route(self, text: str) -> Utterance:
        """Analyse ``text``; text starting with ``<speak`` is SSML (:mod:`mixvox.ssml`)."""
        from mixvox.segment import segment

        if is_ssml(text):
            return route_ssml(self, text)
        return self.analyze(segment(text))

    def analyze(self, utt: Utterance) -> Utterance:
        """Run the frontends over the spans of a segmented utterance (in place)."""
        for sent in utt.sentences:
            for span in sent.spans:
                if span.words or span.lang == CTRL:
                    fill_builtin_spoken(span, self._frontend, sent.matrix)
                    continue  # control tokens and inline overrides come pre-analysed
                ctx = FrontendContext(
                    lexicon=self.lexicons.get(span.lang) or Lexicon(span.lang),
                    warn=lambda code, msg, s, e: utt.warn(code, msg, s, e),
                    matrix=sent.matrix,
                    lexicons=self.lexicons,
                    before=sent.text[: max(0, span.start - sent.start)],
                )
                words = self.registry.call_first("mixvox_normalize", span=span, ctx=ctx)
                if words is None:
                    fe = self._frontend(span.lang)
                    if fe is None:
                        utt.warn(
                            "no-frontend",
                            f"no frontend for language {span.lang!r}; text skipped",
                            span.start,
                            span.end,
                        )
                        words = []
                    else:
                        words = fe.analyze(span, ctx)
                span.words = list(words)
        return utt

    def raw(self, text: str) -> Utterance:
        """An utterance that sends ``text`` to the engine as it is: no routing, no normalization.

        For comparison with the engine's own tools (``mixvox say --raw``).
        """
        from mixvox.ir import Sentence, Span
        from mixvox.textutil import control_runs

        word = Word(text, text, [], 0, len(text), lang="raw", kind="word")
        span = Span("raw", text, 0, len(text), [word])
        utt = Utterance(text, [Sentence(text, 0, len(text), "raw", [span])])
        for s, e in control_runs(text):  # kept in the text; engines drop them, never cut at them
            utt.warn(
                "control-char",
                f"control/format character(s) {text[s:e]!r} at {s}-{e} are not spoken",
                s,
                e,
            )
        return utt

    def chunks(self, utt: Utterance, max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS) -> list[Chunk]:
        chunks = self.registry.call_first(
            "mixvox_prosody", utterance=utt, max_chunk_chars=max_chunk_chars
        )
        if chunks is None:  # no prosody plugin at all: one chunk per sentence
            chunks = [Chunk(i, s.words) for i, s in enumerate(utt.sentences) if s.words]
        return [c for c in chunks if any(_is_spoken(w) for w in c.words)]


def _is_spoken(w: Word) -> bool:
    return w.kind == "word" and bool(w.spoken.strip())


#: Texts longer than twice this are routed in blocks of about this many characters.
BLOCK_CHARS = 8000
_STRONG_END = re.compile(r"[\n。！？!?；;…]")
_WEAK_END = re.compile(r"[.,，、:：]\s|\s")


def text_blocks(text: str, size: int = BLOCK_CHARS) -> Iterator[str]:
    """Cut ``text`` into blocks of about ``size`` characters for incremental routing.

    A block ends after a newline or sentence-ending punctuation found within ``size`` more
    characters, else after a clause mark or any whitespace, else (one unbroken run of 2x
    ``size`` characters) at that length. Short texts are one block.
    """
    n = len(text)
    if n <= 2 * size:
        if text:
            yield text
        return
    i = 0
    while i < n:
        j = i + size
        if j >= n:
            yield text[i:]
            return
        window = text[j : min(n, j + size)]
        m = _STRONG_END.search(window) or _WEAK_END.search(window)
        k = j + (m.end() if m else len(window))
        yield text[i:k]
        i = k


_ROUTERS: dict[tuple[object, ...], Router] = {}
_ROUTERS_LOCK = threading.Lock()
#: Distinct lexicon sets whose routers :func:`route` keeps (oldest dropped first).
MAX_CACHED_ROUTERS = 8


def _lexicon_key(path: str | os.PathLike[str]) -> tuple[str, int, int]:
    """A lexicon file's identity for the router cache: edited files are reloaded."""
    name = os.path.abspath(os.fspath(path))
    try:
        st = os.stat(name)
    except OSError:
        return (name, -1, -1)  # let Router() report the missing file
    return (name, st.st_mtime_ns, st.st_size)


def shared_router(lexicons: Iterable[str | os.PathLike[str]] = ()) -> Router:
    """The process-wide :class:`Router` for these lexicon files (built once, then reused).

    Building a router loads the frontends and lexicons; doing that per call made
    :func:`route` about ten times slower than the CLI (``bench/text_speed.py --rebuild``). Keyed by the registry in use and each
    lexicon file's path, mtime and size, so a rebuilt registry or an edited lexicon file gets
    a fresh router.
    """
    files = list(lexicons)
    key = (id(get_registry()), *(_lexicon_key(f) for f in files))
    with _ROUTERS_LOCK:
        router = _ROUTERS.get(key)
        if router is None:
            router = Router(lexicons=files)
            if len(_ROUTERS) >= MAX_CACHED_ROUTERS:
                _ROUTERS.pop(next(iter(_ROUTERS)))
            _ROUTERS[key] = router
        return router


def route(text: str, *, lexicons: Iterable[str | os.PathLike[str]] = ()) -> Utterance:
    """Analyse ``text`` (sentences, language spans, normalization, pronunciations).

    Text starting with ``<speak>`` is read as SSML (see :mod:`mixvox.ssml`). Reuses one
    router per lexicon set (:func:`shared_router`).
    """
    return shared_router(lexicons).route(text)


class Synthesizer:
    """Load once, synthesize many times.

    >>> tts = Synthesizer()                      # best available engine
    >>> audio = tts.synthesize("今天的 meeting 改到 3:30 PM")
    >>> audio.save("out.wav")
    """

    def __init__(
        self,
        engine: str | None = None,
        *,
        speaker: str | None = None,
        seed: int | None = None,
        lexicons: Iterable[str | os.PathLike[str]] = (),
        max_chunk_chars: int | None = None,
        engine_request: EngineRequest | None = None,
        frontend_options: FrontendOptionsArg | None = None,
        **engine_options: object,
    ) -> None:
        """``engine_options`` are the engine's options (``model_dir=...``): validated by its
        options class before anything loads, and the automatic choice picks an engine that
        takes them. ``engine_request`` carries what the CLI gathered (flags, ``-O``, config);
        ``frontend_options`` go to the :class:`Router` (``{"en": {"number_and": False}}``)."""
        self.router = Router(lexicons=lexicons, frontend_options=frontend_options)
        request = engine_request or EngineRequest()
        if engine_options:
            request = replace(request, options={**request.options, **engine_options})
        choice = choose_engine(engine, self.router.registry, request)
        self.fallback_reason = choice.reason
        self.engine_info = choice.info
        self.engine_name = choice.info.name
        self.engine_options = choice.options
        self.call_defaults = choice.call
        self._dropped: set[tuple[str, ...]] = set()
        if choice.ignored:
            self._dropped.add(tuple(choice.ignored))
            notify(f"{choice.info.name} engine ignores option(s): " + ", ".join(choice.ignored))
        self.engine: Engine = choice.build()
        _log_choice(choice.info.name, engine, self.fallback_reason)
        self.options = SynthesisOptions(speaker=speaker, seed=seed)
        self.max_chunk_chars: int = max_chunk_chars or int(
            getattr(self.engine, "max_chunk_chars", DEFAULT_MAX_CHUNK_CHARS)
        )

    @property
    def sample_rate(self) -> int:
        return self.engine.sample_rate

    def route(self, text: str) -> Utterance:
        return self.router.route(text)

    def _known_anywhere(self) -> set[str]:
        """Per-call keys some registered engine takes: a key outside this set is a typo
        (``spead=``) and an error, a key another engine takes is only ignored here."""
        from mixvox.choice import GENERIC_CALL_KEYS
        from mixvox.options import option_keys

        known = set(COMMON_OPTIONS) | set(GENERIC_CALL_KEYS) | {"save_codes"}
        for info in self.router.registry.engines.values():
            known |= set(option_keys(info.call_options)) | set(option_keys(info.options))
            known |= set(getattr(info, "known_options", ()) or ())
        return known

    def _refuse_unknown(self, keys: list[str]) -> None:
        import difflib

        from mixvox.errors import UnknownOption

        known = sorted(self._known_anywhere())
        hints = []
        for key in keys:
            close = difflib.get_close_matches(key, known, n=1)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise UnknownOption(
            f"unknown option(s) for the {self.engine_name} engine: {', '.join(hints)}; "
            f"known: {', '.join(known)}"
        )

    def synthesis_options(self, overrides: Mapping[str, object]) -> SynthesisOptions:
        """The :class:`SynthesisOptions` of one call: ``speaker``/``seed`` (else this
        synthesizer's), the per-call defaults the request gave (config, flags, ``-O``), then
        ``overrides``; validated by the engine's per-call options class, and keys the engine
        does not take dropped with one notice. Every synthesis path builds them here."""
        rest = dict(overrides)
        speaker = rest.pop("speaker", self.options.speaker)
        seed = rest.pop("seed", self.options.seed)
        extra, dropped = split_call(self.engine_info, {**self.call_defaults, **rest})
        typos = [k for k in dropped if k in rest and k not in self._known_anywhere()]
        if typos:
            self._refuse_unknown(typos)
        if dropped and tuple(dropped) not in self._dropped:
            self._dropped.add(tuple(dropped))
            notify(f"{self.engine_name} engine ignores option(s): " + ", ".join(dropped))
        return SynthesisOptions(
            speaker=speaker,  # type: ignore[arg-type]
            seed=seed,  # type: ignore[arg-type]
            extra=extra,
        )

    def stream_chunks(self, text: str | Utterance, **overrides: object) -> Iterator[AudioChunk]:
        opts = self.synthesis_options(overrides)
        raw = bool(opts.extra.get("raw"))
        if not isinstance(text, str | Utterance):
            raise TypeError(f"synthesis needs a str, not {type(text).__name__}")
        if isinstance(text, Utterance):
            utts: Iterable[Utterance] = [text]
        elif raw:
            if is_ssml(text):  # raw text goes to the engine as it is: tags would be read aloud
                raise MixvoxError("raw mode sends text unchanged; SSML needs routing (drop raw)")
            utt = self.router.raw(text)
            if text.strip():
                yield from self.engine.stream(utt, [Chunk(0, utt.words)], opts)
            return
        else:
            # Long text is routed block by block, so the first audio does not wait for the
            # analysis of the whole text and memory stays bounded by the block size.
            blocks = [text] if is_ssml(text) else text_blocks(text)  # SSML: one document
            utts = (self.route(block) for block in blocks)
        index = 0
        for utt in utts:
            chunks = self.router.chunks(utt, self.max_chunk_chars)
            if not chunks:
                continue
            numbered = [Chunk(index + i, c.words) for i, c in enumerate(chunks)]
            index += len(numbered)
            yield from self.engine.stream(utt, numbered, opts)

    def stream(self, text: str | Utterance, **overrides: object) -> Iterator[Audio]:
        """Yield audio pieces as soon as the engine produces them."""
        for piece in self.stream_chunks(text, **overrides):
            yield self._checked(piece)

    def _checked(self, piece: AudioChunk) -> Audio:
        """An engine's piece as :class:`Audio`, refused if it holds NaN/Inf."""
        audio = Audio(piece.samples, piece.sample_rate)
        check_samples(audio.samples, f"the {self.engine_name} engine", constant=False)
        return audio

    def _whole(self, pieces: list[Audio], text: str | Utterance) -> Audio:
        """``pieces`` as one :class:`Audio`; :class:`~mixvox.errors.NothingToSay` when they
        hold no sample (an empty result saved to a file would look like success)."""
        from .errors import NothingToSay

        audio = Audio.concat(pieces, self.sample_rate) if pieces else None
        if audio is None or len(audio) == 0:
            shown = text.input if isinstance(text, Utterance) else text
            if isinstance(shown, str) and len(shown) > 40:
                shown = shown[:40] + "…"
            raise NothingToSay(f"nothing to speak in {shown!r}")
        return audio

    def synthesize(self, text: str | Utterance, **overrides: object) -> Audio:
        """The whole utterance as one :class:`Audio`.

        Raises :class:`~mixvox.errors.NothingToSay` for text with nothing speakable (empty,
        punctuation only, all skipped): an empty result saved to a file would look like
        success. :meth:`stream` yields nothing for such text instead.
        """
        return self._whole(list(self.stream(text, **overrides)), text)

    @property
    def batch_size(self) -> int:
        """How many texts :meth:`synthesize_batch` decodes together: the engine's GPT batch
        (``max_batch``) when it can decode several utterances at once, else 1."""
        if not callable(getattr(self.engine, "synthesize_many", None)):
            return 1
        return max(1, int(getattr(self.engine, "max_batch", 1)))

    def synthesize_batch(
        self, texts: list[str | Utterance], **overrides: object
    ) -> list[Audio | Exception]:
        """The audio of each text, the texts decoded together where the engine can.

        Why: for a batch of short lines a GPT step costs about the same for several rows as
        for one, so an engine with ``synthesize_many`` (a GPT decoder) speaks several lines
        in the time of one. Each line keeps its own speaker and random stream, so on the CPU it
        sounds as :meth:`synthesize` makes it (the same seed, up to the rounding of batched
        matmuls). Per text, in order: its :class:`Audio`, or the exception that stopped it
        (:class:`~mixvox.errors.NothingToSay` for nothing speakable), so one bad line does
        not sink the others. Texts the engine cannot take together (raw mode, long text
        routed in blocks) are synthesized one by one.
        """
        results: list[Audio | Exception | None] = [None] * len(texts)
        many = getattr(self.engine, "synthesize_many", None)
        requests: list[tuple[int, Utterance, list[Chunk]]] = []
        opts: SynthesisOptions | None = None
        if callable(many) and len(texts) > 1:
            try:
                opts = self.synthesis_options(overrides)
            except Exception as exc:  # the same options for all: the same error for all
                return [exc for _ in texts]
            for i, text in enumerate(texts):
                if opts.extra.get("raw") or not isinstance(text, str | Utterance):
                    continue
                try:
                    if isinstance(text, str):
                        if is_ssml(text) or len(text) > BLOCK_CHARS:
                            continue  # routed block by block: synthesize() below
                        utt = self.route(text)
                    else:
                        utt = text
                    chunks = self.router.chunks(utt, self.max_chunk_chars)
                except Exception as exc:
                    results[i] = exc
                    continue
                requests.append((i, utt, [Chunk(k, c.words) for k, c in enumerate(chunks)]))
        if callable(many) and opts is not None and requests:
            shared = [(utt, chunks, opts) for _, utt, chunks in requests if chunks]
            got = iter(many(shared)) if shared else iter(())
            for i, utt, chunks in requests:
                out = next(got) if chunks else []
                if isinstance(out, Exception):
                    results[i] = out
                    continue
                try:
                    results[i] = self._whole([self._checked(p) for p in out], utt)
                except Exception as exc:
                    results[i] = exc
        for i, text in enumerate(texts):
            if results[i] is None:
                try:
                    results[i] = self.synthesize(text, **overrides)
                except Exception as exc:
                    results[i] = exc
        return [r for r in results if r is not None]

    def synthesize_many(
        self, texts: Iterable[str], **overrides: object
    ) -> Iterator[Audio | Failed]:
        """Audio for each text, in input order, with text preparation overlapping synthesis.

        Routing runs in one thread and the engine in another, connected by a bounded queue,
        so a long script keeps the engine busy; an engine that decodes several texts at once
        (:attr:`batch_size` > 1) gets the texts waiting together (:meth:`synthesize_batch`).
        A text that fails yields a :class:`~mixvox.stages.Failed` (with the stage and the
        exception) and the rest go on.
        """
        n = self.batch_size
        synth = (
            Stage("synthesize", lambda utts: self.synthesize_batch(utts, **overrides), batch=n)
            if n > 1  # the texts waiting go to the engine together (synthesize_batch)
            else Stage("synthesize", lambda utt: self.synthesize(utt, **overrides))
        )
        pipe = Pipeline([Stage("prepare", self.route), synth], maxsize=max(2, n))
        yield from pipe.run(texts)

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> Synthesizer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Per-call options every engine takes (the rest are listed by each engine).
COMMON_OPTIONS = frozenset({"speaker", "seed", "speed", "raw"})


def _log_choice(chosen: str, asked: str | None, reason: str | None) -> None:
    """Log (once, when a Synthesizer is made) which engine it uses and why."""
    if asked and asked != "auto":
        why = "it was asked for"
    elif reason:  # a fallback: said out loud (a warning shows without any logging setup)
        log.warning("using the %s engine because a better one is unavailable (%s)", chosen, reason)
        return
    else:
        why = "it is the best available engine"
    log.info("using the %s engine because %s", chosen, why)


def synthesize(text: str, **options: object) -> Audio:
    """One-shot synthesis: ``mixvox.synthesize("你好 world").save("out.wav")``."""
    with Synthesizer(**options) as tts:  # type: ignore[arg-type]
        return tts.synthesize(text)
