"""ONNX graph of the ChatTTS Llama stack (built without torch) and its ONNX Runtime runner.

One graph serves prefill and decode (``T`` new positions after ``start`` cached ones):

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
``S``), and the runner writes the small ``present`` into slots ``[start, start + T)`` in
place. Attention uses ``Where(mask, scores, finfo.min)`` rather than an additive ``-inf``, so
fully padded query rows give a uniform softmax instead of NaN (NaN would poison nothing, but
is not worth the risk). Math follows transformers' ``LlamaModel`` in float32: RMSNorm
``x * rsqrt(mean(x^2) + eps) * w``, rotary ``q*cos + rotate_half(q)*sin`` with
``inv_freq = theta^(-2i/d)``, softmax attention scaled by ``head_dim^-0.5``, SiLU-gated MLP.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph

if TYPE_CHECKING:
    import onnx
    import onnxruntime as ort

    from mixvox.engines.chattts.gpt import GPTConfig, GPTWeights

__all__ = [
    "BUILDER_VERSION",
    "OnnxStack",
    "build_stack_graph",
    "physical_cores",
    "stack_graph_path",
]

#: Bump when the graph changes, so cached graphs are rebuilt.
BUILDER_VERSION = "gpt-stack-2"

_BIG = np.iinfo(np.int64).max


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
    """Path of the (cached) stack graph for ``precision`` ``fp32`` or ``int8``."""
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


def make_session(path: Path, threads: int | None = None) -> ort.InferenceSession:
    """A CPU session tuned for decode: all graph optimisations, sequential execution."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.enable_mem_pattern = True
    so.enable_cpu_mem_arena = True
    so.intra_op_num_threads = threads or physical_cores()
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])


class OnnxStack:
    """``StackBackend`` over ONNX Runtime with a preallocated KV cache and IOBinding.

    The cache, the key mask and the decode-step (``T = 1``) input/output buffers are numpy
    arrays allocated once per (batch, max length) (grown, never shrunk) and bound by pointer;
    a decode step only fills the small input buffers, runs, and copies the new keys/values
    into the cache slot.
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
    ) -> None:
        if device != "cpu":
            raise ValueError("the ONNX GPT backend runs on cpu; use backend='torch' for cuda")
        import onnxruntime as ort

        self._ort = ort
        self.config = weights.config
        self.precision = precision
        self.graph_path = stack_graph_path(weights, precision, cache_dir)
        self.session = make_session(self.graph_path, threads)
        self._B = self._S = 0
        self._past: np.ndarray | None = None
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

    def _allocate(self, B: int, S: int) -> None:
        cfg = self.config
        ort = self._ort
        self._past = np.zeros((cfg.num_layers, 2, B, cfg.num_heads, S, cfg.head_dim), np.float32)
        self._kmask = np.zeros((B, S), np.int64)
        self._emb1 = np.zeros((B, 1, cfg.hidden_size), np.float32)
        self._pos1 = np.zeros((B, 1), np.int64)
        self._hid1 = np.zeros((B, 1, cfg.hidden_size), np.float32)
        self._pres1 = np.zeros((cfg.num_layers, 2, B, cfg.num_heads, 1, cfg.head_dim), np.float32)
        self._B, self._S = B, S
        b = self.session.io_binding()
        for name, arr in (
            ("past", self._past),
            ("key_mask", self._kmask),
            ("start", self._start),
            ("inputs_embeds", self._emb1),
            ("position_ids", self._pos1),
        ):
            b.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(arr))
        b.bind_ortvalue_output("hidden", ort.OrtValue.ortvalue_from_numpy(self._hid1))
        b.bind_ortvalue_output("present", ort.OrtValue.ortvalue_from_numpy(self._pres1))
        self._binding = b

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
        self._start[0] = start
        if T == 1:
            self._emb1[...] = inputs_embeds
            self._pos1[...] = positions
            self.session.run_with_iobinding(self._binding)
            self._past[:, :, :, :, start, :] = self._pres1[:, :, :, :, 0, :]
            return self._hid1
        ort = self._ort
        b = self.session.io_binding()
        hid = np.empty((B, T, self.config.hidden_size), np.float32)
        cfg = self.config
        pres = np.empty((cfg.num_layers, 2, B, cfg.num_heads, T, cfg.head_dim), np.float32)
        emb = np.ascontiguousarray(inputs_embeds, np.float32)
        pos = np.ascontiguousarray(positions, np.int64)
        for name, arr in (
            ("past", self._past),
            ("key_mask", self._kmask),
            ("start", self._start),
            ("inputs_embeds", emb),
            ("position_ids", pos),
        ):
            b.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(arr))
        b.bind_ortvalue_output("hidden", ort.OrtValue.ortvalue_from_numpy(hid))
        b.bind_ortvalue_output("present", ort.OrtValue.ortvalue_from_numpy(pres))
        self.session.run_with_iobinding(b)
        self._past[:, :, :, :, start : start + T, :] = pres
        return hid
