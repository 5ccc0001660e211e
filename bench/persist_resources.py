"""Registers, spills and shared memory of the persistent batch-1 step, compiled for Hopper
(sm_90a) on a machine without a GPU (issue 9, session 8).

Why: the persistent step (``_persist_kernel`` in ``engines/chattts/gpt/triton_decode.py``)
holds each program's share of a phase's weights in registers while it waits at the grid
barrier, and needs one program per SM resident at once; ptxas's report says whether that
fits (spills go to local memory, which would add traffic) at no device time. Compiles the
full-size ChatTTS GPT's constants (hidden 768, 12 heads, intermediate 3,072, 20 layers) for
a 132-SM H200 with Triton's own ptxas, for both cache layouts (the cache in one chunk read
before the wait, L <= 256; chunks after it, L = 512) and 8 / 16 warps.

Usage: ``python bench/persist_resources.py`` (needs Triton, no GPU).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget

from mixvox.engines.chattts.gpt.triton_decode import (
    _persist_kernel,
    persist_consts,
    programs_per_sm,
)

PTRS = {
    "h_ptr": "*fp16", "ids_ptr": "*i64", "emb_ptr": "*fp16", "q_ptr": "*fp16",
    "att_ptr": "*fp16", "pos_ptr": "*i64", "step_ptr": "*i64", "fin_ptr": "*i1",
    "end_ptr": "*i64", "cos_ptr": "*fp16", "sin_ptr": "*fp16", "kc_ptr": "*fp16",
    "vc_ptr": "*fp16", "y_ptr": "*fp32", "ln1_ptr": "*fp16", "ln2_ptr": "*fp16",
    "wqkv_ptr": "*fp16", "wo_ptr": "*fp16", "wgu_ptr": "*fp16", "wd_ptr": "*fp16",
    "bar_ptr": "*i64", "err_ptr": "*i32", "Lm1": "i32", "eps": "fp32", "scale": "fp32",
    "s_cl": "i32", "s_ch": "i32", "s_cp": "i32", "s_y": "i32",
}  # fmt: skip


def compile_report(L: int, warps: int, nprog: int = 132) -> dict:
    c = persist_consts(768, 12, 64, 3072, 20, 4, 626, 625, nprog, L, warps)
    w = c.pop("num_warps")
    c.update(PH0=0, PH1=60, SYNC=True, PDL=True)
    sig = dict(PTRS)
    sig.update({k: "constexpr" for k in c})
    # pointers and the cache / buffer strides are multiples of 16 at run time (Triton
    # specialises on that), which lets the loads be 16 bytes wide
    attrs = {
        (i,): [["tt.divisibility", 16]]
        for i, (k, v) in enumerate(PTRS.items())
        if v.startswith("*") or k.startswith("s_")
    }
    src = triton.compiler.ASTSource(fn=_persist_kernel, signature=sig, constexprs=c, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": w})
    ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
    with tempfile.TemporaryDirectory() as d:
        ptx = Path(d) / "k.ptx"
        ptx.write_text(k.asm["ptx"])
        r = subprocess.run(
            [str(ptxas), "-arch=sm_90a", "-v", str(ptx), "-o", os.path.join(d, "k.o")],
            capture_output=True,
            text=True,
            check=True,
        )
    regs = spill = 0
    for line in r.stderr.splitlines():
        if "Used" in line and "registers" in line:
            regs = int(line.split("Used")[1].split("registers")[0])
        if "spill stores" in line:
            spill = int(line.split("bytes spill stores")[0].split(",")[-1])
    shared = int(k.metadata.shared)
    v4 = k.asm["ptx"].count(".v4.")
    return {
        "L": L, "warps": w, "programs": nprog, "regs": regs, "spill_store_bytes": spill,
        "shared": shared, "per_sm": programs_per_sm(regs, shared, w), "v4_loads": v4,
        "NQP": c["NQP"], "NMP": c["NMP"], "BNO": c["BNO"], "PRE": c["PRE"],
    }  # fmt: skip


def main() -> int:
    print("| L | warps | programs | registers | spill stores (B) | shared (B) | per SM | fits |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for L in (256, 512):
        for warps in (8, 16):
            r = compile_report(L, warps)
            fits = r["per_sm"] * 132 >= r["programs"]
            print(
                f"| {L} | {warps} | {r['programs']} | {r['regs']} | {r['spill_store_bytes']} "
                f"| {r['shared']} | {r['per_sm']} | {'yes' if fits else 'no'} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
