"""The pluggy hook specifications of mixvox (project name ``mixvox``).

A plugin is a module or object with functions decorated by :data:`hookimpl`, published under
the ``mixvox`` entry-point group. Built-in frontends, engines, lexicons and prosody are
registered exactly like third-party plugins, marked ``trylast`` so that user plugins win.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # imports for type checkers only: hookspecs must stay import-light
    from pathlib import Path

    import click

    from mixvox.interfaces import EngineInfo, FrontendContext, FrontendInfo, LexEntry
    from mixvox.ir import Chunk, Span, Utterance, Word

PROJECT = "mixvox"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def mixvox_register_frontends(register: Callable[[FrontendInfo], None]) -> None:
    """Call ``register(FrontendInfo(lang, factory))`` for each language frontend provided."""


@hookspec
def mixvox_register_engines(register: Callable[[EngineInfo], None]) -> None:
    """Call ``register(EngineInfo(name, factory, check, priority, options=...))`` per engine.

    ``options`` (and ``call_options``) are the engine's typed options classes
    (:class:`mixvox.options.EngineOptions` dataclasses): the core validates user settings into
    them before anything loads and passes the object to ``check`` and ``factory``; fields with
    a ``flag`` become CLI flags of ``say`` and ``batch``.
    """


@hookspec
def mixvox_lexicon(lang: str) -> Mapping[str, LexEntry] | None:
    """Return pronunciation entries (word -> :class:`LexEntry`) for ``lang``, or ``None``.

    All results are merged; entries from plugins called earlier win (user plugins run before
    the ``trylast`` built-ins, and ``--lexicon`` files beat every plugin).
    """


@hookspec(firstresult=True)
def mixvox_normalize(span: Span, ctx: FrontendContext) -> list[Word] | None:
    """Analyse ``span`` instead of the built-in frontend: return its words, or ``None`` to pass.

    Called before the language frontend; the first non-``None`` result is used.
    """


@hookspec(firstresult=True)
def mixvox_prosody(utterance: Utterance, max_chunk_chars: int) -> list[Chunk] | None:
    """Set ``Word.break_after`` levels and cut the utterance into synthesis chunks.

    Chunks end at sentence or clause boundaries (never inside a word) and hold at most
    ``max_chunk_chars`` spoken characters unless a single word is longer.
    """


@hookspec
def mixvox_register_commands(cli: click.Group) -> None:
    """Add click commands or options to the ``mixvox`` CLI (as simonw/llm's register_commands).

    Engines with their own tools (``mixvox speaker``, ``mixvox download``) add them here.
    """


@hookspec
def mixvox_word_rendering(word: Word) -> tuple[str, str] | None:
    """``(engine name, how it will say word)`` for a word with an override, or ``None``.

    ``mixvox route`` prints one line per engine under each override word, so a user sees
    whether the override is heard exactly (espeak: phonemes) or approximated (a text-reading engine reads a
    respelling). Must be cheap and must not load a model.
    """


@hookspec(firstresult=True)
def mixvox_model_key(model_dir: Path) -> bytes | str | None:
    """Return the 256-bit key of the encrypted model in ``model_dir``, or ``None`` to pass.

    ``bytes`` (32) or base64 text. For deployments that keep keys in a KMS or HSM; asked only
    when no ``--key-file``, ``MIXVOX_MODEL_KEY_FILE`` or ``MIXVOX_MODEL_KEY`` was given. Never
    log the key.
    """
