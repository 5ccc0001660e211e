"""Registers the built-in espeak-ng engine through the ``mixvox`` entry-point group.

``trylast`` so that a user plugin registering an engine under the same name wins; priority 0
so that engines that sound better (higher priority) are chosen when they can run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mixvox.engines.espeak import binding
from mixvox.interfaces import Engine, EngineInfo
from mixvox.ir import Word
from mixvox.options import EngineOptions
from mixvox.plugins.hookspecs import hookimpl


@dataclass
class EspeakOptions(EngineOptions):
    """espeak takes no load options: the voice and rate come per call (speaker, speed)."""


@dataclass
class EspeakCallOptions(EngineOptions):
    """No per-call options beyond the generic ``speed`` and ``raw``."""


def create_engine(options: EspeakOptions | None = None) -> Engine:
    """Build the engine (imports numpy-side code only when an engine is actually wanted)."""
    from mixvox.engines.espeak.engine import EspeakEngine

    return EspeakEngine(**(options.given() if options is not None else {}))


def check(options: EspeakOptions | None = None) -> str | None:
    """``None`` when libespeak-ng loads here, else why not."""
    return binding.check()


@hookimpl(trylast=True)
def mixvox_register_engines(register: Callable[[EngineInfo], None]) -> None:
    register(
        EngineInfo(
            name="espeak",
            factory=create_engine,
            check=check,
            priority=0,
            description="espeak-ng formant voices (cmn + en-us); built in, no download",
            options=EspeakOptions,
            call_options=EspeakCallOptions,
        )
    )


@hookimpl(trylast=True)
def mixvox_word_rendering(word: Word) -> tuple[str, str] | None:
    """How espeak says an override word: its phonemes (en) or its pinyin (zh)."""
    if not word.override or not word.phonemes:
        return None
    from mixvox.engines.espeak.engine import override_phonemes

    if word.lang == "en":
        phon = override_phonemes(word)
        if phon is not None:
            return "espeak", f"phonemes {phon} (exact)"
        return "espeak", f"text {word.spoken!r}"
    if word.lang == "zh":
        return "espeak", "pinyin " + " ".join(word.phonemes) + " (exact)"
    return None
