"""Speed of the text side: sentences/s through the whole router (segmentation, zh/en
frontends, lexicons, prosody chunking), on Chinese sentences the project never tuned on.

Usage: ``python bench/text_speed.py [--sentences N] [--workers W] [--testdata DIR]``

Sentences are the CPP polyphone dev split (``cpp_polyphone_dev/dev.sent``, the ``▁`` markers
removed). Each is routed with ``mixvox.route`` as users call it (one shared router) and cut
into synthesis chunks (the prosody plugin), i.e. everything before the engine; ``--workers 2``
runs that many processes side by side, as on a 2-core machine. The first sentence of each
worker is excluded (start-up is measured separately and printed).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from pathlib import Path

DEFAULT_TESTDATA = Path(
    os.environ.get("MIXVOX_TESTDATA", Path(__file__).resolve().parents[2] / "shared" / "testdata")
)


def load(testdata: Path, n: int) -> list[str]:
    path = testdata / "cpp_polyphone_dev" / "dev.sent"
    lines = [ln.strip().replace("▁", "") for ln in path.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln][:n]


def work(sentences: list[str]) -> tuple[float, float, int]:
    """(start-up seconds, routing seconds, sentences) in this process."""
    import mixvox

    t0 = time.perf_counter()
    mixvox.route("预热：今天 3 个 GPU。")
    start = time.perf_counter() - t0
    t1 = time.perf_counter()
    for s in sentences:
        utt = mixvox.route(s)
        mixvox.pipeline.shared_router().chunks(utt)
    return start, time.perf_counter() - t1, len(sentences)


def rebuild_rate(sentences: list[str]) -> float:
    """Sentences/s when every call builds its own router (what ``mixvox.route`` did)."""
    from mixvox.pipeline import Router

    Router().route("预热")
    t = time.perf_counter()
    for s in sentences:
        Router().route(s)
    return len(sentences) / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--testdata", type=Path, default=DEFAULT_TESTDATA)
    ap.add_argument(
        "--rebuild",
        type=int,
        default=0,
        metavar="N",
        help="also time N sentences with a new Router per call (the old mixvox.route)",
    )
    args = ap.parse_args()
    sents = load(args.testdata, args.sentences)
    chars = sum(map(len, sents)) / max(1, len(sents))
    parts = [sents[i :: args.workers] for i in range(args.workers)]
    wall0 = time.perf_counter()
    if args.workers == 1:
        results = [work(parts[0])]
    else:
        with mp.get_context("spawn").Pool(args.workers) as pool:
            results = pool.map(work, parts)
    wall = time.perf_counter() - wall0
    routed = sum(r[2] for r in results)
    per_worker = [r[2] / r[1] for r in results]
    print(f"sentences: {routed} (avg {chars:.1f} characters), workers: {args.workers}")
    print(f"start-up (first route, per worker): {max(r[0] for r in results):.2f} s")
    print(f"per worker: {', '.join(f'{x:.0f}' for x in per_worker)} sentences/s")
    print(f"total: {sum(per_worker):.0f} sentences/s; wall incl. start-up {wall:.1f} s")
    if args.rebuild:
        rate = rebuild_rate(sents[: args.rebuild])
        print(f"a new Router per call (before): {rate:.0f} sentences/s in one process")


if __name__ == "__main__":
    main()
