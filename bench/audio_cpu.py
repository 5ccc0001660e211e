"""Throughput of the ChatTTS audio side (mel decoder + Vocos + ISTFT), onnx vs torch.

Usage::

    python bench/audio_cpu.py ASSET_DIR [--seconds 10] [--backends onnx,torch] [--threads N]
    python bench/audio_cpu.py --random-full /tmp/full   # make full-size random weights first

Reports seconds of audio produced per second of wall time (46.875 code frames = 1 s) for the
whole-utterance paths (hidden -> wav, codes -> wav), for the streaming vocoder at a few
chunk sizes, and the receptive field of the loaded models. ``--random-full DIR`` writes
Decoder/DVAE/Vocos safetensors with the official full-size shapes (reference config
defaults) and random values, then benchmarks them; the weights are noise, only the speed
means something.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

FRAMES_PER_SECOND = 24000 / 512  # 46.875 code frames per second of audio


def _convnext(rng, prefix, dim, inter, scale_key, out):
    out[prefix + "dwconv.weight"] = rng.normal(0, 0.1, (dim, 1, 7))
    out[prefix + "dwconv.bias"] = np.zeros(dim)
    out[prefix + "norm.weight"] = np.ones(dim)
    out[prefix + "norm.bias"] = np.zeros(dim)
    out[prefix + "pwconv1.weight"] = rng.normal(0, 0.02, (inter, dim))
    out[prefix + "pwconv1.bias"] = np.zeros(inter)
    out[prefix + "pwconv2.weight"] = rng.normal(0, 0.02, (dim, inter))
    out[prefix + "pwconv2.bias"] = np.zeros(dim)
    out[prefix + scale_key] = np.full(dim, 0.1)


def _stack(rng, prefix, idim, odim, hidden, bn, n_layer, out):
    out[prefix + "conv_in.0.weight"] = rng.normal(0, 0.05, (bn, idim, 3))
    out[prefix + "conv_in.0.bias"] = np.zeros(bn)
    out[prefix + "conv_in.2.weight"] = rng.normal(0, 0.05, (hidden, bn, 3))
    out[prefix + "conv_in.2.bias"] = np.zeros(hidden)
    for i in range(n_layer):
        _convnext(rng, f"{prefix}decoder_block.{i}.", hidden, 4 * hidden, "weight", out)
    out[prefix + "conv_out.weight"] = rng.normal(0, 0.05, (odim, hidden, 1))


def make_random_full(folder: Path, seed: int = 0) -> Path:
    """Full-size ChatTTS audio checkpoints (reference config defaults), random values."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    dec: dict[str, np.ndarray] = {"coef": rng.uniform(0.5, 1.5, (1, 100, 1))}
    _stack(rng, "decoder.", 384, 384, 512, 128, 12, dec)
    dec["out_conv.weight"] = rng.normal(0, 0.05, (100, 384, 3))
    dvae: dict[str, np.ndarray] = {"coef": rng.uniform(0.5, 1.5, (1, 100, 1))}
    _stack(rng, "decoder.", 512, 512, 256, 128, 12, dvae)
    dvae["out_conv.weight"] = rng.normal(0, 0.05, (100, 512, 3))
    for g in range(2):
        p = f"vq_layer.quantizer.rvqs.{g}."
        dvae[p + "project_in.weight"] = rng.normal(0, 0.05, (4, 512))
        dvae[p + "project_in.bias"] = np.zeros(4)
        dvae[p + "project_out.weight"] = rng.normal(0, 0.5, (512, 4))
        dvae[p + "project_out.bias"] = np.zeros(512)
    voc: dict[str, np.ndarray] = {
        "backbone.embed.weight": rng.normal(0, 0.02, (512, 100, 7)),
        "backbone.embed.bias": np.zeros(512),
        "backbone.norm.weight": np.ones(512),
        "backbone.norm.bias": np.zeros(512),
        "backbone.final_layer_norm.weight": np.ones(512),
        "backbone.final_layer_norm.bias": np.zeros(512),
        "head.out.weight": rng.normal(0, 0.02, (1026, 512)),
        "head.out.bias": np.zeros(1026),
        "head.istft.window": 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(1024) / 1024),
    }
    for i in range(8):
        _convnext(rng, f"backbone.convnext.{i}.", 512, 1536, "gamma", voc)
    for name, tensors in (("Decoder", dec), ("DVAE", dvae), ("Vocos", voc)):
        save_file(
            {k: np.asarray(v, np.float32) for k, v in tensors.items()},
            str(folder / f"{name}.safetensors"),
        )
    return folder


def _time(fn, repeat: int) -> float:
    fn()  # warm-up (graph build, allocator)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("asset_dir", nargs="?", type=Path)
    ap.add_argument("--random-full", type=Path, help="write full-size random weights here")
    ap.add_argument("--seconds", type=float, default=10.0, help="audio length per run")
    ap.add_argument("--backends", default="onnx,torch")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (torch / ORT CUDA EP)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunks", default="16,48", help="streaming chunk sizes (code frames)")
    args = ap.parse_args()

    from mixvox.engines.chattts.audio import load_audio_models

    asset = args.asset_dir
    if args.random_full is not None:
        asset = make_random_full(args.random_full)
    if asset is None:
        ap.error("give ASSET_DIR or --random-full DIR")
    n = max(1, round(args.seconds * FRAMES_PER_SECOND))
    with tempfile.TemporaryDirectory() as cache:
        for backend in args.backends.split(","):
            m = load_audio_models(
                asset, backend=backend, cache_dir=cache, threads=args.threads, device=args.device
            )
            chunks = [int(c) for c in args.chunks.split(",")]
            print(json.dumps({"backend": backend, **bench_models(m, n, args.repeat, chunks)}))


def bench_models(m, n: int, repeat: int, chunks: list[int]) -> dict:
    """Time every path of one loaded AudioModels on n random code frames."""
    from mixvox.engines.chattts.audio import StreamingVocoder

    audio_s = (2 * n - 1) * 256 / 24000
    rng = np.random.default_rng(0)
    width = m.decoder_weights.in_features if m.decoder_weights else 0
    hidden = rng.standard_normal((n, width)).astype(np.float32)
    codes = rng.integers(0, 625, (n, 4))
    res = {
        "frames": n,
        "audio_s": round(audio_s, 3),
        "receptive_field": m.receptive_field("codes" if m.dvae_weights else "hidden"),
    }
    if m.decoder_weights:
        res["hidden_to_wav_x_realtime"] = round(
            audio_s / _time(lambda: m.hidden_to_wav(hidden), repeat), 2
        )
        res["decoder_mel_x_realtime"] = round(
            audio_s / _time(lambda: m.decode_hidden(hidden), repeat), 2
        )
    if m.dvae_weights:
        res["codes_to_wav_x_realtime"] = round(
            audio_s / _time(lambda: m.codes_to_wav(codes), repeat), 2
        )
    mel = m.decode_codes(codes) if m.dvae_weights else m.decode_hidden(hidden)
    res["vocos_istft_x_realtime"] = round(audio_s / _time(lambda: m.vocode(mel), repeat), 2)
    src = "codes" if m.dvae_weights else "hidden"
    x = codes if src == "codes" else hidden
    for chunk in chunks:

        def run(chunk: int = chunk) -> None:
            sv = StreamingVocoder(m, src, first_chunk_frames=chunk, chunk_frames=chunk)
            for i in range(0, len(x), chunk):
                sv.feed(x[i : i + chunk])
            sv.finish()

        res[f"stream_{src}_chunk{chunk}_x_realtime"] = round(audio_s / _time(run, repeat), 2)
    return res


if __name__ == "__main__":
    main()
