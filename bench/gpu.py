"""GPU benchmark and correctness checks for the ChatTTS engine (run on an NVIDIA GPU).

One run, one process, one table: correctness first (fp32 greedy codes equal to the golden
ones on the tiny checkpoint, graphs vs no graphs, fp16/bf16 agreement with fp32 on a full-size
random checkpoint), then timings side by side on the same full-size random checkpoint made by
the project's generator (``mixvox.engines.chattts.randckpt``):

* every fused Triton kernel (``gpt/triton_decode.py``) against its torch twin, fp32/fp16,
  batch 1/5/64, with and without programmatic dependent launch (``kernels``); a tile sweep
  (``sweep``); fused-path parity with the golden codes and teacher-forced agreement;
* batch-1 decode frames/s and graph step time for the fused Triton path (fp16/bf16, PDL on
  and off) and the torch graphs path side by side, kernels per step and the GPU time per
  kernel (profiler), and the reference ChatTTS 0.2.5 when importable;
* aggregate frames/s at batch 8, 32, 64;
* end-to-end RTF (text -> wav) for about 10 s of audio, time to the first streamed chunk;
* peak GPU memory at batch 1;
* cuBLAS against the fused kernels for the four layer GEMMs at batch 1/16/64 (``gemm``);
* the floor from measured copy bandwidth and each result as a fraction of it.

Sections: ``--only parity,kernels,loop,sweep,gemm,agreement,e2e,memory,decode,reference``
(each one's wall time is logged and kept in the JSON, ``section_seconds``); all of them fit
in one 10-minute device call (325 s on an H200, BENCHMARKS.md session 5).

Usage: ``python bench/gpu.py --out DIR [--ckpt DIR] [--frames 200] [--skip-reference]``.
Writes ``DIR/gpu_results.json`` and ``DIR/gpu_table.md`` and prints the table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MIXVOX_SHARED", ROOT.parent / "shared"))
FRAMES_PER_S = 46.875  # one code frame = 512 samples at 24 kHz


def log(*a: object) -> None:
    print(*a, flush=True)


def _collect_garbage() -> None:
    """Free what earlier sections left in reference cycles before a memory baseline: were it
    collected inside the measured window, the peak over the baseline would come out too low
    (session 5, run 2: 0 MiB for the fused engine; earlier end-to-end figures varied by
    hundreds of MiB between runs, likely the same way)."""
    import gc

    gc.collect()


def cuda_time(fn, *, warmup: int = 1, repeat: int = 3) -> float:
    """Median wall time of ``fn()`` in seconds, synchronised."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def copy_bandwidth() -> float:
    """Device-to-device copy bandwidth in bytes/s (bytes read + written)."""
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    t = cuda_time(lambda: b.copy_(a), warmup=2, repeat=10)
    return 2 * n / t


def parity_tiny(results: dict) -> None:
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaGPT, CudaSampling
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tiny = SHARED / "chattts" / "tiny"
    g = np.load(tiny / "golden.npz")
    emb = torch.from_numpy(g["code_spk/emb"])
    want = g["greedy/codes"]
    want_h = g["greedy/hiddens"]
    samp = CudaSampling(greedy=True, suppress_eos=True)
    out = {}
    variants = [("graphs", CudaGPT, True), ("eager", CudaGPT, False)]
    variants += [("fused_graphs", TritonGPT, True), ("fused_eager", TritonGPT, False)]
    variants += [("fused_pdl_graphs", TritonGPT, True), ("fused_o_pdl_graphs", TritonGPT, True)]
    variants += [
        ("fused_o_mlp_pdl_graphs", TritonGPT, True),
        ("fused_o_mlp_eager", TritonGPT, False),
        # the attention split over 32 positions per program (an option, off: at batch
        # 1 too, with the separate attention kernel) and the batch prefill graphs (the
        # continuous-batching run admits two prompts at once)
        ("fused_s6_pdl_graphs", TritonGPT, True),
        # session 7: the attention over the chunks up to each slot's position (32 per
        # chunk; the separate attention kernel at batch 1 too) and the batch lookahead (the
        # next window enqueued before the end flags are read; checked below at batch 3)
        ("fused_s7_pdl_graphs", TritonGPT, True),
        # session 8: every layer of a batch-1 step in one persistent launch (opt-in); the
        # continuous-batching run below switches between batch 2 and this at batch 1
        ("fused_persist_pdl_graphs", TritonGPT, True),
    ]
    for name, cls, graphs in variants:
        kw: dict = {"pdl": True} if "pdl" in name else {}
        if name.startswith("fused_s6"):
            kw["tiles"] = {"fma": {"fuse_o": 0}, "attn": {"split": 32}}
        elif name.startswith("fused_s7"):
            kw["tiles"] = {"fma": {"fuse_o": 0}, "attn": {"dyn": 1, "ch": 32}}
        elif name.startswith("fused_persist"):
            kw["tiles"] = {"fma": {"fuse_o": 16, "fuse_mlp": 16, **persist_tiles()}}
        elif name.startswith("fused_o_mlp"):  # + gate/up and down fused: 3 kernels a layer
            kw["tiles"] = {"fma": {"fuse_o": 16, "fuse_mlp": 16}}
        elif name.startswith("fused_o"):  # attention + O-projection fused (tiny: hidden 32)
            kw["tiles"] = {"fma": {"fuse_o": 16, "fuse_mlp": 0}}
        elif name.startswith("fused"):
            kw["tiles"] = {"fma": {"fuse_o": 0}}
        m = cls(tiny / "asset", precision="fp32", max_batch=1, use_graphs=graphs, max_len=512, **kw)
        if name.startswith("fused_s6"):
            m.batch_prefill_graphs = True
        if name.startswith("fused_s7"):
            m.batch_lookahead = True
        # the prompt embedding computed on the GPU from the token ids must match too
        ids = torch.from_numpy(g["tok/code_spk/ids"])
        spk = torch.from_numpy(g["speaker/vector_f16"])
        spk_id = int(ids[1])  # [Stts][spk_emb]...: the second token is [spk_emb]
        e2 = m.embed_prompt(ids, spk, spk_id).float().cpu()
        emb_err = float((e2 - emb).abs().max() / emb.abs().max())
        r = m.generate([CodeRequest(emb, max_new=len(want))], samp)[0]
        codes = r.codes.cpu().numpy()
        herr = float(np.abs(r.hidden.cpu().numpy() - want_h).max() / np.abs(want_h).max())
        out[name] = {
            "codes_equal": bool((codes == want).all()),
            "steps_equal": int((codes == want).all(1).sum()),
            "hidden_rel_err": herr,
            "emb_rel_err": emb_err,
        }
        # a batch of 3 copies with different lengths decodes the same as one alone
        if graphs:
            rs = m.generate(
                [
                    CodeRequest(emb, max_new=len(want)),
                    CodeRequest(emb[:-3], max_new=10),
                    CodeRequest(emb, max_new=len(want)),
                ],
                samp,
                max_batch=2,
            )
            out[f"{name}_continuous_batching_equal"] = bool(
                (rs[0].codes.cpu().numpy() == want).all()
                and (rs[2].codes.cpu().numpy() == want).all()
            )
        if name.startswith("fused_s7"):  # three at once, no refill: every window run ahead
            m._alloc(4)
            rs = m.generate(
                [CodeRequest(emb, max_new=len(want)), CodeRequest(emb[:-3], max_new=10),
                 CodeRequest(emb, max_new=len(want))], samp, max_batch=3,
            )  # fmt: skip
            out[f"{name}_batch3_lookahead_continuous_batching_equal"] = bool(
                (rs[0].codes.cpu().numpy() == want).all()
                and (rs[2].codes.cpu().numpy() == want).all()
                and len(rs[1].codes) == 10
            )
        m.close()
    results["parity_tiny_fp32"] = out
    log("parity tiny fp32:", json.dumps(out))


def fused_kernels(ckpt: Path, results: dict) -> None:
    """Every fused Triton kernel against its plain-torch twin, full size, random states."""
    from mixvox.engines.chattts.gpt.triton_decode import (
        TritonGPT,
        compare_branches,
        compare_ops,
        compare_prefill,
    )

    torch.backends.cuda.matmul.allow_tf32 = False
    out = {}
    limits = {"fp32": 1e-4, "fp16": 2e-2, "fp8": 2e-2, "bf16": 2e-2}
    # bf16: bf16 weights, fp32 activations (its default; all-bf16 shares fp16's code path)
    for prec in ("fp32", "fp16", "fp8", "bf16"):
        m = TritonGPT(ckpt / "asset", precision=prec, max_batch=64, use_graphs=False, max_len=512)
        cases = ((1, False), (5, False), (64, False), (1, True), (64, True))
        if prec != "fp32":
            cases = ((1, True), (5, True), (64, True))
        if prec == "bf16":
            cases = ((1, True), (64, True))
        for b, pdl in cases:
            errs = compare_ops(m, b, 256, seed=b, pdl=pdl)
            errs["pass"] = all(v <= limits[prec] for k, v in errs.items() if k != "pass")
            key = f"{prec}_b{b}" + ("_pdl" if pdl else "")
            out[key] = errs
            log(f"fused kernels vs torch twins, {key}: {json.dumps(errs)}")
        if prec in ("fp32", "fp16"):  # session 6: the split attention (opt-in), prompts
            # of 128-247 tokens (every position block holds rows; 32 positions: 4-8 partials)
            for cs in (32, 64):
                errs = compare_ops(m, 64, 256, seed=cs, pdl=True, long=True,
                                   tiles={"attn": {"split": cs}})  # fmt: skip
                errs["pass"] = all(v <= limits[prec] for k, v in errs.items() if k != "pass")
                out[f"{prec}_b64_pdl_long_split{cs}"] = errs
                log(f"fused kernels vs torch twins, {prec} b64 split attention {cs}, long "
                    f"prompts: {json.dumps(errs)}")  # fmt: skip
            # session 6: the step in two branches (slot views, side stream; eager here, the
            # sweep checks it graph-captured) against one chain
            m.ops = type(m.ops)(2, True, None)
            br = compare_branches(m, 64, 256, parts=2, steps=3, seed=64)
            br["pass"] = (
                br["parts"] == 2
                and br["codes_differ"] <= 0.02
                and all(
                    v <= limits[prec] for k, v in br.items() if k not in ("parts", "codes_differ")
                )
            )
            out[f"{prec}_b64_pdl_branches2"] = br
            log(f"step in two branches vs one chain, {prec} b64: {json.dumps(br)}")
        for T in (7, 32, 200) if prec != "bf16" else (32,):  # the fused prefill (prompt
            # positions as batch rows)
            errs = compare_prefill(m, T, slot=3, seed=T)
            errs["pass"] = all(v <= limits[prec] for k, v in errs.items() if k != "pass")
            out[f"{prec}_prefill_T{T}"] = errs
            log(f"fused prefill vs torch prefill, {prec} T={T}: {json.dumps(errs)}")
        m.close()
        torch.cuda.empty_cache()
    results["fused_kernel_equality"] = out


# Session-4 sweep (issue 9): one op's tiles changed at a time from the defaults; "kernel" names
# the kernel whose profiled time picks the best variant of that op, and the best of each op
# are then combined and timed together. Batch 1: CUDA-core rows per program and warps;
# batch 64: split-K factors of the tensor-core GEMMs, narrower tiles, attention chunks.
SWEEP_B1 = [
    ("default", "", {}),
    ("4 kernels per layer (MLP not fused)", "", {"fma": {"fuse_mlp": 0}}),
    ("attention rows after the wait", "_attn_o_kernel", {"fma": {"attn_pre": 0}}),
    ("fused O 64 rows", "_attn_o_kernel", {"fma": {"fuse_o": 64}}),
    ("fused O 256 rows", "_attn_o_kernel", {"fma": {"fuse_o": 256}}),
    ("mlp 8 rows, 2 warps", "_mlp_kernel", {"fma": {"fuse_mlp": 8, "w_mlp": 2}}),
    ("mlp 16 rows, 2 warps", "_mlp_kernel", {"fma": {"w_mlp": 2}}),
    ("mlp 32 rows, 4 warps", "_mlp_kernel", {"fma": {"fuse_mlp": 32}}),
    ("mlp 32 rows, 8 warps", "_mlp_kernel", {"fma": {"fuse_mlp": 32, "w_mlp": 8}}),
    ("qkv rows 2", "_qkv_rope_kernel", {"fma": {"qkv": 2}}),
    ("qkv rows 8", "_qkv_rope_kernel", {"fma": {"qkv": 8}}),
    ("qkv 4 warps", "_qkv_rope_kernel", {"fma": {"w_qkv": 4}}),
    ("head rows 16, 8 warps", "_head_kernel", {"fma": {"head": 16, "w_head": 8}}),
    ("sampler 8 warps", "_sample_kernel", {"sample": {"warps": 8}}),
    ("default again", "", {}),
]
SWEEP_B64 = [  # session 5: weights before the PDL wait where a split leaves one K block
    # (QKV / gate/up: pre_<op>; O / down: the one-block path of _rows_times_w)
    ("default", "", {}),
    ("qkv weights before the wait", "_qkv_rope_kernel", {"dot": {"pre_qkv": 1}}),
    (
        "gu post split 6, weights before the wait",
        "_gateup_kernel",
        {"dot": {"post_gu": 1, "sk_gu": 6, "pre_gu": 1}},
    ),
    ("gu split 6, weights before the wait", "_gateup_kernel", {"dot": {"sk_gu": 6, "pre_gu": 1}}),
    ("down split 24 (one block, before the wait)", "_down_kernel", {"dot": {"sk_down": 24}}),
    ("o split 6 (one block, before the wait)", "_oproj_kernel", {"dot": {"sk_o": 6}}),
    # session 6: attention split over positions (flash-decoding, _attn_split_kernel; off by
    # default until measured here): positions per program, warps
    ("attention split 32", "", {"attn": {"split": 32}}),
    ("attention split 64", "", {"attn": {"split": 64}}),
    ("attention split 128", "", {"attn": {"split": 128}}),
    ("attention split 64, 2 warps", "", {"attn": {"split": 64, "w_split": 2}}),
    # session 6: the step as two / four branches of 32 / 16 slots on parallel streams (forks
    # of the step's graph; each branch checked against one chain first: compare_branches)
    ("two branches", "", {"step": {"branches": 2}}),
    ("four branches", "", {"step": {"branches": 4}}),
    # (two branches + the split attention: refused since run 2 of 2026-12-02 found them unequal)
    # session 7: the attention walks only the chunks up to each slot's position (a run-time
    # loop bound) instead of the length bucket's chunks with the rows past it masked
    ("attention dyn ch 32", "_attn_kernel", {"attn": {"dyn": 1, "ch": 32}}),
    ("attention dyn ch 64", "_attn_kernel", {"attn": {"dyn": 1, "ch": 64}}),
    ("attention dyn ch 128", "_attn_kernel", {"attn": {"dyn": 1, "ch": 128}}),
    ("attention dyn ch 64, 2 warps", "_attn_kernel", {"attn": {"dyn": 1, "ch": 64, "warps": 2}}),
    ("attention ch 64 (static)", "_attn_kernel", {"attn": {"ch": 64}}),
    ("default again", "", {}),
]


def _merge(*tiles: dict) -> dict:
    out: dict = {}
    for t in tiles:
        for k, v in t.items():
            out.setdefault(k, {}).update(v)
    return out


def tile_sweep(ckpt: Path, results: dict) -> None:
    """Graph step time of the fused fp16 + PDL path for tile variants (each checked against
    the torch twins first), the GPU time of the kernel each variant changes (profiler), and
    the best variant of each kernel combined; batch 1 and batch 64, every slot at position
    150 (the 100 timed replays walk it to 250, the late part of a 200-frame request)."""
    from mixvox.engines.chattts.gpt.triton_decode import (
        TritonGPT,
        TritonOps,
        compare_branches,
        compare_ops,
    )

    m = TritonGPT(ckpt / "asset", precision="fp16", max_batch=64, pdl=True)
    only = os.environ.get("SWEEP_ONLY")
    rows = []
    combos: dict[int, dict] = {}

    def one(b: int, name: str, tiles: dict) -> dict:
        errs = compare_ops(m, b, 256, seed=b, pdl=True, tiles=tiles)
        ok = all(v <= 2e-2 for v in errs.values())
        m.ops = TritonOps(2, True, tiles)
        if "step" in tiles:  # branches: the graph-captured step against one chain
            br = compare_branches(m, b, 256, parts=tiles["step"]["branches"], steps=3, seed=b)
            log(f"tile sweep b{b} {name}: branches vs one chain (graphs) {json.dumps(br)}")
            errs.update({f"branches_{k}": v for k, v in br.items() if k != "parts"})
            ok = ok and br["parts"] == tiles["step"]["branches"]
            ok = ok and all(v <= 2e-2 for k, v in br.items() if k not in ("parts", "codes_differ"))
            ok = ok and br["codes_differ"] <= 0.02
        m._graphs.clear()
        m.pos[:b] = 150
        us = graph_step_us(m, b, 256)
        m.pos[:b] = 150
        bd = kernel_breakdown(m, b, 256)
        row = {"batch": b, "tiles": name, "config": tiles, "step_us": us,
               "frames_per_s": b * 1e6 / us, "equal": ok, "kernel_us": bd}  # fmt: skip
        if not ok:
            row["errors"] = errs
        rows.append(row)
        ks = " ".join(f"{k.strip('_').replace('_kernel', '')} {v:.0f}" for k, v in bd.items())
        log(f"tile sweep b{b} {name:28s}: {us:8.1f} us/step ({b * 1e6 / us:9.0f} frames/s), "
            f"equal {ok} | {ks}")  # fmt: skip
        return row

    sets = {1: SWEEP_B1, 64: SWEEP_B64}
    for b in [int(x) for x in os.environ.get("SWEEP_BATCHES", "1,64").split(",")]:
        variants = sets[b]
        best: dict[str, tuple[float, dict, str]] = {}
        for name, kernel, tiles in variants:
            if only and not any(w in name for w in only.split(";")) and name != "default":
                continue
            try:
                row = one(b, name, tiles)
            except Exception:
                log(f"tile sweep b{b} {name}: failed\n{traceback.format_exc()}")
                rows.append({"batch": b, "tiles": name, "error": traceback.format_exc()})
                continue
            if name == "default":
                base = row["kernel_us"]
                for k in {v[1] for v in variants if v[1]}:
                    best[k] = (base.get(k, 1e9), {}, "default")
            elif (
                row["equal"]
                and kernel in best
                and row["kernel_us"].get(kernel, 1e9) < best[kernel][0]
            ):
                best[kernel] = (row["kernel_us"][kernel], tiles, name)
        combo = _merge(*(v[1] for v in best.values()))
        names = ", ".join(v[2] for v in best.values() if v[2] != "default")
        log(f"tile sweep b{b}: best per kernel: {names or 'the defaults'}")
        combos[b] = combo
        if combo:
            try:
                one(b, "combined: " + names, combo)
            except Exception:
                log(f"tile sweep b{b} combined: failed\n{traceback.format_exc()}")
    results["tile_sweep"] = rows
    results["tile_sweep_best"] = combos
    # the fastest graph step among the checked rows (a combination only when it beats the
    # single best variant): SWEEP_CHOICE names a file for a later run's GPU_TILES
    choice: dict = {}
    for b in combos:
        ok = [r for r in rows if r.get("batch") == b and r.get("equal")]
        if ok:
            best_row = min(ok, key=lambda r: r["step_us"])
            log(f"tile sweep b{b}: fastest step {best_row['tiles']} ({best_row['step_us']:.1f} us)")
            choice = _merge(choice, best_row["config"])
    results["tile_sweep_choice"] = choice
    if os.environ.get("SWEEP_CHOICE"):
        Path(os.environ["SWEEP_CHOICE"]).write_text(json.dumps(choice))
    if os.environ.get("SWEEP_LOOP", "1") == "0":
        m.close()
        return
    # the generate loop with the combined tiles: frames/s with window graphs and one-step
    # graphs, and the batch-64 prefill (eager, 64 prompts) that each batch-64 run starts with
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaSampling

    m.ops = TritonOps(2, True, _merge(combos.get(1, {}), combos.get(64, {})))
    m._graphs.clear()
    ids = torch.randint(0, 20000, (32,), generator=torch.Generator().manual_seed(1))
    emb = m.embed_prompt(ids, None, None)
    loop: dict = {}
    for b in (1, 64):
        reqs = [CodeRequest(emb, max_new=200, min_new=200) for _ in range(b)]
        for wg in (True, False):
            m.window_graphs = wg
            m.generate(reqs, CudaSampling(), seed=0, max_batch=b)
            t = cuda_time(lambda r=reqs, b=b: m.generate(r, CudaSampling(), seed=0, max_batch=b))
            key = f"b{b} {'window' if wg else 'one-step'} graphs"
            loop[key] = b * 200 / t
            log(f"tile sweep generate {key}: {b * 200 / t:9.0f} frames/s ({t * 1e3:.1f} ms)")
    m.window_graphs = True
    tp = cuda_time(lambda: m.prefill(list(range(64)), [emb] * 64), warmup=1, repeat=5)
    loop["prefill_b64_ms"] = tp * 1e3
    log(f"tile sweep prefill of 64 prompts of 32 tokens: {tp * 1e3:.2f} ms")
    results["tile_sweep_loop"] = loop
    m.close()


def loop_breakdown(ckpt: Path, results: dict, frames: int) -> None:
    """Where batch-1 generate time goes beyond the graph steps: the fused fp16 + PDL path
    with one-step graphs, window graphs (a window of steps per graph), and window graphs
    plus the next window enqueued before the end flags are read; prefill eager vs graph."""
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaSampling
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 20000, (32,), generator=gen)
    m = TritonGPT(ckpt / "asset", precision="fp16", max_batch=1, pdl=True)
    emb = m.embed_prompt(ids, None, None)
    reqs = [CodeRequest(emb, max_new=frames, min_new=frames)]
    samp = CudaSampling()
    out: dict = {}
    for name, wg, la in (
        ("one-step graphs", False, False),
        ("one-step graphs + lookahead", False, True),
        ("window graphs", True, False),
        ("window graphs + lookahead", True, True),
    ):
        m.window_graphs, m.lookahead = wg, la
        m.generate(reqs, samp, seed=0, max_batch=1)
        t = cuda_time(lambda: m.generate(reqs, samp, seed=0, max_batch=1), warmup=1, repeat=5)
        out[name] = {"seconds": t, "frames_per_s": frames / t}
        log(f"loop b1 {name:28s}: {frames / t:8.1f} frames/s ({t * 1e3:.2f} ms)")
    m.window_graphs, m.lookahead = True, True
    us = graph_step_us(m, 1, 256)
    out["graph_step_us_L256"] = us
    out["graph_step_us_L128"] = graph_step_us(m, 1, 128)
    gw = m._graphs.get((1, 256, m.sync_every)) or m._capture(1, 256, m.sync_every)
    saved = [t.clone() for t in m._state()]
    t0 = cuda_time(lambda: [gw.replay() for _ in range(10)], warmup=1, repeat=3)
    for t, v in zip(m._state(), saved, strict=True):
        t.copy_(v)
    out["window_graph_step_us_L256"] = t0 / (10 * m.sync_every) * 1e6
    for graphs in (False, True):
        m.use_graphs = graphs
        tp = cuda_time(lambda: m.prefill([0], [emb]), warmup=2, repeat=10)
        out[f"prefill_ms_{'graph' if graphs else 'eager'}"] = tp * 1e3
    m.use_graphs = True
    bd = kernel_breakdown(m, 1, 256)
    out["kernel_time_us_b1"] = bd
    results["loop_breakdown"] = out
    log("loop breakdown:", json.dumps(out))
    m.close()


def gemm_compare(ckpt: Path, results: dict) -> None:
    """cuBLAS against the fused kernels at batch 1 / 16 / 64: the four layer GEMMs of all 20
    layers as ``torch.mm`` into preallocated outputs, one CUDA graph per op (weights only: no
    norm, RoPE, SiLU or residual, which the fused kernels do in the same launch), timed by
    graph replays; and the fused fp16 + PDL kernels' profiled time per op at the same batch.
    The weights of a step (385 MB) do not fit in the 60 MB L2, so each replay reads them from
    HBM; the figure is what a cuBLAS GEMM per op would cost before any epilogue."""
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    m = TritonGPT(ckpt / "asset", precision="fp16", max_batch=64, pdl=True)
    H, inter = m.hidden_size, m.inter
    out: dict = {}
    for b in (1, 16, 64):
        row: dict = {}
        for name, K in (("qkv", H), ("o", H), ("gu", H), ("down", inter)):
            x = torch.randn(b, K, device="cuda", dtype=torch.float16)
            ws = [lp[name] for lp in m.layers]
            ys = [torch.empty(b, w.shape[0], device="cuda", dtype=torch.float16) for w in ws]

            def run(x=x, ws=ws, ys=ys) -> None:
                for w, y in zip(ws, ys, strict=True):
                    torch.mm(x, w.t(), out=y)

            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                run()
            torch.cuda.current_stream().wait_stream(s)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                run()
            g.replay()
            torch.cuda.synchronize()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(20):
                g.replay()
            e1.record()
            torch.cuda.synchronize()
            us = e0.elapsed_time(e1) * 1000 / 20
            nbytes = sum(w.numel() * w.element_size() for w in ws)
            row[f"cublas_{name}_us"] = round(us, 1)
            row[f"cublas_{name}_TBps"] = round(nbytes / us / 1e6, 2)
        row["cublas_sum_us"] = round(sum(v for k, v in row.items() if k.endswith("_us")), 1)
        m._alloc(b)
        m.hres[:b].normal_()
        m.pos[:b] = 150
        row["fused_kernel_us"] = kernel_breakdown(m, b, 256)
        out[f"b{b}"] = row
        log(f"gemm b{b}: {json.dumps(row)}")
    results["gemm_cublas_vs_fused"] = out
    m.close()


def make_full_checkpoint(path: Path) -> Path:
    from mixvox.engines.chattts import randckpt

    if not (path / "asset" / "gpt" / "model.safetensors").exists():
        t0 = time.time()
        randckpt.make_checkpoint(path, SHARED / "chattts", seed=0)
        log(f"generated full-size random checkpoint in {time.time() - t0:.1f}s at {path}")
    return path


def agreement(ckpt: Path, results: dict, frames: int) -> None:
    """fp16/bf16 against fp32 on the same prompt.

    Free-running greedy codes diverge at the first near-tie and never meet again (random
    weights make near-ties common), so the informative figures are teacher-forced: each
    precision predicts every frame of the fp32 sequence from the true previous frames
    (top-1 agreement per code), and the Decoder's mel from each precision's hidden states.
    """
    from mixvox.engines.chattts.gpt.cuda_graph import DTYPES as DT
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaGPT, CudaSampling

    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 20000, (48,), generator=gen)
    samp = CudaSampling(greedy=True, suppress_eos=True)
    ref = CudaGPT(ckpt / "asset", precision="fp32", max_batch=1)
    prompt = ref.embed_prompt(ids, None, None).float()
    r32 = ref.generate([CodeRequest(prompt, max_new=frames, min_new=frames)], samp)[0]
    codes = r32.codes
    tf32 = ref.teacher_forced_logits(prompt, codes)
    hidden32 = ref._forward_full(
        torch.cat([prompt, ref.emb_code[codes[:-1] + ref.code_offsets].sum(1)], 0)[None]
    )[0, prompt.shape[0] - 1 :].float()
    ref.close()
    try:
        from mixvox.engines.chattts.audio import load_audio_models

        audio = load_audio_models(ckpt / "asset", backend="torch", device="cuda")
        mel32 = audio.decode_hidden(hidden32.cpu().numpy())
    except Exception as exc:  # the audio side is reported, not required, here
        audio, mel32 = None, None
        log("agreement: no mel comparison:", exc)
    out = {}
    # the weights' rounding alone: the fp32 torch path with its layer matrices rounded to
    # bf16 / fp16 (everything else fp32), the best any design with such weights can do
    for wdt in ("bf16", "fp16"):
        ref = CudaGPT(ckpt / "asset", precision="fp32", max_batch=1)
        for lp in ref.layers:
            for k in ("qkv", "o", "gu", "down"):
                lp[k] = lp[k].to(DT[wdt]).float()
        tf = ref.teacher_forced_logits(prompt, codes)
        out[f"torch_fp32_{wdt}_rounded_weights"] = {
            "teacher_forced_top1_agreement": (tf.argmax(-1) == tf32.argmax(-1))
            .float()
            .mean()
            .item(),
            "logit_rel_err": ((tf - tf32).abs().max() / tf32.abs().max()).item(),
        }
        ref.close()
    for prec in ("fp16", "bf16"):
        m = CudaGPT(ckpt / "asset", precision=prec, max_batch=1)
        r = m.generate([CodeRequest(prompt, max_new=frames, min_new=frames)], samp)[0]
        free = (r.codes == codes).float().mean().item()
        tf = m.teacher_forced_logits(prompt, codes)
        top1 = (tf.argmax(-1) == tf32.argmax(-1)).float().mean().item()
        h = m._forward_full(
            torch.cat([prompt, m.emb_code[codes[:-1] + m.code_offsets].sum(1).float()], 0)[None]
        )[0, prompt.shape[0] - 1 :].float()
        row = {
            "teacher_forced_top1_agreement": top1,
            "free_running_code_agreement": free,
            "logit_max_abs_err": (tf - tf32).abs().max().item(),
            "hidden_rel_err": ((h - hidden32).abs().max() / hidden32.abs().max()).item(),
        }
        if audio is not None and mel32 is not None:
            mel = audio.decode_hidden(h.cpu().numpy())
            row["mel_rel_err"] = float(np.abs(mel - mel32).max() / np.abs(mel32).max())
        out[prec] = row
        m.close()
    # the fused Triton step, fed the true codes frame by frame (its own decode path)
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    tf16 = None
    # bf16: bf16 weights with fp32 activations (the default); bf16act: all-bf16 (sessions 1-4)
    for prec in ("fp32", "fp16-pdl", "bf16-pdl", "bf16act-pdl", "fp8-pdl"):
        wp = prec.split("-")[0].replace("act", "")
        act = "bf16" if "act" in prec else None
        m = TritonGPT(ckpt / "asset", precision=wp, max_batch=1, pdl="pdl" in prec, activations=act)
        tf = m.teacher_forced_step_logits(prompt, codes)
        if prec == "fp16-pdl":
            tf16 = tf
        r = m.generate([CodeRequest(prompt, max_new=frames, min_new=frames)], samp)[0]
        out[f"fused_{prec}"] = {
            "teacher_forced_top1_agreement": (tf.argmax(-1) == tf32.argmax(-1))
            .float()
            .mean()
            .item(),
            "free_running_code_agreement": (r.codes == codes).float().mean().item(),
            "logit_max_abs_err": (tf - tf32).abs().max().item(),
            "logit_rel_err": ((tf - tf32).abs().max() / tf32.abs().max()).item(),
        }
        if tf16 is not None and prec != "fp16-pdl":  # against the fused fp16 step too
            out[f"fused_{prec}"]["teacher_forced_top1_agreement_vs_fp16"] = (
                (tf.argmax(-1) == tf16.argmax(-1)).float().mean().item()
            )
        m.close()
    results["agreement_vs_fp32"] = out
    log("agreement:", json.dumps(out))


def bench_decode(ckpt: Path, results: dict, frames: int, batches: list[int]) -> None:
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaGPT, CudaSampling

    torch.backends.cuda.matmul.allow_tf32 = True
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 20000, (32,), generator=gen)
    samp = CudaSampling()
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    rows: list[dict] = []
    results["decode"] = rows  # filled as the configs run (a failing config keeps the rest)
    configs = [
        ("fp16", True, "triton-pdl"),  # the engine's default on CUDA (gpu_decoder=fused)
        ("fp8", True, "triton-pdl"),
        ("fp16", True, "ops"),  # gpu_decoder=graphs
        ("bf16", True, "triton-pdl"),  # bf16 weights, fp32 activations
        # the default with the batch prefill eager (the session-5 default), side by side
        # with the batch prefill in CUDA graphs (the default since 2026-12-02); batch >= 8
        ("fp16", True, "triton-pdl-eagerprefill"),
        # session 7 (batch >= 8), side by side with the default above: the loop without the
        # next window enqueued before the end flags are read (``batch_lookahead``, the
        # default since session 7), and the attention over the chunks up to each slot's
        # position only (``attn.dyn``, off: slower at long caches and at batch 8)
        ("fp16", True, "triton-pdl-nobatchahead"),
        ("fp16", True, "triton-pdl-dynattn"),
        # session 8 (batch 1 only): every layer in one persistent launch (opt-in)
        ("fp16", True, "triton-pdl-persist"),
    ]
    sel = os.environ.get("DECODE_CONFIGS")  # indices into configs (a short device run)
    if sel:
        configs = [c for i, c in enumerate(configs) if str(i) in sel.split(",")]
    for prec, graphs, fused in configs:
        eager_prefill = s7 = False
        try:
            if fused.startswith("triton"):
                name = f"mixvox fused Triton {prec} graphs" + (" + PDL" if "pdl" in fused else "")
                eager_prefill = fused.endswith("-eagerprefill")
                s7 = "nobatchahead" in fused or "dynattn" in fused
                tiles: dict | None = None
                if "dynattn" in fused:
                    tiles = {"attn": dyn_tiles(results)}
                if "persist" in fused:
                    tiles = {"fma": persist_tiles()}
                m = TritonGPT(
                    ckpt / "asset",
                    precision=prec,
                    max_batch=max(batches),
                    pdl="pdl" in fused,
                    tiles=tiles,
                )
                if eager_prefill:
                    name += ", batch prefill eager (session 5)"
                    m.batch_prefill_graphs = False
                if "nobatchahead" in fused:
                    name += ", no batch lookahead (session 6)"
                    m.batch_lookahead = False
                if "persist" in fused:
                    name += " + persistent step " + json.dumps(persist_tiles())
                if "dynattn" in fused:
                    at = tiles["attn"]  # type: ignore[index]
                    name += " + attention dyn " + ", ".join(
                        f"{k} {v}" for k, v in at.items() if k != "dyn"
                    )
            else:
                name = f"mixvox torch {prec} " + (f"graphs+{fused}" if graphs else "no graphs")
                m = CudaGPT(
                    ckpt / "asset",
                    precision=prec,
                    max_batch=max(batches),
                    use_graphs=graphs,
                    fused=fused,
                )
            emb = m.embed_prompt(ids, None, None)
            if fused == "triton-pdl" and prec == "fp16" and max(batches) >= 8:
                results["batch_prefill"] = batch_prefill_check(m, max(batches))
            for b in batches:
                if (not graphs and b > 8) or (prec != "fp16" and b not in (1, 64)):
                    continue
                if fused in ("stack", "triton-dot1") and b not in (1, 64):
                    continue
                if (eager_prefill or s7) and b < 8:  # batch 1: one prompt, no batch window
                    continue
                if "persist" in fused and b != 1:  # the persistent step is batch 1 only
                    continue
                reqs = [CodeRequest(emb, max_new=frames, min_new=frames) for _ in range(b)]
                m.generate(reqs, samp, seed=0, max_batch=b)  # warm-up: captures graphs
                t = cuda_time(
                    lambda reqs=reqs, b=b, m=m: m.generate(reqs, samp, seed=0, max_batch=b),
                    warmup=0,
                    repeat=3,
                )
                fps = b * frames / t
                us = graph_step_us(m, b, 256) if graphs else None
                rows.append(
                    {
                        "impl": name,
                        "precision": prec,
                        "batch": b,
                        "frames": frames,
                        "seconds": t,
                        "frames_per_s": fps,
                        "graph_step_us": us,
                    }
                )
                log(f"{rows[-1]['impl']:44s} batch {b:3d}: {fps:10.1f} frames/s, step {us} us")
                if fused.startswith("triton") and prec == "fp16" and b >= 8 and not eager_prefill:
                    rows[-1]["loop"] = loop_gap(m, reqs, samp, b, frames, t)
            if graphs:
                results.setdefault("kernels_per_step", {})[name] = kernels_per_step(m)
                for b in (1, 64):
                    if b in batches:
                        bd = kernel_breakdown(m, b, 256)
                        results.setdefault("kernel_time_us", {})[f"{name} b{b}"] = bd
                        log(f"kernel time per step, {name} batch {b}: {json.dumps(bd)}")
            m.close()
            torch.cuda.empty_cache()
        except Exception:  # one config failing leaves the others (and their rows)
            log(f"decode config {prec} {fused} failed:\n{traceback.format_exc()}")
            err = results.setdefault("errors", {})
            err[f"decode {prec} {fused}"] = traceback.format_exc()

    results["decode"] = rows
    log("kernels per decode step (batch 1):", results.get("kernels_per_step"))


def persist_tiles() -> dict:
    """Tile-table ``fma`` entries of the persistent batch-1 step for this run
    (``PERSIST_WARPS``: its warps; ``PERSIST_PER_SM``: programs per SM)."""
    return {
        "persist": int(os.environ.get("PERSIST_PER_SM", "1")),
        "w_persist": int(os.environ.get("PERSIST_WARPS", "8")),
    }


def persistent_check(ckpt: Path, results: dict) -> None:
    """The persistent batch-1 step (session 8): the grid barrier's cost alone
    (``bench/gpu_barrier.py``), golden codes on the tiny checkpoint (fp32), equality with
    the 3-kernel step and the torch twins on the full-size checkpoint (fp32, fp16; eager
    and in graphs; poisoned query and attention outputs), the error flag, and the graph step
    time against the default at two length buckets, with the kernel time per step."""
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaSampling
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT, compare_persistent

    sys.path.insert(0, str(ROOT / "bench"))
    import gpu_barrier

    out: dict = {"tiles": persist_tiles()}
    results["persistent"] = out
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    out["barrier"] = [
        gpu_barrier.run_case(nsm, 1, 16, False, True, 2000),
        gpu_barrier.run_case(nsm, 1, 16384, True, False, 400),
        gpu_barrier.run_case(nsm, 1, 16384, True, True, 400),
        gpu_barrier.run_case(nsm, 1, 16384, True, True, 400, split=True),
        gpu_barrier.run_case(nsm, 1, 4096, True, True, 400, split=True),
    ]
    for r in out["barrier"]:
        log("barrier:", json.dumps(r))
    pt = persist_tiles()
    # golden codes (tiny, fp32): the persistent step in graphs, with PDL
    torch.backends.cuda.matmul.allow_tf32 = False
    tiny = SHARED / "chattts" / "tiny"
    gz = np.load(tiny / "golden.npz")
    want = gz["greedy/codes"]
    m = TritonGPT(
        tiny / "asset", precision="fp32", max_batch=1, pdl=True,
        tiles={"fma": {"fuse_o": 16, "fuse_mlp": 16, **pt}},
    )  # fmt: skip
    r = m.generate(
        [CodeRequest(torch.from_numpy(gz["code_spk/emb"]), max_new=len(want))],
        CudaSampling(greedy=True, suppress_eos=True),
    )[0]
    out["golden_equal"] = f"{int((r.codes.numpy() == want).sum())}/{want.size}"
    out["golden_kernels_per_step"] = m.kernels_per_step(1)
    out["golden_err_flag"] = m.persistent_failed()
    log("persistent golden codes:", out["golden_equal"], "err flag", out["golden_err_flag"])
    out["tiny_compare"] = compare_persistent(
        m, 128, steps=3, seed=1, pdl=True, tiles={"fma": {"fuse_o": 16, **pt}}, graphs=True
    )
    m.close()
    for prec in ("fp32", "fp16"):
        m = TritonGPT(ckpt / "asset", precision=prec, max_batch=1, pdl=True, tiles={"fma": pt})
        for graphs in (False, True):
            for L in (256, 512):
                key = f"{prec}_{'graphs' if graphs else 'eager'}_L{L}"
                c = compare_persistent(
                    m, L, steps=3, seed=L, pdl=True, tiles={"fma": pt}, graphs=graphs
                )
                c["err_flag"] = float(m.persistent_failed())
                out.setdefault("compare", {})[key] = c
                log(f"persistent vs fused / twins, {key}: {json.dumps(c)}")
        if prec == "fp16":  # graph step times, default against persistent, same runner
            emb = m.embed_prompt(torch.arange(32) + 100, None, None)
            reqs = [CodeRequest(emb, max_new=200, min_new=200)]
            times: dict = {}
            for name, per in (("default", 0), ("persistent", pt["persist"]), ("default2", 0)):
                m.ops.tiles["fma"]["persist"] = per
                m._graphs.clear()
                m.generate(reqs, CudaSampling(), seed=0, max_batch=1)  # positions 32..232
                for L in (256, 512):
                    times[f"{name}_L{L}"] = graph_step_us(m, 1, L)
                times[f"{name}_kernels"] = kernel_breakdown(m, 1, 256)
                times[f"{name}_kernels_per_step"] = m.kernels_per_step(1)
                log(f"graph step {name}: {json.dumps(times)}")
            out["graph_step_us"] = times
            out["err_flag_after_timing"] = m.persistent_failed()
        m.close()
        torch.cuda.empty_cache()


def dyn_tiles(results: dict) -> dict:
    """The attention tiles of the dynamic-bound decode attention for ``bench_decode``: the
    fastest checked "attention dyn" row of this run's batch-64 sweep, else ``DYN_CH``
    positions per chunk (default 64)."""
    rows = [
        r for r in results.get("tile_sweep", [])
        if str(r.get("tiles", "")).startswith("attention dyn") and r.get("equal")
    ]  # fmt: skip
    if rows:
        return dict(min(rows, key=lambda r: r["step_us"])["config"]["attn"])
    return {"dyn": 1, "ch": int(os.environ.get("DYN_CH", "64"))}


def loop_gap(m, reqs: list, samp, b: int, frames: int, t_generate: float) -> dict:
    """Where ``generate``'s time goes at batch ``b``: the same prefill and windows (the
    same batch and length buckets) enqueued back to back with one sync at the end (the GPU
    alone), against ``generate`` (host loop, end-flag polls, result copies); the graph step
    at the generate's mean position; and, for a runner with ``batch_lookahead``, its codes
    against the loop without it (min_new = frames: same windows; then end codes allowed:
    requests ending inside windows, the window run ahead riding along)."""
    from mixvox.engines.chattts.gpt.cuda_graph import CudaSteps

    def gpu_only() -> None:
        st = CudaSteps(m, reqs, b)
        m.set_sampling(samp)
        st.admit(list(range(b)), list(range(b)))
        done = 0
        while done < frames:
            n = min(m.sync_every, frames - done)
            st._enqueue(list(range(b)), n)
            done += n
        for s in range(b):
            st.release(s)

    tg = cuda_time(gpu_only, warmup=1, repeat=3)
    out = {"generate_ms": t_generate * 1e3, "gpu_only_ms": tg * 1e3}
    out["host_gap_ms"] = out["generate_ms"] - out["gpu_only_ms"]
    plen = int(reqs[0].embeds.shape[0])
    m.pos[:b] = plen + frames // 2
    out["graph_step_us_mid"] = graph_step_us(m, b, 256, n=20)
    m.pos[:b] = 0
    if m.batch_lookahead:
        from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest

        eos = [CodeRequest(r.embeds, max_new=frames, min_new=0) for r in reqs]

        def same(xs: list, ys: list) -> str:
            n = sum(
                bool(torch.equal(x.codes, y.codes)) and x.finished == y.finished
                for x, y in zip(xs, ys, strict=True)
            )
            return f"{n}/{b}"

        for key, rq in (("same_windows", reqs), ("end_codes", eos)):
            got = {}
            for on in (False, True, "off again"):
                m.batch_lookahead = on is True
                got[on] = m.generate(rq, samp, seed=0, max_batch=b)
            m.batch_lookahead = True
            out[f"codes_equal_{key}"] = same(got[False], got[True])
            # the control: the loop without lookahead twice (the fp16 split-K sums land by
            # atomics in no fixed order, so a sampled trajectory may part after a near-tie)
            out[f"codes_equal_{key}_control_off_off"] = same(got[False], got["off again"])
            if key == "end_codes":
                out["end_code_lengths"] = sorted(len(x.codes) for x in got[True])[:: max(1, b // 8)]
    log(f"loop b{b}: {json.dumps(out)}")
    return out


def batch_prefill_check(m, n: int) -> dict:
    """The graph-captured prefill of ``n`` prompts at once (a batch's first admission)
    against the eager one: same residual stream, normalised last hidden and K/V rows of each
    prompt (NaN-poisoned before the graph run), and the time of each."""
    from mixvox.engines.chattts.gpt.triton_decode import _err

    gen = torch.Generator().manual_seed(7)
    lens = torch.randint(20, 33, (n,), generator=gen)
    embeds = [
        m.emb_text[torch.randint(0, 20000, (int(t),), generator=gen).to(m.device)] for t in lens
    ]
    slots = list(range(n))
    was = m.batch_prefill_graphs  # restored at the end (the engine's own setting)

    def run(graph: bool) -> dict:
        m.batch_prefill_graphs = graph
        m.prefill(slots, embeds)
        torch.cuda.synchronize()
        kv = [torch.cat([c[:, i, :, : int(t)].flatten() for i, t in enumerate(lens)])
              for c in (m.k, m.v)]  # fmt: skip
        return {"hres": m.hres[:n].clone(), "h_last": m.h_last[:n].clone(), "k": kv[0],
                "v": kv[1], "pos": m.pos[:n].clone()}  # fmt: skip

    ref = run(False)
    m.hres[:n] = float("nan")  # poisoned: an entry the graph fails to write shows up
    m.h_last[:n] = float("nan")
    m.k[:, :n] = float("nan")
    m.v[:, :n] = float("nan")
    m.pos[:n] = -1
    got = run(True)
    out = {k: _err(got[k], ref[k]) for k in ref}
    te = cuda_time(lambda: (setattr(m, "batch_prefill_graphs", False), m.prefill(slots, embeds)),
                   warmup=1, repeat=5)  # fmt: skip
    tg = cuda_time(lambda: (setattr(m, "batch_prefill_graphs", True), m.prefill(slots, embeds)),
                   warmup=1, repeat=5)  # fmt: skip
    out.update({"n": n, "eager_ms": te * 1e3, "graph_ms": tg * 1e3})
    m.batch_prefill_graphs = was
    out["pass"] = all(out[k] <= 2e-2 for k in ("hres", "h_last", "k", "v", "pos"))
    log(f"batch prefill, {n} prompts, graph vs eager: {json.dumps(out)}")
    return out


def graph_step_us(m, b: int, L: int, n: int = 100) -> float:
    """Median-free mean time of one captured decode step (graph replays only, no host loop)."""
    g = m._graphs.get((b, L)) or m._capture(b, L)
    saved = [t.clone() for t in m._state()]
    g.replay()
    torch.cuda.synchronize()
    t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0.record()
    for _ in range(n):
        g.replay()
    t1.record()
    torch.cuda.synchronize()
    for t, v in zip(m._state(), saved, strict=True):
        t.copy_(v)
    return t0.elapsed_time(t1) * 1000 / n


def kernel_breakdown(m, b: int, L: int) -> dict:
    """GPU time per decode step by kernel (eager step under the profiler), in us, and the
    sum: against the graph step time this separates kernel time from launch gaps."""
    from torch.profiler import ProfilerActivity, profile

    saved = [t.clone() for t in m._state()]
    m._step(b, L)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        m._step(b, L)
        torch.cuda.synchronize()
    for t, v in zip(m._state(), saved, strict=True):
        t.copy_(v)
    agg: dict[str, float] = {}
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        us = getattr(e, "device_time", None) or getattr(e, "cuda_time", 0.0)
        key = e.name[:60]
        agg[key] = agg.get(key, 0.0) + float(us)
    top = dict(sorted(agg.items(), key=lambda kv: -kv[1])[:12])
    top["_sum_all_kernels"] = sum(agg.values())
    return {k: round(v, 1) for k, v in top.items()}


def kernels_per_step(m) -> int:
    """GPU kernels launched by one batch-1 decode step (what each graph replay runs)."""
    from torch.profiler import ProfilerActivity, profile

    saved = [t.clone() for t in m._state()]
    m._step(1, 256)  # compiled code warm
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        m._step(1, 256)
        torch.cuda.synchronize()
    for t, v in zip(m._state(), saved, strict=True):
        t.copy_(v)
    return sum(1 for e in prof.events() if e.device_type.name == "CUDA")


def peak_memory(ckpt: Path, results: dict, frames: int) -> None:
    from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaGPT, CudaSampling
    from mixvox.engines.chattts.gpt.triton_decode import TritonGPT

    for key, cls in (
        ("peak_gpu_mb_batch1_gpt", CudaGPT),
        ("peak_gpu_mb_batch1_gpt_fused", TritonGPT),
    ):
        _collect_garbage()  # before the base: none freed inside the window
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        m = cls(ckpt / "asset", precision="fp16", max_batch=1)
        emb = m.embed_prompt(torch.arange(100, 140), None, None)
        m.generate([CodeRequest(emb, max_new=frames, min_new=frames)], CudaSampling(), seed=0)
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        results[key] = peak / 2**20
        log(f"{key}: {peak / 2**20:.1f} MiB")
        m.close()


def weight_bytes_per_step(ckpt: Path, dtype_bytes: int = 2) -> int:
    from safetensors import safe_open

    n = 0
    with safe_open(str(ckpt / "asset" / "gpt" / "model.safetensors"), "np") as f:
        for k in f.keys():
            if k.startswith("layers.") or k == "norm.weight":
                n += int(np.prod(f.get_slice(k).get_shape())) * dtype_bytes
    cfg = json.loads((ckpt / "asset" / "gpt" / "config.json").read_text())
    n += cfg["num_vq"] * cfg["num_audio_tokens"] * cfg["hidden_size"] * 4  # fp32 heads
    return n


def bench_reference(ckpt: Path, results: dict, frames: int, batches: list[int]) -> None:
    """Reference ChatTTS 0.2.5 (eager fp32) on the same checkpoint: text -> wav at batch 1
    for ~10 s of audio (frames/s and RTF of the whole call), the first streamed chunk, and
    peak GPU memory from before its load."""
    try:
        import ChatTTS
    except Exception as exc:
        results["reference"] = f"not importable: {exc}"
        log("reference ChatTTS not importable:", exc)
        return
    a = ckpt / "asset"
    torch.cuda.synchronize()
    _collect_garbage()  # before the base: none freed inside the window
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    chat = ChatTTS.Chat()
    ok = chat._load(
        vocos_ckpt_path=str(a / "Vocos.safetensors"),
        dvae_ckpt_path=str(a / "DVAE.safetensors"),
        gpt_ckpt_path=str(a / "gpt"),
        embed_path=str(a / "Embed.safetensors"),
        decoder_ckpt_path=str(a / "Decoder.safetensors"),
        tokenizer_path=str(a / "tokenizer"),
        device=torch.device("cuda"),
    )
    log("reference loaded:", ok)
    text = "今天的会议改到三点半，我们讨论一下新的语音合成引擎的性能。"
    n = E2E_FRAMES
    params = ChatTTS.Chat.InferCodeParams(
        max_new_token=n, min_new_token=n, show_tqdm=False, manual_seed=0
    )
    kw = {
        "skip_refine_text": True,
        "params_infer_code": params,
        "do_text_normalization": False,
        "do_homophone_replacement": False,
    }

    def run():
        return chat.infer([text], **kw)

    t = cuda_time(run, warmup=1, repeat=2)
    wavs = run()
    audio_s = sum(len(np.asarray(w).reshape(-1)) for w in wavs) / 24000
    first = None
    try:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for piece in chat.infer([text], stream=True, **kw):
            if first is None and np.asarray(piece).size:
                first = time.perf_counter() - t0
        torch.cuda.synchronize()
    except Exception as exc:  # streaming is reported, not required
        log("reference streaming failed:", exc)
    row = {
        "impl": "reference ChatTTS 0.2.5 (eager fp32)",
        "batch": 1,
        "frames": n,
        "seconds": t,
        "frames_per_s": n / t,
        "audio_s": audio_s,
        "rtf_text_to_wav": t / max(audio_s, 1e-9),
        "first_chunk_ms": None if first is None else first * 1000,
        "peak_gpu_mib": (torch.cuda.max_memory_allocated() - base) / 2**20,
    }
    log("reference:", json.dumps(row))
    results["reference"] = [row]


E2E_FRAMES = 469  # about 10 s of audio


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("gpu_out"))
    ap.add_argument("--ckpt", type=Path, default=Path("/tmp/chattts_full"))
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--batches", default="1,8,32,64")
    ap.add_argument("--skip-reference", action="store_true")
    ap.add_argument(
        "--only", default="parity,kernels,loop,sweep,gemm,agreement,decode,memory,e2e,reference"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    tiles_file = os.environ.get("GPU_TILES")  # tile-table overrides for the whole run (json)
    if tiles_file and Path(tiles_file).exists():
        from mixvox.engines.chattts.gpt import triton_decode

        over = json.loads(Path(tiles_file).read_text())
        for k, v in over.items():
            triton_decode.TILES[k].update(v)
        log(f"tile table overrides from {tiles_file}: {json.dumps(over)}")
    only = set(args.only.split(","))
    batches = [int(x) for x in args.batches.split(",")]
    results: dict = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "frames": args.frames,
    }
    bw = copy_bandwidth()
    results["copy_bandwidth_TBps"] = bw / 1e12
    log(f"GPU {results['gpu']}, torch {torch.__version__}, copy bandwidth {bw / 1e12:.2f} TB/s")
    steps = [
        ("parity", lambda: parity_tiny(results)),
        ("persist", lambda: persistent_check(make_full_checkpoint(args.ckpt), results)),
        ("kernels", lambda: fused_kernels(make_full_checkpoint(args.ckpt), results)),
        ("loop", lambda: loop_breakdown(make_full_checkpoint(args.ckpt), results, args.frames)),
        ("sweep", lambda: tile_sweep(make_full_checkpoint(args.ckpt), results)),
        ("gemm", lambda: gemm_compare(make_full_checkpoint(args.ckpt), results)),
        ("agreement", lambda: agreement(make_full_checkpoint(args.ckpt), results, args.frames)),
        ("e2e", lambda: bench_e2e(make_full_checkpoint(args.ckpt), results)),
        ("memory", lambda: peak_memory(make_full_checkpoint(args.ckpt), results, args.frames)),
        (
            "decode",
            lambda: bench_decode(make_full_checkpoint(args.ckpt), results, args.frames, batches),
        ),
        (
            "reference",
            lambda: (
                None
                if args.skip_reference
                else bench_reference(
                    make_full_checkpoint(args.ckpt),
                    results,
                    args.frames,
                    [b for b in batches if b <= 8],
                )
            ),
        ),
    ]
    t_run = time.perf_counter()
    for name, fn in steps:
        if name not in only:
            continue
        t_sec = time.perf_counter()
        try:
            fn()
        except Exception:
            results.setdefault("errors", {})[name] = traceback.format_exc()
            log(f"step {name} failed:\n{traceback.format_exc()}")
        dt = time.perf_counter() - t_sec
        results.setdefault("section_seconds", {})[name] = round(dt, 1)
        log(f"section {name}: {dt:.1f} s (run {time.perf_counter() - t_run:.0f} s)")
        (args.out / "gpu_results.json").write_text(json.dumps(results, indent=2, default=str))
    if (args.ckpt / "asset").exists():
        # HBM moves about the copy figure (read + write traffic) in any direction, so a step
        # that only reads its weights takes bytes / bandwidth (as the issue's own floor).
        floors = {}
        for prec, nbytes in (("fp16", 2), ("fp8", 1)):
            wb = weight_bytes_per_step(args.ckpt, nbytes)
            floors[prec] = wb / bw
            results["floor" if prec == "fp16" else "floor_fp8"] = {
                "bytes_per_step": wb,
                "step_us": wb / bw * 1e6,
                "frames_per_s_batch1": bw / wb,
            }
        for row in results.get("decode", []):
            floor_s = floors.get(row.get("precision", "fp16"), floors["fp16"])
            if row["batch"] == 1:
                row["fraction_of_floor"] = row["frames_per_s"] * floor_s
                if row.get("graph_step_us"):
                    row["graph_step_fraction_of_floor"] = floor_s * 1e6 / row["graph_step_us"]
    (args.out / "gpu_results.json").write_text(json.dumps(results, indent=2, default=str))
    table = summary_table(results)
    (args.out / "gpu_table.md").write_text(table)
    log(json.dumps(results, indent=2, default=str))
    log(table)
    return 1 if results.get("errors") else 0


def summary_table(results: dict) -> str:
    """The issue's rows side by side: fused (the default) / torch graphs / reference, then
    the decode rows per batch (frames/s, graph step time, floor fraction)."""
    dec: dict[tuple[str, int], dict] = {}
    for r in results.get("decode", []):
        dec[(r["impl"], r["batch"])] = r
    names = sorted({k[0] for k in dec})
    fused = next((n for n in names if "fused" in n and "fp16" in n), None)
    fp8 = next((n for n in names if "fused" in n and "fp8" in n), None)
    bf16 = next((n for n in names if "fused" in n and "bf16" in n), None)
    graphs = next((n for n in names if "torch fp16 graphs" in n), None)
    ref = results.get("reference")
    ref = ref[0] if isinstance(ref, list) and ref else {}
    e2e = results.get("e2e", {})
    kps = results.get("kernels_per_step", {})

    def fps(impl: str | None, b: int) -> str:
        r = dec.get((impl, b)) if impl else None
        if not r:
            return "-"
        extra = f" ({r['fraction_of_floor']:.1%} of floor)" if "fraction_of_floor" in r else ""
        return f"{r['frames_per_s']:,.0f}{extra}"

    def step(impl: str | None) -> str:
        r = dec.get((impl, 1)) if impl else None
        if not r or not r.get("graph_step_us"):
            return "-"
        return f"{r['graph_step_us']:.0f} us ({r.get('graph_step_fraction_of_floor', 0):.1%})"

    def e(dec_name: str, key: str, fmt: str = "{:.3f}") -> str:
        row = e2e.get(dec_name, {})
        v = row.get(key)
        if isinstance(v, dict):
            return " / ".join(f"{k}: {x:.1f} ms" for k, x in v.items() if x is not None)
        return "-" if v is None else fmt.format(v)

    rf = ref.get("first_chunk_ms")
    rows = [
        ("decode, batch 1, frames/s (generate)", fps(fused, 1), fps(graphs, 1),
         f"{ref['frames_per_s']:.1f} (text->wav)" if ref else "-", ">= 5,000 (must 3,000)"),
        ("batch-1 graph step (fraction of floor)", step(fused), step(graphs), "-", "93 us"),
        ("kernels per step", str(kps.get(fused, "-")), str(kps.get(graphs, "-")), "-", "-"),
        ("decode, batch 64, aggregate frames/s", fps(fused, 64), fps(graphs, 64), "-",
         ">= 100,000"),
        ("fp8 weights, batch 1 / 64 frames/s", f"{fps(fp8, 1)} / {fps(fp8, 64)}", "-", "-",
         "floor ~ 2x fp16"),
        ("end to end RTF, ~10 s of audio, batch 1", e("fused", "rtf", "{:.4f}"),
         e("graphs", "rtf", "{:.4f}"),
         f"{ref['rtf_text_to_wav']:.3f}" if ref else "-", "<= 0.02"),
        ("first streamed chunk", e("fused", "first_chunk_warm_ms"),
         e("graphs", "first_chunk_warm_ms"), "-" if rf is None else f"{rf:.0f} ms", "<= 50 ms"),
        ("peak GPU memory, batch 1, end to end (MiB)", e("fused", "peak_gpu_mib", "{:,.0f}"),
         e("graphs", "peak_gpu_mib", "{:,.0f}"),
         f"{ref['peak_gpu_mib']:,.0f}" if ref else "-", "<= 1,200"),
    ]  # fmt: skip
    ag = results.get("agreement_vs_fp32", {})

    def a(key: str) -> str:
        v = ag.get(key, {}).get("teacher_forced_top1_agreement")
        return "-" if v is None else f"{v:.2%}"

    par = results.get("parity_tiny_fp32", {})
    pv = [v for k, v in par.items() if isinstance(v, dict)]
    cb = [v for k, v in par.items() if k.endswith("continuous_batching_equal")]
    keq = results.get("fused_kernel_equality", {})
    rows += [
        ("fp32 golden codes (tiny, 24 steps), variants equal / continuous batching equal",
         f"{sum(v['codes_equal'] for v in pv)}/{len(pv)} / {sum(cb)}/{len(cb)}" if pv else "-",
         "-", "-", "all"),
        ("fused kernels vs torch twins (full size), checks passed",
         f"{sum(bool(v.get('pass')) for v in keq.values())}/{len(keq)}" if keq else "-",
         "-", "-", "all"),
        ("teacher-forced top-1 agreement with fp32: fp16 / bf16 (fp32 act.) / all-bf16 / fp8",
         " / ".join(a(k) for k in ("fused_fp16-pdl", "fused_bf16-pdl", "fused_bf16act-pdl",
                                   "fused_fp8-pdl")),
         f"{a('fp16')} / - / {a('bf16')} / -", "-", ">= 99.5 % (fp16, bf16)"),
        ("same, fp32 compute with only the layer weights rounded: bf16 / fp16",
         f"{a('torch_fp32_bf16_rounded_weights')} / {a('torch_fp32_fp16_rounded_weights')}",
         "-", "-", "bound for bf16 / fp16 weights"),
        ("bf16 weights (fp32 activations), batch 1 / 64 frames/s",
         f"{fps(bf16, 1)} / {fps(bf16, 64)}", "-", "-", "-"),
    ]  # fmt: skip
    ps = results.get("persistent")
    if ps:  # the persistent batch-1 step (session 8, opt-in)
        cmp_ = ps.get("compare", {})
        worst = max((v for c in cmp_.values() for k, v in c.items() if not k.startswith("codes")),
                    default=float("nan"))  # fmt: skip
        gs = ps.get("graph_step_us", {})
        bar = [r for r in ps.get("barrier", []) if not r.get("load")]
        rows += [
            ("persistent batch-1 step (opt-in): golden codes / worst error vs fused and twins "
             "/ error flag", f"{ps.get('golden_equal')} / {worst:.2e} / "
             f"{ps.get('err_flag_after_timing')}", "-", "-", "equal"),
            ("persistent step: graph step L256, default -> persistent (kernels per step)",
             f"{gs.get('default_L256', float('nan')):.0f} -> "
             f"{gs.get('persistent_L256', float('nan')):.0f} us "
             f"({gs.get('default_kernels_per_step')} -> {gs.get('persistent_kernels_per_step')})",
             "-", "-", "~200 us"),
            ("grid barrier alone, us (132 programs)",
             f"{bar[0]['us_per_phase']:.2f}" if bar else "-", "-", "-", "-"),
        ]  # fmt: skip
    out = "| figure | mixvox fused (default) | mixvox torch graphs | reference ChatTTS 0.2.5 "
    out += "| target |\n| --- | --- | --- | --- | --- |\n"
    out += "".join(f"| {' | '.join(r)} |\n" for r in rows)
    batches = sorted({k[1] for k in dec})
    out += "\n| implementation | " + " | ".join(f"b{b} frames/s" for b in batches)
    out += " | b1 step (graph) | kernels/step |\n|" + " --- |" * (len(batches) + 3) + "\n"
    for impl in names:
        cells = [fps(impl, b) for b in batches]
        out += f"| {impl} | " + " | ".join(cells) + f" | {step(impl)} | {kps.get(impl, '-')} |\n"
    return out


def bench_e2e(ckpt: Path, results: dict) -> None:
    """Text -> wav for about 10 s of audio through the engine on the GPU, first streamed
    chunk and peak GPU memory from before the load: the fused decode step (the default) and
    the torch graphs step, with the audio side's own measurement (bench/gpu_audio.py) when
    it is there, else a plain Synthesizer run."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gpu_audio  # type: ignore[import-not-found]
    except ImportError as exc:
        log("bench/gpu_audio.py not importable, plain end-to-end run:", exc)
        gpu_audio = None
    out: dict = {}
    for kind, decoder in (("fused", "fused"), ("torch", "graphs")):
        try:
            if gpu_audio is not None:
                out[decoder] = gpu_audio.engine_rows(ckpt, kind, lookaheads=(8,), repeats=3)
            else:
                out[decoder] = _e2e_plain(ckpt, decoder)
        except Exception:
            out[decoder] = {"error": traceback.format_exc()}
            log(f"e2e {decoder} failed:\n{out[decoder]['error']}")
        log(f"e2e {decoder}:", json.dumps(out[decoder], default=str))
    results["e2e"] = out


def _e2e_plain(ckpt: Path, decoder: str) -> dict:
    import mixvox

    torch.cuda.synchronize()
    _collect_garbage()  # before the base: none freed inside the window
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    text = "今天的 meeting 改到 3:30 PM，RTX 4070 跑 TensorRT 只要 22ms。"  # one chunk
    tts = mixvox.Synthesizer(
        "chattts",
        model_dir=str(ckpt),
        backend="torch",
        device="cuda",
        precision="fp16",
        gpu_decoder=decoder,
    )
    kw = {"min_frames": E2E_FRAMES, "max_frames": E2E_FRAMES, "refine": False, "seed": 0}
    tts.synthesize(text, **kw)  # warm-up
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    audio = tts.synthesize(text, **kw)
    torch.cuda.synchronize()
    t = time.perf_counter() - t0
    t0 = time.perf_counter()
    first = None
    for piece in tts.stream(text, **kw):
        if first is None and len(piece.samples):
            first = time.perf_counter() - t0
    row = {
        "gpt": decoder,
        "e2e_s": t,
        "audio_s": audio.duration,
        "rtf": t / max(audio.duration, 1e-9),
        "first_chunk_warm_ms": {"exact": (first or 0) * 1000},
        "peak_gpu_mib": (torch.cuda.max_memory_allocated() - base) / 2**20,
    }
    tts.close()
    return row


if __name__ == "__main__":
    sys.exit(main())
