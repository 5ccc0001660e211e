"""Throughput of a batch script: lines given to ChatTTS one at a time against several at once.

``mixvox batch`` hands the lines waiting for the engine to ``Synthesizer.synthesize_batch``
(``--batch-lines``, default 8), which decodes them as one GPT batch; this measures what that
buys on the machine at hand, side by side in one process (the same loaded engine, the rounds
interleaved, the order rotating), through :func:`mixvox.batch.run_batch` itself: routing,
synthesis and the atomic WAV writes, as users run it.

Every line is decoded to a fixed number of frames (``min_frames = max_frames``: random
weights end at random points), so both settings make the same amount of audio.

Usage: ``python bench/batch_lines.py MODEL_DIR [--precisions int8,int4] [--lines 24]
[--frames 64] [--batch-lines 1,8] [--rounds 3] [--threads 2]``; on a GPU
``--backend torch --device cuda --precisions fp16 --batch-lines 1,8,64``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

LINES = [
    "今天的 meeting 改到 3:30 PM",
    "请把报告发给我",
    "The build passed on the second try.",
    "明天下午三点在五楼开会",
    "GPU 的显存还剩 12GB",
    "我们下周一再讨论这个问题",
    "Please review the pull request today.",
    "这本书一共有三百二十页",
]


class _Kept:
    """The loaded synthesizer, reused by every run (``run_batch`` closes its synthesizers
    at the end; this one is closed once, after all rounds)."""

    def __init__(self, tts: object) -> None:
        self._tts = tts

    def __getattr__(self, name: str) -> object:
        return getattr(self._tts, name)

    def close(self) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--precisions", default="int8,int4")
    ap.add_argument("--lines", type=int, default=24)
    ap.add_argument("--frames", type=int, default=64)
    ap.add_argument("--batch-lines", default="1,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="ONNX Runtime threads (onnx only)")
    ap.add_argument("--backend", default="onnx", help="onnx (CPU) or torch (e.g. CUDA)")
    ap.add_argument("--device", default=None, help="cuda for the GPU (torch backend)")
    args = ap.parse_args()

    from mixvox import Synthesizer
    from mixvox.batch import BatchItem, run_batch

    sizes = [int(x) for x in args.batch_lines.split(",")]
    items = [
        BatchItem(line=i + 1, text=LINES[i % len(LINES)], file=f"{i + 1:04d}.wav")
        for i in range(args.lines)
    ]
    overrides = {"min_frames": args.frames, "max_frames": args.frames, "seed": 1}
    audio_s = args.lines * args.frames / 46.875
    work = Path(tempfile.mkdtemp(prefix="mixvox-batch-lines-"))
    print(f"# {os.cpu_count()} CPUs, load average {os.getloadavg()}", file=sys.stderr)
    rows = []
    try:
        for prec in args.precisions.split(","):
            # the engine's GPT batch (chunks decoded together) as large as the largest setting
            opts: dict[str, object] = {
                "backend": args.backend,
                "precision": prec,
                "max_batch": max(sizes),
            }
            if args.backend == "onnx":
                opts["threads"] = args.threads
            if args.device:
                opts["device"] = args.device
            tts = Synthesizer("chattts", model_dir=str(args.model_dir), **opts)
            tts.synthesize("预热 warm up", max_frames=8, min_frames=8)
            kept = _Kept(tts)
            per: dict[int, list[float]] = {n: [] for n in sizes}
            for rnd in range(args.rounds):
                order = sizes[rnd % len(sizes) :] + sizes[: rnd % len(sizes)]
                for n in order:
                    out = work / f"{prec}-{n}-{rnd}"
                    t0 = time.perf_counter()
                    res = run_batch(
                        items, out, lambda _name, k=kept: k, overrides=overrides, progress=False,
                        batch_lines=n,
                    )  # fmt: skip
                    dt = time.perf_counter() - t0
                    if res.failed or res.done != len(items):
                        raise SystemExit(f"batch failed: {res.failed[:3]}")
                    per[n].append(dt)
                    shutil.rmtree(out)
                    rec = {"precision": prec, "batch_lines": n, "round": rnd + 1,
                           "seconds": round(dt, 3), "lines_per_s": round(len(items) / dt, 2),
                           "audio_s_per_s": round(audio_s / dt, 2),
                           "loadavg_1m": round(os.getloadavg()[0], 2)}  # fmt: skip
                    print(json.dumps(rec), flush=True)
            tts.close()
            base = per[sizes[0]]
            for n in sizes:
                ratios = [b / t for b, t in zip(base, per[n], strict=True)]
                med = statistics.median(per[n])
                rows.append(
                    f"| {prec} | {n} | {len(items) / med:.2f} | {audio_s / med:.1f} | "
                    f"{statistics.median(ratios):.2f}x ({', '.join(f'{r:.2f}' for r in ratios)}) |"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.lines} lines x {args.frames} frames ({audio_s:.1f} s of audio) per run")
    print(
        f"| precision | --batch-lines | lines/s (median) | audio s per s | vs {sizes[0]} (per round) |"
    )
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(r)


if __name__ == "__main__":
    main()
