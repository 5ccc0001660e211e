"""A/B of the int4 CPU decode's parts in one process: main's path against this one's pieces.

    python bench/cpu_ab.py /tmp/fullckpt [--rounds 12] [--specs before=00000:64,all=11111:64]

Each spec is ``name=FLAGS:BLOCK[:KEY=VALUE;...]``; FLAGS are up to seven digits (missing
ones are 0), the pieces of the int4 path added in issue 9's sessions 4 and 5: packed
attention (q|k|v into GroupQueryAttention, in-kernel rotary), int4 zero points, 8-bit
code/text heads, huge pages for the weights, the sampler (0: the stable-argsort top-p,
1: session 4's one-sort version, 2: session 5's sparse penalty and one threshold per row),
the code heads fused into the stack graph, the int8 KV cache. ``00000:64`` is the int4 path
as it was on main before session 4 (block 64), ``1111100:64`` as session 4 left it. The
optional ``KEY=VALUE`` pairs are ONNX Runtime session config entries for that variant
(e.g. ``session.dynamic_block_base=4``), except ``mlp=N``: the int4 MLP matrices (gate|up, down)
with block N (``onnx_stack.INT4_MLP_BLOCK``). Every variant is loaded into this one process, then each round
runs one ``mixvox bench``-like decode per variant (the bench text with a speaker, 128 frames,
prefill included) in rotating order, after waiting for the machine to be idle; a run during
which other processes used more than ``--clean`` % of a core is reported and its round
left out. Printed per variant: frames/s (best and median of the clean rounds) and, for the
best round, ms per frame split into prefill, stack step, code head, sampler and the rest;
then each variant's per-round frames/s ratio to the first spec, and the same ratio of this
process's CPU time per frame (steadier than wall time when other jobs share the cores,
above all with ``--threads 1``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

# bench/cpu.py meters machine-wide and own CPU time the same way (this folder is on sys.path
# when the script runs as `python bench/cpu_ab.py`)
from cpu import _busy_s, _own_s

from mixvox.engines.chattts.gpt import SamplingParams, load_gpt, onnx_stack
from mixvox.engines.chattts.gpt import decode as dec
from mixvox.engines.chattts.gpt import sampler as smp


def wait_idle(max_s: float = 120.0) -> None:
    """Until the machine used < 15 % of a core in two consecutive half seconds."""
    quiet, t0 = 0, time.perf_counter()
    while quiet < 2 and time.perf_counter() - t0 < max_s:
        b = _busy_s()
        time.sleep(0.5)
        quiet = quiet + 1 if (_busy_s() - b) / 0.5 < 0.15 else 0


def _top_p_argsort(logits: np.ndarray, p: float, min_keep: int) -> np.ndarray:
    """The sampler's top-p before the one-sort version (a stable argsort)."""
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


def old_process_logits(logits: np.ndarray, history: np.ndarray, params: SamplingParams):
    shape = logits.shape
    x = np.asarray(logits, dtype=np.float32).reshape(-1, shape[-1])
    hist = np.asarray(history).reshape(x.shape[0], -1)
    temp = params.row_temperatures(x.shape[0])
    x = x / np.where(temp > 0, temp, 1.0).astype(np.float32)[:, None]
    x = smp.repetition_penalty(x, hist, params.repetition_penalty, params.penalty_window)
    if params.top_p is not None:
        x = _top_p_argsort(x, params.top_p, params.min_keep)
    if params.top_k is not None:
        x = smp.top_k(x, params.top_k, params.min_keep)
    return x.reshape(shape)


def s4_process_logits(logits: np.ndarray, history: np.ndarray, params: SamplingParams):
    """The sampler's processors as session 4 left them (dense penalty, two-pass top-p/k)."""
    shape = logits.shape
    x = np.asarray(logits, dtype=np.float32).reshape(-1, shape[-1])
    hist = np.asarray(history).reshape(x.shape[0], -1)
    temp = params.row_temperatures(x.shape[0])
    x = x / np.where(temp > 0, temp, 1.0).astype(np.float32)[:, None]
    out = np.array(x, dtype=np.float32, copy=True)
    n, v = out.shape
    if hist.shape[-1]:
        h = hist[:, -params.penalty_window :]
        freq = np.bincount((np.arange(n)[:, None] * v + h).reshape(-1), minlength=n * v)
        pen = np.float32(params.repetition_penalty)
        alpha = np.power(pen, freq.reshape(n, v).astype(np.float32)).astype(np.float32)
        out = np.where(out < 0, out * alpha, out / alpha).astype(np.float32)
    V = v
    k = min(max(params.top_k, params.min_keep), V)
    srt = np.sort(out, axis=-1)
    cut = smp._top_p_cut(srt, params.top_p, params.min_keep)
    res = np.array(out, dtype=np.float32, copy=True)
    smp._drop_below_rank(res, srt, cut)
    kth = srt[:, V - k : V - k + 1]
    keep_all = (V - k) < cut
    if keep_all.any():
        kth = np.where(keep_all[:, None], np.float32(-np.inf), kth)
    res[res < kth] = -np.inf
    return res.reshape(shape)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument(
        "--specs", default="s4=1111100:64,s5=1111211:64,s4b128=1111100:128,s5b128=1111211:128"
    )
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--frames", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clean", type=float, default=5.0)
    ap.add_argument("--max-wait", type=float, default=120.0, help="s to wait for idle per run")
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args()

    from mixvox.engines.chattts.cli import BENCH_TEXT
    from mixvox.engines.chattts.engine import ChatTTSEngine

    eng = ChatTTSEngine(args.model_dir, backend="onnx", precision="int4", threads=args.threads)
    prompt = eng.prompt_ids(BENCH_TEXT, "[speed_5]", speaker=True)
    spk, spk_id = eng.speaker_vector(None), eng.tokenizer.spk_emb_id
    eng.close()
    timers = {"prefill": 0.0, "stack": 0.0, "head": 0.0, "sampler": 0.0}
    variants: dict[str, tuple[object, str]] = {}
    for spec in args.specs.split(","):
        name, flags = spec.split("=", 1)
        bits, block, *conf = flags.split(":")
        bits = bits.ljust(7, "0")
        packed, zp, head8, huge, _, fused, kv8 = (c == "1" for c in bits)
        onnx_stack._PACKED_GQA, onnx_stack._INT4_ZERO_POINTS = packed, zp
        onnx_stack._INT8_HEADS, onnx_stack._FUSED_CODE_HEAD = head8, fused
        pairs = dict(kv.split("=", 1) for c in conf for kv in c.split(";"))
        mlp = pairs.pop("mlp", None)
        onnx_stack.INT4_MLP_BLOCK = int(mlp) if mlp else None
        onnx_stack.SESSION_CONFIG = pairs
        if not huge:
            os.environ["MIXVOX_NO_HUGEPAGES"] = "1"
        gpt = load_gpt(
            args.model_dir / "asset",
            precision="int4",
            threads=args.threads,
            cache_dir=args.cache_dir,
            int4_block=int(block),
            kv_cache="int8" if kv8 else "fp32",
        )
        onnx_stack.SESSION_CONFIG = {}
        onnx_stack.INT4_MLP_BLOCK = None
        os.environ.pop("MIXVOX_NO_HUGEPAGES", None)
        fwd, heads = gpt.stack.forward, gpt.code_logits

        def forward(x, p, s, fwd=fwd):
            t = time.perf_counter()
            out = fwd(x, p, s)
            timers["prefill" if x.shape[1] > 1 else "stack"] += time.perf_counter() - t
            return out

        def code_logits(h, heads=heads):
            t = time.perf_counter()
            out = heads(h)
            timers["head"] += time.perf_counter() - t
            return out

        gpt.stack.forward, gpt.code_logits = forward, code_logits
        variants[name] = (gpt, bits[4])

    def run(name: str) -> dict:
        gpt, sampler = variants[name]
        proc = {"0": old_process_logits, "1": s4_process_logits}.get(sampler, smp.process_logits)

        def timed(f):
            def g(*a):
                t = time.perf_counter()
                out = f(*a)
                timers["sampler"] += time.perf_counter() - t
                return out

            return g

        dec.process_logits, dec.draw = timed(proc), timed(smp.draw)
        for k in timers:
            timers[k] = 0.0
        wait_idle(args.max_wait)
        b0, o0, t0 = _busy_s(), _own_s(), time.perf_counter()
        gpt.generate(  # type: ignore[attr-defined]
            [prompt],
            stage="code",
            spk_emb=spk,
            spk_emb_token_id=spk_id,
            rng=np.random.default_rng(0),
            params=SamplingParams(suppress_eos=True, max_new_tokens=args.frames),
        )
        wall = time.perf_counter() - t0
        own = _own_s() - o0
        foreign = max(0.0, (_busy_s() - b0) - own) / wall * 100
        ms = {k: v / args.frames * 1e3 for k, v in timers.items()}
        rest = wall / args.frames * 1e3 - sum(ms.values())
        cpu_ms = own / args.frames * 1e3
        return {
            "fps": args.frames / wall,
            "foreign_pct": foreign,
            **ms,
            "rest": rest,
            "cpu": cpu_ms,
        }

    names = list(variants)
    for n in names:
        run(n)  # warm-up
    res: dict[str, list[dict]] = {n: [] for n in names}
    print(f"# load average {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        for n in names[r % len(names) :] + names[: r % len(names)]:
            res[n].append(run(n))
        cells = ", ".join(
            f"{n} {res[n][-1]['fps']:.1f} (cpu {res[n][-1]['cpu']:.2f} ms/frame, "
            f"others {res[n][-1]['foreign_pct']:.0f} %)"
            for n in names
        )
        print(f"# round {r + 1}, load {os.getloadavg()[0]:.2f}: {cells}", flush=True)
    clean = [
        i for i in range(args.rounds) if all(res[n][i]["foreign_pct"] < args.clean for n in names)
    ]
    print(f"# clean rounds (< {args.clean} % of a core used by others): {len(clean)}")
    if not clean:
        return
    res = {n: [rs[i] for i in clean] for n, rs in res.items()}
    print(
        "| variant | frames/s best (median) | ms/frame | prefill | stack step | code head |", end=""
    )
    print(" sampler | rest |")
    print("|---|---|---|---|---|---|---|---|")
    for n, rs in res.items():
        b = max(rs, key=lambda x: x["fps"])
        med = float(np.median([x["fps"] for x in rs]))
        parts = " | ".join(f"{b[k]:.2f}" for k in ("prefill", "stack", "head", "sampler", "rest"))
        print(f"| {n} | {b['fps']:.1f} ({med:.1f}) | {1e3 / b['fps']:.2f} | {parts} |")
    for n in names[1:]:
        rr = [b["fps"] / a["fps"] for a, b in zip(res[names[0]], res[n], strict=True)]
        each = ", ".join(f"{x:.2f}" for x in rr)
        print(f"{n} / {names[0]}: frames/s median {np.median(rr):.3f} ({each})")
        cc = [a["cpu"] / b["cpu"] for a, b in zip(res[names[0]], res[n], strict=True)]
        each = ", ".join(f"{x:.2f}" for x in cc)
        print(f"{n} / {names[0]}: 1 / CPU-time per frame, median {np.median(cc):.3f} ({each})")


if __name__ == "__main__":
    main()
