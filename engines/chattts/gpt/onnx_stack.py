"""ONNX graphs of the ChatTTS Llama stack (built without torch) and their ONNX Runtime runner.

Two graphs, both serving prefill and decode (``T`` new positions after ``start`` cached ones):

* the **portable** graph (:func:`build_stack_graph`, standard ONNX ops only; TensorRT parses
  it), described first below;
* the **runtime** graph (:func:`build_runtime_graph`) that :class:`OnnxStack` runs on ONNX
  Runtime's CPU provider, described after it.

Portable graph

inputs
    ``inputs_embeds`` ``[B, T, H]`` float32, ``position_ids`` ``[B, T]`` int64,
    ``key_mask`` ``[B, S]`` int64 (1 = attend; prompt padding 0), ``start`` ``[1]`` int64,
    ``past`` ``[L, 2, B, heads, S, head_dim]`` float32 (the whole preallocated KV cache).
outputs
    ``hidden`` ``[B, T, H]`` (after the final RMSNorm), ``present`` ``[L, 2, B, heads, T,
    head_dim]`` (the keys/values of the ``T`` new positions only).

Why this layout: the cache is one numpy array allocated once per (batch, max length) and
bound to the session by pointer (IOBinding over CPU memory, no copy); the graph slices the
first ``start`` slots of each layer (a copy proportional to the current length, not to
``S``), and the runner (TensorRT's) writes the small ``present`` into slots ``[start, start + T)`` in
place. Attention uses ``Where(mask, scores, finfo.min)`` rather than an additive ``-inf``, so
fully padded query rows give a uniform softmax instead of NaN (NaN would poison nothing, but
is not worth the risk). Math follows transformers' ``LlamaModel`` in float32: RMSNorm
``x * rsqrt(mean(x^2) + eps) * w``, rotary ``q*cos + rotate_half(q)*sin`` with
``inv_freq = theta^(-2i/d)``, softmax attention scaled by ``head_dim^-0.5``, SiLU-gated MLP.

Runtime graph
    Same math with ONNX Runtime's fused CPU kernels (``com.microsoft`` domain), because a decode
    step of the portable graph is ~700 small nodes whose dispatch, plus the per-step copy of the
    cache prefix (``Slice``/``Concat``), cost about a quarter of the step next to the matmuls:
    ``SimplifiedLayerNormalization`` / ``SkipSimplifiedLayerNormalization`` (RMSNorm with the
    residual add) and ``GroupQueryAttention`` with ``num_heads == kv_num_heads`` over a
    **shared** past/present buffer: the per-layer inputs ``past_key_<i>``/``past_value_<i>``
    ``[B, heads, S, head_dim]`` and outputs ``present_key_<i>``/``present_value_<i>`` are bound
    to the same memory, and the kernel appends the new keys/values in place (nothing is copied
    per step). Padding enters as an additive ``attention_bias`` (0 or ``finfo.min``, never
    ``-inf``). With heads a multiple of 16 wide (the real model's 64) the q|k|v matmul output
    goes to the kernel packed and the kernel rotates q and k itself (``do_rotary``): one node
    per layer instead of Split, ``RotaryEmbedding``, Split and the attention (~2 % of an int4
    step). It rotates at *cache slot* indices, not at the ``position_ids``: identical for
    unpadded rows (batch 1), and for a left-padded row every position is shifted by its
    padding, which attention does not see (it depends on position differences only; the
    results agree to float rounding, ~1e-7). Narrower heads (the tiny test model) keep the
    separate ``RotaryEmbedding`` at ``position_ids``. ``int8`` replaces each
    MatMul with ``MatMulNBits`` (8-bit symmetric weights, one scale per 128 inputs of an output
    column, ``accuracy_level=4``: activations quantized per block to int8 and multiplied with
    VNNI/AVX2 integer kernels). Measured against ``quantize_dynamic``'s per-column
    ``DynamicQuantizeMatMul`` in this same fused graph (2-core AVX-512 VNNI Xeon): ~9 % slower
    at batch 1, faster at batch 8 (best step 24 vs 30 ms); and half the error of the previous
    ``DynamicQuantizeMatMul`` graph (code logits max rel error 0.050 vs 0.106 on a full-size
    random checkpoint, teacher-forced argmax agreement 91 % vs 86 %), since both its weight
    and its activation scales are per block rather than per column / per tensor.
    ``int4`` is the same with 4-bit weights (``bits=4``, two per byte, zero point 8, one
    scale per ``INT4_BLOCK`` inputs, chosen per block from a few clipping factors for the
    least weight error; block 32, 64 or 128): half int8's weight bytes per step, at a clear
    cost in agreement (BENCHMARKS.md's CPU section). Since ``gpt-ort-3`` the 4-bit blocks are
    asymmetric (a zero point per block, :func:`_quantize_int4_blocks_zp`: 4-5 % less matmul
    error at no kernel cost) and the int4 stack's code/text heads run as 8-bit
    ``MatMulNBits`` too (:class:`OnnxHead`). Each precision and block size has its own graph
    cache key. Since issue 9's session 5 the int4 graph also computes the code logits of its
    last position (output ``code_logits``, the same 8-bit head and kernel, so the same logits:
    one ONNX Runtime call per decode step instead of two), and ``kv_cache="int8"`` (the int4
    default, :data:`KV_CACHE_DEFAULT`) stores keys and values as int8 with static
    per-channel scales, calibrated once per graph on a seeded random sequence
    (:func:`_kv_absmax`, :func:`_int8_kv_graph`): a quarter of the bytes attention reads per
    step, at a measured cost in agreement (BENCHMARKS.md, "CPU: session 5").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mixvox.engines.chattts.gpt import hugepages
from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph, graph_source

if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort

    from mixvox.engines.chattts.gpt.weights import GPTConfig, GPTWeights

__all__ = [
    "BUILDER_VERSION",
    "RUNTIME_BUILDER_VERSION",
    "OnnxStack",
    "build_runtime_graph",
    "build_stack_graph",
    "physical_cores",
    "runtime_graph_path",
    "stack_graph_path",
]

#: Bump when the portable graph changes, so cached graphs are rebuilt.
BUILDER_VERSION = "gpt-stack-2"
#: Bump when the runtime graph (or its int8/int4 quantization) changes. ``-2``: int4 added
#: (fp32/int8 graphs are unchanged, but the key names the block size of either kind); ``-3``:
#: packed attention with in-kernel rotary, int4 zero points (both also named in the key).
RUNTIME_BUILDER_VERSION = "gpt-ort-3"

_MS = "com.microsoft"
#: Weights per int8 scale along the input dimension (MatMulNBits ``block_size``).
INT8_BLOCK = 128
#: Block sizes MatMulNBits takes for 4-bit weights that we offer (inputs per scale).
INT4_BLOCKS = (32, 64, 128)
#: The int4 default (see ``bench/cpu.py --int4-blocks`` and BENCHMARKS.md's CPU section).
INT4_BLOCK = 64
#: Scale shrink factors tried per 4-bit block (the one with the least weight error is kept).
_INT4_ALPHAS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7)
#: The runtime graph's precisions (the ONNX CPU path's, default first).
RUNTIME_PRECISIONS = ("fp32", "int8", "int4")

_BIG = np.iinfo(np.int64).max
#: Extra ONNX Runtime session config entries for every session :func:`make_session` makes
#: (empty by default; ``bench/cpu_ab.py`` A/Bs thread-pool settings through it).
SESSION_CONFIG: dict[str, str] = {}
#: Runtime graph: q|k|v packed into GroupQueryAttention, which rotates them itself.
_PACKED_GQA = True
#: int4 graphs: a block size per kind of matrix that differs from the graph's (``wqkv``, ``wo``,
#: ``wgu``: gate|up, ``wd``: down), e.g. ``{"wgu": 128}``; empty: every matrix takes the
#: graph's block (the default). For A/Bs of the bytes-vs-agreement trade (``bench/gpt_cpu.py``
#: ``+gu128``); part of the graph's cache key when set. Wins over :data:`INT4_MLP_BLOCK`.
_INT4_BLOCK_BY_MATRIX: dict[str, int] = {}
#: int4 graphs: the block size of the MLP matrices (gate|up and down, 75 % of the weights);
#: None: the graph's block for every matrix (the default). ``128`` with the default block 64
#: keeps q|k|v and o at 64: why, and what it costs, in BENCHMARKS.md ("CPU: session 6"). The
#: environment variable ``MIXVOX_INT4_MLP_BLOCK`` (one of :data:`INT4_MLP_BLOCKS`) overrides it,
#: so a benchmark subprocess can choose it (``bench/cpu.py`` config ``onnx:int4+mlp128``).
INT4_MLP_BLOCK: int | None = None
#: Block sizes the MLP matrices may take: :data:`INT4_BLOCKS` and 256 (MatMulNBits takes any
#: power of two from 16; 256 is offered for the MLP alone, whose 4-bit error matters least).
INT4_MLP_BLOCKS = (*INT4_BLOCKS, 256)
#: int4 graphs: asymmetric blocks with zero points (:func:`_quantize_int4_blocks_zp`).
_INT4_ZERO_POINTS = True
#: int4 stacks: the code and text heads as 8-bit ``MatMulNBits`` too (:class:`OnnxHead`).
_INT8_HEADS = True
#: int4 graphs: the code heads inside the stack graph (output ``code_logits``, the last
#: position's ``[B, 1, num_vq * num_audio_tokens]``), so a decode step is one ONNX Runtime call;
#: the same 8-bit weights and kernel as :class:`OnnxHead`, so the same logits bit for bit.
_FUSED_CODE_HEAD = True
#: KV-cache element types of the CPU runtime graph: float32, or int8 with one static scale per
#: (layer, key/value, head, channel) (:func:`_int8_kv_graph`).
KV_CACHES = ("fp32", "int8")
#: The KV cache each runtime precision gets unless one is asked for (``OnnxStack(kv_cache=)``):
#: int8 for int4, whose own error dominates (full-size random checkpoint, 400 teacher-forced
#: frames: top-1 vs fp32 45.2 % -> 44.1 % at block 64, 31.5 % -> 31.2 % at 128) and which it
#: makes ~5-9 % faster per step; fp32 and int8 keep the exact cache (it costs fp32 2.6 points:
#: BENCHMARKS.md, "CPU: session 5").
KV_CACHE_DEFAULT = {"fp32": "fp32", "int8": "fp32", "int4": "int8"}
#: int8 KV cache: scale = calibrated |max| x this margin / 127 (headroom for unseen inputs;
#: values beyond it saturate at +-127).
KV8_MARGIN = 2.0
#: Bump when the int8 KV calibration changes (part of its graph's cache key).
KV8_CALIBRATION = "kv8-1"
#: Calibration sequence: prompt positions (random text tokens, one speaker vector) then
#: positions fed with random code frames, all in one prefill of the fp32-cache graph.
_KV8_CALIB_PROMPT, _KV8_CALIB_FRAMES = 48, 144


def build_stack_graph(w: GPTWeights) -> onnx.ModelProto:
    """Build the stack graph (see the module docstring) from float32 weights."""
    cfg: GPTConfig = w.config
    H, nh, D, L = cfg.hidden_size, cfg.num_heads, cfg.head_dim, cfg.num_layers
    g = GraphBuilder("chattts_gpt_stack")
    x = g.input("inputs_embeds", np.float32, ["batch", "seq", H])
    pos = g.input("position_ids", np.int64, ["batch", "seq"])
    kmask = g.input("key_mask", np.int64, ["batch", "max_len"])
    start = g.input("start", np.int64, [1])
    past = g.input("past", np.float32, [L, 2, "batch", nh, "max_len", D])

    # lengths: T new, total = start + T
    seq = g.op("Gather", g.op("Shape", x), g.const("i1", np.array([1], np.int64)), axis=0)
    total = g.op("Add", start, seq)
    zero1 = g.const("z1", np.array([0], np.int64))
    one1 = g.const("o1", np.array([1], np.int64))
    # attention mask [B, 1, T, total]: key j valid and j <= start + i
    kpos = g.op(
        "Range", g.op("Squeeze", zero1), g.op("Squeeze", total), g.op("Squeeze", one1)
    )  # [total]
    qpos = g.op(
        "Add",
        g.op("Range", g.op("Squeeze", zero1), g.op("Squeeze", seq), g.op("Squeeze", one1)),
        start,
    )  # [T]
    causal = g.op(
        "LessOrEqual", g.op("Unsqueeze", kpos, zero1), g.op("Unsqueeze", qpos, one1)
    )  # [T, total]
    km = g.op("Slice", kmask, zero1, total, one1)  # [B, total]
    km = g.op("Cast", km, to=9)  # bool
    valid = g.op(
        "And", g.op("Unsqueeze", causal, zero1), g.op("Unsqueeze", km, one1)
    )  # [B, T, total]
    valid = g.op("Unsqueeze", valid, one1)  # [B, 1, T, total]
    neg = g.const("neg", np.array(np.finfo(np.float32).min, np.float32))

    # rotary tables [B, 1, T, D]
    inv_freq = (
        1.0
        / (
            np.float32(cfg.rope_theta)
            ** (np.arange(0, D, 2, dtype=np.int64).astype(np.float32) / np.float32(D))
        )
    ).astype(np.float32)
    pf = g.op("Unsqueeze", g.op("Cast", pos, to=1), g.const("a2", np.array([2], np.int64)))
    freqs = g.op("Mul", pf, g.const("inv_freq", inv_freq))  # [B, T, D/2]
    emb = g.op("Concat", freqs, freqs, axis=-1)
    cos = g.op("Unsqueeze", g.op("Cos", emb), one1)
    sin = g.op("Unsqueeze", g.op("Sin", emb), one1)

    eps = g.const("eps", np.array(cfg.rms_norm_eps, np.float32))
    two = g.const("two", np.array(2.0, np.float32))
    scale = g.const("scale", np.array(D**-0.5, np.float32))
    heads_shape = g.const("hshape", np.array([0, 0, nh, D], np.int64))
    merge_shape = g.const("mshape", np.array([0, 0, H], np.int64))
    half = D // 2

    def rms(v: str, weight: np.ndarray, hint: str) -> str:
        var = g.op("ReduceMean", g.op("Pow", v, two), axes=[-1], keepdims=1)
        n = g.op("Mul", v, g.op("Reciprocal", g.op("Sqrt", g.op("Add", var, eps))))
        return g.op("Mul", n, g.const(hint, weight))

    def linear(v: str, weight: np.ndarray, hint: str) -> str:
        return g.op("MatMul", v, g.const(hint, np.ascontiguousarray(weight.T)))

    def rope(t: str) -> str:
        a, b = g.op(
            "Split", t, g.const("split", np.array([half, half], np.int64)), axis=-1, n_out=2
        )
        rot = g.op("Concat", g.op("Neg", b), a, axis=-1)
        return g.op("Add", g.op("Mul", t, cos), g.op("Mul", rot, sin))

    def to_heads(t: str) -> str:
        return g.op("Transpose", g.op("Reshape", t, heads_shape), perm=[0, 2, 1, 3])

    qkv_split = g.const("qkv_split", np.array([H, nh * D, nh * D], np.int64))
    presents = []
    h = x
    for i, lw in enumerate(w.layers):
        p = f"l{i}_"
        n = rms(h, lw["input_layernorm"], p + "ln1")
        # q, k, v (and gate, up below) as one GEMM each: fewer, larger kernels per step
        wqkv = np.concatenate([lw["q_proj"], lw["k_proj"], lw["v_proj"]], axis=0)
        q, k, v = g.op("Split", linear(n, wqkv, p + "wqkv"), qkv_split, axis=-1, n_out=3)
        q = rope(to_heads(q))
        k = rope(to_heads(k))
        v = to_heads(v)
        presents.append(
            g.op("Concat", g.op("Unsqueeze", k, zero1), g.op("Unsqueeze", v, zero1), axis=0)
        )  # [2, B, nh, T, D]
        kv_axes = g.const("kvax", np.array([0, 1, 4], np.int64))
        ends_k = g.op("Concat", g.const(p + "ek", np.array([i + 1, 1], np.int64)), start, axis=0)
        ends_v = g.op("Concat", g.const(p + "ev", np.array([i + 1, 2], np.int64)), start, axis=0)
        pk = g.op("Slice", past, g.const(p + "sk", np.array([i, 0, 0], np.int64)), ends_k, kv_axes)
        pv = g.op("Slice", past, g.const(p + "sv", np.array([i, 1, 0], np.int64)), ends_v, kv_axes)
        sq = g.const("sq01", np.array([0, 1], np.int64))
        kf = g.op("Concat", g.op("Squeeze", pk, sq), k, axis=2)  # [B, nh, total, D]
        vf = g.op("Concat", g.op("Squeeze", pv, sq), v, axis=2)
        scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", kf, perm=[0, 1, 3, 2])), scale)
        probs = g.op("Softmax", g.op("Where", valid, scores, neg), axis=-1)
        att = g.op(
            "Reshape", g.op("Transpose", g.op("MatMul", probs, vf), perm=[0, 2, 1, 3]), merge_shape
        )
        h = g.op("Add", h, linear(att, lw["o_proj"], p + "wo"))
        n = rms(h, lw["post_attention_layernorm"], p + "ln2")
        inter = lw["gate_proj"].shape[0]
        gate, up = g.op(
            "Split",
            linear(n, np.concatenate([lw["gate_proj"], lw["up_proj"]]), p + "wgu"),
            g.const("gu_split", np.array([inter, inter], np.int64)),
            axis=-1,
            n_out=2,
        )
        act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
        h = g.op("Add", h, linear(act, lw["down_proj"], p + "wd"))
    out = rms(h, w.norm, "final_norm")
    g.output(out, "hidden", np.float32, ["batch", "seq", H])
    present = g.op("Concat", *[g.op("Unsqueeze", pr, zero1) for pr in presents], axis=0)
    g.output(present, "present", np.float32, [L, 2, "batch", nh, "seq", D])
    return g.build(doc=f"ChatTTS GPT Llama stack ({BUILDER_VERSION})")


def stack_graph_path(
    w: GPTWeights, precision: str = "fp32", cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Path of the (cached) portable graph for ``precision`` ``fp32`` or ``int8`` (``int8``:
    ``quantize_dynamic`` per-channel QInt8 MatMuls). :class:`OnnxStack` runs the runtime
    graph (:func:`runtime_graph_path`) instead; this one is for consumers that need standard
    ONNX ops (TensorRT)."""
    cache = Path(cache_dir) if cache_dir is not None else None
    parts = {"weights_sha256": w.gpt_sha256, "builder": BUILDER_VERSION, "precision": "fp32"}
    fp32 = cached_graph("chattts-gpt", parts, lambda: build_stack_graph(w), cache)
    if precision == "fp32":
        return fp32
    if precision != "int8":
        raise ValueError(f"ONNX GPT precision must be fp32 or int8, got {precision!r}")

    def quantize() -> onnx.ModelProto:
        import tempfile

        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "q.onnx"
            quantize_dynamic(
                str(fp32),
                str(out),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
            )
            return onnx.load(str(out))

    parts = {**parts, "precision": "int8", "quant": "dynamic-matmul-qint8-per-channel"}
    return cached_graph("chattts-gpt-int8", parts, quantize, cache)


def _nbits_matmul(
    g: GraphBuilder, x: str, hint: str, w_nk: np.ndarray, bits: int, block: int
) -> str:
    """``x @ w_nk.T`` as one ``MatMulNBits`` node of ``bits`` 8 or 4 (initializers ``hint``,
    ``hint_scales`` and, for 4-bit blocks with zero points, ``hint_zp``): the one place the
    quantized stacks and the 8-bit heads lay out their weights."""
    N, K = w_nk.shape
    if bits == 4 and _INT4_ZERO_POINTS:
        q, scales, zp = _quantize_int4_blocks_zp(w_nk, block)
        extra = [g.const(hint + "_zp", zp)]
    else:
        quantize = _quantize_int8_blocks if bits == 8 else _quantize_int4_blocks
        q, scales = quantize(w_nk, block)
        extra = []
    return g.op(
        "MatMulNBits",
        x,
        g.const(hint, q),
        g.const(hint + "_scales", scales),
        *extra,
        domain=_MS,
        K=K,
        N=N,
        bits=bits,
        block_size=block,
        accuracy_level=4,
    )


def _int8_matmul(g: GraphBuilder, x: str, hint: str, w_nk: np.ndarray) -> str:
    """``x @ w_nk.T`` in the int8 stack's layout (8-bit, :data:`INT8_BLOCK`), for the heads."""
    return _nbits_matmul(g, x, hint, w_nk, 8, INT8_BLOCK)


def _quantize_int8_blocks(weight: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """``[N, K]`` float weights -> MatMulNBits' 8-bit layout: ``[N, ceil(K/block), block]``
    uint8 (symmetric, zero point 128 implied) and ``[N * blocks]`` float32 scales. A ragged
    last block is zero-padded (the kernel ignores inputs past ``K``)."""
    N, K = weight.shape
    nb = -(-K // block)
    wb = np.zeros((N, nb * block), np.float32)
    wb[:, :K] = weight
    wb = wb.reshape(N, nb, block)
    amax = np.abs(wb).max(axis=-1)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(wb / scale[..., None]), -127, 127).astype(np.int16) + 128
    return q.astype(np.uint8), scale.reshape(-1)


def _int4_trial(
    wb: np.ndarray, m: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes (-8..7), scales and squared weight error per block for scale ``alpha * m / -8``."""
    sc = (m * np.float32(alpha / -8.0)).astype(np.float32)
    q = np.clip(np.rint(wb / sc[..., None]), -8, 7)
    return q, sc, np.square(q * sc[..., None] - wb).sum(axis=-1)


def _quantize_int4_blocks(weight: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """``[N, K]`` float weights -> MatMulNBits' 4-bit layout: ``[N, ceil(K/block), block/2]``
    uint8, two weights per byte (the lower input index in the low nibble), zero point 8
    implied, and ``[N * blocks]`` float32 scales.

    Symmetric with the sign trick: the block's largest-magnitude weight ``m`` maps to -8
    (scale ``m / -8``, negative when ``m`` is), so all 16 levels are used; the opposite
    extreme clips from 8 to 7. Each block then keeps whichever of the scales ``alpha * m / -8``
    (alpha in :data:`_INT4_ALPHAS`) gives the least squared weight error: clipping the few
    largest weights a little buys a finer step for all the others (on Gaussian weights, block
    32: matmul output error 8.4 % instead of 8.7 %; zero points would give 8.2 % but cost an
    extra input per kernel). Build time only; done in row slabs to bound the temporaries.
    """
    N, K = weight.shape
    nb = -(-K // block)
    packed = np.empty((N, nb, block // 2), np.uint8)
    scales = np.empty((N, nb), np.float32)
    for r0 in range(0, N, 1024):
        r1 = min(N, r0 + 1024)
        wb = np.zeros((r1 - r0, nb * block), np.float32)
        wb[:, :K] = weight[r0:r1]
        wb = wb.reshape(r1 - r0, nb, block)
        idx = np.abs(wb).argmax(axis=-1)
        m = np.take_along_axis(wb, idx[..., None], axis=-1)[..., 0]
        m = np.where(m != 0, m, -8.0).astype(np.float32)  # all-zero block: scale 1, codes 8
        best_q, best_s, best_e = _int4_trial(wb, m, _INT4_ALPHAS[0])
        for alpha in _INT4_ALPHAS[1:]:
            q, sc, err = _int4_trial(wb, m, alpha)
            better = err < best_e
            best_q = np.where(better[..., None], q, best_q)
            best_s = np.where(better, sc, best_s)
            best_e = np.minimum(err, best_e)
        q8 = (best_q + 8).astype(np.uint8)
        packed[r0:r1] = q8[..., 0::2] | (q8[..., 1::2] << 4)
        scales[r0:r1] = best_s
    return packed, scales.reshape(-1)


def _int4_zp_trial(
    wb: np.ndarray, lo0: np.ndarray, hi0: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Codes (0..15), scales, zero points and squared weight error per block for the range
    ``alpha * [lo0, hi0]`` mapped onto 16 levels."""
    lo, hi = lo0 * np.float32(alpha), hi0 * np.float32(alpha)
    sc = ((hi - lo) / np.float32(15.0)).astype(np.float32)
    sc = np.where(sc > 0, sc, np.float32(1.0))  # all-zero block: codes = zero = 8
    z = np.where(hi > lo, np.clip(np.rint(-lo / sc), 0, 15), 8.0)
    q = np.clip(np.rint(wb / sc[..., None]) + z[..., None], 0, 15)
    err = np.square((q - z[..., None]) * sc[..., None] - wb).sum(axis=-1)
    return q, sc, z, err


def _quantize_int4_blocks_zp(
    weight: np.ndarray, block: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Asymmetric 4-bit blocks: ``[N, ceil(K/block), block/2]`` uint8 codes (two per byte, as
    :func:`_quantize_int4_blocks`), ``[N * blocks]`` float32 scales and MatMulNBits' packed
    zero points, ``[N, ceil(blocks/2)]`` uint8 (two per byte, the even block in the low
    nibble); a weight is ``(code - zero) * scale``.

    The block's range ``[min(w, 0), max(w, 0)]`` is mapped onto the 16 levels, shrunk by the
    factor in :data:`_INT4_ALPHAS` that gives the least squared weight error. Against the
    symmetric codes this spends no level on the side of zero the block does not reach: on
    Gaussian weights the matmul output error is 5 % lower at the same block size (block 128:
    9.6 % instead of 9.8 %, about block 64's symmetric 9.1 %), and the kernel is as fast
    (the zero points are 1/8 of the scales' bytes). Build time only, in row slabs.
    """
    N, K = weight.shape
    nb = -(-K // block)
    packed = np.empty((N, nb, block // 2), np.uint8)
    scales = np.empty((N, nb), np.float32)
    zeros = np.empty((N, nb), np.uint8)
    for r0 in range(0, N, 1024):
        r1 = min(N, r0 + 1024)
        wb = np.zeros((r1 - r0, nb * block), np.float32)
        wb[:, :K] = weight[r0:r1]
        wb = wb.reshape(r1 - r0, nb, block)
        lo0 = np.minimum(wb.min(axis=-1), 0.0)
        hi0 = np.maximum(wb.max(axis=-1), 0.0)
        best_q, best_s, best_z, best_e = _int4_zp_trial(wb, lo0, hi0, _INT4_ALPHAS[0])
        for alpha in _INT4_ALPHAS[1:]:
            q, sc, z, err = _int4_zp_trial(wb, lo0, hi0, alpha)
            better = err < best_e
            best_q = np.where(better[..., None], q, best_q)
            best_s = np.where(better, sc, best_s)
            best_z = np.where(better, z, best_z)
            best_e = np.minimum(err, best_e)
        q8 = best_q.astype(np.uint8)
        packed[r0:r1] = q8[..., 0::2] | (q8[..., 1::2] << 4)
        scales[r0:r1] = best_s
        zeros[r0:r1] = best_z.astype(np.uint8)
    if nb % 2:
        zeros = np.concatenate([zeros, np.full((N, 1), 8, np.uint8)], axis=1)
    zp = zeros[:, 0::2] | (zeros[:, 1::2] << 4)
    return packed, scales.reshape(-1), np.ascontiguousarray(zp)


def _int4_blocks_by_matrix(block: int | None) -> dict[str, int]:
    """The block sizes of the int4 matrices that differ from the graph's ``block``, by kind
    (``wqkv``, ``wo``, ``wgu``, ``wd``): :data:`INT4_MLP_BLOCK` (or ``MIXVOX_INT4_MLP_BLOCK``)
    for the MLP's two, then :data:`_INT4_BLOCK_BY_MATRIX`; empty for a uniform graph."""
    mlp: int | None = INT4_MLP_BLOCK
    env = os.environ.get("MIXVOX_INT4_MLP_BLOCK", "").strip()
    if env:
        if not env.isdigit() or int(env) not in INT4_MLP_BLOCKS:
            choices = ", ".join(map(str, INT4_MLP_BLOCKS))
            raise ValueError(f"MIXVOX_INT4_MLP_BLOCK={env!r}: expected one of {choices}")
        mlp = int(env)
    if mlp is not None and mlp not in INT4_MLP_BLOCKS:
        raise ValueError(f"INT4_MLP_BLOCK {mlp}: expected one of {INT4_MLP_BLOCKS} or None")
    out = {k: mlp for k in ("wgu", "wd")} if mlp is not None else {}
    out.update(_INT4_BLOCK_BY_MATRIX)
    return {k: v for k, v in out.items() if v != block}


def _fused_code_head(precision: str) -> bool:
    """Whether the runtime graph of ``precision`` computes the code logits itself (int4 with
    8-bit heads: the head :class:`OnnxHead` would run, moved into the step's one call)."""
    return _FUSED_CODE_HEAD and _INT8_HEADS and precision == "int4"


def _check_precision(precision: str, int4_block: int | None = None) -> int | None:
    """Validate a runtime-graph precision; return the MatMulNBits block size (None: fp32)."""
    if precision not in RUNTIME_PRECISIONS:
        raise ValueError(f"ONNX GPT precision must be fp32, int8 or int4, got {precision!r}")
    if precision == "int4":
        block = INT4_BLOCK if int4_block is None else int(int4_block)
        if block not in INT4_BLOCKS:
            raise ValueError(
                f"int4 block size must be one of {', '.join(map(str, INT4_BLOCKS))}, got {block}"
            )
        return block
    if int4_block is not None:
        raise ValueError(f"an int4 block size was given for precision {precision}")
    return INT8_BLOCK if precision == "int8" else None


def build_runtime_graph(
    w: GPTWeights,
    precision: str = "fp32",
    rope_rows: int | None = None,
    *,
    int4_block: int | None = None,
) -> onnx.ModelProto:
    """Build the runtime graph (module docstring) for ``precision`` fp32, int8 or int4.

    ``rope_rows``: rows of the rotary cos/sin tables, i.e. the largest position id + 1
    (default: twice the config's ``max_position_embeddings``). ``int4_block``: inputs per
    4-bit scale (one of :data:`INT4_BLOCKS`, default :data:`INT4_BLOCK`; int4 only).
    """
    from onnx import helper

    block = _check_precision(precision, int4_block)
    by_matrix = _int4_blocks_by_matrix(block) if precision == "int4" else {}
    cfg: GPTConfig = w.config
    H, nh, D, L = cfg.hidden_size, cfg.num_heads, cfg.head_dim, cfg.num_layers
    rows = rope_rows or 2 * cfg.max_position_embeddings
    g = GraphBuilder("chattts_gpt_runtime")
    x = g.input("inputs_embeds", np.float32, ["batch", "seq", H])
    pos = g.input("position_ids", np.int64, ["batch", "seq"])
    kmask = g.input("key_mask", np.int64, ["batch", "max_len"])
    start = g.input("start", np.int64, [1])
    kv_shape: list[int | str | None] = ["batch", nh, "max_len", D]
    pasts = [
        (
            g.input(f"past_key_{i}", np.float32, kv_shape),
            g.input(f"past_value_{i}", np.float32, kv_shape),
        )
        for i in range(L)
    ]

    zero1 = g.const("z1", np.array([0], np.int64))
    one1 = g.const("o1", np.array([1], np.int64))
    xshape = g.op("Shape", x)
    bdim = g.op("Gather", xshape, zero1, axis=0)
    seq = g.op("Gather", xshape, one1, axis=0)
    total = g.op("Add", start, seq)  # [1]: cache length after this call
    seqlens_k = g.op("Cast", g.op("Expand", g.op("Sub", total, one1), bdim), to=6)  # [B] i32
    total_len = g.op("Cast", g.op("Squeeze", total, zero1), to=6)  # scalar int32
    # additive key-padding bias [B, 1, T, total]; GQA applies the causal part itself
    km = g.op("Cast", g.op("Slice", kmask, zero1, total, one1), to=9)
    neg = g.const("neg", np.array(np.finfo(np.float32).min, np.float32))
    bias = g.op("Where", km, g.const("zf", np.array(0.0, np.float32)), neg)
    bias = g.op("Unsqueeze", bias, g.const("a12", np.array([1, 2], np.int64)))
    bias = g.op("Expand", bias, g.op("Concat", bdim, one1, seq, total, axis=0))

    # rotary tables in float32 exactly as the reference computes them: cos(pos * inv_freq)
    inv_freq = (
        1.0
        / (
            np.float32(cfg.rope_theta)
            ** (np.arange(0, D, 2, dtype=np.int64).astype(np.float32) / np.float32(D))
        )
    ).astype(np.float32)
    # packed: GroupQueryAttention takes q|k|v as one input and rotates q and k itself
    packed = _PACKED_GQA and D % 16 == 0  # (its rotary kernel takes only such head sizes)
    freqs = (np.arange(rows, dtype=np.float32)[:, None] * inv_freq[None]).astype(np.float32)
    cos = g.const("cos_cache", np.cos(freqs).astype(np.float32))
    sin = g.const("sin_cache", np.sin(freqs).astype(np.float32))
    eps = float(cfg.rms_norm_eps)
    split_qk_v = g.const("split_qk_v", np.array([2 * H, nh * D], np.int64))
    split_q_k = g.const("split_q_k", np.array([H, nh * D], np.int64))

    def linear(v: str, weight: np.ndarray, hint: str) -> str:
        """``v @ weight.T`` for a torch-layout ``[out, in]`` weight."""
        if precision == "fp32":
            # constant [K, N] initializer: ORT prepacks it for MLAS once, at load
            return g.op("MatMul", v, g.const(hint, np.ascontiguousarray(weight.T)))
        assert block is not None
        bits = 8 if precision == "int8" else 4
        blk = by_matrix.get(hint.split("_", 1)[-1], block) if bits == 4 else block
        return _nbits_matmul(g, v, hint, weight, bits, blk)

    def skip_norm(branch: str, residual: str, weight: np.ndarray, hint: str) -> tuple[str, str]:
        """RMSNorm(residual + branch) and the sum itself (the new residual stream)."""
        n, _, _, s = g.op(
            "SkipSimplifiedLayerNormalization",
            branch,
            residual,
            g.const(hint, weight),
            n_out=4,
            domain=_MS,
            epsilon=eps,
        )
        return n, s

    h = x
    n = g.op(
        "SimplifiedLayerNormalization",
        x,
        g.const("l0_ln1", w.layers[0]["input_layernorm"]),
        axis=-1,
        epsilon=eps,
        stash_type=1,
    )
    for i, lw in enumerate(w.layers):
        p = f"l{i}_"
        # q, k, v (and gate, up below) as one GEMM each: fewer, larger kernels per step
        wqkv = np.concatenate([lw["q_proj"], lw["k_proj"], lw["v_proj"]], axis=0)
        qkv = linear(n, wqkv, p + "wqkv")
        if packed:  # rotary at cache slot indices (see the module docstring)
            gqa_in = [qkv, "", "", *pasts[i], seqlens_k, total_len, cos, sin, "", bias]
        else:
            qk, v = g.op("Split", qkv, split_qk_v, axis=-1, n_out=2)
            # q and k rotate alike per head: one RotaryEmbedding over [B, T, 2 * heads * D]
            qk = g.op("RotaryEmbedding", qk, pos, cos, sin, domain=_MS)
            q, k = g.op("Split", qk, split_q_k, axis=-1, n_out=2)
            gqa_in = [q, k, v, *pasts[i], seqlens_k, total_len, "", "", "", bias]
        att = g.fresh(p + "att")
        pk, pv = f"present_key_{i}", f"present_value_{i}"
        g.nodes.append(  # named outputs (no Identity between the kernel and the shared buffer)
            helper.make_node(
                "GroupQueryAttention",
                gqa_in,
                [att, pk, pv],
                domain=_MS,
                num_heads=nh,
                kv_num_heads=nh,
                scale=float(D**-0.5),
                do_rotary=int(packed),
            )
        )
        n, h = skip_norm(
            linear(att, lw["o_proj"], p + "wo"), h, lw["post_attention_layernorm"], p + "ln2"
        )
        inter = lw["gate_proj"].shape[0]
        gate, up = g.op(
            "Split",
            linear(n, np.concatenate([lw["gate_proj"], lw["up_proj"]]), p + "wgu"),
            g.const("gu_split", np.array([inter, inter], np.int64)),
            axis=-1,
            n_out=2,
        )
        act = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), up)
        last = i + 1 == len(w.layers)
        nw = w.norm if last else w.layers[i + 1]["input_layernorm"]
        n, h = skip_norm(
            linear(act, lw["down_proj"], p + "wd"), h, nw, "final_norm" if last else f"l{i + 1}_ln1"
        )
    g.output(n, "hidden", np.float32, ["batch", "seq", H])
    if _fused_code_head(precision):  # the last position only: what the decode loop samples
        last = g.op(
            "Slice",
            n,
            g.const("m1", np.array([-1], np.int64)),
            g.const("big", np.array([_BIG], np.int64)),
            one1,
        )
        QV = cfg.num_vq * cfg.num_audio_tokens
        wc = np.ascontiguousarray(w.head_code.reshape(QV, H), np.float32)
        logits = _int8_matmul(g, last, "head_code", wc)
        g.output(logits, "code_logits", np.float32, ["batch", 1, QV])
    for i in range(L):
        g.output(f"present_key_{i}", f"present_key_{i}", np.float32, kv_shape)
        g.output(f"present_value_{i}", f"present_value_{i}", np.float32, kv_shape)
    model = g.build(doc=f"ChatTTS GPT Llama stack, ONNX Runtime CPU ({RUNTIME_BUILDER_VERSION})")
    model.opset_import.append(helper.make_opsetid(_MS, 1))
    return model


def _kv_absmax(graph: Path | bytes, w: GPTWeights, threads: int | None = None) -> np.ndarray:
    """``[L, 2, heads, head_dim]``: the largest |key| / |value| per channel that the fp32-cache
    runtime ``graph`` writes over a fixed calibration sequence (see ``_KV8_CALIB_*``).

    Why random tokens: the cache stores ``rotary(W_k RMSNorm(h))`` and ``W_v RMSNorm(h)``,
    whose scale is set by the weights (RMSNorm fixes the input's), not by which tokens come
    in; a seeded mix of text embeddings, a unit speaker vector and code-frame embeddings
    (the three kinds of positions a ChatTTS prompt and decode see) covers the channels' ranges
    without any dataset.
    """
    cfg = w.config
    L, nh, D, H = cfg.num_layers, cfg.num_heads, cfg.head_dim, cfg.hidden_size
    rng = np.random.default_rng(20261201)
    text = w.emb_text[rng.integers(0, cfg.num_text_tokens, _KV8_CALIB_PROMPT)]
    spk = rng.standard_normal(H).astype(np.float32)
    text[1] = spk / np.linalg.norm(spk)
    codes = rng.integers(0, cfg.num_audio_tokens, (_KV8_CALIB_FRAMES, cfg.num_vq))
    frames = sum(w.emb_code[q][codes[:, q]] for q in range(cfg.num_vq))
    x = np.concatenate([text, frames]).astype(np.float32)[None]
    T = x.shape[1]
    feeds: dict[str, np.ndarray] = {
        "inputs_embeds": x,
        "position_ids": np.arange(T, dtype=np.int64)[None],
        "key_mask": np.ones((1, T), np.int64),
        "start": np.zeros(1, np.int64),
    }
    empty = np.zeros((1, nh, 0, D), np.float32)
    for i in range(L):
        feeds[f"past_key_{i}"] = feeds[f"past_value_{i}"] = empty
    names = [f"present_{k}_{i}" for i in range(L) for k in ("key", "value")]
    out = make_session(graph, threads).run(names, feeds)
    amax = [np.abs(a[0, :, :T]).max(axis=1) for a in out]  # each [heads, D]
    return np.stack(amax).reshape(L, 2, nh, D).astype(np.float32)


def _int8_kv_graph(model: onnx.ModelProto, absmax: np.ndarray, margin: float) -> onnx.ModelProto:
    """``model`` (a runtime graph) with an int8 KV cache: every ``past_*``/``present_*`` becomes
    int8 and each GroupQueryAttention quantizes what it appends, and dequantizes what it reads,
    with per-channel scales ``absmax[layer, key|value] * margin / 127`` (``[1, heads, 1,
    head_dim]`` initializers; ORT 1.32's CPU kernel, ``k_quant_type=PER_CHANNEL``,
    ``kv_cache_bit_width=8``; values beyond 127 scales saturate). A quarter of the cache bytes
    that attention reads per step (21 MB -> 5 MB at 171 positions in the full model)."""
    from onnx import TensorProto, helper, numpy_helper

    out = type(model)()
    out.CopyFrom(model)
    g = out.graph
    scales = np.where(absmax > 0, absmax * np.float32(margin) / np.float32(127.0), 1.0)
    scales = scales.astype(np.float32)
    _, _, nh, D = scales.shape
    for node in g.node:
        if node.op_type != "GroupQueryAttention":
            continue
        i = int(node.output[1].rsplit("_", 1)[1])  # present_key_<i>
        ins = list(node.input) + [""] * (14 - len(node.input))
        ins[12], ins[13] = f"kv8_k_scale_{i}", f"kv8_v_scale_{i}"
        for j, name in enumerate(ins[12:14]):
            g.initializer.append(numpy_helper.from_array(scales[i, j].reshape(1, nh, 1, D), name))
        del node.input[:]
        node.input.extend(ins)
        node.attribute.extend(
            [
                helper.make_attribute("k_quant_type", "PER_CHANNEL"),
                helper.make_attribute("v_quant_type", "PER_CHANNEL"),
                helper.make_attribute("kv_cache_bit_width", 8),
            ]
        )
    for v in [*g.input, *g.output]:
        if v.name.startswith(("past_", "present_")):
            v.type.tensor_type.elem_type = TensorProto.INT8
    return out


def _check_kv_cache(kv_cache: str | None, precision: str, device: str = "cpu") -> str:
    """The KV cache for ``precision`` (``None``: :data:`KV_CACHE_DEFAULT`); ValueError if unknown."""
    kv = KV_CACHE_DEFAULT.get(precision, "fp32") if kv_cache is None else kv_cache
    if kv not in KV_CACHES:
        raise ValueError(f"kv_cache must be one of {', '.join(KV_CACHES)}, got {kv_cache!r}")
    if kv != "fp32" and device != "cpu":
        raise ValueError(f"the {kv} KV cache is a CPU graph; {device} runs fp32 only")
    return kv


def runtime_graph_path(
    w: GPTWeights,
    precision: str = "fp32",
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    int4_block: int | None = None,
    kv_cache: str | None = None,
) -> Path:
    """Path of the (cached) runtime graph for ``precision`` fp32, int8 or int4 (each
    precision and int4 block size has its own cache key) and ``kv_cache`` (``None``: the
    precision's default, :data:`KV_CACHE_DEFAULT`; ``int8``: the fp32-cache graph, calibrated
    once and rewritten by :func:`_int8_kv_graph`, cached under its own key)."""
    block = _check_precision(precision, int4_block)
    kv = _check_kv_cache(kv_cache, precision)
    cache = Path(cache_dir) if cache_dir is not None else None
    parts: dict[str, object] = {
        "weights_sha256": w.gpt_sha256,
        "builder": RUNTIME_BUILDER_VERSION,
        "precision": precision,
        "block": block,
        "bits": {"int8": 8, "int4": 4}.get(precision),
        "gqa": "packed" if _PACKED_GQA else "split",
        "zero_points": bool(_INT4_ZERO_POINTS) if precision == "int4" else None,
    }
    if _fused_code_head(precision):  # (new key part only when set: older graphs keep theirs)
        parts["code_head"] = "int8-fused"
    by_matrix = _int4_blocks_by_matrix(block) if precision == "int4" else {}
    if by_matrix:  # (a key part only when set: the uniform graphs keep theirs)
        parts["block_by_matrix"] = dict(sorted(by_matrix.items()))
    name = f"chattts-gpt-ort-{precision}" + (f"-b{block}" if precision == "int4" else "")
    base = cached_graph(
        name,
        parts,
        lambda: build_runtime_graph(
            w, precision, int4_block=block if precision == "int4" else None
        ),
        cache,
    )
    if kv == "fp32":
        return base

    def quantize_kv() -> onnx.ModelProto:
        import onnx

        src = graph_source(base)
        absmax = _kv_absmax(src if isinstance(src, bytes) else Path(src), w)
        model = onnx.load_model_from_string(src) if isinstance(src, bytes) else onnx.load(src)
        return _int8_kv_graph(model, absmax, KV8_MARGIN)

    parts = {**parts, "kv_cache": kv, "kv_calibration": KV8_CALIBRATION, "kv_margin": KV8_MARGIN}
    return cached_graph(name + "-kv8", parts, quantize_kv, cache)


def physical_cores() -> int:
    """Physical cores this process may use (hyper-threads share an FPU, so they rarely help
    matmul-bound inference and add contention)."""
    try:
        allowed = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        allowed = os.cpu_count() or 1
    cores: set[tuple[str, str]] = set()
    try:
        phys = core = None
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("physical id"):
                    phys = line.split(":", 1)[1].strip()
                elif line.startswith("core id"):
                    core = line.split(":", 1)[1].strip()
                elif not line.strip() and core is not None:
                    cores.add((phys or "0", core))
                    phys = core = None
        if core is not None:
            cores.add((phys or "0", core))
    except OSError:
        pass
    n = len(cores) if cores else allowed
    return max(1, min(n, allowed))


def session_providers(device: str = "cpu") -> list[str | tuple[str, dict[str, int]]]:
    """ONNX Runtime providers for ``device`` ("cpu" or "cuda[:N]"), best first.

    ``cuda[:N]`` needs the ``CUDAExecutionProvider`` (onnxruntime-gpu); the CPU provider
    stays listed after it for the nodes ORT's CUDA provider has no kernel for (it places
    them itself). Raises ValueError naming the fix when the provider is missing.
    """
    import onnxruntime as ort

    if device == "cpu":
        return ["CPUExecutionProvider"]
    if device != "cuda" and not (device.startswith("cuda:") and device[5:].isdigit()):
        raise ValueError(f"unknown ONNX device {device!r} (use 'cpu' or 'cuda[:N]')")
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise ValueError(
            f"device {device!r} needs ONNX Runtime's CUDAExecutionProvider: install "
            "onnxruntime-gpu instead of onnxruntime, or use backend='torch' for cuda"
        )
    dev_id = int(device.split(":")[1]) if ":" in device else 0
    return [("CUDAExecutionProvider", {"device_id": dev_id}), "CPUExecutionProvider"]


def make_session(
    path: Path | bytes, threads: int | None = None, device: str = "cpu"
) -> ort.InferenceSession:
    """A session tuned for decode: all graph optimisations, sequential execution.

    Worker threads spin between the kernels of one run (a decode step is ~150 short kernels),
    but ``session.force_spinning_stop`` parks them as soon as the run returns, so they do not
    steal the core from the numpy sampling code between steps (measured: the 2-thread spin
    made the next numpy code-head GEMV ~10x slower, and OpenBLAS's own spinning threads in turn
    slowed the next step).
    """
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.enable_mem_pattern = True
    so.enable_cpu_mem_arena = True
    so.intra_op_num_threads = threads or physical_cores()
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.force_spinning_stop", "1")
    for key, value in SESSION_CONFIG.items():
        so.add_session_config_entry(key, value)
    src = path if isinstance(path, bytes) else graph_source(path)
    return ort.InferenceSession(src, sess_options=so, providers=session_providers(device))


class OnnxHead:
    """``x @ weight_t`` on its own small ONNX Runtime session.

    Why not numpy: its BLAS (OpenBLAS) runs a GEMV this size on all cores and then keeps its
    threads spinning, which slowed the next decode step of the stack session (and the stack's
    spinning threads slowed the GEMV ~10x). This session, like the stack's, parks its threads
    when a run returns (``session.force_spinning_stop``). The weight is a graph *input* bound
    by pointer to the caller's array, not an initializer: the session is made in milliseconds
    and holds no copy (a prepacked initializer cost 0.5 s and 2x the memory for the 65 MB
    text head, and was not measurably faster for one-row GEMVs). Same float32 GEMV
    (summation order aside).
    """

    def __init__(
        self,
        weight: np.ndarray,
        threads: int | None = None,
        *,
        out_in: bool = False,
        int8: bool = False,
    ) -> None:
        """``weight``: ``[K, N]`` (``x @ weight``), or ``[N, K]`` with ``out_in`` (``x @
        weight.T`` through ``Gemm(transB=1)``, so a torch-layout weight needs no transposed
        copy; as fast for the 21178-row text head, ~2x slower for the small code head).

        ``int8``: the weight as 8-bit blocks in a ``MatMulNBits`` initializer (the stack's
        int8 layout), a quarter of the bytes that a step streams from memory for the head
        (the stack's weights evict it from the caches every step); for the int8/int4 stacks,
        whose own error is orders of magnitude larger than this one's."""
        import onnxruntime as ort

        N, K = weight.shape if out_in else weight.shape[::-1]
        g = GraphBuilder("chattts_head")
        x = g.input("x", np.float32, ["rows", K])
        self._feeds: dict[str, object] = {}
        if int8:
            w_nk = np.ascontiguousarray(weight if out_in else weight.T, np.float32)
            y = _int8_matmul(g, x, "w", w_nk)
        else:
            w = g.input("w", np.float32, list(weight.shape))
            y = g.op("Gemm", x, w, transB=1) if out_in else g.op("MatMul", x, w)
            # kept alive: bound by pointer
            self._weight = np.ascontiguousarray(weight, np.float32)
            self._feeds["w"] = ort.OrtValue.ortvalue_from_numpy(self._weight)
        g.output(y, "y", np.float32, ["rows", N])
        model = g.build()
        if int8:
            from onnx import helper

            model.opset_import.append(helper.make_opsetid(_MS, 1))
        self._session = make_session(model.SerializeToString(), threads)
        self.shape = (K, N)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, np.float32)
        lead = x.shape[:-1]
        flat = np.ascontiguousarray(x.reshape(-1, self.shape[0]))
        out = self._session.run(None, {"x": flat, **self._feeds})[0]
        return out.reshape(*lead, self.shape[1])


class OnnxStack:
    """``StackBackend`` over ONNX Runtime: the runtime graph, a preallocated KV cache, IOBinding.

    The cache (one ``[L, 2, B, heads, S, head_dim]`` array), the key mask and the decode-step
    (``T = 1``) input/output buffers are numpy arrays allocated once per (batch, max length)
    (grown, never shrunk) and bound by pointer; each layer's past and present are bound to the
    same slice of the cache, which GroupQueryAttention updates in place. A decode step only
    fills the small input buffers and runs.

    ``device="cuda[:N]"`` (onnxruntime-gpu, fp32 only): the same graph on the CUDA provider;
    the KV cache is allocated on the device (one ORT value per layer and kind, bound as both
    past and present, as on the CPU), the small inputs and the hidden output stay in host
    memory and ORT copies them. Not verified here (no onnxruntime-gpu on our machines); ORT
    may place nodes it has no CUDA kernel for (fp32 ``GroupQueryAttention``) on the CPU.
    """

    def __init__(
        self,
        weights: GPTWeights,
        *,
        precision: str = "fp32",
        device: str = "cpu",
        cache_dir: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        warmup: bool = True,
        int4_block: int | None = None,
        kv_cache: str | None = None,
    ) -> None:
        providers = session_providers(device)  # ValueError: unknown device / no provider
        self.kv_cache = _check_kv_cache(kv_cache, precision, device)
        if device != "cpu" and precision != "fp32":
            raise ValueError(
                f"the ONNX GPT on {device} runs fp32 only (int8/int4 are CPU graphs), "
                f"not {precision}"
            )
        import onnxruntime as ort

        self.device = device
        self.providers = providers
        self._ort = ort
        self.config = weights.config
        self.precision = precision
        self.graph_path = runtime_graph_path(
            weights, precision, cache_dir, int4_block=int4_block, kv_cache=self.kv_cache
        )
        before = hugepages.mappings() if device == "cpu" else None
        self.session = make_session(self.graph_path, threads, device)
        self._has_code_logits = any(o.name == "code_logits" for o in self.session.get_outputs())
        self._logits1: np.ndarray | None = None
        if before is not None:  # the weights ORT just unpacked and prepacked: 2 MiB pages
            hugepages.advise_new(before)
        self._threads = threads
        self.max_position = 2 * self.config.max_position_embeddings  # rotary table rows
        self._B = self._S = 0
        self._limit = 0
        self._past: np.ndarray | None = None
        self._device_kv: list[tuple[object, object]] = []  # cuda: per layer (key, value)
        self._kmask: np.ndarray | None = None
        self._start = np.zeros(1, np.int64)
        self._binding = None
        if warmup:
            self.begin(np.ones((1, 4), np.int64), 8)
            cfg = self.config
            self.forward(
                np.zeros((1, 4, cfg.hidden_size), np.float32), np.arange(4, dtype=np.int64)[None], 0
            )
            self.forward(
                np.zeros((1, 1, cfg.hidden_size), np.float32), np.array([[4]], np.int64), 4
            )

    def last_code_logits(self) -> np.ndarray | None:
        """The code logits ``[B, num_vq * num_audio_tokens]`` of the last ``forward``'s last
        position, computed in the same ONNX Runtime call (a buffer the next call overwrites),
        or None when this graph has no fused code head (see ``_FUSED_CODE_HEAD``)."""
        return None if self._logits1 is None else self._logits1[:, 0]

    def make_head(self, weight: np.ndarray, *, out_in: bool = False) -> OnnxHead:
        """A head GEMV (``x @ weight``, or ``x @ weight.T`` with ``out_in``) that does not fight
        this session's threads; see :class:`OnnxHead`."""
        return OnnxHead(
            weight, self._threads, out_in=out_in, int8=_INT8_HEADS and self.precision == "int4"
        )

    def _allocate(self, B: int, S: int) -> None:
        cfg = self.config
        if self.device == "cpu":
            self._past = np.zeros(
                (cfg.num_layers, 2, B, cfg.num_heads, S, cfg.head_dim),
                np.int8 if self.kv_cache == "int8" else np.float32,
            )
        else:  # the cache lives on the GPU; never read past what GQA has written
            kind, _, idx = self.device.partition(":")
            shape = [B, cfg.num_heads, S, cfg.head_dim]
            new = self._ort.OrtValue.ortvalue_from_shape_and_type
            self._past = np.zeros(0, np.float32)  # marks "allocated"
            self._device_kv = [
                (
                    new(shape, np.float32, kind, int(idx or 0)),
                    new(shape, np.float32, kind, int(idx or 0)),
                )
                for _ in range(cfg.num_layers)
            ]
        self._kmask = np.zeros((B, S), np.int64)
        self._emb1 = np.zeros((B, 1, cfg.hidden_size), np.float32)
        self._pos1 = np.zeros((B, 1), np.int64)
        self._hid1 = np.zeros((B, 1, cfg.hidden_size), np.float32)
        if self._has_code_logits:
            self._logits1 = np.zeros((B, 1, cfg.num_vq * cfg.num_audio_tokens), np.float32)
        self._B, self._S = B, S
        self._binding = self._bind(self._emb1, self._pos1, self._hid1)

    def _bind(self, emb: np.ndarray, pos: np.ndarray, hid: np.ndarray):  # -> ort.IOBinding
        assert self._past is not None and self._kmask is not None
        from_numpy = self._ort.OrtValue.ortvalue_from_numpy
        b = self.session.io_binding()
        for name, arr in (
            ("key_mask", self._kmask),
            ("start", self._start),
            ("inputs_embeds", emb),
            ("position_ids", pos),
        ):
            b.bind_ortvalue_input(name, from_numpy(arr))
        for i in range(self.config.num_layers):
            for j, kind in enumerate(("key", "value")):
                if self._device_kv:
                    buf = self._device_kv[i][j]
                else:
                    buf = from_numpy(self._past[i, j])  # a contiguous view: shares the cache
                b.bind_ortvalue_input(f"past_{kind}_{i}", buf)
                b.bind_ortvalue_output(f"present_{kind}_{i}", buf)
        b.bind_ortvalue_output("hidden", from_numpy(hid))
        if self._has_code_logits:
            b.bind_ortvalue_output("code_logits", from_numpy(self._logits1))
        return b

    def begin(self, attention_mask: np.ndarray, max_len: int) -> None:
        B, T = attention_mask.shape
        if max_len < T:
            raise ValueError(f"max_len {max_len} < prompt length {T}")
        if B != self._B or max_len > self._S:
            S = max_len if B != self._B else max(max_len, self._S)
            self._allocate(B, S)
        assert self._kmask is not None
        self._kmask[:] = 1
        self._kmask[:, :T] = attention_mask
        self._limit = max_len

    def forward(self, inputs_embeds: np.ndarray, positions: np.ndarray, start: int) -> np.ndarray:
        assert self._past is not None
        B, T, _ = inputs_embeds.shape
        if B != self._B:
            raise ValueError(f"batch {B} != begin()'s batch {self._B}")
        if start + T > self._limit:
            raise ValueError(f"cache overflow: {start} + {T} > {self._limit}")
        if T > 1 and start > 0 and B > 1:
            # GroupQueryAttention takes several new positions after a cached prefix only for
            # batch 1; run such a chunk one position at a time (same result, slower)
            hid = np.empty((B, T, self.config.hidden_size), np.float32)
            for t in range(T):
                hid[:, t] = self.forward(
                    inputs_embeds[:, t : t + 1], positions[:, t : t + 1], start + t
                )[:, 0]
            return hid
        if positions.size and int(positions.max()) >= self.max_position:
            raise ValueError(f"position {int(positions.max())} >= {self.max_position}")
        self._start[0] = start
        if T == 1:
            self._emb1[...] = inputs_embeds
            self._pos1[...] = positions
            self.session.run_with_iobinding(self._binding)
            return self._hid1
        hid = np.empty((B, T, self.config.hidden_size), np.float32)
        b = self._bind(
            np.ascontiguousarray(inputs_embeds, np.float32),
            np.ascontiguousarray(positions, np.int64),
            hid,
        )
        self.session.run_with_iobinding(b)
        return hid
