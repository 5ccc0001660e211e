"""The ChatTTS audio side: Decoder/DVAE (-> mel), Vocos (-> 24 kHz), streaming vocoding.

Import what the engine needs from here; the backend modules (``onnx_backend``,
``torch_backend``) are loaded by :func:`load_audio_models` only when chosen, so importing
this package needs no torch.
"""

from mixvox.engines.chattts.audio.loader import load_audio_models
from mixvox.engines.chattts.audio.models import AudioBackend, AudioModels, StreamStage
from mixvox.engines.chattts.audio.streaming import StreamingVocoder
from mixvox.engines.chattts.audio.weights import AudioModelError

__all__ = [
    "AudioBackend",
    "AudioModelError",
    "AudioModels",
    "StreamStage",
    "StreamingVocoder",
    "load_audio_models",
]
