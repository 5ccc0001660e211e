"""Registers the ChatTTS engine and its commands through the ``mixvox`` entry-point group.

Import-light on purpose: this module is imported every time mixvox starts, so the models,
onnxruntime and torch are imported only by the factory, and the availability check looks at
file names only (no hashing; hashes are checked when the engine loads).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mixvox.interfaces import Engine, EngineInfo
from mixvox.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    import click


def create_engine(**options: Any) -> Engine:
    from .engine import ChatTTSEngine

    return ChatTTSEngine(**options)


def check(model_dir: str | None = None, **_options: Any) -> str | None:
    """``None`` when a complete-looking model directory is found, else why not and what to do.

    ``model_dir`` is the folder the caller will pass to the factory, if any.
    """
    from .assets import candidate_dirs, find_model_dir, get_weights_hint, layout_problem

    if model_dir is not None:
        from pathlib import Path

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
        )
    )


@hookimpl
def mixvox_register_commands(cli: click.Group) -> None:
    from .cli import register

    register(cli)


@hookimpl(trylast=True)
def mixvox_word_rendering(word: Any) -> tuple[str, str] | None:
    """The text ChatTTS will read for an override word, and whether it says the override."""
    if not word.override:
        return None
    from .render import render_words

    rendered = render_words([word])
    if any(n.code == "override-approximate" for n in rendered.notes):
        return "chattts", f"text {rendered.text!r} (approximate: no respelling says it)"
    return "chattts", f"text {rendered.text!r}"
