"""Step-level A/B of the int4 decode step on CPU: variants alternate at every position.

    python bench/cpu_step_ab.py /tmp/fullckpt [--threads 2] [--reps 3] [--block 64]

Why: on a shared 2-core machine, whole decodes of one variant after another (``bench/
cpu_ab.py``) see different load; here every variant takes the step at the same cache
position back to back (rotating order), so load changes hit all of them alike, and the
median of per-position ratios is far steadier. A step is the stack call plus the code head
(the separate 8-bit head session, or nothing when the head is fused into the stack graph);
inputs are code-frame embeddings of random codes after a 43-token text prompt, 128 steps
(cache positions 43..170), as in ``mixvox bench``. Sampling is not part of it (see
``bench/cpu_ab.py`` for the whole loop).

Variants (``--variants``, comma-separated): ``base`` (session 4: fp32 KV cache, head session),
``kv8`` (int8 KV cache), ``fused`` (code head in the stack graph), ``s5`` (both);
``@KEY=VALUE`` appended to a name adds an ONNX Runtime session config entry, ``@env:NAME=VALUE``
sets an environment variable while that variant's session is made (ONNX Runtime kernels read
some switches, e.g. ``ORT_GQA_DISABLE_FLASH_ATTENTION``, when they are constructed), and
``@blk:KIND=N`` gives one kind of int4 matrix (``wqkv``, ``wo``, ``wgu``, ``wd``) its own block
size (``onnx_stack._INT4_BLOCK_BY_MATRIX``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.gpt import load_gpt, onnx_stack


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--variants", default="base,kv8,fused,s5")
    ap.add_argument("--prompt", type=int, default=43)
    ap.add_argument("--steps", type=int, default=128)
    args = ap.parse_args()

    variants = {}
    for spec in args.variants.split(","):
        name, *conf = spec.split("@")
        kind = name.split("+")[0]
        onnx_stack._FUSED_CODE_HEAD = kind in ("fused", "s5")
        plain = [c for c in conf if not c.startswith(("env:", "blk:"))]
        onnx_stack.SESSION_CONFIG = dict(c.split("=", 1) for c in plain)
        env = dict(c[4:].split("=", 1) for c in conf if c.startswith("env:"))
        onnx_stack._INT4_BLOCK_BY_MATRIX = {
            k: int(v) for k, v in (c[4:].split("=", 1) for c in conf if c.startswith("blk:"))
        }
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        gpt = load_gpt(
            args.model_dir / "asset",
            precision="int4",
            threads=args.threads,
            int4_block=args.block,
            kv_cache="int8" if kind in ("kv8", "s5") else "fp32",
        )
        onnx_stack.SESSION_CONFIG = {}
        onnx_stack._INT4_BLOCK_BY_MATRIX = {}
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        stack = gpt.stack
        fused = stack.last_code_logits() is not None  # type: ignore[attr-defined]
        variants[spec] = (gpt, stack, fused)
    cfg = next(iter(variants.values()))[0].config
    rng = np.random.default_rng(0)
    T, n = args.prompt, args.steps
    w = next(iter(variants.values()))[0].weights
    prompt = w.emb_text[rng.integers(0, cfg.num_text_tokens, T)][None].astype(np.float32)
    codes = rng.integers(0, cfg.num_audio_tokens, (n, cfg.num_vq))
    frames = sum(w.emb_code[q][codes[:, q]] for q in range(cfg.num_vq)).astype(np.float32)
    names = list(variants)
    times = {k: np.zeros((args.reps, n)) for k in names}
    for _g, st, _ in variants.values():
        st.begin(np.ones((1, T), np.int64), T + n)
        st.forward(prompt, np.arange(T, dtype=np.int64)[None], 0)
    for r in range(args.reps):
        for _g, st, _ in variants.values():
            st.begin(np.ones((1, T), np.int64), T + n)
            st.forward(prompt, np.arange(T, dtype=np.int64)[None], 0)
        for i in range(n):
            x, pos = frames[i][None, None], np.array([[T + i]], np.int64)
            k0 = (i + r) % len(names)
            for name in names[k0:] + names[:k0]:
                g, st, fused = variants[name]
                t0 = time.perf_counter()
                h = st.forward(x, pos, T + i)
                lg = st.last_code_logits() if fused else g.code_logits(h[:, 0])
                times[name][r, i] = time.perf_counter() - t0
                assert lg is not None
        line = ", ".join(f"{k} {np.median(times[k][r]) * 1e3:.2f}" for k in names)
        print(f"# rep {r + 1}: median ms per step (stack + head): {line}", flush=True)
    base = names[0]
    print(f"| variant | median ms/step | mean ms/step | median per-step ratio to {base} |")
    print("|---|---|---|---|")
    for k in names:
        ratio = np.median(times[k] / times[base])
        print(
            f"| {k} | {np.median(times[k]) * 1e3:.3f} | {times[k].mean() * 1e3:.3f} | {ratio:.3f} |"
        )


if __name__ == "__main__":
    main()
