"""Registers the ChatTTS engine and its commands through the ``mixvox`` entry-point group.

Import-light on purpose: this module is imported every time mixvox starts, so the models,
onnxruntime and torch are imported only by the factory, and the availability check looks at
file names only (no hashing; hashes are checked when the engine loads).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mixvox.engines.chattts.options import ChatTTSCallOptions, ChatTTSOptions
from mixvox.interfaces import Engine, EngineInfo
from mixvox.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

#: Environment variable naming a weights folder (read here and in :mod:`.assets` only).
CHATTTS_DIR_ENV = "MIXVOX_CHATTTS_DIR"

#: What a user can do when the engine is unavailable (the CLI's fallback notice adds it).
HINT = (
    "For ChatTTS voices run `mixvox download`, or point --model-dir or "
    f"{CHATTTS_DIR_ENV} at downloaded weights."
)


def create_engine(options: ChatTTSOptions | None = None) -> Engine:
    """The engine for validated ``options`` (models, onnxruntime and torch load only here)."""
    from mixvox.engines.chattts.engine import ChatTTSEngine

    return ChatTTSEngine(**(options or ChatTTSOptions()).engine_kwargs())


def check(options: ChatTTSOptions | None = None) -> str | None:
    """``None`` when a complete-looking model directory is found, else why not and what to do.

    ``options.model_dir`` is the folder the factory will get, if one was named; otherwise the
    usual places are searched (``$MIXVOX_CHATTTS_DIR``, the data and cache dirs).
    """
    from mixvox.engines.chattts.assets import (
        candidate_dirs,
        find_model_dir,
        get_weights_hint,
        layout_problem,
    )

    model_dir = options.model_dir if options is not None else None
    if model_dir is not None:
        return layout_problem(Path(model_dir).expanduser())
    if find_model_dir() is not None:
        return None
    looked = "; ".join(f"{how}: {layout_problem(path)}" for how, path in candidate_dirs())
    return f"no ChatTTS weights ({looked}). To get them, {get_weights_hint()}"


@hookimpl(trylast=True)
def mixvox_register_engines(register: Callable[[EngineInfo], None]) -> None:
    register(
        EngineInfo(
            name="chattts",
            factory=create_engine,
            check=check,
            priority=10,
            description="ChatTTS (ONNX Runtime or torch); needs `mixvox download`",
            options=ChatTTSOptions,
            call_options=ChatTTSCallOptions,
            hint=HINT,
        )
    )


@hookimpl
def mixvox_register_commands(cli: click.Group) -> None:
    from mixvox.engines.chattts.cli import register

    register(cli)


@hookimpl(trylast=True)
def mixvox_word_rendering(word: Any) -> tuple[str, str] | None:
    """The text ChatTTS will read for an override word, and whether it says the override."""
    if not word.override:
        return None
    from mixvox.engines.chattts.render import render_words

    rendered = render_words([word])
    if any(n.code == "override-approximate" for n in rendered.notes):
        return "chattts", f"text {rendered.text!r} (approximate: no respelling says it)"
    return "chattts", f"text {rendered.text!r}"
