"""The CPU decode step's fast paths give the results of the plain ones.

* the runtime graph with q|k|v packed into GroupQueryAttention (which then rotates q and k
  itself, at cache slot indices) against the graph with separate Split/RotaryEmbedding
  nodes: identical at batch 1, equal to float rounding for left-padded batches (padded rows
  are rotated at shifted positions; attention sees only position differences);
* the one-sort top-p/top-k of the sampler against the stable-argsort formulation it
  replaced, bit for bit, ties included;
* huge-page advice changes no result and never fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.gpt import hugepages, onnx_stack
from mixvox.engines.chattts.gpt.decode import prompt_positions
from mixvox.engines.chattts.gpt.sampler import SamplingParams, process_logits, top_k, top_p
from mixvox.engines.chattts.gpt.weights import GPTWeights

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
needs_tiny = pytest.mark.skipif(
    not (TINY / "golden.npz").is_file(), reason="tiny ChatTTS checkpoint not in ../shared"
)


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.fixture(scope="module")
def wide_heads(tmp_path_factory: pytest.TempPathFactory) -> GPTWeights:
    """A random GPT with 64-wide heads (the real model's), which the packed kernel needs."""
    if not (TINY / "golden.npz").is_file():
        pytest.skip("tiny ChatTTS checkpoint not in ../shared")
    from mixvox.engines.chattts.randckpt import Sizes, make_checkpoint

    out = make_checkpoint(
        tmp_path_factory.mktemp("h64") / "m",
        TINY,
        sizes=Sizes.small(hidden=128, heads=2, intermediate=256, layers=2),
        seed=5,
    )
    return GPTWeights.load(out / "asset")


def _decode(stack: onnx_stack.OnnxStack, x, mask, steps) -> list[np.ndarray]:
    B, T, _ = x.shape
    stack.begin(mask, T + len(steps))
    out = [stack.forward(x, prompt_positions(mask), 0).copy()]
    for i, e in enumerate(steps):
        pos = (mask.sum(axis=1) + i)[:, None].astype(np.int64)
        out.append(stack.forward(e, pos, T + i).copy())
    return out


def test_packed_attention_equals_split(wide_heads, tmp_path, monkeypatch) -> None:
    import onnx

    w = wide_heads
    monkeypatch.setattr(onnx_stack, "_PACKED_GQA", False)
    split = onnx_stack.OnnxStack(w, cache_dir=tmp_path)
    monkeypatch.setattr(onnx_stack, "_PACKED_GQA", True)
    packed = onnx_stack.OnnxStack(w, cache_dir=tmp_path)
    assert packed.graph_path != split.graph_path  # own cache keys
    ops = {n.op_type for n in onnx.load(str(packed.graph_path)).graph.node}
    assert "RotaryEmbedding" not in ops and "Split" in ops  # (the gate/up split stays)
    assert "RotaryEmbedding" in {n.op_type for n in onnx.load(str(split.graph_path)).graph.node}
    rng = np.random.default_rng(0)
    H = w.config.hidden_size
    for pads in ([0], [0, 4, 2]):
        B, T = len(pads), 9
        mask = np.ones((B, T), np.int64)
        for r, p in enumerate(pads):
            mask[r, :p] = 0
        x = rng.standard_normal((B, T, H)).astype(np.float32)
        steps = [rng.standard_normal((B, 1, H)).astype(np.float32) for _ in range(5)]
        a = _decode(split, x, mask, steps)
        b = _decode(packed, x, mask, steps)
        real = mask.astype(bool)
        if B == 1:  # the same positions, the same kernels: identical
            for u, v in zip(a, b, strict=True):
                np.testing.assert_array_equal(u, v)
        else:
            assert rel(b[0][real], a[0][real]) < 1e-5
            for u, v in zip(a[1:], b[1:], strict=True):
                assert rel(v, u) < 1e-5
    # a chunk after a cached prefix (batch 1) still equals one prefill of the whole
    x = rng.standard_normal((1, 10, H)).astype(np.float32)
    pos = np.arange(10, dtype=np.int64)[None]
    packed.begin(np.ones((1, 10), np.int64), 10)
    whole = packed.forward(x, pos, 0).copy()
    packed.begin(np.ones((1, 6), np.int64), 10)
    packed.forward(x[:, :6], pos[:, :6], 0)
    assert rel(packed.forward(x[:, 6:], pos[:, 6:], 6), whole[:, 6:]) < 1e-5


@needs_tiny
def test_narrow_heads_keep_the_split_graph(tmp_path) -> None:
    """The tiny model's 8-wide heads are below what the packed kernel rotates."""
    import onnx

    w = GPTWeights.load(TINY / "asset")
    assert w.config.head_dim % 16
    path = onnx_stack.runtime_graph_path(w, "fp32", tmp_path)
    assert "RotaryEmbedding" in {n.op_type for n in onnx.load(str(path)).graph.node}


# -- sampler: one sort instead of a stable argsort ----------------------------------------


def _top_p_argsort(logits: np.ndarray, p: float, min_keep: int) -> np.ndarray:
    """The formulation the sampler used before (and the reference's): a stable argsort."""
    out = np.array(logits, dtype=np.float32, copy=True)
    if p >= 1.0:
        return out
    order = np.argsort(out, axis=-1, kind="stable")
    srt = np.take_along_axis(out, order, axis=-1)
    mx = srt[:, -1:]
    e = np.exp(srt - np.where(np.isfinite(mx), mx, 0.0), dtype=np.float32)
    probs = e / e.sum(axis=-1, keepdims=True)
    remove_sorted = np.cumsum(probs, axis=-1, dtype=np.float32) <= np.float32(1.0 - p)
    remove_sorted[:, -min_keep:] = False
    remove = np.empty_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)
    out[remove] = -np.inf
    return out


def test_one_sort_filters_equal_the_argsort_ones() -> None:
    rng = np.random.default_rng(11)
    for trial in range(600):
        V = int(rng.integers(2, 700))
        n = int(rng.integers(1, 9))
        x = (rng.standard_normal((n, V)) * rng.uniform(0.1, 5)).astype(np.float32)
        if trial % 3 == 0:
            x = np.round(x * 2) / 2  # many ties, also at the top-p boundary
        if trial % 7 == 0:
            x[:, : V // 3] = -np.inf
        p = float(rng.choice([0.05, 0.3, 0.7, 0.95, 1.0]))
        k = int(rng.choice([1, 3, 20, 50, 1000]))
        keep = int(rng.integers(1, 5))
        want_p = _top_p_argsort(x, p, keep)
        np.testing.assert_array_equal(top_p(x, p, keep), want_p)
        want = top_k(want_p, k, keep)
        params = SamplingParams(temperature=1.0, top_p=p, top_k=k, min_keep=keep)
        got = process_logits(x, np.zeros((n, 0), np.int64), params)
        np.testing.assert_array_equal(got, want)


# -- huge pages ------------------------------------------------------------------------------


def test_hugepage_advice_is_harmless(monkeypatch) -> None:
    before = hugepages.mappings()
    buf = np.ones(16 << 20, np.uint8)  # a fresh 16 MiB mapping
    n = hugepages.advise_new(before)
    assert n >= 0 and hugepages.huge_bytes() >= 0
    assert int(buf.sum()) == 16 << 20  # contents untouched
    monkeypatch.setenv("MIXVOX_NO_HUGEPAGES", "1")
    assert hugepages.advise_new(set()) == 0


# -- int4 zero points ------------------------------------------------------------------------


@pytest.mark.parametrize("block", onnx_stack.INT4_BLOCKS)
def test_int4_zero_points_layout(block: int) -> None:
    """MatMulNBits on our asymmetric codes and packed zero points equals x @ our
    dequantization (an odd block count and a ragged last block included), which is closer to
    the float weights than the symmetric codes; an all-zero block stays exactly zero."""
    import onnxruntime as ort
    from onnx import helper

    from mixvox.engines.chattts.onnx_graph import GraphBuilder

    rng = np.random.default_rng(block)
    N, K = 24, 2 * block + block // 2
    w = rng.standard_normal((N, K)).astype(np.float32)
    w[3] = 0.0
    x = rng.standard_normal((3, K)).astype(np.float32)
    q, s, zp = onnx_stack._quantize_int4_blocks_zp(w, block)
    nb = -(-K // block)
    assert q.shape == (N, nb, block // 2) and s.shape == (N * nb,)
    assert zp.shape == (N, (nb + 1) // 2) and zp.dtype == np.uint8
    codes = np.empty((N, nb, block), np.float32)
    codes[..., 0::2], codes[..., 1::2] = q & 15, q >> 4
    z = np.stack([zp & 15, zp >> 4], -1).reshape(N, -1)[:, :nb].astype(np.float32)
    deq = ((codes - z[..., None]) * s.reshape(N, nb, 1)).reshape(N, -1)[:, :K]
    assert (deq[3] == 0).all()
    g = GraphBuilder("t")
    xi = g.input("x", np.float32, [3, K])
    y = g.op(
        "MatMulNBits",
        xi,
        g.const("w", q),
        g.const("s", s),
        g.const("z", zp),
        domain="com.microsoft",
        K=K,
        N=N,
        bits=4,
        block_size=block,
        accuracy_level=0,
    )
    g.output(y, "y", np.float32, [3, N])
    m = g.build()
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], x @ deq.T, rtol=1e-4, atol=1e-4)
    qs, ss = onnx_stack._quantize_int4_blocks(w, block)
    sym_codes = np.empty((N, nb, block), np.float32)
    sym_codes[..., 0::2], sym_codes[..., 1::2] = qs & 15, qs >> 4
    sym = ((sym_codes - 8) * ss.reshape(N, nb, 1)).reshape(N, -1)[:, :K]
    assert np.linalg.norm(deq - w) < np.linalg.norm(sym - w)


def test_int8_head_is_close_to_the_float_head() -> None:
    rng = np.random.default_rng(2)
    wt = (rng.standard_normal((256, 300)) * 0.05).astype(np.float32)  # [K, N]
    x = rng.standard_normal((2, 256)).astype(np.float32)
    want = x @ wt
    for head in (
        onnx_stack.OnnxHead(wt, int8=True),
        onnx_stack.OnnxHead(np.ascontiguousarray(wt.T), out_in=True, int8=True),
    ):
        got = head(x)
        assert got.shape == want.shape
        assert 0 < rel(got, want) < 0.03  # 8-bit weights and activations: ~1 %


# -- int4: a block size per kind of matrix ---------------------------------------------------


def test_int4_block_per_matrix_kind(wide_heads, tmp_path, monkeypatch) -> None:
    """``_INT4_BLOCK_BY_MATRIX`` gives the named kind of matrix (here gate|up) its own block
    size: those MatMulNBits nodes and initializers are the block-128 graph's, every other one
    the block-64 graph's; the graph has its own cache key and decodes close to both."""
    import onnx
    from onnx import numpy_helper

    w = wide_heads

    def graph(block: int, by_matrix: dict[str, int]) -> tuple[Path, onnx.ModelProto]:
        monkeypatch.setattr(onnx_stack, "_INT4_BLOCK_BY_MATRIX", by_matrix)
        path = onnx_stack.runtime_graph_path(w, "int4", tmp_path, int4_block=block, kv_cache="fp32")
        return path, onnx.load(str(path))

    p64, g64 = graph(64, {})
    p128, g128 = graph(128, {})
    pmix, gmix = graph(64, {"wgu": 128})
    assert len({p64, p128, pmix}) == 3  # own cache keys
    kind = re.compile(r"^l\d+_(wqkv|wo|wgu|wd)_")  # the layers' weights, scales, zero points
    seen = set()
    for n in gmix.graph.node:
        m = kind.match(n.input[1]) if n.op_type == "MatMulNBits" else None
        if m:
            block = {a.name: a.i for a in n.attribute}["block_size"]
            assert block == (128 if m.group(1) == "wgu" else 64), n.input[1]
            seen.add(m.group(1))
    assert seen == {"wqkv", "wo", "wgu", "wd"}
    inits = {
        name: {i.name: numpy_helper.to_array(i) for i in g.graph.initializer}
        for name, g in (("64", g64), ("128", g128), ("mix", gmix))
    }
    n_checked = 0
    for name, arr in inits["mix"].items():
        m = kind.match(name)
        if m:
            src = "128" if m.group(1) == "wgu" else "64"
            np.testing.assert_array_equal(arr, inits[src][name])
            n_checked += 1
    assert n_checked >= 2 * 4 * 3  # 2 layers x 4 matrices x (codes, scales, zero points)
    monkeypatch.setattr(onnx_stack, "_INT4_BLOCK_BY_MATRIX", {})
    rng = np.random.default_rng(3)
    H = w.config.hidden_size
    x = rng.standard_normal((1, 6, H)).astype(np.float32)
    steps = [rng.standard_normal((1, 1, H)).astype(np.float32) for _ in range(3)]
    mask = np.ones((1, 6), np.int64)
    ref = _decode(onnx_stack.OnnxStack(w, cache_dir=tmp_path, kv_cache="fp32"), x, mask, steps)
    outs = {}
    for name, by in (("64", {}), ("mix", {"wgu": 128})):
        monkeypatch.setattr(onnx_stack, "_INT4_BLOCK_BY_MATRIX", by)
        st = onnx_stack.OnnxStack(
            w, precision="int4", cache_dir=tmp_path, int4_block=64, kv_cache="fp32"
        )
        outs[name] = _decode(st, x, mask, steps)
    for a, b, r in zip(outs["64"], outs["mix"], ref, strict=True):
        assert not np.array_equal(a, b)  # the gate|up weights really differ
        assert rel(b, r) < 0.5 and rel(a, r) < 0.5  # both 4-bit approximations of fp32


def test_int4_mlp_block_option(monkeypatch) -> None:
    """``INT4_MLP_BLOCK`` / ``MIXVOX_INT4_MLP_BLOCK`` give gate|up and down their own block
    (nothing when it equals the graph's); a bad value is a clear error."""
    by = onnx_stack._int4_blocks_by_matrix
    monkeypatch.delenv("MIXVOX_INT4_MLP_BLOCK", raising=False)
    assert by(64) == {}  # the default: uniform
    monkeypatch.setattr(onnx_stack, "INT4_MLP_BLOCK", 128)
    assert by(64) == {"wgu": 128, "wd": 128}
    assert by(128) == {}  # the same as the graph's block: a uniform graph, its usual key
    monkeypatch.setattr(onnx_stack, "_INT4_BLOCK_BY_MATRIX", {"wd": 32})
    assert by(64) == {"wgu": 128, "wd": 32}  # the per-kind table wins
    monkeypatch.setattr(onnx_stack, "_INT4_BLOCK_BY_MATRIX", {})
    monkeypatch.setattr(onnx_stack, "INT4_MLP_BLOCK", None)
    monkeypatch.setenv("MIXVOX_INT4_MLP_BLOCK", "128")
    assert by(64) == {"wgu": 128, "wd": 128}
    monkeypatch.setenv("MIXVOX_INT4_MLP_BLOCK", "256")  # offered for the MLP alone
    assert by(32) == {"wgu": 256, "wd": 256}
    for bad in ("96", "512", "x"):
        monkeypatch.setenv("MIXVOX_INT4_MLP_BLOCK", bad)
        with pytest.raises(ValueError, match="MIXVOX_INT4_MLP_BLOCK"):
            by(64)
