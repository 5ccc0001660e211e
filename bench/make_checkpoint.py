"""Write a full-size random-weight ChatTTS checkpoint (official layout) for benchmarks.

    python bench/make_checkpoint.py OUT_DIR [--seed N] [--source ../shared/chattts] [--small]

The genuine tokenizer and GPT config are copied from ``--source`` (a folder holding
``asset/tokenizer`` and ``asset/gpt/config.json``); every weight file is random with the
official tensor names, shapes and dtype; ``OUT_DIR/sha256.json`` is its manifest. About 1 GB.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mixvox.engines.chattts.randckpt import Sizes, make_checkpoint

DEFAULT_SOURCE = Path(__file__).resolve().parents[2] / "shared" / "chattts"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="folder with the genuine asset/tokenizer and asset/gpt/config.json",
    )
    ap.add_argument("--small", action="store_true", help="tiny sizes (tests, smoke runs)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    out = make_checkpoint(
        args.out_dir,
        args.source,
        sizes=Sizes.small() if args.small else Sizes(),
        seed=args.seed,
        progress=lambda msg: print(msg, file=sys.stderr),
    )
    print(f"wrote {out} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
