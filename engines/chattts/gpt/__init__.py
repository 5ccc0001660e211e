"""The ChatTTS GPT: weights, the one decode loop, the one sampler and the runners.

Import what the engine needs from here; the backend modules (``onnx_stack``, ``torch_stack``,
``cuda_graph``, ``trt``) are loaded by :func:`load_gpt` only when the runtime chooses them,
so importing this package needs neither torch nor TensorRT.
"""

from mixvox.engines.chattts.gpt.decode import (
    FramesCallback,
    GenerationResult,
    StackBackend,
    prompt_positions,
    run_generation,
)
from mixvox.engines.chattts.gpt.model import GPT, normalize_speaker
from mixvox.engines.chattts.gpt.runner import GPTRunner, load_gpt
from mixvox.engines.chattts.gpt.sampler import SamplingParams
from mixvox.engines.chattts.gpt.weights import GPTConfig, GPTWeights, weights_sha256

__all__ = [
    "GPT",
    "FramesCallback",
    "GPTConfig",
    "GPTRunner",
    "GPTWeights",
    "GenerationResult",
    "SamplingParams",
    "StackBackend",
    "load_gpt",
    "normalize_speaker",
    "prompt_positions",
    "run_generation",
    "weights_sha256",
]
