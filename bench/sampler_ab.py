"""The code-stage sampler per decode step, session 4's processors against the current ones.

    python bench/sampler_ab.py [--rounds 30] [--steps 200]

One step is what the decode loop does per frame at batch 1: ``process_logits`` over
``[1, 4, 626]`` logits (temperature 0.3, repetition penalty 1.05 over the last 16 codes,
top-p 0.7, top-k 20), the end code set to -inf, and ``draw``. The two versions alternate in
rounds of ``--steps`` steps; timed by this thread's CPU time (``time.thread_time``), which other
processes on a shared machine disturb far less than wall time. Both give the same codes (the
test suite checks it bit for bit); this only says how long they take, warm (in the decode loop
the stack's 100 MB of weights evict the caches between steps, so each step costs more there).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

# session 4's processors live in the A/B harness (this folder is on sys.path as a script)
from cpu_ab import s4_process_logits

from mixvox.engines.chattts.gpt import sampler as smp
from mixvox.engines.chattts.gpt.sampler import SamplingParams


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--steps", type=int, default=200)
    args = ap.parse_args()
    params = SamplingParams(suppress_eos=True)
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((64, 1, 4, 626)) * 3).astype(np.float32)
    hist = rng.integers(0, 626, (1, 4, 100))
    greedy = params.row_temperatures(4) == 0
    for lg in logits[:8]:
        assert np.array_equal(
            s4_process_logits(lg, hist, params), smp.process_logits(lg, hist, params)
        )

    def step(proc, lg: np.ndarray) -> np.ndarray:
        x = proc(lg, hist, params)
        x[..., 625] = -np.inf
        return smp.draw(x.reshape(4, -1), rng, greedy)

    res: dict[str, list[float]] = {"session 4": [], "session 5": []}
    procs = {"session 4": s4_process_logits, "session 5": smp.process_logits}
    for r in range(args.rounds):
        order = list(procs) if r % 2 == 0 else list(procs)[::-1]
        for name in order:
            t0 = time.thread_time()
            for i in range(args.steps):
                step(procs[name], logits[i % len(logits)])
            res[name].append((time.thread_time() - t0) / args.steps * 1e6)
    for name, v in res.items():
        print(f"{name}: us per step median {np.median(v):.0f}, best {np.min(v):.0f}")
    ratio = np.array(res["session 5"]) / np.array(res["session 4"])
    print(f"session 5 / session 4 per round: median {np.median(ratio):.3f}")


if __name__ == "__main__":
    main()
