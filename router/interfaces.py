"""Interfaces between the router and its frontends, lexicons and engines.

Frontends and engines depend on this module and on :mod:`mixvox.ir` only; the router finds
them through the plugin manager (:mod:`mixvox.registry`), never by importing them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from mixvox.errors import EngineUnavailable, MixvoxError
from mixvox.ir import Chunk, Span, Utterance, Word

if TYPE_CHECKING:
    from mixvox.options import EngineOptions

__all__ = [
    "AudioChunk",
    "Engine",
    "EngineInfo",
    "EngineUnavailable",  # re-exported: defined in mixvox.errors
    "Frontend",
    "FrontendContext",
    "FrontendInfo",
    "LexEntry",
    "Lexicon",
    "MixvoxError",  # re-exported: defined in mixvox.errors
    "SynthesisOptions",
]


# ---------------------------------------------------------------------------------------------
# Lexicons
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LexEntry:
    """A pronunciation for one word.

    For ``zh``: ``phonemes`` are tone-numbered pinyin, one per Han character of the word.
    For ``en``: ``phonemes`` are ARPAbet with stress, and/or ``respelling`` is a plain-text
    spelling that makes a text-reading engine say the word right (``nginx`` -> ``engine x``).
    ``spoken`` optionally replaces the word's spoken text (``NASA`` stays a word, ``k8s`` ->
    ``kubernetes``).
    """

    word: str
    phonemes: tuple[str, ...] = ()
    respelling: str | None = None
    spoken: str | None = None
    source: str = ""  # where it came from (plugin name, file path) for error messages


class Lexicon:
    """Merged word -> entry tables for one language; earlier layers win.

    Lookup is exact first, then case-insensitive (so ``Nginx`` finds ``nginx``), because users
    write lexicons in one case and text arrives in another.
    """

    def __init__(self, lang: str, layers: list[Mapping[str, LexEntry]] | None = None) -> None:
        self.lang = lang
        self._exact: dict[str, LexEntry] = {}
        self._folded: dict[str, LexEntry] = {}
        for layer in layers or []:
            self.add_layer(layer, override=False)

    def add_layer(self, entries: Mapping[str, LexEntry], *, override: bool = False) -> None:
        for key, entry in entries.items():
            if override or key not in self._exact:
                self._exact[key] = entry
            folded = key.casefold()
            if override or folded not in self._folded:
                self._folded[folded] = entry

    def get(self, word: str) -> LexEntry | None:
        return self._exact.get(word) or self._folded.get(word.casefold())

    def __contains__(self, word: str) -> bool:
        return self.get(word) is not None

    def __len__(self) -> int:
        return len(self._exact)

    def words(self) -> list[str]:
        return list(self._exact)


# ---------------------------------------------------------------------------------------------
# Frontends
# ---------------------------------------------------------------------------------------------


@dataclass
class FrontendContext:
    """What a frontend may use while analysing a span.

    ``lexicon`` is the merged lexicon of the span's language (user files, plugins, built-ins);
    ``warn(code, message, start, end)`` records an :class:`~mixvox.ir.Issue` on the utterance;
    ``matrix`` is the sentence's matrix language (a frontend reads digits differently inside
    an embedded island); ``lexicons`` gives access to the other language's lexicon too;
    ``before`` is the sentence text before the span.
    """

    lexicon: Lexicon
    warn: Callable[[str, str, int, int], Any]
    matrix: str
    lexicons: Mapping[str, Lexicon] = field(default_factory=dict)
    #: The sentence text before the span (other spans included): context for readings that
    #: depend on words the router put in another span (``CPU requests设为500m``: millicores).
    before: str = ""


@runtime_checkable
class Frontend(Protocol):
    """Normalizes one language's span and gives each word its pronunciation."""

    lang: str

    def analyze(self, span: Span, ctx: FrontendContext) -> list[Word]:
        """Return the words of ``span`` in order, with absolute offsets inside ``span``.

        Every character of ``span.text`` must be covered by some word's ``[start, end)``
        (punctuation as ``kind="punct"`` words, skipped characters reported via
        ``ctx.warn``). Must never raise on odd input.
        """
        ...


# ---------------------------------------------------------------------------------------------
# Audio and engines
# ---------------------------------------------------------------------------------------------


@dataclass
class AudioChunk:
    """A piece of audio an engine yields while streaming.

    ``chunk`` is the index of the IR :class:`~mixvox.ir.Chunk` it belongs to and ``final``
    tells whether it is the last piece of that chunk.
    """

    samples: np.ndarray  # float32, mono, in [-1, 1]
    sample_rate: int
    chunk: int = 0
    final: bool = True


@dataclass
class SynthesisOptions:
    """Options every engine understands; engine-specific ones travel in ``extra``."""

    speaker: str | None = None
    seed: int | None = None
    speed: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Engine(Protocol):
    """Turns IR chunks into audio.

    ``consumes`` is ``"text"`` (reads ``Word.spoken``/``respelling`` and control tokens) or
    ``"phonemes"``. ``stream`` is the primitive; batch APIs are built on it.

    Optional: ``synthesize_many(requests)`` with ``requests`` a sequence of ``(utterance,
    chunks, options)``, returning per request its list of :class:`AudioChunk` or the exception
    that stopped it, and ``max_batch`` (how many chunks it decodes together). An engine that
    decodes several utterances at once for about the price of one (a GPT decoder) offers it;
    :meth:`mixvox.Synthesizer.synthesize_batch` and ``mixvox batch`` use it when present.
    """

    name: str
    sample_rate: int
    consumes: str

    def stream(
        self, utterance: Utterance, chunks: list[Chunk], options: SynthesisOptions
    ) -> Iterator[AudioChunk]: ...

    def close(self) -> None: ...


def _takes_argument(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` can be called with one positional argument (the options object)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params
    )


@dataclass
class EngineInfo:
    """How an engine plugin registers itself.

    ``options``: the engine's options class (a dataclass deriving from
    :class:`mixvox.options.EngineOptions`): the core validates every setting the user gives
    (keyword arguments, ``-O KEY=VALUE``, the engine's CLI flags, the config's
    ``[engine.<name>]`` table) into one instance *before* anything loads, then calls
    ``check(options)`` (``None`` when the engine can run with them, else a sentence saying
    why not) and ``factory(options)`` with that same object. ``call_options``: the class of
    per-call settings (``temperature``), validated and passed as
    :attr:`SynthesisOptions.extra` holding the given keys only. Fields declared with a
    ``flag`` become CLI flags of ``say``/``batch``.

    An engine without an options class (the older form) gets ``check()`` and
    ``factory(**kwargs)`` with whatever the user gave, unvalidated.

    ``priority`` orders automatic choice (higher first); ``hint`` is what a user can do when
    the engine is unavailable (added to the CLI's fallback notice).
    """

    name: str
    factory: Callable[..., Engine]
    check: Callable[..., str | None] = lambda: None
    priority: int = 0
    description: str = ""
    options: type[EngineOptions] | None = None
    call_options: type[EngineOptions] | None = None
    hint: str = ""

    def can_run(self, options: Any = None) -> str | None:
        """``check`` with the options object when it takes one, else ``check()``."""
        if self.options is not None or _takes_argument(self.check):
            return self.check(options)
        return self.check()

    def options_keys(self) -> list[str] | None:
        """Every option key the engine takes (``None``: an older engine that takes any)."""
        if self.options is None:
            return None
        from mixvox.options import option_keys

        return [*option_keys(self.options), *option_keys(self.call_options)]

    def default_options(self) -> Any:
        """The options object when the user gave nothing (``{}`` for the older form)."""
        if self.options is None:
            return {}
        from mixvox.options import build_options

        return build_options(self.options, {}, engine=self.name)

    def build(self, options: Any) -> Engine:
        """``factory(options)``, or ``factory(**options)`` for the older form."""
        if self.options is None:
            return self.factory(**dict(options or {}))
        return self.factory(options)


@dataclass
class FrontendInfo:
    """A frontend registration. ``options``: the frontend's options class (an
    :class:`~mixvox.options.EngineOptions` dataclass, e.g. the English ``number_and``); when
    set, ``factory`` is called with one validated instance (see
    :mod:`mixvox.frontend_options`), else with no argument."""

    lang: str
    factory: Callable[..., Frontend]
    description: str = ""
    options: type[EngineOptions] | None = None
