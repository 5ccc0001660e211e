"""Benchmark ChatTTS GPT decode speed on CPU: frames/s by backend, precision and batch.

Usage::

    python bench/gpt_cpu.py ASSET_DIR [--batch 1 8] [--frames 128] [--prompt 40]
        [--configs onnx:fp32 onnx:int8 torch:fp32 torch:bf16@cuda] [--threads N]
        [--cache-dir DIR]

A config is ``backend:precision[@device]`` (device defaults to cpu). ASSET_DIR is a ChatTTS
asset folder (``gpt/config.json``, ``gpt/model.safetensors``,
``Embed.safetensors``), e.g. a full-size random checkpoint. Sampling uses the code-stage
defaults with the end code suppressed, so every item decodes exactly ``--frames`` frames.
Reported: prefill time, decode frames/s summed over the batch (one frame = 4 codes =
1/46.875 s of audio), and the real-time factor that implies for the GPT alone.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.gpt import SamplingParams, load_gpt

FRAMES_PER_SECOND_OF_AUDIO = 46.875


def bench_one(gpt, batch: int, frames: int, prompt_len: int, repeats: int) -> dict:
    rng = np.random.default_rng(0)
    V = gpt.config.num_text_tokens
    prompts = [rng.integers(0, V, prompt_len - 3 * b) for b in range(batch)]
    params = SamplingParams(suppress_eos=True)
    gpt.generate(prompts, params=params, rng=rng, max_new_tokens=4)  # warm caches/buffers
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        gpt.hidden(gpt.embed(np.stack([p[: prompt_len - 3 * (batch - 1)] for p in prompts])))
        t_prefill = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = gpt.generate(prompts, params=params, rng=rng, max_new_tokens=frames)
        t_all = time.perf_counter() - t0
        assert all(len(r) == frames for r in res)
        fps = batch * frames / max(t_all - t_prefill, 1e-9)
        if best is None or fps > best["frames_per_s"]:
            best = {"prefill_s": t_prefill, "total_s": t_all, "frames_per_s": fps}
    assert best is not None
    best["rtf"] = FRAMES_PER_SECOND_OF_AUDIO / best["frames_per_s"]
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("asset_dir", type=Path)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--frames", type=int, default=128)
    ap.add_argument("--prompt", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--configs", nargs="+", default=["onnx:fp32", "onnx:int8", "torch:fp32"])
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args()
    if args.prompt < 3 * max(args.batch) + 2:
        ap.error("--prompt must exceed 3 x the largest batch (prompts differ in length)")

    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}")
    for spec in args.configs:
        backend, _, rest = spec.partition(":")
        precision, _, device = rest.partition("@")
        try:
            t0 = time.perf_counter()
            gpt = load_gpt(
                args.asset_dir,
                backend=backend,
                precision=precision or "fp32",
                device=device or "cpu",
                cache_dir=args.cache_dir,
                threads=args.threads,
            )
            t_load = time.perf_counter() - t0
        except (ImportError, ValueError) as exc:
            print(f"{spec}: skipped ({exc})")
            continue
        cfg = gpt.config
        print(f"{spec}: load {t_load:.2f}s (H={cfg.hidden_size}, L={cfg.num_layers})")
        for b in args.batch:
            r = bench_one(gpt, b, args.frames, args.prompt, args.repeats)
            print(
                f"  batch {b:2d}: prefill {r['prefill_s'] * 1e3:7.1f} ms, "
                f"decode {r['frames_per_s']:8.1f} frames/s, GPT RTF {r['rtf']:.3f}"
            )
        del gpt


if __name__ == "__main__":
    main()
