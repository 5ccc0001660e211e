"""The fused decode step (engines/chattts/gpt/triton_decode.py) on CPU.

* The torch twins of the fused kernels, run as a whole step (``TritonGPT(kernels="torch")``),
  reproduce the golden greedy codes of the tiny checkpoint and equal the plain torch step of
  :class:`CudaGPT` (this always runs: torch only).
* The Triton kernels themselves against their twins, through Triton's CPU interpreter
  (``TRITON_INTERPRET=1``, in a subprocess so the flag is set before Triton is imported):
  skipped with a reason when Triton is not installed. On the GPU, ``bench/gpu.py`` runs the
  same comparison (``compare_ops``) on the full-size model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaGPT, CudaSampling  # noqa: E402
from mixvox.engines.chattts.gpt.triton_decode import TritonGPT  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "chattts"
TINY = SHARED / "tiny"
HAVE_TRITON = importlib.util.find_spec("triton") is not None


@pytest.fixture(scope="module")
def golden():
    if not (TINY / "golden.npz").exists():
        pytest.skip("shared fixtures missing")
    return np.load(TINY / "golden.npz")


def _torch_twins(**kw) -> TritonGPT:
    return TritonGPT(
        TINY / "asset", kernels="torch", device="cpu", precision="fp32", max_len=512, **kw
    )


def test_fused_step_reference_path_reproduces_golden_codes(golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    want = golden["greedy/codes"]
    m = _torch_twins(max_batch=1)
    r = m.generate(
        [CodeRequest(emb, max_new=len(want))], CudaSampling(greedy=True, suppress_eos=True)
    )[0]
    assert (r.codes.numpy() == want).all()
    h = golden["greedy/hiddens"]
    assert np.abs(r.hidden.numpy() - h).max() / np.abs(h).max() < 1e-5


def test_fused_step_reference_path_equals_torch_step_when_sampling(golden):
    """Sampling (temperature, penalty, top-p/top-k) with continuous batching: the fused
    step's twins and CudaGPT's torch step draw the same codes from the same generator."""
    emb = torch.from_numpy(golden["code_spk/emb"])
    reqs = [CodeRequest(emb, max_new=20, min_new=5), CodeRequest(emb[:-4], max_new=12)]
    reqs.append(CodeRequest(emb[:-2], max_new=16))
    samp = CudaSampling(temperature=[0.3, 0.5, 0.7, 1.0])
    a = CudaGPT(TINY / "asset", device="cpu", precision="fp32", max_batch=2, max_len=512)
    b = _torch_twins(max_batch=2)
    # CudaGPT draws its noise inside its step and TritonGPT draws a per-request seed at
    # prefill; with greedy off the draws differ, so compare the processed distributions:
    # greedy codes through the full sampler path (penalty, top-p/k, eos block) must match.
    g = CudaSampling(temperature=[0.3, 0.5, 0.7, 1.0], greedy=True)
    ra = a.generate(reqs, g, seed=0, max_batch=2)
    rb = b.generate(reqs, g, seed=0, max_batch=2)
    for x, y in zip(ra, rb, strict=True):
        assert torch.equal(x.codes, y.codes)
        assert x.finished == y.finished
        assert torch.allclose(x.hidden, y.hidden, atol=1e-5)
    # sampled codes: valid, reproducible with the same seed, different with another
    s1 = b.generate(reqs, samp, seed=1, max_batch=2)
    s2 = b.generate(reqs, samp, seed=1, max_batch=2)
    s3 = b.generate(reqs, samp, seed=2, max_batch=2)
    assert all(torch.equal(x.codes, y.codes) for x, y in zip(s1, s2, strict=True))
    assert any(not torch.equal(x.codes, y.codes) for x, y in zip(s1, s3, strict=True))
    assert all(((r.codes >= 0) & (r.codes < 626)).all() for r in s1)


def test_teacher_forced_step_logits_match_full_forward(golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    codes = torch.from_numpy(golden["greedy/codes"])
    m = _torch_twins(max_batch=1)
    full = m.teacher_forced_logits(emb, codes)
    step = m.teacher_forced_step_logits(emb, codes)
    assert step.shape == full.shape
    assert (step - full).abs().max() / full.abs().max() < 1e-5


def test_fp8_weights_twin_stays_close_to_fp16(golden):
    """fp8 (e4m3, per-output-channel scales): the layer weights are stored in 1 byte and the
    fused step's logits stay close to the fp16 ones (the same path, unquantized)."""
    emb = torch.from_numpy(golden["code_spk/emb"])
    codes = torch.from_numpy(golden["greedy/codes"])
    m8 = _fp(precision="fp8")
    m16 = _fp(precision="fp16")
    assert m8.layers[0]["gu"].dtype == torch.float8_e4m3fn and m8.precision == "fp8"
    assert m8.layers[0]["gu_s"].shape == (m8.layers[0]["gu"].shape[0],)
    w = m8.layers[0]["gu"].float() * m8.layers[0]["gu_s"][:, None]
    ref = m16.layers[0]["gu"].float()
    assert float((w - ref).abs().max() / ref.abs().max()) < 0.07  # e4m3: 3 mantissa bits
    a = m8.teacher_forced_step_logits(emb, codes).float()
    b = m16.teacher_forced_step_logits(emb, codes).float()
    assert torch.isfinite(a).all()
    assert float((a - b).abs().max() / b.abs().max()) < 0.1
    assert float((a.argmax(-1) == b.argmax(-1)).float().mean()) > 0.8


def test_bf16_weights_with_fp32_activations(golden):
    """bf16 by default keeps only the layer weights in bf16 (everything else fp32): its
    teacher-forced logits are closer to fp32 than the all-bf16 path's, and a precision /
    activations pair that is not offered is refused."""
    emb = torch.from_numpy(golden["code_spk/emb"])
    codes = torch.from_numpy(golden["greedy/codes"])
    wide = _fp(precision="bf16")
    narrow = TritonGPT(
        TINY / "asset", kernels="torch", device="cpu", precision="bf16", max_len=512,
        activations="bf16",
    )  # fmt: skip
    ref = _fp(precision="fp32")
    assert wide.activations == "fp32" and wide.precision == "bf16"
    assert wide.layers[0]["qkv"].dtype == torch.bfloat16 and wide.hres.dtype == torch.float32
    assert wide.layers[0]["ln1"].dtype == torch.float32 and narrow.hres.dtype == torch.bfloat16
    r = ref.teacher_forced_step_logits(emb, codes).float()
    ew = float((wide.teacher_forced_step_logits(emb, codes).float() - r).abs().max())
    en = float((narrow.teacher_forced_step_logits(emb, codes).float() - r).abs().max())
    assert 0 < ew < en, (ew, en)
    with pytest.raises(ValueError, match="activations"):
        TritonGPT(TINY / "asset", kernels="torch", device="cpu", precision="fp8",
                  activations="fp32", max_len=512)  # fmt: skip


def _fp(precision: str) -> TritonGPT:
    return TritonGPT(
        TINY / "asset", kernels="torch", device="cpu", precision=precision, max_len=512
    )


def test_triton_kernels_refuse_cpu_without_interpreter(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    if not HAVE_TRITON:
        with pytest.raises(RuntimeError, match="needs Triton"):
            TritonGPT(TINY / "asset", device="cpu", precision="fp32", max_len=512)
    else:
        with pytest.raises(ValueError, match="CUDA device"):
            TritonGPT(TINY / "asset", device="cpu", precision="fp32", max_len=512)
    with pytest.raises(ValueError, match="kernels must be"):
        TritonGPT(TINY / "asset", kernels="cuda", device="cpu")


_INTERP = r"""
import json, sys
from pathlib import Path
from mixvox.engines.chattts import randckpt
from mixvox.engines.chattts.gpt.triton_decode import TritonGPT, compare_ops, compare_prefill
out = {}
pre = {}
tiny, mid, shared = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
randckpt.make_checkpoint(mid, shared, seed=0, sizes=randckpt.Sizes.small(
    hidden=64, intermediate=128, heads=2, layers=2))
for name, asset, b, prec in (("tiny_b1", tiny, 1, "fp32"), ("mid_b1", mid / "asset", 1, "fp32"),
                             ("mid_b2_dot", mid / "asset", 2, "fp32"),
                             ("mid_b1_fp8", mid / "asset", 1, "fp8")):
    m = TritonGPT(asset, kernels="torch", device="cpu", precision=prec, max_batch=b,
                  max_len=256, use_graphs=False)
    out[name] = compare_ops(m, b, 128, seed=b, tiles={"fma": {"fuse_o": 0}})
    if b == 1:  # attention + O-projection fused; + the MLP fused (3 kernels, the default)
        fo = {"fma": {"fuse_o": 32, "fuse_mlp": 0}}
        out[name + "_fused_o"] = compare_ops(m, b, 128, seed=b, tiles=fo)
        out[name + "_3k"] = compare_ops(m, b, 128, seed=b, tiles={"fma": {"fuse_o": 32}})
    else:  # split-K tensor-core GEMMs (fp32 partial sums by atomics, last program finishes)
        sk = {"bk": 16, "sk_qkv": 2, "sk_o": 2, "sk_gu": 2, "sk_down": 4}
        # + the attention split over 32 positions per program (flash-decoding, opt-in) on
        # prompts of 64-119 tokens: 2-4 partials per (head, slot), the last one combines
        out[name + "_splitk"] = compare_ops(
            m, b, 128, seed=b, tiles={"dot": sk, "attn": {"split": 32}}, long=True
        )
        # the norm's row statistic applied after the K loop (QKV, gate/up), with and without
        # split-K (the per-tile sums of squares meet in the scratch)
        post = {"bk": 16, "post_qkv": 1, "post_gu": 1}
        out[name + "_post"] = compare_ops(m, b, 128, seed=b, tiles={"dot": post})
        out[name + "_post_splitk"] = compare_ops(m, b, 128, seed=b, tiles={"dot": {**sk, **post}})
        # the attention walking only the chunks up to each slot's position (opt-in: a run-time
        # loop bound), chunks of 32 on prompts of 64-119 tokens: 2-4 chunks per (head, slot)
        out[name + "_dynattn"] = compare_ops(
            m, b, 128, seed=b, tiles={"attn": {"dyn": 1, "ch": 32}}, long=True
        )
    # the fused prefill (prompt positions as batch rows: CUDA-core tiles on tiny, tensor-core
    # tiles on mid) against the torch prefill, into slot 1
    m = TritonGPT(asset, kernels="torch", device="cpu", precision=prec, max_batch=2,
                  max_len=256, use_graphs=False)
    pre[name] = compare_prefill(m, 13, slot=1, seed=3)
# bf16 weights with fp32 activations (bf16's default): tensor-core tiles on the widened
# weights, split-K with one K block per program (QKV / gate/up weights before the wait)
m = TritonGPT(mid / "asset", kernels="torch", device="cpu", precision="bf16", max_batch=2,
              max_len=256, use_graphs=False)
sk = {"bk": 16, "sk_qkv": 4, "sk_o": 2, "sk_gu": 4, "sk_down": 4, "post_qkv": 1,
      "pre_qkv": 1, "pre_gu": 1}
out["mid_b2_dot_bf16w_prew_splitk"] = compare_ops(m, 2, 128, seed=2, tiles={"dot": sk})
# batch 1 (3-kernel layer: the last layer's sums pending) then batch 2 (tensor-core path):
# the switch folds the pending sums in, so slot 0 decodes as the torch twins do
import torch
from mixvox.engines.chattts.gpt.cuda_graph import CudaSampling
runs = {}
for kern in ("triton", "torch"):
    m = TritonGPT(tiny, kernels=kern, device="cpu", precision="fp32", max_batch=2,
                  max_len=256, use_graphs=False, tiles={"fma": {"fuse_o": 16}})
    m._alloc(2)
    m.set_sampling(CudaSampling(greedy=True, suppress_eos=True))
    g = torch.Generator().manual_seed(5)
    e = [m.emb_text[torch.randint(0, 500, (n,), generator=g)] for n in (9, 6)]
    m.prefill([0, 1], e)
    m._run_steps(1, 128, 3)
    m._run_steps(2, 128, 3)
    runs[kern] = (m.out_codes[0, :6].clone(), m.out_hidden[0, :6].clone())
(ca, ha), (cb, hb) = runs["triton"], runs["torch"]
switch = {"codes_equal": bool(torch.equal(ca, cb)),
          "hidden_err": float((ha - hb).abs().max() / hb.abs().max())}
print(json.dumps({"ops": out, "prefill": pre, "switch": switch}))
"""


def _interpret(script: str, args: list[Path], timeout: int) -> dict:
    """Run ``script`` in a fresh interpreter with Triton's CPU interpreter on (it must be set
    before triton is imported) and return the JSON object its last output line prints."""
    r = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        env=dict(os.environ, TRITON_INTERPRET="1"),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not installed: its CPU interpreter is needed")
def test_triton_kernels_equal_torch_twins_in_interpreter(golden, tmp_path):
    """Every kernel (CUDA-core tiles at batch 1, tensor-core tiles at batch 2 on a model with
    16-wide tiles) against its twin, fp32 and fp8 weights, with poisoned outputs (unwritten =
    inf error); the sampler both with top-k (no sort) and with top-p alone (sorting); the
    fused attention + O-projection; the fused prefill against the torch prefill."""
    both = _interpret(_INTERP, [TINY / "asset", tmp_path / "mid", SHARED], timeout=1800)
    res, pre = both["ops"], both["prefill"]
    assert both["switch"]["codes_equal"], both["switch"]
    assert both["switch"]["hidden_err"] < 1e-5, both["switch"]
    for name, errs in pre.items():
        assert set(errs) == {"hres", "h_last", "kv"}
        limit = 2e-3 if name.endswith("fp8") else 1e-5  # fp8 weights: fp16 activations
        assert max(errs.values()) < limit, (name, errs)
    want = {"tiny_b1_3k", "mid_b1_fp8_3k", "mid_b2_dot_splitk", "mid_b2_dot_post_splitk"}
    want |= {"mid_b2_dot_bf16w_prew_splitk", "mid_b2_dot_dynattn"}
    assert want <= set(res)
    for name, errs in res.items():
        ops = {"attention", "oproj", "gateup", "down"}
        if name.endswith("_fused_o"):
            ops = {"attn_o_mlp"}
        elif name.endswith("_3k"):  # the whole layer is compared as one group
            ops = {"layer_3k"}
        if not name.endswith("_3k"):
            ops |= {"qkv_rope"}
        assert set(errs) >= {"head", "sample", "sample_top_p_only"} | ops
        for op, e in errs.items():
            assert e < 1e-5, (name, op, e)


@pytest.mark.parametrize("batch,parts", [(4, 2), (6, 3)])
def test_step_in_branches_equals_one_chain(batch, parts):
    """A decode step cut into parallel branches (slot views of the runner, each with its
    own split-K counts) writes what one chain over the whole batch writes: the torch twins,
    two greedy steps; a batch too small for the parts stays one chain."""
    from mixvox.engines.chattts.gpt.triton_decode import compare_branches

    m = _torch_twins(max_batch=batch)
    errs = compare_branches(m, batch, 128, parts=parts, steps=2, seed=batch)
    assert errs["parts"] == parts
    assert errs["codes_differ"] == 0.0, errs
    for k in ("hres", "out_hidden", "k", "v"):
        assert errs[k] < 1e-5, (k, errs)
    m.branches = 2
    assert m._parts(3) == [(0, 3)] and m._parts(8) == [(0, 4), (4, 4)]


def test_branches_with_the_split_attention_are_refused(monkeypatch):
    """The step in branches together with the split attention gave unequal K rows on an
    H200 (a race between the two options): asking for both is a clear error, not a wrong
    decode."""
    m = _torch_twins(max_batch=8)
    m.branches = 2
    monkeypatch.setattr(m.ops, "tiles", {"attn": {"split": 64}}, raising=False)
    with pytest.raises(ValueError, match="split attention"):
        m._parts(8)
    monkeypatch.setattr(m.ops, "tiles", {"attn": {"split": 0}}, raising=False)
    assert m._parts(8) == [(0, 4), (4, 4)]


def test_batch_lookahead_decodes_the_same(golden, monkeypatch):
    """``batch_lookahead``: with several requests in flight and none waiting, the next
    window is enqueued before the end flags are read. The results (codes, hidden states,
    end flags) and the streamed frames equal those of the loop without it, when requests
    end by the end code inside a window (greedy, end code allowed: 69 / 27 / 20 / 43
    frames), by their caps, when the slot that limited the window run ahead ended early
    (``run`` then enqueues the steps the others still need) and after refills."""
    from mixvox.engines.chattts.gpt.cuda_graph import CudaSteps

    emb = torch.from_numpy(golden["code_spk/emb"])
    m = _torch_twins(max_batch=4)
    ahead: list[tuple] = []
    poll = CudaSteps.poll

    def spy(self, active):
        out = poll(self, active)
        if self._ahead is not None:
            ahead.append(self._ahead)
        return out

    monkeypatch.setattr(CudaSteps, "poll", spy)
    cases = [
        ([100, 100, 100, 100], 4),
        ([100, 40, 100, 100], 4),  # slot 1 limits the window run ahead and ends at 27
        ([100, 40, 100, 100, 50], 3),  # refills first
        ([24, 10], 2),  # caps only
    ]
    samp = CudaSampling(greedy=True)
    for caps, cap in cases:
        reqs = [CodeRequest(emb[: len(emb) - k], max_new=n) for k, n in zip(
            range(len(caps)), caps, strict=True)]  # fmt: skip
        runs = []
        for on in (False, True):
            m.batch_lookahead = on
            ahead.clear()
            seen: list[tuple] = []
            rs = m.generate(
                reqs, samp, max_batch=cap,
                on_frames=lambda t, c, h, d, seen=seen: seen.append((t, c.clone(), d)),
            )  # fmt: skip
            runs.append((rs, seen, list(ahead)))
        (ra, sa, aa), (rb, sb, ab) = runs
        assert not aa and ab, (caps, ab)  # it ran ahead only when switched on
        for x, y in zip(ra, rb, strict=True):
            assert torch.equal(x.codes, y.codes) and x.finished == y.finished
            # a window may run at another batch or length bucket (an ended slot rides
            # along), which moves the float sums' order only
            assert (x.hidden - y.hidden).abs().max() <= 1e-5 * x.hidden.abs().max()
        for r, n in zip(rb, caps, strict=True):
            assert len(r.codes) <= n and (r.finished or len(r.codes) == n)
            assert not (r.codes == 625).any()
        assert [(t, d) for t, _, d in sa] == [(t, d) for t, _, d in sb]
        assert all(torch.equal(c1, c2) for (_, c1, _), (_, c2, _) in zip(sa, sb, strict=True))
    assert _torch_twins(max_batch=1).batch_lookahead  # the default since session 7


_PERSIST = r"""
import json, sys
from pathlib import Path
import numpy as np
import torch
from mixvox.engines.chattts import randckpt
from mixvox.engines.chattts.gpt.cuda_graph import CodeRequest, CudaSampling
from mixvox.engines.chattts.gpt.triton_decode import TritonGPT, compare_persistent
tiny, work, shared = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
# wide code-head tiles: the head kernel's 313 programs would dominate the interpreter's time
base = {"fuse_o": 16, "head": 512}
m = TritonGPT(tiny / "asset", kernels="triton", device="cpu", precision="fp32", max_batch=1,
              max_len=256, use_graphs=False, tiles={"fma": {**base, "persist": 1}})
g = np.load(tiny / "golden.npz")
want = g["greedy/codes"]
r = m.generate([CodeRequest(torch.from_numpy(g["code_spk/emb"]), max_new=len(want))],
               CudaSampling(greedy=True, suppress_eos=True))[0]
h = g["greedy/hiddens"]
out = {"golden_equal": bool((r.codes.numpy() == want).all()),
       "hidden_err": float(np.abs(r.hidden.numpy() - h).max() / np.abs(h).max()),
       "kernels_per_step": m.kernels_per_step(1)}
# a grid barrier that gave up (set by hand: the interpreter has none) fails the generate
m.persist_err.fill_(1)
try:
    m.generate([CodeRequest(torch.from_numpy(g["code_spk/emb"]), max_new=1)],
               CudaSampling(greedy=True, suppress_eos=True))
    out["flag_raised"] = False
except RuntimeError as e:
    out["flag_raised"] = "grid barrier timed out" in str(e)
m.persist_err.zero_()
# the cache in one chunk, cache rows read before the wait (tiny, L 128); hidden 48 = 32 + 16
# (two K pieces per weight row) with two 256-row chunks of the cache (L 512)
out["tiny_L128"] = compare_persistent(m, 128, steps=2, seed=1, tiles={"fma": base})
# fp16 (the CUDA default), and bf16 weights with fp32 activations (the kernel's two dtypes)
for prec in ("fp16", "bf16"):
    m = TritonGPT(tiny / "asset", kernels="triton", device="cpu", precision=prec,
                  max_batch=1, max_len=256, use_graphs=False,
                  tiles={"fma": {**base, "persist": 1}})
    out[f"tiny_{prec}"] = compare_persistent(m, 128, steps=2, seed=3, tiles={"fma": base})
randckpt.make_checkpoint(work, shared, seed=0, sizes=randckpt.Sizes.small(
    hidden=48, intermediate=96, heads=3, layers=2))
m = TritonGPT(work / "asset", kernels="triton", device="cpu", precision="fp32", max_batch=1,
              max_len=512, use_graphs=False, tiles={"fma": {**base, "persist": 1}})
out["h48_L512"] = compare_persistent(m, 512, steps=2, seed=2, tiles={"fma": base})
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not installed: its CPU interpreter is needed")
def test_persistent_step_in_interpreter(golden, tmp_path):
    """The persistent batch-1 step (every layer in one launch, grid barriers between the
    phases; opt-in ``tiles fma.persist``) through Triton's interpreter, one launch per phase
    (programs run one after another there, so the barrier is compiled out): greedy decoding
    reproduces the golden codes and hiddens of the tiny checkpoint in 3 kernels per step,
    and from the same state its steps equal the 3-kernel fused step and the torch twins
    (residual stream, output hiddens, K/V cache rows, positions; the query and attention
    outputs poisoned with NaN before each run), on a cache in one chunk and in two, with
    the hidden size split into two K pieces (48 = 32 + 16), in fp32, fp16 and bf16 weights
    with fp32 activations; a set error flag (a grid barrier that gave up) fails
    ``generate``."""
    out = _interpret(_PERSIST, [TINY, tmp_path / "h48", SHARED], timeout=600)
    assert out["golden_equal"], out
    assert out["hidden_err"] < 1e-5, out
    assert out["kernels_per_step"] == 3
    assert out["flag_raised"]
    for case in ("tiny_L128", "h48_L512", "tiny_fp16", "tiny_bf16"):
        errs = out[case]
        assert len(errs) == 2 * 9, errs  # 8 outputs + the codes, against both references
        for k, e in errs.items():
            # fp16: one rounding of a differently ordered fp32 sum may land an ulp away
            assert e < (2e-3 if case == "tiny_fp16" else 1e-5), (case, k, e)


def test_persistent_step_is_opt_in():
    """Off by default (not yet measured on a GPU): the default tile table does not ask for
    it, and a runner without it keeps its per-layer weights (no stacking at load)."""
    from mixvox.engines.chattts.gpt import triton_decode as td

    assert td.TILES["fma"]["persist"] == 0
    m = _torch_twins(max_batch=2)
    assert m._wstack is None
    assert m.kernels_per_step(1) == 2 + 5 * m.num_layers


@pytest.mark.parametrize(
    "regs,shared,warps,want",
    [
        (255, 8192, 8, 1),  # the persistent step at 8 warps (ptxas for sm_90a): 1 per SM
        (128, 16384, 16, 1),  # 16 warps at 128 registers
        (121, 0, 8, 2),  # gpu_barrier's streaming kernel: 2 per SM (run A)
        (22, 0, 8, 8),  # the barrier alone: limited by warps (64 per SM)
        (40, 200_000, 4, 1),  # shared memory limits
        (255, 0, 16, 0),  # does not fit at all: 16 warps x 256 registers > 65,536
    ],
)
def test_programs_per_sm(regs, shared, warps, want):
    """The co-residency bound the persistent step checks before its first launch (a grid
    larger than SMs x this would spin at its first barrier until the bounded wait gives
    up): registers per warp in units of 256, shared memory, warps."""
    from mixvox.engines.chattts.gpt.triton_decode import programs_per_sm

    assert programs_per_sm(regs, shared, warps) == want


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_TRITON, reason="Triton not installed: its compiler is needed")
def test_persistent_step_compiles_for_hopper_and_fits_one_program_per_sm(tmp_path, monkeypatch):
    """The interpreter never compiles the kernel, so a GPU-only error (types of loop-carried
    values, layouts) would first show on the device: compile the full-size fp16 step for
    sm_90a with Triton's own ptxas (no GPU needed), for the cache in one chunk (L 256) and in
    chunks (L 512), and check that one program per SM fits (the grid of 132 is resident)."""
    import importlib.util

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))  # not the real cache
    spec = importlib.util.spec_from_file_location(
        "persist_resources", Path(__file__).resolve().parents[1] / "bench" / "persist_resources.py"
    )
    assert spec is not None and spec.loader is not None
    pr = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(pr)
        rows = [pr.compile_report(L, 8) for L in (256, 512)]
    except (RuntimeError, FileNotFoundError) as exc:  # a Triton without the CUDA backend
        if "ptxas" in str(exc) or "backend" in str(exc).lower():
            pytest.skip(f"no CUDA compiler in this Triton: {exc}")
        raise
    for r in rows:
        assert 0 < r["regs"] <= 255, r
        assert r["per_sm"] >= 1, r
        assert r["v4_loads"] > 0, r  # 16-byte weight loads
