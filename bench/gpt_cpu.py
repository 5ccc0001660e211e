"""Benchmark ChatTTS GPT decode speed on CPU: frames/s by backend, precision and batch.

Usage::

    python bench/gpt_cpu.py ASSET_DIR [--batch 1 8] [--frames 128] [--prompt 40]
        [--configs onnx:fp32 onnx:int8 onnx:int4/32 torch:fp32 torch:bf16@cuda] [--threads N]
        [--cache-dir DIR] [--agreement 100] [--reference-fps 22.32]

A config is ``backend:precision[/int4_block[+sym][+f32head]][@device]`` (device defaults to
cpu; the block size only for ``int4``: 32, 64 or 128; ``+sym``: symmetric 4-bit codes without
zero points and ``+f32head``: float32 code/text heads, i.e. the int4 path before its
asymmetric codes and 8-bit heads; ``+kv8`` / ``+kv32``: the int8 / fp32 KV cache, ``+kv8m2.0``
the int8 one calibrated with margin 2.0; int4's default is int8; ``+gu128`` / ``+d128`` /
``+qkv128`` / ``+o128``: that kind of matrix (gate|up, down, q|k|v, o) with block 128, the
others with the config's block). All configurations run in this one process, one
after the other, so their ratios are fair on a loaded machine. ASSET_DIR is a ChatTTS
asset folder (``gpt/config.json``, ``gpt/model.safetensors``,
``Embed.safetensors``), e.g. a full-size random checkpoint. Sampling uses the code-stage
defaults with the end code suppressed, so every item decodes exactly ``--frames`` frames.
Reported: prefill time, decode frames/s summed over the batch (one frame = 4 codes =
1/46.875 s of audio), and the real-time factor that implies for the GPT alone.

``--agreement N`` (needs an ``onnx:fp32`` config, the reference of the comparison): N greedy
fp32 frames are decoded once; every config then predicts each frame of that sequence from
the true previous frames (teacher forcing) and is scored by its top-1 code agreement with
fp32, the max relative error of its hidden states (``max|h - h32| / max|h32|``) and of its
code logits. Free-running codes are not compared: random weights have tiny logit margins,
so sequences part at the first near-tie. A side-by-side table ends the run, with each
batch-1 figure's ratio to ``--reference-fps`` (reference ChatTTS 0.2.5 batch-1 frames/s on
the same machine, as recorded in BENCHMARKS.md; it is not rerun here).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.gpt import SamplingParams, load_gpt, onnx_stack
from mixvox.interfaces import MixvoxError

FRAMES_PER_SECOND_OF_AUDIO = 46.875
KV8_MARGIN = onnx_stack.KV8_MARGIN


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


def teacher_forced(gpt, prompt: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hidden states and code logits predicting each frame of ``codes`` after ``prompt``."""
    emb = gpt.embed(prompt[None])
    seq = np.concatenate([emb[0], gpt.embed_codes(codes[:-1])])[None]
    h = np.array(gpt.hidden(seq)[0, len(prompt) - 1 :], np.float32)
    return h, np.asarray(gpt.code_logits(h), np.float32)


def teacher_forced_steps(
    gpt, prompt: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`teacher_forced`, but as decoding runs: the prompt in one prefill, then one
    decode step per frame, so every frame reads the cache as it was written step by step
    (what an int8 KV cache changes; one long prefill would not show it)."""
    T, n = len(prompt), len(codes)
    gpt.stack.begin(np.ones((1, T), np.int64), T + n)
    out = gpt.stack.forward(gpt.embed(prompt[None]), np.arange(T, dtype=np.int64)[None], 0)
    hs = [np.array(out[0, -1], np.float32)]
    x = gpt.embed_codes(codes[:-1]).astype(np.float32)
    for i in range(n - 1):
        out = gpt.stack.forward(x[i][None, None], np.array([[T + i]], np.int64), T + i)
        hs.append(np.array(out[0, 0], np.float32))
    h = np.stack(hs)
    return h, np.asarray(gpt.code_logits(h), np.float32)


def agreement_row(ref: dict, h: np.ndarray, logits: np.ndarray) -> dict:
    """Teacher-forced scores of one config against the fp32 reference ``ref``."""
    return {
        "top1": float((logits.argmax(-1) == ref["logits"].argmax(-1)).mean()),
        "hidden_rel_err": float(np.abs(h - ref["h"]).max() / np.abs(ref["h"]).max()),
        "logits_rel_err": float(np.abs(logits - ref["logits"]).max() / np.abs(ref["logits"]).max()),
    }


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
    ap.add_argument("--agreement", type=int, default=0, metavar="N", help="teacher-forced frames")
    ap.add_argument(
        "--agreement-seed",
        type=int,
        default=7,
        help="seed of the agreement's random prompt (another seed: another fp32 sequence, to "
        "see how much the agreement figures move with the sequence alone)",
    )
    ap.add_argument(
        "--stepwise",
        action="store_true",
        help="teacher forcing through decode steps (one per frame) instead of one prefill",
    )
    ap.add_argument("--reference-fps", type=float, default=None, help="reference batch-1 frames/s")
    ap.add_argument(
        "--interleave",
        type=int,
        default=0,
        metavar="R",
        help="load every config first, then R rounds of one measurement per config in turn "
        "(best per config): fair ratios when the machine's load changes during the run",
    )
    args = ap.parse_args()
    if args.prompt < 3 * max(args.batch) + 2:
        ap.error("--prompt must exceed 3 x the largest batch (prompts differ in length)")

    load = os.getloadavg()
    print(f"# {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print(f"# {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.agreement and "onnx:fp32" not in args.configs:
        ap.error("--agreement needs the onnx:fp32 config (the reference)")
    ref: dict | None = None
    forced = teacher_forced_steps if args.stepwise else teacher_forced
    rows: list[tuple[str, dict, dict | None]] = []
    loaded: list[tuple[str, object, dict]] = []
    for spec in sorted(args.configs, key=lambda c: c != "onnx:fp32" if args.agreement else 0):
        backend, _, rest = spec.partition(":")
        rest, _, device = rest.partition("@")
        precision, _, block = rest.partition("/")
        block, *flags = block.split("+")  # int4 variants, see the module docstring
        onnx_stack._INT4_ZERO_POINTS = "sym" not in flags
        onnx_stack._INT8_HEADS = "f32head" not in flags
        kv = "int8" if any(f.startswith("kv8") for f in flags) else None
        kv = "fp32" if "kv32" in flags else kv  # int4's default is int8 (session 5)
        onnx_stack.KV8_MARGIN = KV8_MARGIN
        # +gu128 / +d128 / +qkv128 / +o128: that kind of matrix with its own block size
        kinds = {"gu": "wgu", "d": "wd", "qkv": "wqkv", "o": "wo"}
        onnx_stack._INT4_BLOCK_BY_MATRIX = {
            kinds[f.rstrip("0123456789")]: int(f[len(f.rstrip("0123456789")) :])
            for f in flags
            if f.rstrip("0123456789") in kinds
        }
        for f in flags:  # +kv8m2.0: the int8 KV cache with calibration margin 2.0
            if f.startswith("kv8m"):
                onnx_stack.KV8_MARGIN = float(f[4:])
        try:
            t0 = time.perf_counter()
            gpt = load_gpt(
                args.asset_dir,
                backend=backend,
                precision=precision or "fp32",
                device=device or "cpu",
                cache_dir=args.cache_dir,
                threads=args.threads,
                int4_block=int(block) if block else None,
                kv_cache=kv,
            )
            t_load = time.perf_counter() - t0
        except (ImportError, ValueError, MixvoxError) as exc:
            print(f"{spec}: skipped ({exc})")
            continue
        cfg = gpt.config
        print(f"{spec}: load {t_load:.2f}s (H={cfg.hidden_size}, L={cfg.num_layers})")
        fps: dict = {}
        for b in args.batch if not args.interleave else ():
            r = bench_one(gpt, b, args.frames, args.prompt, args.repeats)
            fps[b] = r["frames_per_s"]
            print(
                f"  batch {b:2d}: prefill {r['prefill_s'] * 1e3:7.1f} ms, "
                f"decode {r['frames_per_s']:8.1f} frames/s, GPT RTF {r['rtf']:.3f}",
                flush=True,
            )
        agree = None
        if args.agreement:
            rng = np.random.default_rng(args.agreement_seed)
            if ref is None:  # onnx:fp32 runs first: decode the reference sequence once
                prompt = rng.integers(0, cfg.num_text_tokens, args.prompt)
                greedy = SamplingParams(temperature=0.0, suppress_eos=True)
                (res,) = gpt.generate([prompt], params=greedy, max_new_tokens=args.agreement)
                h, lg = forced(gpt, prompt, np.asarray(res.codes))
                ref = {"prompt": prompt, "codes": np.asarray(res.codes), "h": h, "logits": lg}
            h, lg = forced(gpt, ref["prompt"], ref["codes"])
            agree = agreement_row(ref, h, lg)
            print(f"  agreement vs fp32 ({len(ref['codes'])} frames): {json.dumps(agree)}")
        rows.append((spec, fps, agree))
        if args.interleave:
            loaded.append((spec, gpt, fps))
        else:
            del gpt
            gc.collect()
    for rnd in range(args.interleave):
        for spec, gpt, fps in loaded:
            for b in args.batch:
                res = bench_one(gpt, b, args.frames, args.prompt, 1)
                fps[b] = max(fps.get(b, 0.0), res["frames_per_s"])
                print(f"  round {rnd + 1} {spec} batch {b}: {res['frames_per_s']:.1f} frames/s")
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")
    head = ["config"] + [f"frames/s b{b}" for b in args.batch]
    if args.reference_fps:
        head.append(f"b1 vs reference {args.reference_fps}")
    if args.agreement:
        head += ["teacher-forced top-1", "hidden rel. err", "logits rel. err"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for spec, fps, agree in rows:
        cells = [spec] + [f"{fps[b]:.1f}" for b in args.batch]
        if args.reference_fps:
            cells.append(f"{fps.get(1, float('nan')) / args.reference_fps:.2f}x")
        if agree is not None:
            cells += [
                f"{100 * agree['top1']:.1f} %",
                f"{agree['hidden_rel_err']:.2e}",
                f"{agree['logits_rel_err']:.2e}",
            ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
