"""Loading the ChatTTS audio models (Decoder, DVAE, Vocos) on the backend the runtime chose."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mixvox.engines.chattts.audio.models import AudioBackend, AudioModels
from mixvox.engines.chattts.audio.vocos import parse_vocos
from mixvox.engines.chattts.audio.weights import AudioModelError, parse_mel_decoder
from mixvox.engines.chattts.runtime import RuntimeDecision

__all__ = ["load_audio_models"]


def load_audio_models(
    asset_dir: Path | str,
    runtime: RuntimeDecision | None = None,
    *,
    backend: str | None = None,
    device: str | None = None,
    cache_dir: Path | str | None = None,
    threads: int | None = None,
    dtype: str = "float32",
    sha256: Mapping[str, str | None] | None = None,
    sources: tuple[str, ...] = ("hidden", "codes"),
) -> AudioModels:
    """Load Decoder, DVAE and Vocos from ``asset_dir`` (the folder holding ``*.safetensors``).

    ``backend``: "onnx" (graphs built from the weights without torch, cached under
    ``cache_dir`` keyed by the weights' SHA-256 and the builder version; ``device`` "cpu" or
    "cuda" for the CUDA execution provider) or "torch" (``device`` "cpu"/"cuda"/"cuda:N").
    ``Decoder.safetensors`` or ``DVAE.safetensors`` may be absent (that source is then
    unavailable); ``Vocos.safetensors`` is required. ``threads``: intra-op threads (default:
    ORT min(cores, 8), torch its own default). ``dtype``: torch compute dtype ("float32",
    "float16", "bfloat16"; the ONNX graphs are float32). SHA-256 pinning of assets is the
    engine's job (assets.py); this only reads the files. ``sha256``: hashes the caller has
    already verified, by file name (``{"Vocos.safetensors": "..."}``, e.g. from
    :meth:`~mixvox.engines.chattts.assets.ModelAssets.verified_sha256`); a file without one is
    hashed here, since the hashes key the cached ONNX graphs. ``sources``: which mel models
    to load ("hidden": the Decoder, "codes": the DVAE); the engine loads only the one its
    ``source`` reads, so no unused weights sit in (GPU) memory.
    """
    if not sources or set(sources) - {"hidden", "codes"}:
        raise AudioModelError(f"sources must be a non-empty subset of hidden, codes: {sources!r}")
    if runtime is not None:
        if backend is not None or device is not None:
            raise AudioModelError("give either a RuntimeDecision or backend/device, not both")
        backend, device = runtime.audio_backend, runtime.audio_device
    backend = backend or "onnx"
    device = device or "cpu"
    asset = Path(asset_dir)
    if (asset / "asset").is_dir() and not (asset / "Vocos.safetensors").is_file():
        asset = asset / "asset"
    dec_p, dvae_p, voc_p = (asset / f"{n}.safetensors" for n in ("Decoder", "DVAE", "Vocos"))
    if not voc_p.is_file():
        raise AudioModelError(f"Vocos.safetensors not found in {asset}")
    if not dec_p.is_file() and not dvae_p.is_file():
        raise AudioModelError(f"neither Decoder.safetensors nor DVAE.safetensors in {asset}")
    known = sha256 or {}
    decoder = dvae = None
    if dec_p.is_file() and "hidden" in sources:
        decoder = parse_mel_decoder(dec_p, "hidden", known.get(dec_p.name))
    if dvae_p.is_file() and "codes" in sources:
        dvae = parse_mel_decoder(dvae_p, "codes", known.get(dvae_p.name))
    if decoder is None and dvae is None:
        raise AudioModelError(f"no mel model for sources {sources!r} in {asset}")
    vocos = parse_vocos(voc_p, known.get(voc_p.name))
    for w in (decoder, dvae):
        if w is not None and w.n_mels != vocos.n_mels:
            raise AudioModelError(f"{w.kind} makes {w.n_mels} mel bins, Vocos wants {vocos.n_mels}")
    if backend == "onnx":
        from mixvox.engines.chattts.audio.onnx_backend import OnnxAudioBackend

        be: AudioBackend = OnnxAudioBackend(
            decoder, dvae, vocos, device=device, cache_dir=cache_dir, threads=threads
        )
    elif backend == "torch":
        from mixvox.engines.chattts.audio.torch_backend import TorchAudioBackend

        be = TorchAudioBackend(decoder, dvae, vocos, device=device, threads=threads, dtype=dtype)
    else:
        raise AudioModelError(f"unknown audio backend {backend!r} (use 'onnx' or 'torch')")
    return AudioModels(be, decoder, dvae, vocos)
