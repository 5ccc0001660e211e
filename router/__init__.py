"""mixvox: offline text-to-speech for mixed Chinese/English text.

The public API is small on purpose::

    import mixvox
    mixvox.synthesize("今天的 meeting 改到 3:30 PM").save("out.wav")

    tts = mixvox.Synthesizer()            # load once
    for piece in tts.stream(long_text):   # audio while it is being made
        ...
    utt = mixvox.route("3个GPU")           # the analysis (IR) without audio
"""

from .audio import Audio
from .interfaces import EngineUnavailable, LexEntry, MixvoxError
from .ir import Chunk, Issue, Sentence, Span, Utterance, Word
from .pipeline import Router, Synthesizer, route, synthesize

__version__ = "0.1.0"

__all__ = [
    "Audio",
    "Chunk",
    "EngineUnavailable",
    "Issue",
    "LexEntry",
    "MixvoxError",
    "Router",
    "Sentence",
    "Span",
    "Synthesizer",
    "Utterance",
    "Word",
    "__version__",
    "route",
    "synthesize",
]
