"""mixvox: offline text-to-speech for mixed Chinese/English text.

The public API is small on purpose::

    import mixvox
    mixvox.synthesize("今天的 meeting 改到 3:30 PM").save("out.wav")

    tts = mixvox.Synthesizer()            # load once
    for piece in tts.stream(long_text):   # audio while it is being made
        ...
    utt = mixvox.route("3个GPU")           # the analysis (IR) without audio

Plugin authors find what they need here too: :data:`hookimpl`, the interfaces
(:class:`Engine`, :class:`EngineInfo`, :class:`Frontend`, :class:`LexEntry`,
:class:`AudioChunk`), the options contract (:class:`EngineOptions`, :func:`option`) and
:mod:`mixvox.errors`.
"""

from mixvox import errors
from mixvox.audio import Audio
from mixvox.errors import EngineUnavailable, MixvoxError, OptionError
from mixvox.interfaces import (
    AudioChunk,
    Engine,
    EngineInfo,
    Frontend,
    FrontendContext,
    FrontendInfo,
    LexEntry,
    SynthesisOptions,
)
from mixvox.ir import Chunk, Issue, Sentence, Span, Utterance, Word
from mixvox.options import EngineOptions, option
from mixvox.pipeline import Router, Synthesizer, route, synthesize
from mixvox.plugins.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "Audio",
    "AudioChunk",
    "Chunk",
    "Engine",
    "EngineInfo",
    "EngineOptions",
    "EngineUnavailable",
    "Frontend",
    "FrontendContext",
    "FrontendInfo",
    "Issue",
    "LexEntry",
    "MixvoxError",
    "OptionError",
    "Router",
    "Sentence",
    "Span",
    "SynthesisOptions",
    "Synthesizer",
    "Utterance",
    "Word",
    "__version__",
    "errors",
    "hookimpl",
    "option",
    "route",
    "synthesize",
]
