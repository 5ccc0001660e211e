"""Where the int4 CPU decode's time goes: ONNX Runtime's per-op profile, and the sampler cold.

    python bench/cpu_profile.py /tmp/fullckpt [--threads 1] [--block 64] [--steps 100]

1. **Per op.** One int4 stack (the default graph: int8 KV cache, code heads fused; ``--block``,
   ``--mlp-block`` choose the layout) with ONNX Runtime's profiler on; a 43-token random
   prompt, then ``--steps`` decode steps of random code frames. Printed: per op type, µs per
   decode step, its share of the kernels' time and nodes per step; the same for the prefill;
   and the whole ``model_run`` against the kernels' sum (the executor's own time). The
   profiler inflates small nodes, so read shares, not absolute µs.
2. **The sampler, cold and warm** (``--sampler``): a 128-frame ``generate`` whose
   ``process_logits`` runs twice per frame, right after the step (cold: the step has just
   streamed ~118 MB of weights through the caches) and at once again (warm); median µs of
   each, and the same for ``draw``. The difference is what the caches cost the host code
   between two steps.
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import os
import time
from pathlib import Path

import numpy as np


def _profile(args: argparse.Namespace) -> None:
    import onnxruntime as ort

    from mixvox.engines.chattts.gpt import load_gpt, onnx_stack

    plain = ort.SessionOptions
    prefix = str(Path(args.out_dir) / "ortprof")

    class Profiled(plain):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.enable_profiling = True
            self.profile_file_prefix = prefix

    ort.SessionOptions = Profiled  # type: ignore[misc]
    onnx_stack.INT4_MLP_BLOCK = args.mlp_block
    try:
        gpt = load_gpt(
            args.model_dir / "asset", precision="int4", threads=args.threads, int4_block=args.block
        )
    finally:
        ort.SessionOptions = plain  # type: ignore[misc]
    st, cfg, w = gpt.stack, gpt.config, gpt.weights
    rng = np.random.default_rng(0)
    T, n = 43, args.steps
    prompt = w.emb_text[rng.integers(0, cfg.num_text_tokens, T)][None].astype(np.float32)
    codes = rng.integers(0, cfg.num_audio_tokens, (n, cfg.num_vq))
    frames = sum(w.emb_code[q][codes[:, q]] for q in range(cfg.num_vq)).astype(np.float32)
    st.begin(np.ones((1, T), np.int64), T + n)
    st.forward(prompt, np.arange(T, dtype=np.int64)[None], 0)
    for i in range(n):
        st.forward(frames[i][None, None], np.array([[T + i]], np.int64), T + i)
    with open(st.session.end_profiling(), encoding="utf-8") as fh:
        events = json.load(fh)
    runs = [e for e in events if e.get("name") == "model_run"]
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    spans = {
        "prefill (43 tokens)": (runs[-n - 1]["ts"], runs[-n]["ts"], 1, runs[-n - 1]["dur"]),
        f"decode step (mean of {n})": (
            runs[-n]["ts"],
            float("inf"),
            n,
            sum(r["dur"] for r in runs[-n:]),
        ),
    }
    for title, (lo, hi, count, run_us) in spans.items():
        agg: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
        for e in nodes:
            if lo <= e["ts"] < hi:
                op = e["args"].get("op_name", "?")
                agg[op][0] += e["dur"]
                agg[op][1] += 1
        total = sum(v[0] for v in agg.values())
        print(
            f"## {title}: model_run {run_us / count:.0f} us, kernels {total / count:.0f} us "
            f"(executor and the rest {100 * (1 - total / run_us):.1f} %)"
        )
        print("| op | us | share of kernels | nodes |")
        print("|---|---|---|---|")
        for op, (d, c) in sorted(agg.items(), key=lambda x: -x[1][0]):
            if d / total >= 0.001:
                print(f"| {op} | {d / count:.1f} | {100 * d / total:.1f} % | {c / count:.0f} |")


def _sampler(args: argparse.Namespace) -> None:
    from mixvox.engines.chattts.gpt import SamplingParams, load_gpt, onnx_stack
    from mixvox.engines.chattts.gpt import decode as dec
    from mixvox.engines.chattts.gpt import sampler as smp

    onnx_stack.INT4_MLP_BLOCK = args.mlp_block
    gpt = load_gpt(
        args.model_dir / "asset", precision="int4", threads=args.threads, int4_block=args.block
    )
    times: dict[str, list[float]] = {k: [] for k in ("proc cold", "proc warm", "draw cold")}
    times["draw warm"] = []

    def proc(*a):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        smp.process_logits(*a)
        times["proc cold"].append(time.perf_counter() - t)
        t = time.perf_counter()
        out = smp.process_logits(*a)
        times["proc warm"].append(time.perf_counter() - t)
        return out

    def draw(x, rng, greedy):  # type: ignore[no-untyped-def]
        spare = copy.deepcopy(rng)  # the first draw must not advance the real stream
        t = time.perf_counter()
        smp.draw(x, spare, greedy)
        times["draw cold"].append(time.perf_counter() - t)
        t = time.perf_counter()
        out = smp.draw(x, rng, greedy)
        times["draw warm"].append(time.perf_counter() - t)
        return out

    dec.process_logits, dec.draw = proc, draw
    prompt = np.random.default_rng(0).integers(0, gpt.config.num_text_tokens, 43)
    for r in range(2):
        for v in times.values():
            v.clear()
        gpt.generate(
            [prompt],
            stage="code",
            rng=np.random.default_rng(r),
            params=SamplingParams(suppress_eos=True, max_new_tokens=128),
        )
        cells = ", ".join(f"{k} {np.median(v) * 1e6:.0f}" for k, v in times.items())
        print(f"# run {r + 1}: median us per frame: {cells} (draw 'cold' follows a warm proc)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--mlp-block", type=int, default=None)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--out-dir", default="/tmp", help="where ONNX Runtime writes its profile")
    ap.add_argument("--sampler", action="store_true", help="also time the sampler cold/warm")
    args = ap.parse_args()
    print(f"# load average {os.getloadavg()[0]:.1f}, threads {args.threads}, block {args.block}")
    _profile(args)
    if args.sampler:
        _sampler(args)


if __name__ == "__main__":
    main()
