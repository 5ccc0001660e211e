"""Cost of one grid-wide barrier of a persistent Triton kernel on the GPU (issue 9).

Why: the batch-1 decode step is a chain of 62 kernels of ~4.7 us each (BENCHMARKS.md); a
persistent kernel that walks the layers with grid-wide barriers instead of kernel
boundaries is only worth writing if one barrier costs well under that. This times
``_grid_sync`` (``engines/chattts/gpt/triton_decode.py``, the barrier the persistent step
uses) alone and with each program streaming its share of a few MB of weights before each
barrier (as the persistent step loads its next phase's weights before it waits), for 1 and
2 programs per SM, and checks the error flag (a timed-out spin) after each.

Usage (GPU): ``python bench/gpu_barrier.py [--out DIR]``; prints one line per case and
writes ``DIR/barrier.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from mixvox.engines.chattts.gpt.triton_decode import (
    _grid_arrive,
    _grid_sync,
    _grid_wait,
    resident_programs,
)


@triton.jit
def _barrier_bench(
    bar_ptr, err_ptr, w_ptr, out_ptr, NB, NSETS, NPROG,
    CHUNK: tl.constexpr, LOAD: tl.constexpr, SYNC: tl.constexpr, SPLIT: tl.constexpr,
):  # fmt: skip
    """``NB`` phases: each program loads its ``CHUNK`` fp16 values of the phase's weight set
    (``LOAD``), waits at the grid barrier (``SYNC``), then consumes what it loaded; with
    ``SPLIT`` it counts its arrival before the load and waits after it (the release of the
    arrival would otherwise wait for the load)."""
    pid = tl.program_id(0)
    acc = tl.zeros([CHUNK], tl.float32)
    base = tl.zeros([], tl.int64)
    ok = tl.load(err_ptr) == 0
    for e in range(NB):
        if SYNC and SPLIT:
            base = _grid_arrive(bar_ptr, base, e, NPROG)
        if LOAD:
            off = tl.multiple_of(((e % NSETS) * NPROG + pid).to(tl.int64) * CHUNK, CHUNK)
            w = tl.load(w_ptr + off + tl.arange(0, CHUNK))
        if SYNC and SPLIT:
            ok = _grid_wait(bar_ptr, err_ptr, base, e, ok, NPROG, 1 << 18)
        elif SYNC:
            base, ok = _grid_sync(bar_ptr, err_ptr, base, e, ok, NPROG, 1 << 18)
        if LOAD:
            acc += w.to(tl.float32)
    tl.store(out_ptr + pid * CHUNK + tl.arange(0, CHUNK), acc)


def run_case(
    nsm: int, per_sm: int, chunk: int, load: bool, sync: bool, nb: int, split: bool = False
) -> dict:
    nprog = nsm * per_sm
    warps = 8 if per_sm == 1 else 4
    nsets = max(1, (256 << 20) // (nprog * chunk * 2))  # > 4x the L2: every phase from HBM
    w = torch.randn(nsets * nprog * chunk, device="cuda", dtype=torch.float16) if load else None
    wp = w if w is not None else torch.zeros(1, device="cuda", dtype=torch.float16)
    out = torch.empty(nprog * chunk, device="cuda")
    bar = torch.zeros(1, device="cuda", dtype=torch.int64)
    err = torch.zeros(1, device="cuda", dtype=torch.int32)
    args = (bar, err, wp, out, nb, nsets, nprog)
    kw = {"CHUNK": chunk, "LOAD": load, "SYNC": sync, "SPLIT": split, "num_warps": warps}
    k = _barrier_bench.warmup(*args, **kw, grid=(nprog,))
    k._init_handles()
    fit = resident_programs(k, warps)
    row = {
        "programs": nprog, "per_sm": per_sm, "warps": warps, "chunk_bytes": chunk * 2,
        "bytes_per_phase": nprog * chunk * 2 if load else 0, "load": load, "sync": sync,
        "split": split,
        "barriers": nb, "regs": k.n_regs, "spills": k.n_spills, "resident_per_sm": fit,
    }  # fmt: skip
    if sync and fit < per_sm:
        row["skipped"] = f"{per_sm} programs per SM do not fit ({fit})"
        return row
    _barrier_bench[(nprog,)](*args, **kw)  # warm
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0.record()
        _barrier_bench[(nprog,)](*args, **kw)
        t1.record()
        torch.cuda.synchronize()
        ts.append(t0.elapsed_time(t1) * 1000)
    ts.sort()
    row["launch_us"] = ts[len(ts) // 2]
    row["us_per_phase"] = row["launch_us"] / nb
    row["err_flag"] = int(err.item())
    row["counter"] = int(bar.item())
    row["counter_expected"] = 6 * nb * nprog if sync else 0
    if load and row["bytes_per_phase"]:
        row["TBps"] = row["bytes_per_phase"] / (row["us_per_phase"] * 1e-6) / 1e12
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for per_sm in (1, 2):
        # the barrier alone; then 4.3 MB (1 per SM: 32 KB per program) and 1.1 MB per phase
        # streamed without a barrier, with one after each load (the release waits for the
        # load), and with the arrival before the load and the wait after it (split)
        for chunk, load, sync, split, nb in (
            (16, False, True, False, 2000),
            (16384 // per_sm, True, False, False, 400),
            (16384 // per_sm, True, True, False, 400),
            (16384 // per_sm, True, True, True, 400),
            (4096 // per_sm, True, False, False, 400),
            (4096 // per_sm, True, True, False, 400),
            (4096 // per_sm, True, True, True, 400),
        ):
            r = run_case(nsm, per_sm, chunk, load, sync, nb, split)
            rows.append(r)
            print(json.dumps(r), flush=True)
    bad = [r for r in rows if r.get("err_flag") or r.get("counter") != r.get("counter_expected")]
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "barrier.json").write_text(json.dumps(rows, indent=2))
    print("| programs | bytes per phase | barrier | us per phase | TB/s |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        if "skipped" in r:
            print(f"| {r['programs']} | - | - | {r['skipped']} | |")
            continue
        tb = f"{r['TBps']:.2f}" if "TBps" in r else "-"
        print(
            f"| {r['programs']} | {r['bytes_per_phase']} "
            f"| {('split' if r['split'] else 'yes') if r['sync'] else 'no'} "
            f"| {r['us_per_phase']:.2f} | {tb} |"
        )
    print("errors:", bad if bad else "none")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
