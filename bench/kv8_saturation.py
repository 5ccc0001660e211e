"""How much of the int8 KV cache saturates in a real decode (the calibration's headroom check).

    python bench/kv8_saturation.py /tmp/fullckpt [--frames 128] [--block 64]

Decodes ``mixvox bench``'s text (with a speaker) for ``--frames`` frames with the int4 engine
and its int8 KV cache, then counts the cache entries at +-127/-128 (values the calibrated
per-channel scales could not represent) and the mean |code| (how much of the int8 range
typical entries use).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from mixvox.engines.chattts.cli import BENCH_TEXT
from mixvox.engines.chattts.engine import ChatTTSEngine
from mixvox.engines.chattts.gpt import SamplingParams, onnx_stack


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--frames", type=int, default=128)
    ap.add_argument("--block", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    eng = ChatTTSEngine(
        args.model_dir,
        precision="int4",
        threads=args.threads,
        int4_block=args.block,
        kv_cache="int8",
    )
    try:
        prompt = eng.prompt_ids(BENCH_TEXT, "[speed_5]", speaker=True)
        eng.gpt.generate(
            [prompt],
            stage="code",
            spk_emb=eng.speaker_vector(None),
            spk_emb_token_id=eng.tokenizer.spk_emb_id,
            params=SamplingParams(suppress_eos=True, max_new_tokens=args.frames),
            rng=np.random.default_rng(0),
        )
        stack = eng.gpt.stack  # type: ignore[attr-defined]
        n = len(prompt) + args.frames
        c = stack._past[:, :, 0, :, :n].astype(np.int16)  # [L, 2, heads, n, head_dim]
        sat = (c >= 127) | (c <= -128)
        print(f"positions {n}, entries {c.size}, calibration headroom {onnx_stack.KV8_MARGIN}")
        print(
            f"saturated: {sat.mean():.2e} (keys {sat[:, 0].mean():.2e}, "
            f"values {sat[:, 1].mean():.2e}); mean |code| keys {np.abs(c[:, 0]).mean():.1f}, "
            f"values {np.abs(c[:, 1]).mean():.1f} of 127"
        )
    finally:
        eng.close()


if __name__ == "__main__":
    main()
