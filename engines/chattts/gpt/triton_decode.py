"""Fused GPU decode step for the ChatTTS GPT: hand-written Triton kernels, 3 per layer at batch 1.

Why: at batch 1 the step of this small model (20 Llama layers, hidden 768, ~385 MB of fp16
weights) is bound by the number of kernels, not by memory. The torch path of
:class:`~mixvox.engines.chattts.gpt.cuda_graph.CudaGPT` runs 368 kernels per step, one after
the other inside a CUDA graph (~1.1 ms per step against a ~93 us bandwidth floor). Here one
step is at most ``2 + 5 * layers`` kernels, JIT-compiled by Triton (users need no compiler):

1. RMSNorm + QKV GEMV + RoPE + KV-cache write (layer 0 also gathers the code embeddings of
   the codes just drawn and sets the end flags),
2. decode attention over the cache, one (head, slot) per program, online softmax over
   chunks of up to 256 positions (a split over programs needed a combine pass that cost
   more than it saved at these lengths: run 1 of 2026-12-01; session 6 added, opt-in and not
   yet timed, a split whose last program per (head, slot) combines, so no extra launch:
   ``_attn_split_kernel``, ``TILES["attn"]["split"]``),
3. O-projection GEMV + residual add,
4. RMSNorm + gate/up GEMV + SiLU-mul,
5. down GEMV + residual add (the last layer also advances positions and step counters),

plus the final RMSNorm + the four code heads (one GEMV) and one sampler kernel per
(slot, codebook) (temperature, repetition penalty, top-p, top-k, end-code block, the
exponential-race draw, codes and history). Every RMSNorm is recomputed by each program from
the full hidden vector (768 values), which costs less than a launch. With ``pdl=True`` the
kernels use programmatic dependent launch (Hopper): each reads its weights before waiting for
the previous kernel (377 vs 450 us per step on an H200, BENCHMARKS.md).

At batch 1 (the default tile table) 2 and 3 are one kernel (attention + its share of the
O-projection) and 4 and 5 another (gate/up + SiLU-mul + down: each program makes 16
intermediate values and multiplies them by the matching down-weight columns); their sums wait
in fp32 buffers (atomics) and the next kernels fold them into the residual stream, so a step
is ``2 + 3 * layers`` kernels (290 us on an H200, BENCHMARKS.md session 4). At batch >= 2 the
tensor-core GEMMs of narrow matrices can split K over programs (the last program of a tile
finishes it).

Opt-in (session 8, not yet measured on a GPU; ``TILES["fma"]["persist"]``): the whole batch-1
layer stack in one persistent launch (``_persist_kernel``: one program per SM, the 3 phases
of each layer separated by grid-wide barriers instead of kernel boundaries, ~0.9 us each on
an H200 against ~4.7 us per dependent kernel), so a step is 3 kernels.

Each kernel has a plain-torch twin in :class:`TorchOps` with the same inputs, outputs and
rounding points. The twins are the reference the kernels are tested against (on the GPU by
``bench/gpu.py``, on CPU through Triton's interpreter when it is installed), and
``TritonGPT(kernels="torch")`` runs the whole fused step through them, which is how CI checks
the step's logic against the golden codes without a GPU.

Numerics follow the torch path: GEMVs accumulate in fp32 and round their output to the model
dtype; norms, RoPE and SiLU-mul compute in fp32 from dtype inputs and round once; attention
and the sampler are fp32. Batch >= 2 uses tensor-core ``tl.dot`` tiles (batch padded to 16),
batch 1 CUDA-core tiles that hold whole weight rows (one load per operand: a loop over K
serialised the memory latency, run 1).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from mixvox.engines.chattts.gpt.cuda_graph import (
    DTYPES,
    LEN_BUCKETS,
    CudaGPT,
    GraphGPT,
    _bucket,
    _rmsnorm,
    _rope,
    _silu_mul,
)
from mixvox.engines.chattts.gpt.model import GPT

try:  # Triton is optional: without it the fused step runs only through the torch twins.
    import triton
    import triton.language as tl

    HAVE_TRITON = True
except Exception:  # pragma: no cover - depends on the environment
    triton = None
    tl = None
    HAVE_TRITON = False

WIN = 16  # repetition-penalty window (frames)
#: prompt-length buckets of the graph-captured prefill (longer prompts run eagerly)
PREFILL_BUCKETS = (16, 32, 64, 128, 256, 512)
#: several prompts prefill through one CUDA graph when count x bucket is at most this many
#: tokens; at most this many such graphs are kept (each holds its activations' memory)
BATCH_PREFILL_TOKENS = 4096
BATCH_PREFILL_GRAPHS = 4
#: fewest cache positions per program of the split attention (sizes its scratch)
ATTN_MIN_SPLIT = 32


def _pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


# ----------------------------------------------------------------------------------------------
# Triton kernels
# ----------------------------------------------------------------------------------------------

if HAVE_TRITON:

    @triton.jit
    def _mv(acc, x, w, USE_DOT: tl.constexpr, PREC: tl.constexpr):
        """acc[BM, BN] += x[BM, BK] @ w[BN, BK]^T (fp32 accumulate)."""
        if USE_DOT:  # fp8 weights are widened to the activation dtype for the tensor cores
            acc = tl.dot(x, tl.trans(w.to(x.dtype)), acc, input_precision=PREC)
        else:
            acc += tl.sum(x.to(tl.float32)[:, None, :] * w.to(tl.float32)[None, :, :], axis=2)
        return acc

    @triton.jit
    def _gdc(PDL: tl.constexpr):
        """Programmatic dependent launch (Hopper): everything above this call may overlap the
        previous kernel (only constant weights are read there); wait for it, then let the
        next kernel start its own prologue."""
        if PDL:
            tl.extra.cuda.gdc_wait()
            tl.extra.cuda.gdc_launch_dependents()

    @triton.jit
    def _ld_acquire(p):
        """A 64-bit load with acquire semantics at GPU scope: it reads at L2 (never a stale
        L1 line) and orders the loads after it behind it."""
        return tl.inline_asm_elementwise(
            "ld.acquire.gpu.global.b64 $0, [$1];", "=l,l", [p], dtype=tl.int64, is_pure=False,
            pack=1,
        )  # fmt: skip

    @triton.jit
    def _grid_arrive(bar_ptr, base, e, NPROG):
        """First half of grid-wide barrier number ``e`` (0, 1, ...) of a persistent launch
        whose ``NPROG`` programs are all resident at once (checked by the host: a program
        that is never scheduled would leave the others spinning): count this program's
        arrival. Returns the launch's ``base``.

        ``bar`` is a monotonically increasing int64 counter, never reset: every program adds
        1 per barrier, so a launch starts at a multiple of ``NPROG`` (every launch before it
        added ``NPROG`` per barrier) and barrier ``e`` is passed when the counter reaches
        ``base + (e + 1) * NPROG``; ``base`` comes from the program's first arrival (its old
        value lies in ``[base, base + NPROG)``). The block barrier before the release add
        orders every thread's writes of the phase before it. The release also waits for
        every load the program has in flight, so the next phase's weights are loaded after
        the arrival and before :func:`_grid_wait` (on an H200 a release after the loads
        serialised them: 2.42 us per 4.3 MB phase against 1.12 without a barrier and 0.92
        for the barrier alone, ``bench/gpu_barrier.py``)."""
        tl.debug_barrier()
        c = tl.atomic_add(bar_ptr, 1, sem="release", scope="gpu")
        if e == 0:
            base = c - c % NPROG
        return base

    @triton.jit
    def _grid_wait(bar_ptr, err_ptr, base, e, ok, NPROG, SPIN: tl.constexpr):
        """Second half of barrier ``e``: spin until all ``NPROG`` programs arrived. The
        acquire loads order the next phase's loads behind the spin. The spin is bounded:
        after ``SPIN`` polls it sets ``err`` and stops waiting (``ok`` False: later
        barriers of the launch no longer spin, and a launch that finds ``err`` set does not
        spin at all), so a grid that is not co-resident gives wrong results and a flag,
        never a hang."""
        target = base + (e + 1) * NPROG
        if ok:
            v = _ld_acquire(bar_ptr)
            i = 0
            while (v < target) & (i < SPIN):
                v = _ld_acquire(bar_ptr)
                i += 1
            if v < target:
                tl.store(err_ptr, 1)
            ok = ok & (v >= target)
        tl.debug_barrier()
        return ok

    @triton.jit
    def _grid_sync(bar_ptr, err_ptr, base, e, ok, NPROG, SPIN: tl.constexpr):
        """Grid-wide barrier ``e`` in one call (:func:`_grid_arrive` then :func:`_grid_wait`)."""
        base = _grid_arrive(bar_ptr, base, e, NPROG)
        ok = _grid_wait(bar_ptr, err_ptr, base, e, ok, NPROG, SPIN)
        return base, ok

    @triton.jit
    def _sk_arrive(cnt_ptr, tile, SPLIT: tl.constexpr):
        """Split-K: count this program's arrival at output tile ``tile`` (after its fp32
        partial sums went to the scratch by atomics) and say whether it is the last of the
        ``SPLIT`` programs of that tile, which then finishes the tile (the epilogue). The
        barrier orders every thread's partial-sum atomics before the release of the count;
        the last program resets the count for the next kernel."""
        tl.debug_barrier()
        c = tl.atomic_add(cnt_ptr + tile, 1, sem="acq_rel")
        last = c == SPLIT - 1
        if last:
            tl.store(cnt_ptr + tile, 0)
        tl.debug_barrier()
        return last

    @triton.jit
    def _sk_take(sp, acc, mmask):
        """The tile's complete fp32 sums (shaped as ``acc``) from the scratch, which is
        cleared for the next kernel. An atomic add of zero reads at L2, where the other
        programs' atomics landed (a plain load could hit a stale L1 line)."""
        z = tl.zeros_like(acc)
        full = tl.atomic_add(sp, z, mask=mmask[:, None], sem="relaxed")
        tl.store(sp, z, mask=mmask[:, None])
        return full

    @triton.jit
    def _prescaled(x, lnw_ptr, k, kmask, DT: tl.constexpr):
        """RMSNorm with the row statistic left for the epilogue (``POST``): ``x * weight``
        rounded to the model dtype, so a program needs no pass over the whole row before its
        K loop; the fp32 products are scaled by ``rsqrt(mean(x^2) + eps)`` afterwards."""
        lw = tl.load(lnw_ptr + k, mask=kmask, other=0.0)
        return (x * lw[None, :].to(tl.float32)).to(DT)

    @triton.jit
    def _sk_ss(scr_ptr, ss, m, mmask, tile, SC: tl.constexpr):
        """Split-K with ``POST``: this program's sum of squares over its share of K goes to
        a per-tile column of the scratch's last 4,096 (before the arrival count)."""
        tl.atomic_add(scr_ptr + m * SC + (SC - 4096) + tile, ss, mask=mmask, sem="relaxed")

    @triton.jit
    def _sk_ss_take(scr_ptr, ss, m, mmask, tile, SC: tl.constexpr):
        """The tile's whole-row sums of squares (last program), cleared for the next kernel."""
        sp = scr_ptr + m * SC + (SC - 4096) + tile
        full = tl.atomic_add(sp, tl.zeros_like(ss), mask=mmask, sem="relaxed")
        tl.store(sp, tl.zeros_like(ss), mask=mmask)
        return full

    @triton.jit
    def _sk_tail(
        acc_a, acc_b, sp_a, sp_b, ss, scr_ptr, cnt_ptr, m, mmask, tile,
        SC: tl.constexpr, SPLIT: tl.constexpr, TWO: tl.constexpr, POST: tl.constexpr,
    ):  # fmt: skip
        """The split-K tail every tensor-core GEMM shares (QKV, O, gate/up, down): this
        program's fp32 partial tile ``acc_a`` (and ``acc_b`` with ``TWO``: QKV's two halves,
        gate and up; the row sums of squares ``ss`` with ``POST``) go to the scratch at
        ``sp_a`` / ``sp_b`` by atomics, its arrival at ``tile`` is counted, and the last
        program of the tile takes the complete sums back (the scratch cleared for the next
        kernel). Returns ``(acc_a, acc_b, ss, last)``: only ``last`` runs the epilogue. With
        ``SPLIT == 1`` it returns its inputs and True (no atomics)."""
        last = True
        if SPLIT > 1:
            tl.atomic_add(sp_a, acc_a, mask=mmask[:, None], sem="relaxed")
            if TWO:
                tl.atomic_add(sp_b, acc_b, mask=mmask[:, None], sem="relaxed")
            if POST:
                _sk_ss(scr_ptr, ss, m, mmask, tile, SC)
            last = _sk_arrive(cnt_ptr, tile, SPLIT)
            if last:
                acc_a = _sk_take(sp_a, acc_a, mmask)
                if TWO:
                    acc_b = _sk_take(sp_b, acc_b, mmask)
                if POST:
                    ss = _sk_ss_take(scr_ptr, ss, m, mmask, tile, SC)
        return acc_a, acc_b, ss, last

    @triton.jit
    def _end_flags(
        ids_ptr, step_ptr, fin_ptr, end_ptr, m, mmask, NQ: tl.constexpr, EOS: tl.constexpr
    ):
        """End flags of the codes just drawn (all codebooks are known once the sampler ran)."""
        qq = tl.arange(0, NQ)
        idv = tl.load(ids_ptr + m[:, None] * NQ + qq[None, :], mask=mmask[:, None], other=0)
        ended = tl.max((idv == EOS).to(tl.int32), 1) > 0
        fin = tl.load(fin_ptr + m, mask=mmask, other=0) != 0
        st = tl.load(step_ptr + m, mask=mmask, other=0)
        ev = tl.load(end_ptr + m, mask=mmask, other=0)
        tl.store(end_ptr + m, tl.where(ended & ~fin, st, ev), mask=mmask)
        tl.store(fin_ptr + m, fin | ended, mask=mmask)

    @triton.jit
    def _load_x(
        h_ptr,
        ids_ptr,
        emb_ptr,
        m,
        mmask,
        k,
        kmask,
        H: tl.constexpr,
        NQ: tl.constexpr,
        V: tl.constexpr,
        BM: tl.constexpr,
        BK: tl.constexpr,
        EMBED: tl.constexpr,
    ):
        """The residual input [BM, BK] in fp32: the stream ``h``, or on layer 0 the sum of the
        four code embeddings of the codes just drawn (rounded to the model dtype, as torch)."""
        msk = mmask[:, None] & kmask[None, :]
        if EMBED:
            acc = tl.zeros([BM, BK], tl.float32)
            for q in tl.static_range(NQ):
                idq = tl.load(ids_ptr + m * NQ + q, mask=mmask, other=0)
                e = tl.load(emb_ptr + (idq[:, None] + q * V) * H + k[None, :], mask=msk, other=0.0)
                acc += e.to(tl.float32)
            return acc.to(emb_ptr.dtype.element_ty).to(tl.float32)
        else:
            x = tl.load(h_ptr + m[:, None] * H + k[None, :], mask=msk, other=0.0)
            return x.to(tl.float32)

    @triton.jit
    def _fold(x, yo_ptr, yd_ptr, m, mmask, k, kmask, H: tl.constexpr, DT: tl.constexpr):
        """The residual stream with a layer's pending O and MLP sums folded in (the 3-kernel
        layer: they stay in fp32 buffers until the next layer's attention writes ``h``),
        rounded as the torch path: ``h + round(o)``, rounded, ``+ round(mlp)``, rounded."""
        msk = mmask[:, None] & kmask[None, :]
        yo = tl.load(yo_ptr + m[:, None] * H + k[None, :], mask=msk, other=0.0)
        yd = tl.load(yd_ptr + m[:, None] * H + k[None, :], mask=msk, other=0.0)
        x = (x + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
        return (x + yd.to(DT).to(tl.float32)).to(DT).to(tl.float32)

    @triton.jit
    def _normed(x, rstd, lnw_ptr, k, kmask, DT: tl.constexpr):
        """RMSNorm as transformers': statistics in fp32, weight applied in the model dtype."""
        lw = tl.load(lnw_ptr + k, mask=kmask, other=0.0)
        return (x * rstd[:, None]).to(DT) * lw[None, :]

    @triton.jit
    def _rstd(
        h_ptr, ids_ptr, emb_ptr, m, mmask, eps,
        H: tl.constexpr, NQ: tl.constexpr, V: tl.constexpr, BM: tl.constexpr,
        BKS: tl.constexpr, EMBED: tl.constexpr,
    ):  # fmt: skip
        ss = tl.zeros([BM], tl.float32)
        for k0 in range(0, H, BKS):
            k = k0 + tl.arange(0, BKS)
            x = _load_x(h_ptr, ids_ptr, emb_ptr, m, mmask, k, k < H, H, NQ, V, BM, BKS, EMBED)
            ss += tl.sum(x * x, axis=1)
        return tl.math.rsqrt(ss / H + eps)

    @triton.jit
    def _qkv_rope_kernel(
        h_ptr, ids_ptr, emb_ptr, lnw_ptr, w_ptr, ws_ptr, pos_ptr, cos_ptr, sin_ptr,
        q_ptr, kc_ptr, vc_ptr, step_ptr, fin_ptr, end_ptr, scr_ptr, cnt_ptr, yo_ptr, yd_ptr,
        b, Lm1, eps, s_cb, s_ch, s_cp,
        H: tl.constexpr, HD: tl.constexpr, NH: tl.constexpr, NQ: tl.constexpr,
        V: tl.constexpr, EOS: tl.constexpr, BM: tl.constexpr, BH: tl.constexpr,
        BK: tl.constexpr, BKS: tl.constexpr, ONE: tl.constexpr, EMBED: tl.constexpr,
        USE_DOT: tl.constexpr, PREC: tl.constexpr, WS: tl.constexpr,
        SPLIT: tl.constexpr, SC: tl.constexpr, FOLD: tl.constexpr, PDL: tl.constexpr,
        POST: tl.constexpr = False, PREW: tl.constexpr = False,
    ):  # fmt: skip
        pid_n = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_k = tl.program_id(2)  # split-K: this program's share of the hidden dim
        KS: tl.constexpr = H // SPLIT
        PPH: tl.constexpr = HD // 2 // BH  # programs per (section, head)
        sh = pid_n // PPH  # section * NH + head
        sub = pid_n % PPH
        sec = sh // NH
        head = sh % NH
        d = sub * BH + tl.arange(0, BH)  # dims in the lower half of the head
        rows_lo = sh * HD + d
        rows_hi = rows_lo + HD // 2
        m = pid_m * BM + tl.arange(0, BM)
        mmask = m < b
        DT = lnw_ptr.dtype.element_ty  # the activation dtype (fp8 weights: fp16)
        acc_lo = tl.zeros([BM, BH], tl.float32)
        acc_hi = tl.zeros([BM, BH], tl.float32)
        ss = tl.zeros([BM], tl.float32)  # row sums of squares (POST)
        if ONE:  # the whole row in one tile: one load of x, one of each weight tile
            k = tl.arange(0, BK)
            kmask = k < H
            wlo = tl.load(w_ptr + rows_lo[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
            whi = tl.load(w_ptr + rows_hi[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
            _gdc(PDL)
            if EMBED:
                if pid_n == 0:
                    _end_flags(ids_ptr, step_ptr, fin_ptr, end_ptr, m, mmask, NQ, EOS)
            x = _load_x(h_ptr, ids_ptr, emb_ptr, m, mmask, k, kmask, H, NQ, V, BM, BK, EMBED)
            if FOLD:  # the previous layer's O and MLP sums are still pending (3-kernel layer)
                x = _fold(x, yo_ptr, yd_ptr, m, mmask, k, kmask, H, DT)
            if EMBED:
                if pid_n == 0:  # one program writes the new residual stream
                    msk = mmask[:, None] & kmask[None, :]
                    tl.store(h_ptr + m[:, None] * H + k[None, :], x.to(DT), mask=msk)
            rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / H + eps)
            n = _normed(x, rstd, lnw_ptr, k, kmask, DT)
            acc_lo = _mv(acc_lo, n, wlo, USE_DOT, PREC)
            acc_hi = _mv(acc_hi, n, whi, USE_DOT, PREC)
        else:
            if PREW:  # one K block per program (split-K): its weights before the wait
                k = pid_k * KS + tl.arange(0, BK)
                kmask = k < H
                wlo0 = tl.load(
                    w_ptr + rows_lo[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0
                )
                whi0 = tl.load(
                    w_ptr + rows_hi[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0
                )
            _gdc(PDL)
            if EMBED:
                if (pid_n == 0) & (pid_k == 0):
                    _end_flags(ids_ptr, step_ptr, fin_ptr, end_ptr, m, mmask, NQ, EOS)
            if not POST:  # else the norm's row statistic is applied after the K loop
                rstd = _rstd(h_ptr, ids_ptr, emb_ptr, m, mmask, eps, H, NQ, V, BM, BKS, EMBED)
            for k0 in range(0, KS, BK):
                k = pid_k * KS + k0 + tl.arange(0, BK)
                kmask = k < H
                x = _load_x(h_ptr, ids_ptr, emb_ptr, m, mmask, k, kmask, H, NQ, V, BM, BK, EMBED)
                if EMBED:
                    if pid_n == 0:
                        msk = mmask[:, None] & kmask[None, :]
                        tl.store(h_ptr + m[:, None] * H + k[None, :], x.to(DT), mask=msk)
                if POST:
                    ss += tl.sum(x * x, axis=1)
                    n = _prescaled(x, lnw_ptr, k, kmask, DT)
                else:
                    n = _normed(x, rstd, lnw_ptr, k, kmask, DT)
                if PREW:
                    wlo = wlo0
                    whi = whi0
                else:
                    wlo = tl.load(
                        w_ptr + rows_lo[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0
                    )
                    whi = tl.load(
                        w_ptr + rows_hi[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0
                    )
                acc_lo = _mv(acc_lo, n, wlo, USE_DOT, PREC)
                acc_hi = _mv(acc_hi, n, whi, USE_DOT, PREC)
        if WS:  # fp8 weights: per-output-channel scales
            acc_lo *= tl.load(ws_ptr + rows_lo)[None, :]
            acc_hi *= tl.load(ws_ptr + rows_hi)[None, :]
        # split-K: partial sums to the scratch; the last program of the tile goes on
        acc_lo, acc_hi, ss, last = _sk_tail(
            acc_lo, acc_hi, scr_ptr + m[:, None] * SC + rows_lo[None, :],
            scr_ptr + m[:, None] * SC + rows_hi[None, :], ss, scr_ptr, cnt_ptr, m, mmask,
            pid_m * tl.num_programs(0) + pid_n, SC, SPLIT, True, POST,
        )  # fmt: skip
        if last:
            if POST:
                rs = tl.math.rsqrt(ss / H + eps)
                acc_lo = acc_lo * rs[:, None]
                acc_hi = acc_hi * rs[:, None]
            _qkv_epilogue(
                acc_lo, acc_hi, pos_ptr, cos_ptr, sin_ptr, q_ptr, kc_ptr, vc_ptr, m, mmask, d,
                sec, head, Lm1, s_cb, s_ch, s_cp, H, HD, DT,
            )  # fmt: skip

    @triton.jit
    def _qkv_epilogue(
        acc_lo, acc_hi, pos_ptr, cos_ptr, sin_ptr, q_ptr, kc_ptr, vc_ptr, m, mmask, d,
        sec, head, Lm1, s_cb, s_ch, s_cp,
        H: tl.constexpr, HD: tl.constexpr, DT: tl.constexpr,
    ):  # fmt: skip
        """Round the Q/K/V halves, rotate Q and K (RoPE), store Q and the cache rows."""
        lo = acc_lo.to(DT).to(tl.float32)
        hi = acc_hi.to(DT).to(tl.float32)
        p = tl.minimum(tl.load(pos_ptr + m, mask=mmask, other=0), Lm1)
        if sec == 2:  # V: no rotation
            base = vc_ptr + m[:, None] * s_cb + head * s_ch + p[:, None] * s_cp + d[None, :]
            tl.store(base, lo.to(DT), mask=mmask[:, None])
            tl.store(base + HD // 2, hi.to(DT), mask=mmask[:, None])
        else:
            c = tl.load(cos_ptr + p[:, None] * HD + d[None, :], mask=mmask[:, None], other=0.0)
            s = tl.load(sin_ptr + p[:, None] * HD + d[None, :], mask=mmask[:, None], other=0.0)
            c = c.to(tl.float32)
            s = s.to(tl.float32)
            nlo = (lo * c - hi * s).to(DT)
            nhi = (hi * c + lo * s).to(DT)
            if sec == 0:
                base = q_ptr + m[:, None] * H + head * HD + d[None, :]
            else:
                base = kc_ptr + m[:, None] * s_cb + head * s_ch + p[:, None] * s_cp + d[None, :]
            tl.store(base, nlo, mask=mmask[:, None])
            tl.store(base + HD // 2, nhi, mask=mmask[:, None])

    @triton.jit
    def _attn_chunk(
        q, kc_ptr, vc_ptr, base, s_cp, dd, c, p, scale, acc, den, mrun, CH: tl.constexpr
    ):
        """Cache positions ``c*CH ..`` (those up to ``p``) into the online softmax."""
        t = c * CH + tl.arange(0, CH)
        valid = t <= p
        off = base + t[:, None] * s_cp + dd[None, :]
        kk = tl.load(kc_ptr + off, mask=valid[:, None], other=0.0).to(tl.float32)
        vv = tl.load(vc_ptr + off, mask=valid[:, None], other=0.0).to(tl.float32)
        sc = tl.sum(kk * q[None, :], axis=1) * scale
        sc = tl.where(valid, sc, float("-inf"))
        mn = tl.maximum(mrun, tl.max(sc, 0))  # chunk 0 always holds position 0
        alpha = tl.exp(mrun - mn)
        pe = tl.exp(sc - mn)
        acc = acc * alpha + tl.sum(pe[:, None] * vv, axis=0)
        den = den * alpha + tl.sum(pe, 0)
        return acc, den, mn

    @triton.jit
    def _attn_kernel(
        q_ptr, kc_ptr, vc_ptr, pos_ptr, att_ptr, Lm1, scale, s_cb, s_ch, s_cp,
        H: tl.constexpr, HD: tl.constexpr, CH: tl.constexpr, NCH: tl.constexpr,
        DYN: tl.constexpr, INTERP: tl.constexpr, PDL: tl.constexpr,
    ):  # fmt: skip
        """One (head, slot) per program: online softmax over the cache in chunks of CH.

        ``DYN``: only the chunks up to the slot's position (a loop bound read at run time),
        instead of all ``NCH`` chunks of the length bucket with the rows past the position
        masked: masked rows cost no memory traffic but every program still walks them (at
        batch 64 the attention took ~200 us per step at position ~0, 326 us at 150)."""
        head = tl.program_id(0)
        m = tl.program_id(1)
        _gdc(PDL)
        p = tl.minimum(tl.load(pos_ptr + m), Lm1)
        dd = tl.arange(0, HD)
        q = tl.load(q_ptr + m * H + head * HD + dd).to(tl.float32)
        mrun = tl.max(tl.full([CH], float("-inf"), tl.float32), 0)
        den = tl.sum(tl.zeros([CH], tl.float32), 0)
        acc = tl.zeros([HD], tl.float32)
        base = m * s_cb + head * s_ch
        if DYN and INTERP:  # the interpreter cannot take a tensor as a range() bound
            c = p * 0
            while c * CH <= p:
                acc, den, mrun = _attn_chunk(
                    q, kc_ptr, vc_ptr, base, s_cp, dd, c, p, scale, acc, den, mrun, CH
                )
                c += 1
        elif DYN:
            for c in range(p // CH + 1):
                acc, den, mrun = _attn_chunk(
                    q, kc_ptr, vc_ptr, base, s_cp, dd, c, p, scale, acc, den, mrun, CH
                )
        else:
            for c in range(NCH):
                acc, den, mrun = _attn_chunk(
                    q, kc_ptr, vc_ptr, base, s_cp, dd, c, p, scale, acc, den, mrun, CH
                )
        tl.store(att_ptr + m * H + head * HD + dd, (acc / den).to(att_ptr.dtype.element_ty))

    @triton.jit
    def _attn_split_kernel(
        q_ptr, kc_ptr, vc_ptr, pos_ptr, att_ptr, scr_ptr, cnt_ptr, Lm1, scale,
        s_cb, s_ch, s_cp,
        H: tl.constexpr, HD: tl.constexpr, NH: tl.constexpr, CS: tl.constexpr,
        NS: tl.constexpr, NSP: tl.constexpr, PDL: tl.constexpr,
    ):  # fmt: skip
        """Decode attention split over positions (flash-decoding), batch >= 2: program
        (head, slot, s) takes the cache positions ``s*CS .. s*CS+CS-1`` of one (head, slot),
        so a short batch of long caches fills the GPU with ``NS`` times more programs, each
        with ``CS`` rows in registers instead of the whole cache.

        The rows before the slot's position (written by earlier steps) and the position are
        read before the PDL wait, like the batch-1 fused attention (``PRE``); only the query
        and the newest K/V row (this layer's QKV kernel wrote them just before) after it.
        Each program writes its partial result (unnormalised fp32 sums of ``HD`` values, the
        running maximum, the denominator) to the scratch ``scr`` [slot, head, split] and
        counts its arrival; the last program of a (head, slot) combines the ``NS`` partials
        (a split past the position holds no row: maximum -inf, weight 0) and writes the
        output, as the split-K GEMMs finish their tiles."""
        head = tl.program_id(0)
        m = tl.program_id(1)
        s = tl.program_id(2)
        dd = tl.arange(0, HD)
        base = m * s_cb + head * s_ch
        p = tl.minimum(tl.load(pos_ptr + m), Lm1)
        t = s * CS + tl.arange(0, CS)
        old = t < p
        off = base + t[:, None] * s_cp + dd[None, :]
        kk = tl.load(kc_ptr + off, mask=old[:, None], other=0.0).to(tl.float32)
        vv = tl.load(vc_ptr + off, mask=old[:, None], other=0.0).to(tl.float32)
        _gdc(PDL)
        q = tl.load(q_ptr + m * H + head * HD + dd).to(tl.float32)
        mine = (dd >= 0) & (p // CS == s)  # row p (just written) belongs to this split
        kp = tl.load(kc_ptr + base + p * s_cp + dd, mask=mine, other=0.0).to(tl.float32)
        vp = tl.load(vc_ptr + base + p * s_cp + dd, mask=mine, other=0.0).to(tl.float32)
        sc = tl.sum(kk * q[None, :], axis=1) * scale
        sc = tl.where(old, sc, float("-inf"))
        sp = tl.sum(kp * q, 0) * scale
        sp = tl.where(p // CS == s, sp, float("-inf"))
        mx = tl.maximum(tl.max(sc, 0), sp)
        ms = tl.where(mx == float("-inf"), 0.0, mx)  # an empty split: every weight 0
        pe = tl.exp(sc - ms)
        pp = tl.exp(sp - ms)
        acc = tl.sum(pe[:, None] * vv, axis=0) + pp * vp
        den = tl.sum(pe, 0) + pp
        if NS == 1:
            tl.store(att_ptr + m * H + head * HD + dd, (acc / den).to(att_ptr.dtype.element_ty))
        else:
            tile = m * NH + head
            rec = scr_ptr + tile * (NS * (HD + 2))
            tl.store(rec + s * (HD + 2) + dd, acc)
            tl.store(rec + s * (HD + 2) + HD, mx)
            tl.store(rec + s * (HD + 2) + HD + 1, den)
            if _sk_arrive(cnt_ptr, tile, NS):
                ss = tl.arange(0, NSP)
                sm = ss < NS
                # .cg: read at L2, where the other programs' partials landed
                mxs = tl.load(rec + ss * (HD + 2) + HD, mask=sm, other=float("-inf"),
                              cache_modifier=".cg")  # fmt: skip
                dens = tl.load(rec + ss * (HD + 2) + HD + 1, mask=sm, other=0.0,
                               cache_modifier=".cg")  # fmt: skip
                accs = tl.load(rec + ss[:, None] * (HD + 2) + dd[None, :], mask=sm[:, None],
                               other=0.0, cache_modifier=".cg")  # fmt: skip
                mt = tl.max(mxs, 0)  # finite: split 0 holds position 0
                wt = tl.exp(mxs - mt)
                o = tl.sum(wt[:, None] * accs, axis=0) / tl.sum(wt * dens, 0)
                tl.store(att_ptr + m * H + head * HD + dd, o.to(att_ptr.dtype.element_ty))

    @triton.jit
    def _attn_o_kernel(
        q_ptr, kc_ptr, vc_ptr, pos_ptr, att_ptr, w_ptr, ws_ptr, y_ptr, h_ptr, yo_ptr, yd_ptr,
        Lm1, scale, s_cb, s_ch, s_cp,
        H: tl.constexpr, HD: tl.constexpr, CH: tl.constexpr, NCH: tl.constexpr,
        BN: tl.constexpr, WS: tl.constexpr, FOLD: tl.constexpr, BH: tl.constexpr,
        PRE: tl.constexpr, PDL: tl.constexpr,
    ):  # fmt: skip
        """Attention of one (head, slot) and its share of the O-projection: program
        (head, j, slot) multiplies the head's output by O-weight rows ``j*BN ..`` (columns
        of that head) and adds the partial sums to the fp32 buffer ``y`` (atomics). The
        residual add happens in the next kernels (gate/up reads ``h + y``, down writes it
        and clears ``y``), so a launch per layer is saved at batch 1.

        ``PRE`` (one chunk holds the cache): the cache rows before the slot's position and
        the position itself are read before the PDL wait, as the weights (earlier steps
        wrote them, and the position changes only in the previous step's last kernel), so
        only the query and the newest K/V row, written by the QKV kernel just before, are
        read after it."""
        head = tl.program_id(0)
        j = tl.program_id(1)
        m = tl.program_id(2)
        n = j * BN + tl.arange(0, BN)
        dd = tl.arange(0, HD)
        w = tl.load(w_ptr + n[:, None] * H + head * HD + dd[None, :])  # before the wait
        if WS:
            ws = tl.load(ws_ptr + n)
        base = m * s_cb + head * s_ch
        if PRE:
            p = tl.minimum(tl.load(pos_ptr + m), Lm1)
            t = tl.arange(0, CH)
            old = t < p
            off = base + t[:, None] * s_cp + dd[None, :]
            kk = tl.load(kc_ptr + off, mask=old[:, None], other=0.0).to(tl.float32)
            vv = tl.load(vc_ptr + off, mask=old[:, None], other=0.0).to(tl.float32)
        _gdc(PDL)
        if not PRE:
            p = tl.minimum(tl.load(pos_ptr + m), Lm1)
        q = tl.load(q_ptr + m * H + head * HD + dd).to(tl.float32)
        mrun = tl.max(tl.full([CH], float("-inf"), tl.float32), 0)
        den = tl.sum(tl.zeros([CH], tl.float32), 0)
        acc = tl.zeros([HD], tl.float32)
        if PRE:  # the rows before p, then row p (just written) as one more position
            kp = tl.load(kc_ptr + base + p * s_cp + dd).to(tl.float32)
            vp = tl.load(vc_ptr + base + p * s_cp + dd).to(tl.float32)
            sc = tl.sum(kk * q[None, :], axis=1) * scale
            sc = tl.where(old, sc, float("-inf"))
            sp = tl.sum(kp * q, 0) * scale
            mn = tl.maximum(tl.max(sc, 0), sp)
            pe = tl.exp(sc - mn)
            pp = tl.exp(sp - mn)
            acc = tl.sum(pe[:, None] * vv, axis=0) + pp * vp
            den = tl.sum(pe, 0) + pp
        for c in range(0 if PRE else NCH):
            acc, den, mrun = _attn_chunk(
                q, kc_ptr, vc_ptr, base, s_cp, dd, c, p, scale, acc, den, mrun, CH
            )
        o = (acc / den).to(att_ptr.dtype.element_ty)
        if j == 0:
            tl.store(att_ptr + m * H + head * HD + dd, o)
        if FOLD > 0:  # 3-kernel layer: the previous layer's pending sums (read by QKV)
            if (head == 0) & (j == 0):
                hk = tl.arange(0, BH)
                km = hk < H
                one = m + tl.zeros([1], tl.int32)
                om = one >= 0
                if FOLD == 2:  # into the residual stream (layer 0: h is the new embedding)
                    hv = tl.load(h_ptr + one[:, None] * H + hk[None, :], mask=km[None, :])
                    DT = h_ptr.dtype.element_ty
                    hv = _fold(hv.to(tl.float32), yo_ptr, yd_ptr, one, om, hk, km, H, DT)
                    tl.store(
                        h_ptr + one[:, None] * H + hk[None, :],
                        hv.to(h_ptr.dtype.element_ty),
                        mask=km[None, :],
                    )
                z = tl.zeros([BH], tl.float32)
                tl.store(yo_ptr + m * H + hk, z, mask=km)
                tl.store(yd_ptr + m * H + hk, z, mask=km)
        y = tl.sum(w.to(tl.float32) * o.to(tl.float32)[None, :], axis=1)
        if WS:
            y = y * ws
        tl.atomic_add(y_ptr + m * H + n, y, sem="relaxed")

    @triton.jit
    def _rows_times_w(
        x_ptr, w_ptr, m, n, mmask, kbeg, K: tl.constexpr, KS: tl.constexpr, BM: tl.constexpr,
        BN: tl.constexpr, BK: tl.constexpr, USE_DOT: tl.constexpr, PREC: tl.constexpr,
        PDL: tl.constexpr,
    ):  # fmt: skip
        """``x[m, kbeg:kbeg+KS] @ w[n, kbeg:kbeg+KS].T`` in fp32 for one tile (O-projection,
        down projection; ``KS < K``: one share of a split-K product).

        With the whole span in one block, the weights load before the PDL wait, so they
        stream while the previous kernel finishes; the loop over K blocks waits first.
        """
        acc = tl.zeros([BM, BN], tl.float32)
        if BK >= KS:
            k = kbeg + tl.arange(0, BK)
            kmask = k < kbeg + KS
            w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=kmask[None, :], other=0.0)
            _gdc(PDL)
            x = tl.load(
                x_ptr + m[:, None] * K + k[None, :],
                mask=mmask[:, None] & kmask[None, :],
                other=0.0,
            )
            acc = _mv(acc, x, w, USE_DOT, PREC)
        else:
            _gdc(PDL)
            for k0 in range(0, KS, BK):
                k = kbeg + k0 + tl.arange(0, BK)
                kmask = k < K
                x = tl.load(
                    x_ptr + m[:, None] * K + k[None, :],
                    mask=mmask[:, None] & kmask[None, :],
                    other=0.0,
                )
                w = tl.load(w_ptr + n[:, None] * K + k[None, :], mask=kmask[None, :], other=0.0)
                acc = _mv(acc, x, w, USE_DOT, PREC)
        return acc

    @triton.jit
    def _oproj_kernel(
        att_ptr, w_ptr, ws_ptr, h_ptr, scr_ptr, cnt_ptr, b,
        H: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        USE_DOT: tl.constexpr, PREC: tl.constexpr, WS: tl.constexpr,
        SPLIT: tl.constexpr, SC: tl.constexpr, PDL: tl.constexpr,
    ):  # fmt: skip
        pid_n = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_k = tl.program_id(2)
        KS: tl.constexpr = H // SPLIT
        n = pid_n * BN + tl.arange(0, BN)
        m = pid_m * BM + tl.arange(0, BM)
        mmask = m < b
        DT = h_ptr.dtype.element_ty
        acc = _rows_times_w(
            att_ptr, w_ptr, m, n, mmask, pid_k * KS, H, KS, BM, BN, BK, USE_DOT, PREC, PDL
        )
        if WS:
            acc *= tl.load(ws_ptr + n)[None, :]
        sp = scr_ptr + m[:, None] * SC + n[None, :]
        acc, _, _, last = _sk_tail(
            acc, acc, sp, sp, acc, scr_ptr, cnt_ptr, m, mmask,
            pid_m * tl.num_programs(0) + pid_n, SC, SPLIT, False, False,
        )  # fmt: skip
        if last:
            y = acc.to(DT).to(tl.float32)
            hp = h_ptr + m[:, None] * H + n[None, :]
            hv = tl.load(hp, mask=mmask[:, None], other=0.0).to(tl.float32)
            tl.store(hp, (hv + y).to(DT), mask=mmask[:, None])

    @triton.jit
    def _gateup_kernel(
        h_ptr, lnw_ptr, w_ptr, ws_ptr, act_ptr, y_ptr, scr_ptr, cnt_ptr, b, eps,
        H: tl.constexpr, INTER: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
        BK: tl.constexpr, BKS: tl.constexpr, ONE: tl.constexpr,
        USE_DOT: tl.constexpr, PREC: tl.constexpr, WS: tl.constexpr, RESID: tl.constexpr,
        SPLIT: tl.constexpr, SC: tl.constexpr, PDL: tl.constexpr, POST: tl.constexpr = False,
        PREW: tl.constexpr = False,
    ):  # fmt: skip
        pid_n = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_k = tl.program_id(2)
        KS: tl.constexpr = H // SPLIT
        n = pid_n * BN + tl.arange(0, BN)
        m = pid_m * BM + tl.arange(0, BM)
        mmask = m < b
        DT = h_ptr.dtype.element_ty
        acc_g = tl.zeros([BM, BN], tl.float32)
        acc_u = tl.zeros([BM, BN], tl.float32)
        ss = tl.zeros([BM], tl.float32)  # row sums of squares (POST)
        if ONE:
            k = tl.arange(0, BK)
            kmask = k < H
            wg = tl.load(w_ptr + n[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
            wu = tl.load(
                w_ptr + (n[:, None] + INTER) * H + k[None, :], mask=kmask[None, :], other=0.0
            )
            _gdc(PDL)
            x = _load_x(h_ptr, h_ptr, h_ptr, m, mmask, k, kmask, H, 1, 1, BM, BK, False)
            if RESID:  # the O-projection is still in y (fused attention): h + y, rounded
                yo = tl.load(
                    y_ptr + m[:, None] * H + k[None, :],
                    mask=mmask[:, None] & kmask[None, :],
                    other=0.0,
                )
                x = (x + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
            rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / H + eps)
            nx = _normed(x, rstd, lnw_ptr, k, kmask, DT)
            acc_g = _mv(acc_g, nx, wg, USE_DOT, PREC)
            acc_u = _mv(acc_u, nx, wu, USE_DOT, PREC)
        else:
            if PREW:  # one K block per program (split-K): its weights before the wait
                k = pid_k * KS + tl.arange(0, BK)
                kmask = k < H
                wg0 = tl.load(w_ptr + n[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
                wu0 = tl.load(
                    w_ptr + (n[:, None] + INTER) * H + k[None, :], mask=kmask[None, :], other=0.0
                )
            _gdc(PDL)
            if not POST:  # else the norm's row statistic is applied after the K loop
                rstd = _rstd(h_ptr, h_ptr, h_ptr, m, mmask, eps, H, 1, 1, BM, BKS, False)
            for k0 in range(0, KS, BK):
                k = pid_k * KS + k0 + tl.arange(0, BK)
                kmask = k < H
                x = _load_x(h_ptr, h_ptr, h_ptr, m, mmask, k, kmask, H, 1, 1, BM, BK, False)
                if POST:
                    ss += tl.sum(x * x, axis=1)
                    nx = _prescaled(x, lnw_ptr, k, kmask, DT)
                else:
                    nx = _normed(x, rstd, lnw_ptr, k, kmask, DT)
                if PREW:
                    wg = wg0
                    wu = wu0
                else:
                    wg = tl.load(
                        w_ptr + n[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0
                    )
                    wu = tl.load(
                        w_ptr + (n[:, None] + INTER) * H + k[None, :],
                        mask=kmask[None, :],
                        other=0.0,
                    )
                acc_g = _mv(acc_g, nx, wg, USE_DOT, PREC)
                acc_u = _mv(acc_u, nx, wu, USE_DOT, PREC)
        if WS:
            acc_g *= tl.load(ws_ptr + n)[None, :]
            acc_u *= tl.load(ws_ptr + n + INTER)[None, :]
        sp_g = scr_ptr + m[:, None] * SC + n[None, :]
        acc_g, acc_u, ss, last = _sk_tail(
            acc_g, acc_u, sp_g, sp_g + INTER, ss, scr_ptr, cnt_ptr, m, mmask,
            pid_m * tl.num_programs(0) + pid_n, SC, SPLIT, True, POST,
        )  # fmt: skip
        if last:
            if POST:
                rs = tl.math.rsqrt(ss / H + eps)
                acc_g = acc_g * rs[:, None]
                acc_u = acc_u * rs[:, None]
            g = acc_g.to(DT).to(tl.float32)
            u = acc_u.to(DT).to(tl.float32)
            a = g / (1.0 + tl.exp(-g)) * u
            tl.store(act_ptr + m[:, None] * INTER + n[None, :], a.to(DT), mask=mmask[:, None])

    @triton.jit
    def _down_kernel(
        act_ptr, w_ptr, ws_ptr, h_ptr, y_ptr, pos_ptr, step_ptr, scr_ptr, cnt_ptr, b,
        H: tl.constexpr, INTER: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
        BK: tl.constexpr, LAST: tl.constexpr, USE_DOT: tl.constexpr, PREC: tl.constexpr,
        WS: tl.constexpr, RESID: tl.constexpr, SPLIT: tl.constexpr, SC: tl.constexpr,
        PDL: tl.constexpr,
    ):  # fmt: skip
        pid_n = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_k = tl.program_id(2)
        KS: tl.constexpr = INTER // SPLIT
        n = pid_n * BN + tl.arange(0, BN)
        m = pid_m * BM + tl.arange(0, BM)
        mmask = m < b
        DT = h_ptr.dtype.element_ty
        acc = _rows_times_w(
            act_ptr, w_ptr, m, n, mmask, pid_k * KS, INTER, KS, BM, BN, BK, USE_DOT, PREC, PDL
        )
        if WS:
            acc *= tl.load(ws_ptr + n)[None, :]
        sp = scr_ptr + m[:, None] * SC + n[None, :]
        acc, _, _, last = _sk_tail(
            acc, acc, sp, sp, acc, scr_ptr, cnt_ptr, m, mmask,
            pid_m * tl.num_programs(0) + pid_n, SC, SPLIT, False, False,
        )  # fmt: skip
        if last:
            _down_epilogue(
                acc, h_ptr, y_ptr, pos_ptr, step_ptr, m, n, mmask, pid_n, H, BM, BN, DT, LAST,
                RESID,
            )  # fmt: skip

    @triton.jit
    def _down_epilogue(
        acc, h_ptr, y_ptr, pos_ptr, step_ptr, m, n, mmask, pid_n,
        H: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, DT: tl.constexpr,
        LAST: tl.constexpr, RESID: tl.constexpr,
    ):  # fmt: skip
        """Residual add of the down projection (and the O-projection's, when fused), and on
        the last layer the position and step counters."""
        y = acc.to(DT).to(tl.float32)
        hp = h_ptr + m[:, None] * H + n[None, :]
        hv = tl.load(hp, mask=mmask[:, None], other=0.0).to(tl.float32)
        if RESID:  # first the O-projection's residual (fused attention), then clear y
            yp = y_ptr + m[:, None] * H + n[None, :]
            yo = tl.load(yp, mask=mmask[:, None], other=0.0)
            hv = (hv + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
            tl.store(yp, tl.zeros([BM, BN], tl.float32), mask=mmask[:, None])
        tl.store(hp, (hv + y).to(DT), mask=mmask[:, None])
        if LAST:
            if pid_n == 0:
                pv = tl.load(pos_ptr + m, mask=mmask, other=0)
                tl.store(pos_ptr + m, pv + 1, mask=mmask)
                sv = tl.load(step_ptr + m, mask=mmask, other=0)
                tl.store(step_ptr + m, sv + 1, mask=mmask)

    @triton.jit
    def _mlp_kernel(
        h_ptr, lnw_ptr, w_ptr, ws_ptr, wd_ptr, wds_ptr, yo_ptr, yd_ptr, pos_ptr, step_ptr, eps,
        H: tl.constexpr, INTER: tl.constexpr, C: tl.constexpr, BK: tl.constexpr,
        WS: tl.constexpr, LAST: tl.constexpr, PDL: tl.constexpr,
    ):  # fmt: skip
        """RMSNorm + gate/up + SiLU-mul + down projection in one kernel (batch 1): program
        ``j`` makes ``C`` intermediate values from its gate/up rows and multiplies them by the
        matching ``C`` columns of the down weight; the partial hidden vectors meet in the
        fp32 buffer ``yd`` (atomics), which the next layer folds into the residual stream.
        It reads ``h + round(yo)`` (the O-projection, pending the same way)."""
        j = tl.program_id(0)
        m = tl.program_id(1) + tl.zeros([1], tl.int32)
        mmask = m >= 0
        rows = j * C + tl.arange(0, C)
        k = tl.arange(0, BK)
        kmask = k < H
        wg = tl.load(w_ptr + rows[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
        wu = tl.load(
            w_ptr + (rows[:, None] + INTER) * H + k[None, :], mask=kmask[None, :], other=0.0
        )
        wd = tl.load(wd_ptr + k[:, None] * INTER + rows[None, :], mask=kmask[:, None], other=0.0)
        if WS:
            sg = tl.load(ws_ptr + rows)
            su = tl.load(ws_ptr + rows + INTER)
            sd = tl.load(wds_ptr + k, mask=kmask, other=0.0)
        _gdc(PDL)
        DT = h_ptr.dtype.element_ty
        x = _load_x(h_ptr, h_ptr, h_ptr, m, mmask, k, kmask, H, 1, 1, 1, BK, False)
        yo = tl.load(yo_ptr + m[:, None] * H + k[None, :], mask=kmask[None, :], other=0.0)
        x = (x + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
        rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / H + eps)
        nx = _normed(x, rstd, lnw_ptr, k, kmask, DT).to(tl.float32)  # [1, BK]
        g = tl.sum(nx * wg.to(tl.float32), axis=1)  # [C]
        u = tl.sum(nx * wu.to(tl.float32), axis=1)
        if WS:
            g = g * sg
            u = u * su
        g = g.to(DT).to(tl.float32)
        u = u.to(DT).to(tl.float32)
        a = (g / (1.0 + tl.exp(-g)) * u).to(DT).to(tl.float32)
        y = tl.sum(wd.to(tl.float32) * a[None, :], axis=1)  # [BK]
        if WS:
            y = y * sd
        tl.atomic_add(yd_ptr + tl.program_id(1) * H + k, y, mask=kmask, sem="relaxed")
        if LAST:
            if j == 0:
                pv = tl.load(pos_ptr + m)
                tl.store(pos_ptr + m, pv + 1)
                sv = tl.load(step_ptr + m)
                tl.store(step_ptr + m, sv + 1)

    @triton.jit
    def _pload_rows(w_ptr, rows, rmask, k0: tl.constexpr, KP: tl.constexpr, H: tl.constexpr):
        """Rows ``rows`` of a ``[*, H]`` weight, columns ``k0 .. k0 + KP`` (the persistent
        step splits H into two power-of-two pieces, 768 = 512 + 256: a 1,024-wide tile
        would hold a quarter of padding in registers)."""
        k = k0 + tl.arange(0, KP)
        return tl.load(w_ptr + rows[:, None] * H + k[None, :], mask=rmask[:, None], other=0.0)

    @triton.jit
    def _pload_cols(w_ptr, cols, cmask, k0: tl.constexpr, KP: tl.constexpr, N: tl.constexpr):
        """Columns ``cols`` of a ``[H, N]`` weight, rows ``k0 .. k0 + KP``: ``[KP, cols]``."""
        k = k0 + tl.arange(0, KP)
        return tl.load(w_ptr + k[:, None] * N + cols[None, :], mask=cmask[None, :], other=0.0)

    @triton.jit
    def _pload_x(h_ptr, yo_ptr, yd_ptr, k, BOTH: tl.constexpr, DT: tl.constexpr):
        """Slot 0's residual stream at ``k`` (``[1, len(k)]``, fp32) with the pending O sums
        (and with ``BOTH`` the MLP sums) folded in, rounded as the torch path; read at L2
        (other programs of this launch wrote them)."""
        x = tl.load(h_ptr + k, cache_modifier=".cg").to(tl.float32)
        yo = tl.load(yo_ptr + k, cache_modifier=".cg")
        x = (x + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
        if BOTH:
            yd = tl.load(yd_ptr + k, cache_modifier=".cg")
            x = (x + yd.to(DT).to(tl.float32)).to(DT).to(tl.float32)
        return x[None, :]

    @triton.jit
    def _pemb(ids_ptr, emb_ptr, k, NQ: tl.constexpr, V: tl.constexpr, H: tl.constexpr):
        """The sum of the code embeddings of slot 0's codes just drawn at ``k``
        (``[1, len(k)]``, rounded to the model dtype as torch, then fp32)."""
        x = tl.zeros([1, k.shape[0]], tl.float32)
        for qq in tl.static_range(NQ):
            idq = tl.load(ids_ptr + qq + tl.zeros([1], tl.int32), cache_modifier=".cg")
            x += tl.load(emb_ptr + (idq[:, None] + qq * V) * H + k[None, :]).to(tl.float32)
        return x.to(emb_ptr.dtype.element_ty).to(tl.float32)

    @triton.jit
    def _persist_wait(bar_ptr, err_ptr, base, ph, PH0, ok, NPROG, SYNC: tl.constexpr,
                      PDL: tl.constexpr, SPIN: tl.constexpr):  # fmt: skip
        """Before phase ``ph`` of the persistent step: the first phase waits for the previous
        kernel (PDL), every later one at the grid barrier its programs arrived at after the
        phase before (:func:`_grid_arrive`)."""
        if SYNC:
            if ph == PH0:
                if PDL:
                    tl.extra.cuda.gdc_wait()
            else:
                ok = _grid_wait(bar_ptr, err_ptr, base, ph - PH0 - 1, ok, NPROG, SPIN)
        return ok

    @triton.jit
    def _persist_kernel(
        h_ptr, ids_ptr, emb_ptr, q_ptr, att_ptr, pos_ptr, step_ptr, fin_ptr, end_ptr,
        cos_ptr, sin_ptr, kc_ptr, vc_ptr, y_ptr,
        ln1_ptr, ln2_ptr, wqkv_ptr, wo_ptr, wgu_ptr, wd_ptr, bar_ptr, err_ptr,
        Lm1, eps, scale, s_cl, s_ch, s_cp, s_y,
        PH0: tl.constexpr, PH1: tl.constexpr, H: tl.constexpr, HD: tl.constexpr, NH: tl.constexpr, NQ: tl.constexpr,
        V: tl.constexpr, EOS: tl.constexpr, INTER: tl.constexpr, NL: tl.constexpr,
        BK: tl.constexpr, NPROG: tl.constexpr, PQ: tl.constexpr, NQP: tl.constexpr,
        BNO: tl.constexpr, CH: tl.constexpr, NCH: tl.constexpr, PRE: tl.constexpr,
        PM: tl.constexpr, NMP: tl.constexpr, SYNC: tl.constexpr, PDL: tl.constexpr,
        SPIN: tl.constexpr, K1: tl.constexpr, K2: tl.constexpr,
    ):  # fmt: skip
        """All layers of a batch-1 decode step (slot 0) in one persistent launch: ``NPROG``
        programs, all resident at once, walk the phases ``PH0 .. PH1 - 1`` (3 per layer: the
        three kernels of the 3-kernel layer, same arithmetic and rounding points) with a
        grid-wide barrier between phases instead of a kernel boundary:

        * phase 0 of a layer (QKV): RMSNorm + QKV + RoPE + cache write; program ``p`` takes
          ``NQP`` (lower, upper) row pairs of the QKV weight (a head dim and its RoPE partner);
          layer 0 gathers the code embeddings and sets the end flags (as ``_qkv_rope_kernel``);
        * phase 1 (attention + its share of O): unit ``(head, j)`` per program (``NH * H /
          BNO`` of them), as ``_attn_o_kernel`` (its O sums pending in ``y``; the unit
          ``(0, 0)`` folds the previous layer's pending sums into ``h``);
        * phase 2 (MLP): program ``p`` takes ``NMP`` intermediate values (gate/up rows and
          down columns), as ``_mlp_kernel``; the last layer advances position and step.

        Each program loads its share of the phase's weights (and the attention the cache
        rows written by earlier steps) after arriving at the barrier and before waiting at
        it, so the weights stream while the slowest program finishes the phase before. The
        activations other programs wrote in this launch are read with ``.cg`` (at L2; a
        plain load could hit a stale L1 line). ``SYNC`` False (Triton's interpreter, which
        runs programs one after another: a spin would never end): no barrier, the host
        launches one phase at a time."""
        pid = tl.program_id(0)
        DT = ln1_ptr.dtype.element_ty
        k = tl.arange(0, BK)
        kmask = k < H
        one = tl.zeros([1], tl.int32)  # slot 0 as a 1-row block
        omask = one >= 0
        base = tl.zeros([], tl.int64)
        if SYNC:
            ok = tl.load(err_ptr) == 0
        else:
            ok = tl.zeros([], tl.int32) == 0
        for ph in range(PH0, PH1):
            li = ph // 3
            kind = ph - li * 3
            if SYNC:
                if ph > PH0:  # the phase before is written: arrive, then load, then wait
                    base = _grid_arrive(bar_ptr, base, ph - PH0 - 1, NPROG)
            yo_prev = y_ptr + ((li + NL - 1) % NL) * s_y  # the previous layer's pending sums
            yd_prev = y_ptr + (NL + (li + NL - 1) % NL) * s_y
            if kind == 0:
                # ---- RMSNorm + QKV + RoPE + cache write ----
                r = tl.arange(0, PQ)
                i = pid * NQP + r
                imask = (r < NQP) & (i < 3 * NH * (HD // 2))
                sh = i // (HD // 2)  # section * NH + head
                d = i % (HD // 2)
                rows_lo = sh * HD + d
                wq = wqkv_ptr + li * (3 * H * H)
                wlo1 = _pload_rows(wq, rows_lo, imask, 0, K1, H)
                whi1 = _pload_rows(wq, rows_lo + HD // 2, imask, 0, K1, H)
                if K2 > 0:
                    wlo2 = _pload_rows(wq, rows_lo, imask, K1, K2, H)
                    whi2 = _pload_rows(wq, rows_lo + HD // 2, imask, K1, K2, H)
                p = tl.minimum(tl.load(pos_ptr), Lm1)  # constant until the last phase
                cs = tl.load(cos_ptr + p * HD + d, mask=imask, other=0.0).to(tl.float32)
                sn = tl.load(sin_ptr + p * HD + d, mask=imask, other=0.0).to(tl.float32)
                ok = _persist_wait(bar_ptr, err_ptr, base, ph, PH0, ok, NPROG, SYNC, PDL, SPIN)
                k1 = tl.arange(0, K1)
                k2 = K1 + tl.arange(0, K2 if K2 > 0 else 1)
                if li == 0:  # the code embeddings of the codes just drawn
                    if pid == 0:
                        _end_flags(ids_ptr, step_ptr, fin_ptr, end_ptr, one, omask, NQ, EOS)
                    x1 = _pemb(ids_ptr, emb_ptr, k1, NQ, V, H)
                    if pid == 0:  # one program writes the new residual stream
                        tl.store(h_ptr + k1[None, :], x1.to(DT))
                    if K2 > 0:
                        x2 = _pemb(ids_ptr, emb_ptr, k2, NQ, V, H)
                        if pid == 0:
                            tl.store(h_ptr + k2[None, :], x2.to(DT))
                else:  # the residual stream with the previous layer's pending sums
                    x1 = _pload_x(h_ptr, yo_prev, yd_prev, k1, True, DT)
                    if K2 > 0:
                        x2 = _pload_x(h_ptr, yo_prev, yd_prev, k2, True, DT)
                ss = tl.sum(x1 * x1, axis=1)
                if K2 > 0:
                    ss += tl.sum(x2 * x2, axis=1)
                rstd = tl.math.rsqrt(ss / H + eps)
                lw = ln1_ptr + li * H
                n1 = _normed(x1, rstd, lw, k1, k1 < H, DT)
                acc_lo = _mv(tl.zeros([1, PQ], tl.float32), n1, wlo1, False, "ieee")
                acc_hi = _mv(tl.zeros([1, PQ], tl.float32), n1, whi1, False, "ieee")
                if K2 > 0:
                    n2 = _normed(x2, rstd, lw, k2, k2 < H, DT)
                    acc_lo = _mv(acc_lo, n2, wlo2, False, "ieee")
                    acc_hi = _mv(acc_hi, n2, whi2, False, "ieee")
                lo = tl.sum(acc_lo, axis=0).to(DT).to(tl.float32)  # [PQ]
                hi = tl.sum(acc_hi, axis=0).to(DT).to(tl.float32)
                sec = sh // NH
                head = sh % NH
                nlo = (lo * cs - hi * sn).to(DT)
                nhi = (hi * cs + lo * sn).to(DT)
                qp = q_ptr + head * HD + d
                tl.store(qp, nlo, mask=imask & (sec == 0))
                tl.store(qp + HD // 2, nhi, mask=imask & (sec == 0))
                cp = (li + tl.zeros([], tl.int64)) * s_cl + head * s_ch + p * s_cp + d
                tl.store(kc_ptr + cp, nlo, mask=imask & (sec == 1))
                tl.store(kc_ptr + cp + HD // 2, nhi, mask=imask & (sec == 1))
                tl.store(vc_ptr + cp, lo.to(DT), mask=imask & (sec == 2))
                tl.store(vc_ptr + cp + HD // 2, hi.to(DT), mask=imask & (sec == 2))
            elif kind == 1:
                # ---- attention of one head + its share of the O-projection ----
                NJ: tl.constexpr = H // BNO
                act = pid < NH * NJ
                head = pid // NJ
                j = pid % NJ
                n = j * BNO + tl.arange(0, BNO)
                dd = tl.arange(0, HD)
                w = tl.load(
                    wo_ptr + li * (H * H) + n[:, None] * H + head * HD + dd[None, :],
                    mask=act & (n[:, None] >= 0), other=0.0,
                )  # fmt: skip
                cb = (li + tl.zeros([], tl.int64)) * s_cl + head * s_ch
                p = tl.minimum(tl.load(pos_ptr), Lm1)
                if PRE:  # rows before p were written by earlier steps
                    t = tl.arange(0, CH)
                    old = (t < p) & act
                    off = cb + t[:, None] * s_cp + dd[None, :]
                    kk = tl.load(kc_ptr + off, mask=old[:, None], other=0.0)  # widened later
                    vv = tl.load(vc_ptr + off, mask=old[:, None], other=0.0)
                ok = _persist_wait(bar_ptr, err_ptr, base, ph, PH0, ok, NPROG, SYNC, PDL, SPIN)
                if act:
                    q = tl.load(q_ptr + head * HD + dd, cache_modifier=".cg").to(tl.float32)
                    if PRE:  # the rows before p, then row p (just written) as one more
                        kp = tl.load(kc_ptr + cb + p * s_cp + dd, cache_modifier=".cg")
                        vp = tl.load(vc_ptr + cb + p * s_cp + dd, cache_modifier=".cg")
                        sc = tl.sum(kk.to(tl.float32) * q[None, :], axis=1) * scale
                        sc = tl.where(old, sc, float("-inf"))
                        sp = tl.sum(kp.to(tl.float32) * q, 0) * scale
                        mn = tl.maximum(tl.max(sc, 0), sp)
                        pe = tl.exp(sc - mn)
                        pp = tl.exp(sp - mn)
                        acc = tl.sum(pe[:, None] * vv.to(tl.float32), axis=0)
                        acc += pp * vp.to(tl.float32)
                        den = tl.sum(pe, 0) + pp
                    else:  # row p's line was not read before in this launch (no stale L1)
                        mrun = tl.max(tl.full([CH], float("-inf"), tl.float32), 0)
                        den = tl.sum(tl.zeros([CH], tl.float32), 0)
                        acc = tl.zeros([HD], tl.float32)
                        for c in range(NCH):
                            acc, den, mrun = _attn_chunk(
                                q, kc_ptr, vc_ptr, cb, s_cp, dd, c, p, scale, acc, den, mrun,
                                CH,
                            )  # fmt: skip
                    o = (acc / den).to(att_ptr.dtype.element_ty)
                    if j == 0:
                        tl.store(att_ptr + head * HD + dd, o)
                    if pid == 0:  # the previous layer's pending sums into h, then cleared
                        hm = omask[:, None] & kmask[None, :]
                        if li > 0:
                            hv = tl.load(h_ptr + one[:, None] * H + k[None, :], mask=hm,
                                         other=0.0, cache_modifier=".cg").to(tl.float32)  # fmt: skip
                            yo = tl.load(yo_prev + k[None, :] + one[:, None] * 0, mask=hm,
                                         other=0.0, cache_modifier=".cg")  # fmt: skip
                            yd = tl.load(yd_prev + k[None, :] + one[:, None] * 0, mask=hm,
                                         other=0.0, cache_modifier=".cg")  # fmt: skip
                            hv = (hv + yo.to(DT).to(tl.float32)).to(DT).to(tl.float32)
                            hv = (hv + yd.to(DT).to(tl.float32)).to(DT).to(tl.float32)
                            tl.store(h_ptr + one[:, None] * H + k[None, :], hv.to(DT), mask=hm)
                        z = tl.zeros([BK], tl.float32)
                        tl.store(yo_prev + k, z, mask=kmask)
                        tl.store(yd_prev + k, z, mask=kmask)
                    y = tl.sum(w.to(tl.float32) * o.to(tl.float32)[None, :], axis=1)
                    tl.atomic_add(y_ptr + li * s_y + n, y, sem="relaxed")
            else:
                # ---- RMSNorm + gate/up + SiLU-mul + down ----
                r = tl.arange(0, PM)
                rows = pid * NMP + r
                rmask = (r < NMP) & (rows < INTER)
                wg_ = wgu_ptr + li * (2 * INTER * H)
                wd_ = wd_ptr + li * (H * INTER)
                wg1 = _pload_rows(wg_, rows, rmask, 0, K1, H)
                wu1 = _pload_rows(wg_ + INTER * H, rows, rmask, 0, K1, H)
                wd1 = _pload_cols(wd_, rows, rmask, 0, K1, INTER)
                if K2 > 0:
                    wg2 = _pload_rows(wg_, rows, rmask, K1, K2, H)
                    wu2 = _pload_rows(wg_ + INTER * H, rows, rmask, K1, K2, H)
                    wd2 = _pload_cols(wd_, rows, rmask, K1, K2, INTER)
                ok = _persist_wait(bar_ptr, err_ptr, base, ph, PH0, ok, NPROG, SYNC, PDL, SPIN)
                k1 = tl.arange(0, K1)
                k2 = K1 + tl.arange(0, K2 if K2 > 0 else 1)
                yl = y_ptr + li * s_y  # this layer's O sums, pending
                x1 = _pload_x(h_ptr, yl, yl, k1, False, DT)
                ss = tl.sum(x1 * x1, axis=1)
                if K2 > 0:
                    x2 = _pload_x(h_ptr, yl, yl, k2, False, DT)
                    ss += tl.sum(x2 * x2, axis=1)
                rstd = tl.math.rsqrt(ss / H + eps)
                lw = ln2_ptr + li * H
                nx1 = _normed(x1, rstd, lw, k1, k1 < H, DT).to(tl.float32)
                g = tl.sum(nx1 * wg1.to(tl.float32), axis=1)  # [PM]
                u = tl.sum(nx1 * wu1.to(tl.float32), axis=1)
                if K2 > 0:
                    nx2 = _normed(x2, rstd, lw, k2, k2 < H, DT).to(tl.float32)
                    g += tl.sum(nx2 * wg2.to(tl.float32), axis=1)
                    u += tl.sum(nx2 * wu2.to(tl.float32), axis=1)
                g = g.to(DT).to(tl.float32)
                u = u.to(DT).to(tl.float32)
                a = (g / (1.0 + tl.exp(-g)) * u).to(DT).to(tl.float32)
                yd = y_ptr + (NL + li) * s_y
                if pid * NMP < INTER:
                    y1 = tl.sum(wd1.to(tl.float32) * a[None, :], axis=1)  # [K1]
                    tl.atomic_add(yd + k1, y1, sem="relaxed")
                    if K2 > 0:
                        y2 = tl.sum(wd2.to(tl.float32) * a[None, :], axis=1)
                        tl.atomic_add(yd + k2, y2, sem="relaxed")
                if li == NL - 1:
                    if pid == 0:
                        tl.store(pos_ptr, tl.load(pos_ptr) + 1)
                        tl.store(step_ptr, tl.load(step_ptr) + 1)
            if PDL:
                if SYNC:
                    if ph == PH1 - 1:  # the next kernel may start its prologue
                        tl.extra.cuda.gdc_launch_dependents()

    @triton.jit
    def _head_kernel(
        h_ptr, lnw_ptr, w_ptr, logits_ptr, hlast_ptr, ohid_ptr, step_ptr, yo_ptr, yd_ptr,
        b, eps, maxlen_m1, s_ob, NOUT,
        H: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
        BKS: tl.constexpr, USE_DOT: tl.constexpr, FOLD: tl.constexpr, PDL: tl.constexpr,
        HPREC: tl.constexpr = "ieee",
    ):  # fmt: skip
        pid_n = tl.program_id(0)
        pid_m = tl.program_id(1)
        n = pid_n * BN + tl.arange(0, BN)
        nmask = n < NOUT
        m = pid_m * BM + tl.arange(0, BM)
        mmask = m < b
        DT = h_ptr.dtype.element_ty
        acc = tl.zeros([BM, BN], tl.float32)
        if BK >= H:  # one tile: the weights are read before waiting for the previous kernel
            k = tl.arange(0, BK)
            kmask = k < H
            w = tl.load(
                w_ptr + n[:, None] * H + k[None, :], mask=nmask[:, None] & kmask[None, :], other=0.0
            )
            _gdc(PDL)
            at = tl.minimum(tl.load(step_ptr + m, mask=mmask, other=0), maxlen_m1)
            x = _load_x(h_ptr, h_ptr, h_ptr, m, mmask, k, kmask, H, 1, 1, BM, BK, False)
            if FOLD:  # the last layer's pending O and MLP sums (3-kernel layer)
                x = _fold(x, yo_ptr, yd_ptr, m, mmask, k, kmask, H, DT)
            rstd = tl.math.rsqrt(tl.sum(x * x, axis=1) / H + eps)
            nx = _normed(x, rstd, lnw_ptr, k, kmask, DT)
            if pid_n == 0:  # the normalised hidden is also the output hidden of this frame
                msk = mmask[:, None] & kmask[None, :]
                tl.store(hlast_ptr + m[:, None] * H + k[None, :], nx, mask=msk)
                tl.store(ohid_ptr + m[:, None] * s_ob + at[:, None] * H + k[None, :], nx, mask=msk)
            acc = _mv(acc, nx.to(tl.float32), w, USE_DOT, HPREC)
        else:
            _gdc(PDL)
            rstd = _rstd(h_ptr, h_ptr, h_ptr, m, mmask, eps, H, 1, 1, BM, BKS, False)
            at = tl.minimum(tl.load(step_ptr + m, mask=mmask, other=0), maxlen_m1)
            for k0 in range(0, H, BK):
                k = k0 + tl.arange(0, BK)
                kmask = k < H
                x = _load_x(h_ptr, h_ptr, h_ptr, m, mmask, k, kmask, H, 1, 1, BM, BK, False)
                nx = _normed(x, rstd, lnw_ptr, k, kmask, DT)
                if pid_n == 0:
                    msk = mmask[:, None] & kmask[None, :]
                    tl.store(hlast_ptr + m[:, None] * H + k[None, :], nx, mask=msk)
                    tl.store(
                        ohid_ptr + m[:, None] * s_ob + at[:, None] * H + k[None, :], nx, mask=msk
                    )
                w = tl.load(
                    w_ptr + n[:, None] * H + k[None, :],
                    mask=nmask[:, None] & kmask[None, :],
                    other=0.0,
                )
                acc = _mv(acc, nx.to(tl.float32), w, USE_DOT, HPREC)
        tl.store(
            logits_ptr + m[:, None] * NOUT + n[None, :], acc, mask=mmask[:, None] & nmask[None, :]
        )

    @triton.jit
    def _sample_kernel(
        logits_ptr, hist_ptr, step_ptr, minnew_ptr, temp_ptr, pen_ptr, topp_ptr, topk_ptr,
        topkon_ptr, greedy_ptr, eosblock_ptr, seed_ptr, noise_ptr, forceon_ptr, force_ptr,
        ids_ptr, codes_ptr, maxlen_m1, s_codes,
        NQ: tl.constexpr, V: tl.constexpr, VP: tl.constexpr, EOS: tl.constexpr,
        WINDOW: tl.constexpr, USE_NOISE: tl.constexpr, KMAX: tl.constexpr,
     PDL: tl.constexpr,
    ):  # fmt: skip
        """One (slot, codebook) per program; the end flags are set by the next kernel."""
        m = tl.program_id(0)
        q = tl.program_id(1)
        _gdc(PDL)
        v = tl.arange(0, VP)
        valid = v < V
        lg = tl.load(logits_ptr + m * (NQ * V) + q * V + v, mask=valid, other=float("-inf"))
        lg = lg / tl.load(temp_ptr + q)
        cnt = tl.zeros([VP], tl.int32)
        for j in tl.static_range(WINDOW):
            hj = tl.load(hist_ptr + (m * NQ + q) * WINDOW + j)
            cnt += (v == hj).to(tl.int32)
        pen = tl.load(pen_ptr)
        alpha = tl.full([VP], 1.0, tl.float32)
        for j in tl.static_range(WINDOW):
            alpha = tl.where(cnt > j, alpha * pen, alpha)
        lg = tl.where(lg < 0, lg * alpha, lg / alpha)
        kk = tl.minimum(tl.maximum(tl.load(topk_ptr), 3), KMAX).to(tl.int32)
        topp = tl.load(topp_ptr)
        topk_on = tl.load(topkon_ptr) != 0
        if topk_on:
            # top-k on (ChatTTS' default): the kept set lies among the KMAX largest, so walk
            # them from the top (one max per rank) instead of sorting all V logits. Rank r is
            # dropped by top-p when the ascending cumulative probability at it (1 - the mass
            # above it) is <= 1 - top_p (the 3 largest always kept), and by top-k from rank
            # kk on; the last kept value is the threshold (ties kept, as the sort's values).
            mx = tl.max(lg, 0)
            z = tl.sum(tl.exp(lg - mx), 0)
            cur = lg
            above = z * 0.0  # probability mass of the ranks above
            thr = mx
            done = z < 0.0  # False, as a scalar tensor
            for r in tl.static_range(KMAX):
                d, idx = tl.max(cur, 0, return_indices=True)
                cur = tl.where(v == idx, float("-inf"), cur)
                stop = ((1.0 - above <= 1.0 - topp) & (r >= 3)) | (r >= kk)
                done = done | stop
                thr = tl.where(done, thr, d)
                above += tl.exp(d - mx) / z
        else:
            # top-p alone on the ascending sort, as transformers' warper (3 largest kept)
            srt = tl.sort(lg)
            e = tl.exp(srt - tl.max(srt, 0))
            cum = tl.cumsum(e / tl.sum(e, 0), axis=0)
            drop = (cum <= 1.0 - topp) & (v < VP - 3)
            ndrop = tl.sum(drop.to(tl.int32), 0)
            thr = tl.sum(tl.where(v == ndrop, srt, 0.0), 0)
        keep = lg >= thr
        lg2 = tl.where(keep, lg, float("-inf"))
        step = tl.load(step_ptr + m)
        block = (step < tl.load(minnew_ptr + m)) | (tl.load(eosblock_ptr) != 0)
        lg2 = tl.where((v == EOS) & block, float("-inf"), lg2)
        id_g = tl.argmax(lg2, 0)
        e2 = tl.exp(lg2 - tl.max(lg2, 0))
        probs = e2 / tl.sum(e2, 0)
        if USE_NOISE:
            ex = tl.load(noise_ptr + m * (NQ * VP) + q * VP + v)
        else:
            seed = tl.load(seed_ptr + m)
            ex = -tl.log(tl.rand(seed, (step.to(tl.int32) * NQ + q) * VP + v))
        id_s = tl.argmax(probs / ex, 0)
        ids = tl.where(tl.load(greedy_ptr) != 0, id_g, id_s).to(tl.int64)
        ids = tl.where(tl.load(forceon_ptr) != 0, tl.load(force_ptr + m * NQ + q), ids)
        at = tl.minimum(step, maxlen_m1)
        tl.store(ids_ptr + m * NQ + q, ids)
        tl.store(codes_ptr + m * s_codes + at * NQ + q, ids)
        tl.store(hist_ptr + (m * NQ + q) * WINDOW + step % WINDOW, ids)


# ----------------------------------------------------------------------------------------------
# the two implementations of the fused ops (same signatures, same buffers)
# ----------------------------------------------------------------------------------------------


# Tile sizes. "fma": batch 1, CUDA-core tiles holding whole rows (output rows per program);
# "dot": tensor-core tiles over a batch block of up to ``bm`` rows. On the H200 (run 4 of
# 2026-12-01, bench/gpu.py tile sweep) 16-row blocks, which give 4x more programs at batch
# 64, were slower (1,774 vs 1,344 us per step with PDL), so one block holds up to 64 rows.
TILES: dict[str, dict[str, Any]] = {
    # fuse_o: O-weight rows per program of the fused attention + O-projection at batch 1
    # (0: separate kernels; 4 kernels per layer instead of 5). H200, 2026-12-01 13:01 UTC:
    # 256 rows 358 us per step, separate 369, 128 rows 367, 64 rows 383
    # fuse_mlp: intermediate values per program of the fused gate/up + down kernel (0: two
    # kernels); with fuse_o, 3 kernels per layer (the O and MLP sums wait in fp32 buffers).
    # Session 4 (H200, 2026-12-01 16:10 UTC sweep, batch-1 graph step at position 150):
    # fused MLP 16 rows + 4 warps, QKV 2 warps, fused O 128 rows: 343 us against 373 for the
    # 4-kernel layer of session 3 (MLP 8 rows 377, 32 rows 374, 16 warps 404)
    "fma": {
        "qkv": 4,
        "o": 4,
        "gu": 4,
        "down": 2,
        "head": 8,
        "warps": 4,
        "fuse_o": 128,
        "fuse_mlp": 16,
        "w_mlp": 4,
        "w_qkv": 2,
        # persist: the persistent batch-1 step (session 8, opt-in): all layers in one launch
        # of this many programs per SM (0: off, the 3-kernel layer), walking the 3 phases of
        # each layer with grid-wide barriers (_persist_kernel); w_persist its warps;
        # persist_interp: its programs under Triton's interpreter (one launch per phase)
        "persist": 0,
        "w_persist": 8,
        "persist_interp": 5,
    },
    # K step 128 and 8 warps: 1,132 us per batch-64 step against 1,423 with K step 64 and 4
    # warps (sweep of 2026-12-01 12:31 UTC, H200, PDL)
    # sk_down: split-K of the down projection (24 -> 144 programs at batch <= 64; 4 warps):
    # 1,093 vs 1,213 us per batch-64 step (H200, session-4 sweep, 2026-12-01 15:48 UTC);
    # 4 pipeline stages: 1,062 vs 1,086 (16:10 UTC)
    # Run 7 (gpu2, H200, 2026-12-01 16:31 UTC, batch-64 sweep, graph step at position 150):
    # QKV with the norm's statistic after the K loop, 32-wide halves and split-K 6 (36 -> 216
    # programs): QKV kernel 227 -> 180 us per step; the code heads' dot in 3xTF32 (fp16 / bf16
    # / fp8 models; fp32 keeps IEEE): head 69 -> 37 us; both: 1,004 vs 1,066-1,090 us per
    # step. The post norm alone (no split) and for gate/up was slower (QKV 322, gate/up 294-389)
    # pre_qkv (session 5, H200 run 2, 18:23 UTC, batch-64 sweep): each QKV split-K program
    # (one K block) loads its weights before the PDL wait: QKV 186 -> 177 us, step 1,008 ->
    # 986 us; the same for gate/up (split 6, with / without post) and one-block O (split 6)
    # and down (split 24) was slower (gate/up 315 / 406, O 107, down 168 us)
    "dot": {
        "bm": 64,
        "qkv": 32,
        "sk_qkv": 6,
        "post_qkv": 1,
        "pre_qkv": 1,
        "head_prec": "tf32x3",
        "o": 32,
        "gu": 32,
        "down": 32,
        "head": 32,
        "bk": 128,
        "warps": 8,
        "sk_down": 6,
        "w_down": 4,
        "stages": 4,
    },
    # branches: parts of a batch-64 step on parallel streams (TritonGPT.branches): off,
    # two branches took 1,884 us per step against 978 for one chain (four 1,592; H200,
    # 2026-12-02 00:30 UTC), the kernels of one branch stretch instead of overlapping;
    # prefill_graphs: several prompts admitted at once prefill through one CUDA graph
    # (TritonGPT.batch_prefill_graphs): on, 64 prompts 24.4 -> 7.3 ms, outputs equal to
    # the eager prefill bit for bit (same run)
    "step": {"branches": 1, "prefill_graphs": 1},
    # 16 warps: 371 us per batch-1 step against 397 with 4 (the sampler's ~30 reductions
    # over 1,024 logits run in 4 programs; sweep of 2026-12-01 12:58 UTC, H200)
    "sample": {"warps": 16},
    # decode attention without the O-projection (batch >= 2): positions per chunk of the
    # online softmax and warps (0: 4 up to 4,096 chunk elements, else 8); split: positions
    # per program of the split attention (flash-decoding, _attn_split_kernel; 0: one
    # program per (head, slot) walks the whole cache, the session-5 kernel), w_split its
    # warps (0: as warps). Off: on the H200 (2026-12-02 00:30 UTC, batch 64, positions
    # 150-250) the split was slower than one program per (head, slot): attention 326 us
    # unsplit, split 32 / 64 / 128: 587 / 431 / 463 us, 64 with 2 warps 370 us (768
    # programs per layer already fill the 132 SMs; the partials and the combine add work).
    # dyn: walk only the chunks up to the slot's position (a run-time loop bound; session 7).
    # Off: on the H200 (2026-12-02 01:00 UTC) it is faster at short caches only: batch 64
    # graph step at positions 0-100 832 -> 744 us (ch 64, 2 warps; attention 205 -> 77 us),
    # but at the generate's mean position (132) 910 vs 912 us, at 150-250 1,018 vs 983 us
    # (ch 32 / 64 / 128 with 4 warps: 1,232 / 1,045 / 1,068), batch 8 generate 12,954 ->
    # 11,582 frames/s: the chunks of one program run one after the other
    "attn": {"ch": 256, "warps": 0, "split": 0, "w_split": 0, "dyn": 0},
}


def programs_per_sm(
    n_regs: int, shared: int, num_warps: int, max_regs: int = 65536, max_smem: int = 232448
) -> int:
    """How many programs of a kernel one SM holds at once: by its registers (allocated per
    warp in units of 256: ``n_regs`` rounded up to a multiple of 8), its shared memory (1 KB
    reserved per program) and warps (64 per SM), at most 32. A persistent kernel whose grid
    exceeds this times the SM count would wait at its first grid barrier for programs that
    can never start."""
    per_warp = -(-max(1, int(n_regs)) * 32 // 256) * 256
    by_regs = max_regs // (per_warp * num_warps)
    by_smem = (max_smem + 1024) // (int(shared) + 1024) if shared else 32
    return max(0, min(by_regs, by_smem, 64 // num_warps, 32))


def resident_programs(kernel: Any, num_warps: int) -> int:
    """:func:`programs_per_sm` of a compiled Triton kernel on the current GPU (its
    ``n_regs`` known: launched or ``_init_handles()`` called)."""
    from triton.runtime import driver

    props = driver.active.utils.get_device_properties(torch.cuda.current_device())
    return programs_per_sm(
        kernel.n_regs,
        int(getattr(kernel.metadata, "shared", 0) or 0),
        num_warps,
        int(props.get("max_num_regs", 65536)),
        int(props.get("max_shared_mem", 232448)),
    )


def persist_consts(
    H: int, NH: int, HD: int, inter: int, NL: int, nq: int, V: int, eos: int, nprog: int,
    L: int, warps: int,
) -> dict[str, Any]:  # fmt: skip
    """The compile-time constants of :func:`_persist_kernel` for a model and grid: each
    program's share of the QKV row pairs (``NQP``, tile ``PQ``) and of the intermediate
    values (``NMP``, tile ``PM``), the O rows per attention unit (``BNO``: the narrowest
    power of two dividing H whose ``NH * H / BNO`` units still fit the grid, one unit per
    program), the cache chunks, and H's two power-of-two pieces (``K1 + K2``)."""
    if NH > nprog:
        raise ValueError(f"the persistent step needs at least {NH} programs, not {nprog}")
    bno = H & -H
    if NH * (H // bno) > nprog:
        raise ValueError(f"the persistent step needs {NH * (H // bno)} programs, not {nprog}")
    while bno > 1 and NH * (H // (bno // 2)) <= nprog:
        bno //= 2
    nqp, nmp = -(-3 * NH * (HD // 2) // nprog), -(-inter // nprog)
    CH = min(256, _pow2(L))
    k1 = 1 << (H.bit_length() - 1)
    return dict(
        H=H, HD=HD, NH=NH, NQ=nq, V=V, EOS=eos, INTER=inter, NL=NL, BK=_pow2(H), NPROG=nprog,
        PQ=_pow2(nqp), NQP=nqp, BNO=bno, CH=CH, NCH=-(-L // CH), PRE=CH >= L, PM=_pow2(nmp),
        NMP=nmp, SPIN=1 << 18, K1=k1, K2=H - k1, num_warps=warps,
    )  # fmt: skip


def _scale(p: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """The per-output-channel scales of fp8 weights ``p[name]`` (a dummy pointer without)."""
    return p.get(name + "_s", p[name])


def _lin(x: torch.Tensor, p: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """``x @ p[name].T`` in ``x``'s dtype; fp8 weights: fp32 product times the per-output-channel
    scale, rounded once (as the kernels)."""
    s = p.get(name + "_s")
    w = p[name]
    if s is None:  # weights in another float type than x (``activations="fp32"``): widened
        return F.linear(x, w if w.dtype == x.dtype else w.to(x.dtype))
    return (F.linear(x.float(), p[name].float()) * s).to(x.dtype)


def quantize_fp8(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """e4m3 weights with one fp32 scale per output channel (row): ``w ~ q.float() * s[:, None]``."""
    wf = w.float()
    s = (wf.abs().amax(1) / 448.0).clamp_min(1e-12)
    q = (wf / s[:, None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.contiguous(), s.contiguous()


def _cfg(b: int, dims: Sequence[int], min_dot_batch: int, bm: int = 16) -> tuple[int, bool]:
    """Batch block and whether to use tensor-core dot tiles (needs every tile dim >= 16)."""
    if b >= min_dot_batch and min(dims) >= 16:
        return max(16, min(bm, _pow2(b))), True
    return 1, False


class TorchOps:
    """Plain-torch twins of the Triton kernels: the reference path (CPU or GPU)."""

    name = "torch"

    def qkv_rope(self, g, li: int, b: int, L: int, embed: bool) -> None:
        p = g.layers[li]
        if embed:
            ids = g.ids[:b]
            ended = (ids == g.eos_id_).any(-1)
            g.end_step[:b] = torch.where(ended & ~g.finished[:b], g.step[:b], g.end_step[:b])
            g.finished[:b] |= ended
            x = g.emb_code[ids + g.code_offsets].float().sum(1).to(g.dtype)
            g.hres[:b] = x
        h = g.hres[:b]
        qkv = _lin(_rmsnorm(h, p["ln1"], g.eps), p, "qkv")
        nh, hd = g.num_heads, g.head_dim
        pos = g.pos[:b].clamp(max=L - 1)
        qkv = qkv.view(b, 3, nh, hd)
        cos = g.cos[pos].view(b, 1, hd).float()
        sin = g.sin[pos].view(b, 1, hd).float()
        q = _rope(qkv[:, 0].float(), cos, sin).to(g.dtype)
        k = _rope(qkv[:, 1].float(), cos, sin).to(g.dtype)
        g.q[:b] = q.reshape(b, -1)
        rows = torch.arange(b, device=g.device)
        g.k[li, rows, :, pos] = k
        g.v[li, rows, :, pos] = qkv[:, 2]

    def attention(self, g, li: int, b: int, L: int) -> None:
        nh, hd = g.num_heads, g.head_dim
        pos = g.pos[:b].clamp(max=L - 1)
        kc = g.k[li, :b, :, :L].float()  # [b, nh, L, hd]
        vc = g.v[li, :b, :, :L].float()
        q = g.q[:b].float().view(b, nh, 1, hd)
        valid = torch.arange(L, device=g.device).view(1, 1, L) <= pos.view(b, 1, 1)
        sc = (q * kc).sum(-1) * hd**-0.5  # [b, nh, L]
        pr = sc.masked_fill(~valid, -math.inf).softmax(-1)
        g.att[:b] = (pr.unsqueeze(-1) * vc).sum(-2).reshape(b, -1).to(g.dtype)

    def oproj(self, g, li: int, b: int, L: int) -> None:
        y = _lin(g.att[:b], g.layers[li], "o")
        g.hres[:b] = (g.hres[:b].float() + y.float()).to(g.dtype)

    def gateup(self, g, li: int, b: int) -> None:
        p = g.layers[li]
        gu = _lin(_rmsnorm(g.hres[:b], p["ln2"], g.eps), p, "gu").float()
        gg, uu = gu.chunk(2, dim=-1)
        g.act[:b] = (F.silu(gg) * uu).to(g.dtype)

    def down(self, g, li: int, b: int, last: bool) -> None:
        y = _lin(g.act[:b], g.layers[li], "down")
        g.hres[:b] = (g.hres[:b].float() + y.float()).to(g.dtype)
        if last:
            g.pos[:b] += 1
            g.step[:b] += 1

    def head(self, g, b: int) -> None:
        n = _rmsnorm(g.hres[:b], g.norm, g.eps)
        g.h_last[:b] = n
        at = g.step[:b].clamp(max=g.max_len - 1)
        g.out_hidden[torch.arange(b, device=g.device), at] = n
        g.logits[:b] = F.linear(n.float(), g.head_code)

    def sample(self, g, b: int, noise: torch.Tensor | None = None) -> None:
        nq, V = g.num_vq, g.num_audio
        step = g.step[:b]
        lg = g.logits[:b].view(b, nq, V) / g.temperature.view(1, nq, 1)
        counts = torch.zeros(b, nq, V + 1, device=g.device)
        counts.scatter_add_(2, g.hist[:b], torch.ones_like(g.hist[:b], dtype=counts.dtype))
        alpha = torch.pow(g.penalty, counts[..., :V])
        lg = torch.where(lg < 0, lg * alpha, lg / alpha)
        srt, order = torch.sort(lg, dim=-1)
        cum = srt.softmax(-1).cumsum(-1)
        keep_tail = torch.arange(V, device=g.device) >= V - 3
        drop = (cum <= (1 - g.top_p)) & ~keep_tail
        lg = lg.masked_fill(drop.scatter(-1, order, drop), -math.inf)
        kth = torch.topk(lg, 20, dim=-1).values
        k_idx = (g.top_k.clamp(min=3, max=20) - 1).view(1, 1, 1).expand(b, nq, 1)
        lg = lg.masked_fill((lg < kth.gather(-1, k_idx)) & g.topk_on, -math.inf)
        block = (step < g.min_new[:b]) | g.eos_block
        is_eos = torch.arange(V, device=g.device) == g.eos_id_
        lg = lg.masked_fill(is_eos.view(1, 1, V) & block.view(b, 1, 1), -math.inf)
        probs = lg.softmax(-1)
        if noise is None:
            noise = torch.empty_like(probs).exponential_()
        else:
            noise = noise[:b, :, :V]
        ids = torch.where(g.greedy, lg.argmax(-1), (probs / noise).argmax(-1))
        ids = torch.where(g.force_on, g.force_ids[:b], ids)
        at = step.clamp(max=g.max_len - 1)
        rows = torch.arange(b, device=g.device)
        g.ids[:b] = ids
        g.out_codes[rows, at] = ids
        g.hist[:b].scatter_(2, (step % WIN).view(b, 1, 1).expand(b, nq, 1), ids.unsqueeze(-1))


class TritonOps:
    """The fused Triton kernels (JIT-compiled on first use, captured in CUDA graphs).

    Batch 1 (and any size with a tile dim under 16): CUDA-core tiles that hold a whole
    weight row, so each program issues one load of x and one of each weight tile (a loop over
    K would serialise memory latency). Batch >= ``min_dot_batch``: tensor-core tiles over
    a batch block of 16-64 rows, looping over K.
    """

    name = "triton"

    def __init__(
        self, min_dot_batch: int = 2, pdl: bool = False, tiles: dict | None = None
    ) -> None:
        if not HAVE_TRITON:
            raise RuntimeError("the fused decode path needs Triton (pip install triton)")
        self.min_dot_batch = int(min_dot_batch)
        # programmatic dependent launch: each kernel reads its weights while the previous
        # one finishes (Hopper and newer; not in Triton's interpreter)
        self.pdl = bool(pdl)
        self._pdl = {"PDL": True, "launch_pdl": True} if pdl else {"PDL": False}
        self.tiles = {k: dict(v) for k, v in TILES.items()}
        for k, v in (tiles or {}).items():
            self.tiles[k].update(v)

    def _warps(self, dot: bool, op: str = "") -> dict:
        """Launch options of one op: ``num_warps`` (per op: ``w_<op>`` in the tile table)
        and, for tensor-core tiles, ``num_stages`` when the table names them."""
        if dot:
            d = self.tiles["dot"]
            out = {}
            if f"w_{op}" in d or "warps" in d:
                out["num_warps"] = d.get(f"w_{op}", d.get("warps"))
            if "stages" in d:
                out["num_stages"] = d["stages"]
            return out
        f = self.tiles["fma"]
        return {"num_warps": f.get(f"w_{op}", f["warps"])}

    @staticmethod
    def _prec(g) -> str:
        """Input precision of a tensor-core dot: IEEE for fp32 models (the golden codes);
        TF32 for fp32 activations on bf16 / fp16 weights (``activations="fp32"``: TF32
        holds bf16 weights exactly and rounds the activations to 10 mantissa bits, as fp16
        does); ignored for fp16 / bf16 operands."""
        return "ieee" if getattr(g, "precision", "") == "fp32" else "tf32"

    def _split(self, g, op: str, dot: bool, b: int, BM: int, K: int, BK: int) -> int:
        """Split-K factor of one tensor-core GEMM (``sk_<op>`` in the tile table): the
        programs of a narrow matrix at batch <= one batch block fill more of the GPU when
        each takes a share of K (fp32 partial sums by atomics, the last program of a tile
        finishes it). Only where one batch block covers the batch and the scratch has the
        rows; a factor that does not split K into whole ``BK`` blocks is lowered."""
        sk = int(self.tiles["dot"].get(f"sk_{op}", 1)) if dot else 1
        if sk <= 1 or b > BM or b > g.kscr.shape[0]:
            return 1
        while sk > 1 and (K % sk or (K // sk) % BK):
            sk -= 1
        return sk

    def _post(self, dot: bool, op: str) -> bool:
        """Whether a tensor-core GEMM with a norm in front (``post_<op>``: QKV, gate/up)
        scales by the row statistic after its K loop instead of a pass over the whole row
        before it (each program then reads only its share of the activations once)."""
        return dot and bool(self.tiles["dot"].get(f"post_{op}", 0))

    def _head_prec(self, g, dot: bool) -> str:
        """Input precision of the code heads' tensor-core dot (fp32 weights): ``ieee`` for
        fp32 models (the golden codes), ``head_prec`` of the tile table otherwise."""
        if not dot or getattr(g, "precision", "") == "fp32":
            return "ieee"
        return str(self.tiles["dot"].get("head_prec", "ieee"))

    def _prew(self, op: str, sk: int, K: int, BK: int) -> bool:
        """Whether a split-K program of QKV / gate/up (``pre_<op>`` in the tile table) loads
        its weights before the PDL wait, as the batch-1 tiles do: only where its share of K
        is one ``BK`` block (the split makes ``K / sk == BK``), so the tile fits in registers."""
        return bool(self.tiles["dot"].get(f"pre_{op}", 0)) and sk > 1 and K // sk == BK

    def _bm(self, op: str) -> int:
        d = self.tiles["dot"]
        return int(d.get(f"bm_{op}", d["bm"]))

    def qkv_rope(self, g, li: int, b: int, L: int, embed: bool) -> None:
        H, hd = g.hidden_size, g.head_dim
        f, d = self.tiles["fma"], self.tiles["dot"]
        BM, dot = _cfg(b, (hd // 2, H), self.min_dot_batch, self._bm("qkv"))
        BH = min(hd // 2, d["qkv"] if dot else f["qkv"])
        BK = d["bk"] if dot else _pow2(H)
        sk = self._split(g, "qkv", dot, b, BM, H, BK) if BK < H else 1
        kc, vc = g.k[li], g.v[li]
        grid = (3 * g.num_heads * (hd // 2 // BH), -(-b // BM), sk)
        _qkv_rope_kernel[grid](
            g.hres, g.ids, g.emb_code, g.layers[li]["ln1"], g.layers[li]["qkv"],
            _scale(g.layers[li], "qkv"), g.pos,
            g.cos, g.sin, g.q, kc, vc, g.step, g.finished, g.end_step, g.kscr, g.kcnt,
            *self._pending(g, li - 1), b, L - 1, g.eps, kc.stride(0), kc.stride(1), kc.stride(2),
            H=H, HD=hd, NH=g.num_heads, NQ=g.num_vq, V=g.num_audio, EOS=g.eos_id_,
            BM=BM, BH=BH, BK=BK, BKS=min(256, _pow2(H)), ONE=BK >= H, EMBED=embed,
            USE_DOT=dot, PREC=self._prec(g), WS="qkv_s" in g.layers[li], SPLIT=sk,
            SC=g.kscr.shape[1], FOLD=li > 0 and self.fused_mlp(g, b) > 0, **self._pdl,
            POST=self._post(dot, "qkv") and BK < H, PREW=self._prew("qkv", sk, H, BK),
            **self._warps(dot, "qkv"),
        )  # fmt: skip

    def fused_o(self, g, b: int) -> int:
        """O-weight rows per program of the fused attention + O-projection (0: not fused).
        CUDA-core tiles only (batch under ``min_dot_batch``)."""
        bn = int(self.tiles["fma"].get("fuse_o", 0))
        if not bn or _cfg(b, (g.hidden_size,), self.min_dot_batch)[1]:
            return 0
        # a power of two (a Triton tile) dividing the hidden size; 768 (one block) is not one
        return bn if g.hidden_size % bn == 0 and bn & (bn - 1) == 0 else 0

    def fused_mlp(self, g, b: int) -> int:
        """Intermediate values per program of the fused gate/up + down kernel (0: not
        fused); only with the fused attention + O-projection (both leave their sums
        pending in ``g.ybuf``, folded in by the next kernels)."""
        c = int(self.tiles["fma"].get("fuse_mlp", 0))
        if not c or not self.fused_o(g, b) or c & (c - 1) or g.inter % c:
            return 0
        return c

    def persistent(self, g, b: int) -> int:
        """Programs of the persistent batch-1 step (0: not used): ``persist`` programs per
        SM; only at batch 1 with the 3-kernel layer (the same pending sums), not for fp8
        weights (no per-channel scales in it), and only where the runner stacked its layer
        weights (``TritonGPT._wstack``)."""
        per = int(self.tiles["fma"].get("persist", 0))
        if not per or b != 1 or not self.fused_mlp(g, b) or "qkv_s" in g.layers[0]:
            return 0
        if getattr(g, "_wstack", None) is None:
            return 0
        rest = g.hidden_size - (1 << (g.hidden_size.bit_length() - 1))
        if rest & (rest - 1):  # H must be one or two powers of two (768 = 512 + 256)
            return 0
        if os.environ.get("TRITON_INTERPRET") == "1":  # enough for one attention unit a head
            H = g.hidden_size
            return max(
                int(self.tiles["fma"].get("persist_interp", 5)), g.num_heads * (H // (H & -H))
            )
        return per * torch.cuda.get_device_properties(g.device).multi_processor_count

    def layers_persistent(self, g, L: int) -> None:
        """Every layer of a batch-1 step (slot 0) in one launch of :func:`_persist_kernel`
        (on the GPU; under Triton's interpreter one launch per phase, no barriers)."""
        nprog = self.persistent(g, 1)
        H, HD, NL = g.hidden_size, g.head_dim, g.num_layers
        const = persist_consts(
            H, g.num_heads, HD, g.inter, NL, g.num_vq, g.num_audio, g.eos_id_, nprog, L,
            int(self.tiles["fma"].get("w_persist", 8)),
        )  # fmt: skip
        st = g._wstack
        kc, vc = g.k, g.v
        interp = os.environ.get("TRITON_INTERPRET") == "1"
        bar, err = g._persist_flags(nprog)
        args = (
            g.hres, g.ids, g.emb_code, g.q, g.att, g.pos, g.step, g.finished, g.end_step,
            g.cos, g.sin, kc, vc, g.ybuf, st["ln1"], st["ln2"], st["qkv"], st["o"], st["gu"],
            st["down"], bar, err,
        )  # fmt: skip
        rest = (L - 1, g.eps, HD**-0.5, kc.stride(0), kc.stride(2), kc.stride(3),
                g.ybuf.stride(1))  # fmt: skip
        if interp:  # programs run one after another: one launch per phase, no barrier
            for ph in range(3 * NL):
                _persist_kernel[(nprog,)](
                    *args, *rest, PH0=ph, PH1=ph + 1, SYNC=False, PDL=False, **const
                )
            return
        key = (nprog, tuple(sorted((k, str(v)) for k, v in const.items())), self.pdl)
        checked = g.__dict__.setdefault("_persist_ok", set())
        if key not in checked:  # every program must be resident at once, or the barrier waits
            kern = _persist_kernel.warmup(
                *args, *rest, PH0=0, PH1=3 * NL, SYNC=True, PDL=self.pdl, **const,
                grid=(nprog,),
            )  # fmt: skip
            kern._init_handles()
            fit = resident_programs(kern, const["num_warps"])
            sms = torch.cuda.get_device_properties(g.device).multi_processor_count
            if fit * sms < nprog:
                raise RuntimeError(
                    f"the persistent step needs {nprog} programs resident at once, but one SM "
                    f"holds {fit} of them ({kern.n_regs} registers, "
                    f"{kern.metadata.shared} bytes of shared memory, {const['num_warps']} "
                    f"warps): use fewer programs per SM (tiles fma.persist) or switch it off"
                )
            checked.add(key)
        _persist_kernel[(nprog,)](
            *args, *rest, PH0=0, PH1=3 * NL, SYNC=True, **self._pdl, **const
        )  # fmt: skip

    def _pending(self, g, li: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The fp32 O and MLP sums of layer ``li`` (``-1``: the last layer; a prefill view
        has one dummy set)."""
        li %= g.ybuf.shape[1]
        return g.ybuf[0, li], g.ybuf[1, li]

    def attention(self, g, li: int, b: int, L: int) -> None:
        kc, vc = g.k[li], g.v[li]
        CH = min(256, _pow2(L))
        bn = self.fused_o(g, b)
        if bn:
            # each program recomputes its head's attention: at longer caches fewer, wider
            # O-row blocks keep that re-read of K/V in bounds
            while L > 256 * (bn // self.fused_o(g, b)) and 2 * bn <= g.hidden_size:
                if g.hidden_size % (2 * bn):
                    break
                bn *= 2
            p = g.layers[li]
            mlp = self.fused_mlp(g, b) > 0
            yo_prev, yd_prev = self._pending(g, li - 1)
            _attn_o_kernel[(g.num_heads, g.hidden_size // bn, b)](
                g.q, kc, vc, g.pos, g.att, p["o"], _scale(p, "o"),
                self._pending(g, li)[0] if mlp else g.ybuf[0, 0], g.hres, yo_prev, yd_prev,
                L - 1, g.head_dim**-0.5, kc.stride(0), kc.stride(1), kc.stride(2),
                H=g.hidden_size, HD=g.head_dim, CH=CH, NCH=-(-L // CH), BN=bn, WS="o_s" in p,
                FOLD=(2 if li > 0 else 1) if mlp else 0, BH=_pow2(g.hidden_size),
                PRE=CH >= L and bool(self.tiles["fma"].get("attn_pre", 1)),
                num_warps=4 if CH * g.head_dim <= 4096 else 8, **self._pdl,
            )  # fmt: skip
            return
        a = self.tiles["attn"]
        cs = int(a.get("split", 0))
        # not in a fused prefill (the rows of one prompt share a slot: a stride-0 cache view):
        # its T rows x heads programs fill the GPU already, and the scratch has slot rows
        if cs and cs & (cs - 1) == 0 and kc.stride(0) != 0:
            # flash-decoding: ``cs`` (>= 32: the scratch's size) positions per program, the
            # last of a (head, slot) combines; the scratch and counts are this kernel's own
            CS = min(max(cs, ATTN_MIN_SPLIT), _pow2(L))
            NS = -(-L // CS)
            _attn_split_kernel[(g.num_heads, b, NS)](
                g.q, kc, vc, g.pos, g.att, g.ascr, g.acnt, L - 1, g.head_dim**-0.5,
                kc.stride(0), kc.stride(1), kc.stride(2),
                H=g.hidden_size, HD=g.head_dim, NH=g.num_heads, CS=CS, NS=NS, NSP=_pow2(NS),
                num_warps=int(a.get("w_split", 0)) or (4 if CS * g.head_dim <= 4096 else 8),
                **self._pdl,
            )  # fmt: skip
            return
        CH = min(int(a.get("ch", 256)), _pow2(L))
        warps = int(a.get("warps", 0)) or (4 if CH * g.head_dim <= 4096 else 8)
        _attn_kernel[(g.num_heads, b)](
            g.q, kc, vc, g.pos, g.att, L - 1, g.head_dim**-0.5,
            kc.stride(0), kc.stride(1), kc.stride(2),
            H=g.hidden_size, HD=g.head_dim, CH=CH, NCH=-(-L // CH),
            DYN=bool(a.get("dyn", 0)), INTERP=os.environ.get("TRITON_INTERPRET") == "1",
            num_warps=warps, **self._pdl,
        )  # fmt: skip

    def oproj(self, g, li: int, b: int, L: int) -> None:
        if self.fused_o(g, b):
            return  # done by the fused attention kernel (the residual by gate/up and down)
        H = g.hidden_size
        f, d = self.tiles["fma"], self.tiles["dot"]
        BM, dot = _cfg(b, (H,), self.min_dot_batch, self._bm("o"))
        BN = min(H, d["o"] if dot else f["o"])
        BK = d["bk"] if dot else _pow2(H)
        sk = self._split(g, "o", dot, b, BM, H, BK)
        _oproj_kernel[(H // BN, -(-b // BM), sk)](
            g.att, g.layers[li]["o"], _scale(g.layers[li], "o"), g.hres, g.kscr, g.kcnt, b,
            H=H, BM=BM, BN=BN, BK=BK, USE_DOT=dot, PREC=self._prec(g),
            WS="o_s" in g.layers[li], SPLIT=sk, SC=g.kscr.shape[1], **self._pdl,
            **self._warps(dot, "o"),
        )  # fmt: skip

    def gateup(self, g, li: int, b: int) -> None:
        H, inter = g.hidden_size, g.inter
        f, d = self.tiles["fma"], self.tiles["dot"]
        if self.fused_mlp(g, b):
            return  # done with the down projection by the fused MLP kernel (down)
        BM, dot = _cfg(b, (H, inter), self.min_dot_batch, self._bm("gu"))
        BN = min(inter, d["gu"] if dot else f["gu"])
        BK = d["bk"] if dot else _pow2(H)
        sk = self._split(g, "gu", dot, b, BM, H, BK) if BK < H else 1
        _gateup_kernel[(inter // BN, -(-b // BM), sk)](
            g.hres, g.layers[li]["ln2"], g.layers[li]["gu"], _scale(g.layers[li], "gu"), g.act,
            g.ybuf[0, 0], g.kscr, g.kcnt, b, g.eps,
            H=H, INTER=inter, BM=BM, BN=BN, BK=BK, BKS=min(256, _pow2(H)), ONE=BK >= H,
            USE_DOT=dot, PREC=self._prec(g), WS="gu_s" in g.layers[li],
            RESID=self.fused_o(g, b) > 0, SPLIT=sk, SC=g.kscr.shape[1], **self._pdl,
            POST=self._post(dot, "gu") and BK < H, PREW=self._prew("gu", sk, H, BK),
            **self._warps(dot, "gu"),
        )  # fmt: skip

    def down(self, g, li: int, b: int, last: bool) -> None:
        H, inter = g.hidden_size, g.inter
        f = self.tiles["fma"]
        c = self.fused_mlp(g, b)
        if c:  # gate/up + SiLU-mul + down in one kernel (gateup did nothing)
            p = g.layers[li]
            yo, yd = self._pending(g, li)
            _mlp_kernel[(inter // c, b)](
                g.hres, p["ln2"], p["gu"], _scale(p, "gu"), p["down"], _scale(p, "down"),
                yo, yd, g.pos, g.step, g.eps,
                H=H, INTER=inter, C=c, BK=_pow2(H), WS="gu_s" in p,
                LAST=last, num_warps=f.get("w_mlp", f["warps"]), **self._pdl,
            )  # fmt: skip
            return
        d = self.tiles["dot"]
        BM, dot = _cfg(b, (H, inter), self.min_dot_batch, self._bm("down"))
        BN = min(H, d["down"] if dot else f["down"])
        BK = d["bk"] if dot else _pow2(inter)
        sk = self._split(g, "down", dot, b, BM, inter, BK)
        _down_kernel[(H // BN, -(-b // BM), sk)](
            g.act, g.layers[li]["down"], _scale(g.layers[li], "down"), g.hres, g.ybuf[0, 0], g.pos,
            g.step, g.kscr, g.kcnt, b,
            H=H, INTER=inter, BM=BM, BN=BN, BK=BK, LAST=last, USE_DOT=dot, PREC=self._prec(g),
            WS="down_s" in g.layers[li], RESID=self.fused_o(g, b) > 0, SPLIT=sk,
            SC=g.kscr.shape[1], **self._pdl, **self._warps(dot, "down"),
        )  # fmt: skip

    def head(self, g, b: int) -> None:
        H = g.hidden_size
        nout = g.num_vq * g.num_audio
        f, d = self.tiles["fma"], self.tiles["dot"]
        BM, dot = _cfg(b, (H,), self.min_dot_batch, self._bm("head"))
        BN = d["head"] if dot else f["head"]
        BK = d["bk"] if dot else _pow2(H)
        _head_kernel[(-(-nout // BN), -(-b // BM))](
            g.hres, g.norm, g.head_code, g.logits, g.h_last, g.out_hidden, g.step,
            *self._pending(g, -1), b, g.eps, g.max_len - 1, g.out_hidden.stride(0), nout,
            H=H, BM=BM, BN=BN, BK=BK, BKS=min(256, _pow2(H)), USE_DOT=dot,
            FOLD=self.fused_mlp(g, b) > 0, HPREC=self._head_prec(g, dot), **self._pdl,
            **self._warps(dot, "head"),
        )  # fmt: skip

    def sample(self, g, b: int, noise: torch.Tensor | None = None) -> None:
        V = g.num_audio
        _sample_kernel[(b, g.num_vq)](
            g.logits, g.hist, g.step, g.min_new, g.temperature, g.penalty, g.top_p, g.top_k,
            g.topk_on, g.greedy, g.eos_block, g.slot_seed,
            noise if noise is not None else g.logits, g.force_on, g.force_ids,
            g.ids, g.out_codes, g.max_len - 1, g.out_codes.stride(0),
            NQ=g.num_vq, V=V, VP=_pow2(V), EOS=g.eos_id_, WINDOW=WIN,
            USE_NOISE=noise is not None, KMAX=20, num_warps=self.tiles["sample"]["warps"],
            **self._pdl,
        )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# the runner
# ----------------------------------------------------------------------------------------------


class _PrefillView:
    """The runner as the fused kernels see it during a prefill: the ``T`` positions of one
    prompt are ``T`` batch rows (row ``m`` at position ``m``), whose K/V rows all land in
    the prompt's slot through a stride-0 view of the cache; the rest is the runner's."""

    def __init__(self, g: TritonGPT, slot: int, T: int) -> None:
        self._g = g
        dev, H = g.device, g.hidden_size
        self.hres = torch.zeros(T, H, device=dev, dtype=g.dtype)
        self.q = torch.zeros_like(self.hres)
        self.att = torch.zeros_like(self.hres)
        self.act = torch.zeros(T, g.inter, device=dev, dtype=g.dtype)
        self.ybuf = torch.zeros(2, 1, T, H, device=dev, dtype=torch.float32)
        self.pos = torch.arange(T, device=dev)
        self.step = torch.zeros(T, dtype=torch.long, device=dev)
        shape = (g.num_layers, T, g.num_heads, g.max_len, g.head_dim)
        self.k = g.k[:, slot : slot + 1].expand(shape)
        self.v = g.v[:, slot : slot + 1].expand(shape)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._g, name)


class _SlotView:
    """Slots ``off .. off + n - 1`` of the runner as the fused kernels see them (slot 0 of
    the view is slot ``off``): every per-slot buffer is a slice of the runner's, with the
    same strides, so the kernels index it from 0; the split-K arrival counts are the view's
    own (their tile indices would meet the other view's), the rest is the runner's. Two views
    run one step of a batch as two branches (:attr:`TritonGPT.branches`)."""

    #: per-slot buffers whose first dimension is the slot
    ROWS = (
        "h_last", "pos", "step", "min_new", "finished", "end_step", "hist", "out_codes",
        "out_hidden", "hres", "q", "act", "ids", "logits", "att", "kscr", "slot_seed",
        "force_ids",
    )  # fmt: skip

    def __init__(self, g: TritonGPT, off: int, n: int) -> None:
        self._g = g
        for name in self.ROWS:
            setattr(self, name, getattr(g, name)[off : off + n])
        self.k = g.k[:, off : off + n]
        self.v = g.v[:, off : off + n]
        self.ybuf = g.ybuf[:, :, off : off + n]
        per = g.ascr.numel() // g.capacity  # the split attention's partials: slot-major
        self.ascr = g.ascr[off * per : (off + n) * per]
        self.acnt = g.acnt[off * g.num_heads : (off + n) * g.num_heads]
        self.kcnt = torch.zeros_like(g.kcnt)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._g, name)


def compare_prefill(g: TritonGPT, T: int, *, slot: int = 0, seed: int = 0) -> dict[str, float]:
    """The fused prefill (Triton kernels, prompt positions as batch rows) against the torch
    prefill of the same random prompt: worst relative error of the slot's residual stream,
    normalised last hidden and the K/V rows of the prompt."""
    gen = torch.Generator().manual_seed(seed)
    g._alloc(slot + 1)
    e = g.emb_text[torch.randint(0, g.emb_text.shape[0], (T,), generator=gen)].to(g.dtype)
    Tb = _bucket(T, PREFILL_BUCKETS)
    x = torch.zeros(1, Tb, g.hidden_size, device=g.device, dtype=g.dtype)
    x[0, :T] = e
    rows = torch.tensor([slot], device=g.device)
    lens = torch.tensor([T], device=g.device)
    names = ("hres", "h_last")
    g._prefill_into(x[:, :T], rows, lens)
    ref = {k: getattr(g, k)[slot].clone() for k in names}
    ref_k, ref_v = g.k[:, slot, :, :T].clone(), g.v[:, slot, :, :T].clone()
    for t in (g.hres, g.h_last, g.k, g.v):
        t[slot] = float("nan")
    g._prefill_fused(TritonOps(), x, rows, lens, _PrefillView(g, slot, Tb))
    out = {k: _err(getattr(g, k)[slot], ref[k]) for k in names}
    out["kv"] = max(_err(g.k[:, slot, :, :T], ref_k), _err(g.v[:, slot, :, :T], ref_v))
    return out


class TritonGPT(CudaGPT):
    """:class:`CudaGPT` with the decode step as ``2 + 5 * layers`` fused kernels.

    Everything else (prefill, continuous batching, the host loop, graph capture per
    (batch, length) bucket, streaming) is inherited. ``kernels="torch"`` runs the same fused
    step through :class:`TorchOps` (any device; the CPU reference path used by CI).
    ``min_dot_batch``: smallest batch that uses tensor-core tiles (the rest: CUDA cores).
    ``pdl``: programmatic dependent launch between the kernels (Hopper or newer).
    ``precision="fp8"``: the layers' weights in e4m3 with one fp32 scale per output channel
    (half the bytes per step), activations, cache, norms and heads in fp16.
    ``activations``: ``"fp32"`` keeps the layer weights in ``precision`` (bf16 / fp16) and
    everything else in fp32 (the default for bf16: all-bf16 activations lose ~2 % of the
    teacher-forced agreement with fp32, the weights alone ~0.8 %); the weight bytes per
    step are unchanged, the activations at batch 1 are a few KB. Otherwise the precision's
    own dtype (``activations="bf16"``: the all-bf16 path of earlier sessions).
    """

    def __init__(
        self,
        asset_dir: str | Path,
        *,
        kernels: str = "triton",
        min_dot_batch: int = 2,
        pdl: bool = False,
        tiles: dict | None = None,
        activations: str | None = None,
        **kw,
    ) -> None:
        if kernels not in ("triton", "torch"):
            raise ValueError(f"kernels must be 'triton' or 'torch', not {kernels!r}")
        self.ops = TritonOps(min_dot_batch, pdl, tiles) if kernels == "triton" else TorchOps()
        kw["fused"] = "none"  # no torch.compile: the fused step needs none
        # fp8: e4m3 layer weights with per-output-channel scales, fp16 everything else
        prec = str(kw.get("precision", "fp16"))
        fp8 = prec == "fp8"
        if activations is None:  # bf16: 8 mantissa bits are too few for the residual stream
            activations = "fp32" if prec == "bf16" else prec
        if activations != prec and not (activations == "fp32" and prec in ("bf16", "fp16")):
            raise ValueError(
                f"activations {activations!r} with precision {prec!r}: use the precision's own "
                "dtype, or 'fp32' with bf16 / fp16 weights"
            )
        #: weights in ``precision``, everything else (residual stream, norms, GEMV outputs,
        #: KV cache, attention) in fp32: bf16's teacher-forced agreement with fp32 is then set
        #: by the weights' rounding alone (BENCHMARKS.md, session 5)
        self.activations = activations
        wide = activations == "fp32" and prec != "fp32"
        if fp8:
            kw["precision"] = "fp16"
        elif wide:
            kw["precision"] = "fp32"
        super().__init__(asset_dir, **kw)
        self.precision = prec
        if fp8 or wide:
            for p in self.layers:
                for name in ("qkv", "o", "gu", "down"):
                    if fp8:
                        p[name], p[name + "_s"] = quantize_fp8(p[name])
                    else:
                        p[name] = p[name].to(DTYPES[prec]).contiguous()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
        interp = os.environ.get("TRITON_INTERPRET") == "1"
        if kernels == "triton" and self.device.type != "cuda" and not interp:
            raise ValueError("Triton kernels need a CUDA device; use kernels='torch' on CPU")
        if self.head_dim % 2 or self.head_dim & (self.head_dim - 1):
            raise ValueError(f"head_dim {self.head_dim} must be a power of two")
        self.inter = int(self.layers[0]["down"].shape[1])
        self.backend_name = f"fused-{self.ops.name}"
        #: each layer weight of all layers in one tensor [layers, ...] (the layers' dicts hold
        #: views of it), so that the persistent step reaches layer ``li`` by an offset
        #: Only when the persistent step is asked for at construction (before any graph is
        #: captured with the old weights' addresses): stacking holds one weight's old and new
        #: copies at once (the gate/up weights of all layers: +188 MB of peak at load).
        self._wstack: dict[str, torch.Tensor] | None = None
        if isinstance(self.ops, TritonOps) and not fp8 and self.ops.tiles["fma"].get("persist"):
            self._wstack = self._stack_layer_weights()
        #: grid-barrier counters of the persistent step, one per grid size (monotonic, never
        #: reset or restored: each launch starts at a multiple of its grid size), and its
        #: error flag (a barrier that timed out: the grid was not co-resident)
        self._persist_bars: dict[int, torch.Tensor] = {}
        self.persist_err = torch.zeros(1, device=self.device, dtype=torch.int32)

    def _stack_layer_weights(self) -> dict[str, torch.Tensor]:
        """Copy each layer weight into one tensor over the layers (each old tensor is freed
        as its view replaces it)."""
        out = {}
        for name in ("ln1", "ln2", "qkv", "o", "gu", "down"):
            first = self.layers[0][name]
            buf = torch.empty(
                (len(self.layers), *first.shape), dtype=first.dtype, device=first.device
            )
            for li, p in enumerate(self.layers):
                buf[li].copy_(p[name])
                p[name] = buf[li]
            out[name] = buf
        self._wpack = tuple(
            (p["ln1"], p["qkv"], p["o"], p["ln2"], p["gu"], p["down"]) for p in self.layers
        )
        return out

    def _persist_flags(self, nprog: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The barrier counter for a grid of ``nprog`` programs and the error flag. Made on
        first use, which is a warm-up before any graph capture (``_capture``)."""
        bar = self._persist_bars.get(nprog)
        if bar is None:
            if self.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
                raise RuntimeError("the persistent step's counter must exist before capture")
            bar = torch.zeros(1, device=self.device, dtype=torch.int64)
            self._persist_bars[nprog] = bar
        return bar, self.persist_err

    def generate(self, requests: Any, sampling: Any, **kw: Any) -> Any:
        """:meth:`CudaGPT.generate`; with the persistent step, a grid barrier that gave up
        during it (wrong codes) is an error here rather than silent noise (one flag read,
        after the results' own synchronisation)."""
        out = super().generate(requests, sampling, **kw)
        if self._wstack is not None and self.persistent_failed():
            raise RuntimeError(
                "the persistent decode step's grid barrier timed out (its programs were not "
                "all resident at once: another process's kernels on this GPU?); the codes "
                "are wrong. Switch it off (tiles fma.persist = 0)"
            )
        return out

    def persistent_failed(self) -> bool:
        """Whether a grid barrier of the persistent step timed out (a grid that was not
        resident at once, e.g. another process's kernels on the GPU): the steps after it
        are wrong. Reads a device flag (synchronises)."""
        return bool(self.persist_err.item())

    def _alloc(self, slots: int) -> None:
        had = self.capacity
        super()._alloc(slots)
        if self.capacity == had:
            return
        self._pf_bufs: dict = {}  # prefill graphs hold the old buffers
        dev, dt, S, H = self.device, self.dtype, self.capacity, self.hidden_size
        self.inter = int(self.layers[0]["down"].shape[1])
        self.hres = torch.zeros(S, H, device=dev, dtype=dt)
        self.q = torch.zeros(S, H, device=dev, dtype=dt)
        self.act = torch.zeros(S, self.inter, device=dev, dtype=dt)
        self.ids = torch.zeros(S, self.num_vq, device=dev, dtype=torch.long)
        self.logits = torch.zeros(S, self.num_vq * self.num_audio, device=dev)
        self.att = torch.zeros(S, H, device=dev, dtype=dt)
        # fp32 sums of the fused attention + O-projection ([0, layer]) and of the fused MLP
        # ([1, layer]) at batch 1, pending until the next layer folds them into ``hres``
        nl = self.num_layers
        self.ybuf = torch.zeros(2, nl, S, H, device=dev, dtype=torch.float32)
        # split-K GEMMs (batch >= 2): fp32 partial sums of one kernel (zero between kernels)
        # and per-tile arrival counts
        # (+ 4,096 per-tile columns for the row sums of squares of the POST norm)
        sc = max(2 * self.inter, 3 * H) + 4096
        self.kscr = torch.zeros(S, sc, device=dev, dtype=torch.float32)
        self.kcnt = torch.zeros(4096, device=dev, dtype=torch.int32)
        # split attention (batch >= 2): fp32 partials [slot, head, split, head_dim + 2],
        # sized for the longest cache at the fewest positions per split, and one arrival
        # count per (slot, head)
        ns = -(-self.max_len // ATTN_MIN_SPLIT)
        self.ascr = torch.zeros(S * self.num_heads * ns * (self.head_dim + 2), device=dev)
        self.acnt = torch.zeros(S * self.num_heads, device=dev, dtype=torch.int32)
        self.slot_seed = torch.zeros(S, device=dev, dtype=torch.long)
        self.force_on = torch.zeros((), device=dev, dtype=torch.bool)
        self.force_ids = torch.zeros(S, self.num_vq, device=dev, dtype=torch.long)

    def _state(self) -> list[torch.Tensor]:
        return super()._state() + [self.hres, self.ids, self.ybuf]

    def _forward_prenorm(self, x: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        """Causal forward over ``x`` ``[n, T, H]`` to the residual stream before the final
        norm (the fused head normalises it itself); K/V go to ``rows`` of the cache."""
        n, T, H = x.shape
        nh, hd = self.num_heads, self.head_dim
        cos = self.cos[:T].view(1, 1, T, hd)
        sin = self.sin[:T].view(1, 1, T, hd)
        h = x.to(self.dtype)
        for li, p in enumerate(self.layers):
            normed = _rmsnorm(h, p["ln1"], self.eps)
            qkv = _lin(normed, p, "qkv").view(n, T, 3, nh, hd).permute(2, 0, 3, 1, 4)
            q, k, v = _rope(qkv[0], cos, sin), _rope(qkv[1], cos, sin), qkv[2]
            if rows is not None:
                self.k[li, rows, :, :T] = k
                self.v[li, rows, :, :T] = v
            att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = h + _lin(att.transpose(1, 2).reshape(n, T, H), p, "o")
            normed = _rmsnorm(h, p["ln2"], self.eps)
            h = h + _lin(_silu_mul(_lin(normed, p, "gu")), p, "down")
        return h

    def prefill(self, slots: list[int], embeds: list[torch.Tensor]) -> None:
        n = len(slots)
        T = max(e.shape[0] for e in embeds)
        if T + 1 >= self.max_len:
            raise ValueError(f"prompt of {T} tokens exceeds the cache length {self.max_len}")
        if (
            n == 1
            and self.use_graphs
            and T <= PREFILL_BUCKETS[-1]
            and _bucket(T, PREFILL_BUCKETS) < self.max_len
        ):
            self._prefill_graph(slots[0], embeds[0])
        elif (
            n > 1
            and self.use_graphs
            and self._batch_prefill_graphs()
            and n * _bucket(T, PREFILL_BUCKETS) <= BATCH_PREFILL_TOKENS
            and _bucket(T, PREFILL_BUCKETS) < self.max_len
        ):
            self._prefill_graph_batch(slots, embeds)
        else:
            x = torch.zeros(n, T, self.hidden_size, device=self.device, dtype=self.dtype)
            for i, e in enumerate(embeds):
                x[i, : e.shape[0]] = e.to(self.dtype)
            rows = torch.tensor(slots, device=self.device)
            lens = torch.tensor([e.shape[0] for e in embeds], device=self.device)
            self._prefill_into(x, rows, lens)
        # per-request noise streams, drawn from torch's generator (seeded by ``generate``)
        rows = torch.tensor(slots, device=self.device)
        self.slot_seed[rows] = torch.randint(0, 2**31 - 1, (n,), device=self.device)

    def _prefill_into(self, x: torch.Tensor, rows: torch.Tensor, lens: torch.Tensor) -> None:
        """The prompt ``x`` ``[n, T, H]`` (right-padded; ``lens`` real tokens) into ``rows``.

        Padding is harmless: causal attention keeps it out of the real positions, and the
        cache entries it writes lie past each prompt, overwritten by the decode steps before
        any step attends to them."""
        n = x.shape[0]
        h = self._forward_prenorm(x, rows)
        self._prefill_tail(h[torch.arange(n, device=self.device), lens - 1], rows, lens)

    def _prefill_fused(
        self, ops: TritonOps, x: torch.Tensor, rows: torch.Tensor, lens: torch.Tensor, view: Any
    ) -> None:
        """One prompt ``x`` ``[1, T, H]`` through the fused kernels: its T positions are the
        batch rows of ``view`` (a :class:`_PrefillView`), so a prefill is 5 launches per
        layer (tensor-core tiles) instead of ~35 torch ops."""
        T = x.shape[1]
        view.hres.copy_(x[0])
        view.ybuf.zero_()
        for li in range(self.num_layers):
            ops.qkv_rope(view, li, T, T, False)
            ops.attention(view, li, T, T)
            ops.oproj(view, li, T, T)
            ops.gateup(view, li, T)
            ops.down(view, li, T, False)
        self._prefill_tail(view.hres.index_select(0, lens - 1), rows, lens)

    def _prefill_tail(self, last: torch.Tensor, rows: torch.Tensor, lens: torch.Tensor) -> None:
        """Slot state after a prefill: ``last`` = pre-norm hidden of each prompt's last token."""
        self.hres[rows] = last
        self.ybuf.index_fill_(2, rows, 0.0)  # no sums pending for the new request
        self.h_last[rows] = _rmsnorm(last, self.norm, self.eps)
        self.pos[rows] = lens
        # index_fill_ (not ``t[rows] = 0``): no host scalar copied, so it can be captured
        self.step.index_fill_(0, rows, 0)
        self.finished.index_fill_(0, rows, False)
        self.end_step.index_fill_(0, rows, -1)
        self.hist.index_fill_(0, rows, self.num_audio)

    def _prefill_graph(self, slot: int, e: torch.Tensor) -> None:
        """One prompt through a CUDA graph captured per prompt-length bucket (an eager
        prefill is ~700 small launches from Python: milliseconds before the first frame)."""
        T = int(e.shape[0])
        Tb = _bucket(T, PREFILL_BUCKETS)
        bufs = getattr(self, "_pf_bufs", None)
        if bufs is None:
            bufs = self._pf_bufs = {}
        fused = isinstance(self.ops, TritonOps)
        key = (Tb, slot if fused else -1)  # the fused prefill's K/V view is per slot
        if key not in bufs:
            x = torch.zeros(1, Tb, self.hidden_size, device=self.device, dtype=self.dtype)
            row = torch.zeros(1, dtype=torch.long, device=self.device)
            ln = torch.ones(1, dtype=torch.long, device=self.device)
            view = _PrefillView(self, slot, Tb) if fused else None
            bufs[key] = (x, row, ln, view, None)
        x, row, ln, view, graph = bufs[key]

        def run() -> None:
            if view is not None:
                self._prefill_fused(self.ops, x, row, ln, view)  # type: ignore[arg-type]
            else:
                self._prefill_into(x, row, ln)

        x.zero_()
        x[0, :T] = e.to(device=self.device, dtype=self.dtype)
        row.fill_(int(slot))
        ln.fill_(T)
        if graph is None:
            s = torch.cuda.Stream(self.device)
            s.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(s):  # warm-up (kernel selection) outside the capture
                run()
            torch.cuda.current_stream(self.device).wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                run()
            bufs[key] = (x, row, ln, view, graph)
        graph.replay()

    #: several prompts admitted at once (a batch's first admission) prefill through one CUDA
    #: graph per (count, prompt bucket) instead of eagerly (False: always eager). On by
    #: default since the H200 run of 2026-12-02: ``bench/gpu.py``'s ``batch_prefill_check``
    #: found it equal to the eager prefill (poisoned outputs, max difference 0) and 64
    #: prompts took 7.3 ms instead of 24.4. None: ``TILES["step"]["prefill_graphs"]`` of the
    #: Triton ops (so a tile-override file can switch it for a whole bench run)
    batch_prefill_graphs: bool | None = None

    def _batch_prefill_graphs(self) -> bool:
        if self.batch_prefill_graphs is not None:
            return bool(self.batch_prefill_graphs)
        return bool(getattr(self.ops, "tiles", {}).get("step", {}).get("prefill_graphs", 0))

    def _prefill_graph_batch(self, slots: list[int], embeds: list[torch.Tensor]) -> None:
        """``n > 1`` prompts through one CUDA graph per (n, prompt-length bucket): the torch
        prefill (:meth:`_prefill_into`) over the right-padded prompts, replayed instead of
        ~700 launches from Python (an eager prefill of 64 prompts took 17-30 ms on an H200,
        BENCHMARKS.md session 4). Padding is harmless as in :meth:`_prefill_into`."""
        n = len(slots)
        T = max(int(e.shape[0]) for e in embeds)
        Tb = _bucket(T, PREFILL_BUCKETS)
        bufs = getattr(self, "_pf_bufs", None)
        if bufs is None:
            bufs = self._pf_bufs = {}
        key = ("batch", n, Tb)
        if key not in bufs:
            # each graph keeps its activations in a private pool: keep the latest few only
            old = [k for k in bufs if k[0] == "batch"]
            for k in old[: max(0, len(old) - BATCH_PREFILL_GRAPHS + 1)]:
                del bufs[k]
            x = torch.zeros(n, Tb, self.hidden_size, device=self.device, dtype=self.dtype)
            rows = torch.zeros(n, dtype=torch.long, device=self.device)
            lens = torch.ones(n, dtype=torch.long, device=self.device)
            bufs[key] = (x, rows, lens, None)
        x, rows, lens, graph = bufs[key]
        x.zero_()
        if all(int(e.shape[0]) == T for e in embeds):
            x[:, :T] = torch.stack([e.to(device=self.device, dtype=self.dtype) for e in embeds])
        else:
            for i, e in enumerate(embeds):
                x[i, : e.shape[0]] = e.to(device=self.device, dtype=self.dtype)
        rows.copy_(torch.tensor(slots, dtype=torch.long))
        lens.copy_(torch.tensor([int(e.shape[0]) for e in embeds], dtype=torch.long))
        if graph is None:
            s = torch.cuda.Stream(self.device)
            s.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(s):  # warm-up (kernel selection) outside the capture
                self._prefill_into(x, rows, lens)
            torch.cuda.current_stream(self.device).wait_stream(s)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                self._prefill_into(x, rows, lens)
            bufs[key] = (x, rows, lens, graph)
        graph.replay()

    def _run_steps(self, b: int, L: int, n: int) -> None:
        # A step of the 3-kernel layer (batch 1) leaves the last layer's O and MLP sums
        # pending in ``ybuf`` (the next step's head and attention fold them in); a step on
        # the tensor-core path does not read them, so fold them first when the batch
        # bucket switches over (a prefill clears its own slots' sums).
        pend = isinstance(self.ops, TritonOps) and self.ops.fused_mlp(self, b) > 0
        if getattr(self, "_pending_sums", False) and not pend:
            fold_pending(self, self.num_layers - 1)
        self._pending_sums = pend
        super()._run_steps(b, L, n)

    #: branches of a decode step at batch >= 4: the slots are cut into this many parts,
    #: each part's kernels run on its own stream (parallel branches of the step's CUDA
    #: graph), so one part's kernel ramps, tails and PDL waits overlap the other's work at
    #: the price of reading each layer's weights once per part (from L2 when the parts keep
    #: pace). 1: one chain over the whole batch; None: ``TILES["step"]["branches"]`` of the
    #: Triton ops (1 for the torch twins). Measured on an H200 (2026-12-02): two branches
    #: took 1,884 us per batch-64 step against 978 for one chain, so it stays an option; with
    #: the split attention as well it gave unequal K rows there (a race between the two
    #: options), so that combination is refused
    branches: int | None = None

    def _parts(self, b: int) -> list[tuple[int, int]]:
        """(first slot, count) of each branch of a step at batch ``b`` (one part where the
        parts would fall under the tensor-core batch: batch-1 parts leave sums pending)."""
        nb = self.branches
        if nb is None:
            nb = getattr(self.ops, "tiles", {}).get("step", {}).get("branches", 1)
        nb = max(1, int(nb))
        split = getattr(self.ops, "tiles", {}).get("attn", {}).get("split", 0)
        if nb > 1 and split:
            raise ValueError(
                f"a step in {nb} branches with the split attention (split {split}) is not "
                "supported: the two gave unequal results on an H200; use one of them"
            )
        least = max(2, getattr(self.ops, "min_dot_batch", 2))
        if nb == 1 or b < 4 or b // nb < least:
            return [(0, b)]
        cuts = [b * i // nb for i in range(nb + 1)]
        return [(cuts[i], cuts[i + 1] - cuts[i]) for i in range(nb)]

    def _step(self, b: int, L: int, noise: torch.Tensor | None = None) -> None:
        parts = self._parts(b)
        if len(parts) == 1:
            self._step_rows(self, b, L, noise)
            return
        views: tuple[torch.Tensor, dict[tuple[int, int], _SlotView]] | None
        views = getattr(self, "_views", None)
        if views is None or views[0] is not self.kscr:  # rebuilt after a reallocation
            views = (self.kscr, {})
            self._views = views
        main = torch.cuda.current_stream(self.device) if self.device.type == "cuda" else None
        for i, (off, n) in enumerate(parts):
            v = views[1].get((off, n))
            if v is None:
                v = views[1][(off, n)] = _SlotView(self, off, n)
            part_noise = None if noise is None else noise[off : off + n]
            if main is None or i == 0:
                self._step_rows(v, n, L, part_noise)
                continue
            side = self._side_streams(len(parts))[i - 1]
            side.wait_stream(main)  # captured as a fork of the graph
            with torch.cuda.stream(side):
                self._step_rows(v, n, L, part_noise)
        if main is not None:
            for side in self._side_streams(len(parts)):
                main.wait_stream(side)  # and the join

    def _side_streams(self, n: int) -> list[torch.cuda.Stream]:
        st = getattr(self, "_sides", [])
        while len(st) < n - 1:
            st.append(torch.cuda.Stream(self.device))
        self._sides = st
        return st[: n - 1]

    def _step_rows(self, g: Any, b: int, L: int, noise: torch.Tensor | None) -> None:
        """One decode step of slots ``[:b]`` of ``g`` (the runner or a :class:`_SlotView`)."""
        ops = self.ops
        ops.head(g, b)
        ops.sample(g, b, noise)
        if g is self and isinstance(ops, TritonOps) and ops.persistent(self, b):
            ops.layers_persistent(self, L)  # every layer in one launch (opt-in)
            return
        last = self.num_layers - 1
        for li in range(self.num_layers):
            ops.qkv_rope(g, li, b, L, li == 0)
            ops.attention(g, li, b, L)
            ops.oproj(g, li, b, L)
            ops.gateup(g, li, b)
            ops.down(g, li, b, li == last)

    def kernels_per_step(self, b: int = 1) -> int:
        """Kernel launches of one decode step (the fused path's design figure)."""
        if not isinstance(self.ops, TritonOps) or not self.ops.fused_o(self, b):
            return 2 + 5 * self.num_layers
        if self.ops.persistent(self, b):
            return 3
        return 2 + (3 if self.ops.fused_mlp(self, b) else 4) * self.num_layers

    def teacher_forced_step_logits(self, prompt: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        """Raw code logits ``[n, num_vq, V]`` of the fused decode step, fed the true codes.

        Each step's logits come from the fused kernels given the true previous frames, so
        precisions (and the fused path against the torch path) compare frame by frame.
        """
        self._alloc(1)
        self.prefill([0], [prompt])
        n = codes.shape[0]
        out = torch.empty(n, self.num_vq * self.num_audio, device=self.device)
        self.force_on.fill_(True)
        try:
            for i in range(n):
                self.force_ids[0] = codes[i].to(self.device)
                L = min(self.max_len, _bucket(int(prompt.shape[0]) + i + 2, LEN_BUCKETS))
                self._step(1, L)
                out[i] = self.logits[0]
        finally:
            self.force_on.fill_(False)
        return out.view(n, self.num_vq, self.num_audio)


class TritonGraphGPT(GraphGPT):
    """:class:`GraphGPT` (the engine's GPU GPT) with the fused Triton step for the code
    stage, with programmatic dependent launch on Hopper or newer (the engine's default on
    CUDA when Triton is installed: ``runtime.resolve``, ``gpu_decoder``)."""

    def __init__(self, asset_dir: str | Path, **kw: Any) -> None:
        super().__init__(asset_dir, **kw)
        self.backend = "torch-cuda-fused" + ("-fp8" if kw.get("precision") == "fp8" else "")

    def _portable(self) -> GPT:
        if self.precision == "fp8":  # the rarely used refine stage: fp16 on the torch stack
            self.precision = "fp16"
            try:
                return super()._portable()
            finally:
                self.precision = "fp8"
        return super()._portable()

    def _make_runner(
        self,
        asset_dir: str | Path,
        device: str,
        precision: str,
        max_batch: int,
        use_graphs: bool,
        fused: str,
    ) -> CudaGPT:
        return TritonGPT(
            asset_dir,
            device=device,
            precision=precision,
            max_batch=max_batch,
            use_graphs=use_graphs,
            pdl=torch.cuda.get_device_capability(device) >= (9, 0),
        )


# ----------------------------------------------------------------------------------------------
# kernel-by-kernel equality (used by bench/gpu.py on the GPU and by the tests on CPU)
# ----------------------------------------------------------------------------------------------

_OUTPUTS = {
    "head": ("logits", "h_last", "out_hidden"),
    "sample": ("ids", "out_codes", "hist"),
    "qkv_rope": ("hres", "q", "k", "v", "finished", "end_step"),
    "attention": ("att",),
    "oproj": ("hres",),
    "gateup": ("act",),
    "down": ("hres", "pos", "step"),
    "attn_o_mlp": ("att", "act", "hres", "pos", "step"),
    "layer_3k": ("q", "k", "v", "att", "hres", "pos", "step", "finished", "end_step"),
}


def fold_pending(g: TritonGPT, li: int) -> None:
    """Fold layer ``li``'s pending O and MLP sums (the 3-kernel layer) into ``g.hres`` and
    clear them: the residual stream the torch path has after that layer."""
    dt = g.hres.dtype
    yo, yd = g.ybuf[0, li], g.ybuf[1, li]
    h = (g.hres.float() + yo.to(dt).float()).to(dt)
    g.hres.copy_((h.float() + yd.to(dt).float()).to(dt))
    g.ybuf.zero_()


def _err(a: torch.Tensor, b: torch.Tensor) -> float:
    """Max |a - b| / max |b|, NaN-aware: NaN in both (a poisoned, unwritten entry) is equal,
    NaN in one only is an infinite error."""
    if not a.is_floating_point():
        return 0.0 if torch.equal(a, b) else math.inf
    a, b = a.double(), b.double()
    both = torch.isnan(a) & torch.isnan(b)
    d = (a - b).abs().masked_fill(both, 0.0).nan_to_num(math.inf)
    ref = b.masked_fill(torch.isnan(b), 0.0).abs().max().clamp_min(1e-30)
    return float(d.max() / ref)


def compare_ops(
    g: TritonGPT,
    batch: int,
    L: int,
    *,
    seed: int = 0,
    layers: Sequence[int] = (0, 1),
    pdl: bool = False,
    tiles: dict | None = None,
    long: bool = False,
) -> dict[str, float]:
    """Run every fused op through :class:`TritonOps` and :class:`TorchOps` from the same state
    and return the worst relative error of each op's outputs (``sample``: 0 or inf, codes and
    flags must be equal). Outputs are poisoned with NaN before each run, so an element the
    kernel fails to write shows up as an infinite error. The state walks through a real step:
    random prompts are prefilled, and each op starts from the torch twin's previous result."""
    from mixvox.engines.chattts.gpt.cuda_graph import CudaSampling

    tri, ref = TritonOps(pdl=pdl, tiles=tiles), TorchOps()
    dev = g.device
    gen = torch.Generator().manual_seed(seed)
    g._alloc(batch)
    g.set_sampling(CudaSampling(temperature=[0.3, 0.5, 0.7, 1.0], top_p=0.7, top_k=20))
    # ``long``: prompts fill half the length bucket or more (the split attention's later
    # position blocks hold rows), else short prompts of 3-39 tokens
    lo, hi = (L // 2, L - 8) if long else (3, min(40, L - 8))
    lens = torch.randint(lo, hi, (batch,), generator=gen)
    prompts = [
        g.emb_text[torch.randint(0, g.emb_text.shape[0], (int(n),), generator=gen)] for n in lens
    ]
    g.prefill(list(range(batch)), prompts)
    g.ids[:batch] = torch.randint(0, g.num_audio, (batch, g.num_vq), generator=gen).to(dev)
    hist = torch.randint(0, g.num_audio + 1, (batch, g.num_vq, WIN), generator=gen)
    g.hist[:batch] = hist.to(dev)
    g.step[:batch] = torch.randint(0, 30, (batch,), generator=gen).to(dev)
    g.min_new[:batch] = torch.randint(0, 30, (batch,), generator=gen).to(dev)
    noise = torch.empty(batch, g.num_vq, _pow2(g.num_audio)).exponential_(generator=gen).to(dev)
    seq: list[tuple[str, Any]] = [  # (step name, fn(ops)); lambdas bind the layer
        ("head", lambda o: o.head(g, batch)),
        ("sample", lambda o: o.sample(g, batch, noise)),
    ]
    last = max(layers)
    g.ybuf.zero_()
    fused = tri.fused_o(g, batch) > 0
    for li in layers:
        if tri.fused_mlp(g, batch):  # 3 kernels per layer: compared as one group

            def layer(o: Any, li: int = li) -> None:
                o.qkv_rope(g, li, batch, L, li == 0)
                o.attention(g, li, batch, L)
                o.oproj(g, li, batch, L)
                o.gateup(g, li, batch)
                o.down(g, li, batch, li == last)
                if o is tri:  # the pending sums into the residual stream, as torch has it
                    fold_pending(g, li)

            seq += [("layer_3k", layer)]
            continue
        seq += [("qkv_rope", lambda o, li=li: o.qkv_rope(g, li, batch, L, li == 0))]
        if fused:  # attention + O-projection in one kernel, its residual in gate/up and down
            seq += [
                (
                    "attn_o_mlp",
                    lambda o, li=li: (
                        o.attention(g, li, batch, L),
                        o.oproj(g, li, batch, L),
                        o.gateup(g, li, batch),
                        o.down(g, li, batch, li == last),
                    ),
                )
            ]
            continue
        seq += [
            ("attention", lambda o, li=li: o.attention(g, li, batch, L)),
            ("oproj", lambda o, li=li: o.oproj(g, li, batch, L)),
            ("gateup", lambda o, li=li: o.gateup(g, li, batch)),
            ("down", lambda o, li=li: o.down(g, li, batch, li == last)),
        ]
    worst: dict[str, float] = {}
    for name, fn in seq:
        names = _OUTPUTS[name]
        before = {k: getattr(g, k).clone() for k in names}

        def poison(names: tuple[str, ...] = names) -> None:
            for k in names:
                t = getattr(g, k)
                if k in ("q", "act", "logits", "h_last", "att"):
                    t[:batch] = float("nan")

        poison()
        fn(tri)
        got = {k: getattr(g, k).clone() for k in names}
        for k in names:
            getattr(g, k).copy_(before[k])
        poison()
        fn(ref)  # the walk goes on from the reference result
        e = max(_err(got[k], getattr(g, k)) for k in names)
        worst[name] = max(worst.get(name, 0.0), e)
    # the sampler with top-p alone (top-k off: the sorting branch of the kernel)
    g.set_sampling(CudaSampling(temperature=[0.3, 0.5, 0.7, 1.0], top_p=0.7, top_k=None))
    names = _OUTPUTS["sample"]
    before = {k: getattr(g, k).clone() for k in names}
    tri.sample(g, batch, noise)
    got = {k: getattr(g, k).clone() for k in names}
    for k in names:
        getattr(g, k).copy_(before[k])
    ref.sample(g, batch, noise)
    worst["sample_top_p_only"] = max(_err(got[k], getattr(g, k)) for k in names)
    # the in-kernel random draw (no noise tensor): valid codes, distinct per slot stream
    tri.sample(g, batch)
    worst["sample_rand_valid"] = float(
        0.0 if bool(((g.ids[:batch] >= 0) & (g.ids[:batch] < g.num_audio)).all()) else math.inf
    )
    return worst


def compare_branches(
    g: TritonGPT, batch: int, L: int, *, parts: int = 2, steps: int = 2, seed: int = 0
) -> dict[str, float]:
    """Greedy decode steps of ``batch`` slots cut into ``parts`` branches
    (:attr:`TritonGPT.branches`) against one chain over the whole batch, from the same state
    (random prompts prefilled, random previous codes): worst relative error of the residual
    stream, the output hiddens and the K/V cache rows, and the fraction of output codes that
    differ (near-ties can flip under other summation orders). Through the runner's own step
    (CUDA graphs when it uses them: the branches are then forks of the graph)."""
    from mixvox.engines.chattts.gpt.cuda_graph import CudaSampling

    gen = torch.Generator().manual_seed(seed)
    g._alloc(batch)
    g.set_sampling(CudaSampling(greedy=True, suppress_eos=True))
    lens = torch.randint(3, min(40, L - 8 - steps), (batch,), generator=gen)
    prompts = [
        g.emb_text[torch.randint(0, g.emb_text.shape[0], (int(n),), generator=gen)] for n in lens
    ]
    g.prefill(list(range(batch)), prompts)
    g.ids[:batch] = torch.randint(0, g.num_audio, (batch, g.num_vq), generator=gen).to(g.device)
    keep = [*g._state(), g.out_codes, g.out_hidden]
    saved = [t.clone() for t in keep]
    kv = (g.k[:, :batch, :, :L].clone(), g.v[:, :batch, :, :L].clone())
    was = g.branches
    used: dict[int, int] = {}

    def run(n: int) -> dict[str, torch.Tensor]:
        for t, v in zip(keep, saved, strict=True):
            t.copy_(v)
        g.k[:, :batch, :, :L] = kv[0]
        g.v[:, :batch, :, :L] = kv[1]
        g.branches = n
        g._graphs.clear()
        used[n] = len(g._parts(batch))
        g._run_steps(batch, L, steps)
        if g.device.type == "cuda":
            torch.cuda.synchronize(g.device)
        return {
            "hres": g.hres[:batch].clone(),
            "out_hidden": g.out_hidden[:batch, :steps].clone(),
            "k": g.k[:, :batch, :, :L].clone(),
            "v": g.v[:, :batch, :, :L].clone(),
            "codes": g.out_codes[:batch, :steps].clone(),
        }

    try:
        ref = run(1)
        got = run(parts)
    finally:
        g.branches = was
        g._graphs.clear()
    out = {k: _err(got[k], ref[k]) for k in ("hres", "out_hidden", "k", "v")}
    out["codes_differ"] = float((got["codes"] != ref["codes"]).float().mean())
    out["parts"] = float(used[parts])  # the branches the step really took
    return out


def compare_persistent(
    g: TritonGPT,
    L: int,
    *,
    steps: int = 3,
    seed: int = 0,
    pdl: bool = False,
    tiles: dict | None = None,
    graphs: bool = False,
) -> dict[str, float]:
    """Greedy batch-1 decode steps through the persistent step (``tiles["fma"]["persist"]``,
    1 program per SM unless ``tiles`` says otherwise) against the 3-kernel fused step and the
    torch twins, from the same state (a random prompt prefilled, random previous codes):
    worst relative error of the residual stream (the pending sums folded in), output
    hiddens, K/V cache rows, query and attention output of the last layer (both poisoned
    with NaN before each run: an unwritten element is an infinite error), positions and
    steps; and the fraction of output codes that differ. ``graphs``: the steps through the
    runner's CUDA graphs (one window), else eagerly."""
    from mixvox.engines.chattts.gpt.cuda_graph import CudaSampling

    gen = torch.Generator().manual_seed(seed)
    g._alloc(1)
    g.set_sampling(CudaSampling(greedy=True, suppress_eos=True))
    n = int(torch.randint(3, min(40, L - 8 - steps), (1,), generator=gen))
    g.prefill([0], [g.emb_text[torch.randint(0, g.emb_text.shape[0], (n,), generator=gen)]])
    g.ids[:1] = torch.randint(0, g.num_audio, (1, g.num_vq), generator=gen).to(g.device)
    keep = [*g._state(), g.out_codes, g.out_hidden]
    saved = [t.clone() for t in keep]
    kv = (g.k[:, :1, :, :L].clone(), g.v[:, :1, :, :L].clone())
    base = {k: dict(v) for k, v in (tiles or {}).items()}
    fma = base.setdefault("fma", {})
    per = int(fma.get("persist", 0)) or 1
    fma["persist"] = 0
    runs: dict[str, Any] = {
        "fused": TritonOps(pdl=pdl, tiles=base),
        "twins": TorchOps(),
        "persistent": TritonOps(pdl=pdl, tiles={**base, "fma": {**fma, "persist": per}}),
    }
    was, was_graphs = g.ops, g.use_graphs
    out: dict[str, dict[str, torch.Tensor]] = {}
    try:
        for name, ops in runs.items():
            for t, v in zip(keep, saved, strict=True):
                t.copy_(v)
            g.k[:, :1, :, :L] = kv[0]
            g.v[:, :1, :, :L] = kv[1]
            g.q.fill_(float("nan"))
            g.att.fill_(float("nan"))
            g.ops = ops
            g.use_graphs = graphs and g.device.type == "cuda"
            g._graphs.clear()
            g._pending_sums = False
            if name == "persistent" and not ops.persistent(g, 1):
                raise RuntimeError(
                    "the persistent step is not available for this runner (made without "
                    "tiles fma.persist, fp8 weights, or not the 3-kernel layer at batch 1)"
                )
            g._run_steps(1, L, steps)
            if isinstance(ops, TritonOps) and ops.fused_mlp(g, 1):
                fold_pending(g, g.num_layers - 1)
            if g.device.type == "cuda":
                torch.cuda.synchronize(g.device)
            out[name] = {
                "hres": g.hres[:1].clone(),
                "out_hidden": g.out_hidden[:1, :steps].clone(),
                "k": g.k[:, :1, :, :L].clone(),
                "v": g.v[:, :1, :, :L].clone(),
                "q": g.q[:1].clone(),
                "att": g.att[:1].clone(),
                "pos": g.pos[:1].clone(),
                "step": g.step[:1].clone(),
                "codes": g.out_codes[:1, :steps].clone(),
            }
    finally:
        g.ops, g.use_graphs = was, was_graphs
        g._graphs.clear()
        g._pending_sums = False
    res: dict[str, float] = {}
    got = out["persistent"]
    for ref in ("fused", "twins"):
        for k in ("hres", "out_hidden", "k", "v", "q", "att", "pos", "step"):
            res[f"{k}_vs_{ref}"] = _err(got[k], out[ref][k])
        res[f"codes_differ_vs_{ref}"] = float((got["codes"] != out[ref]["codes"]).float().mean())
    return res
