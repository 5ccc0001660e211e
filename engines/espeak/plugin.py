"""Registers the built-in espeak-ng engine through the ``mixvox`` entry-point group.

``trylast`` so that a user plugin registering an engine under the same name wins; priority 0
so that ChatTTS (higher) is chosen automatically whenever its weights are present.
"""

from __future__ import annotations

from collections.abc import Callable

from mixvox.interfaces import Engine, EngineInfo
from mixvox.ir import Word
from mixvox.plugins.hookspecs import hookimpl

from . import binding


def create_engine(**options: object) -> Engine:
    """Build the engine (imports numpy-side code only when an engine is actually wanted)."""
    from .engine import EspeakEngine

    return EspeakEngine(**options)


@hookimpl(trylast=True)
def mixvox_register_engines(register: Callable[[EngineInfo], None]) -> None:
    register(
        EngineInfo(
            name="espeak",
            factory=create_engine,
            check=binding.check,
            priority=0,
            description="espeak-ng formant voices (cmn + en-us); built in, no download",
        )
    )


@hookimpl(trylast=True)
def mixvox_word_rendering(word: Word) -> tuple[str, str] | None:
    """How espeak says an override word: its phonemes (en) or its pinyin (zh)."""
    if not word.override or not word.phonemes:
        return None
    from .engine import override_phonemes

    if word.lang == "en":
        phon = override_phonemes(word)
        if phon is not None:
            return "espeak", f"phonemes {phon} (exact)"
        return "espeak", f"text {word.spoken!r}"
    if word.lang == "zh":
        return "espeak", "pinyin " + " ".join(word.phonemes) + " (exact)"
    return None
