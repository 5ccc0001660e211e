"""Speed of the text side with the zh polyphone model: start-up cost and sentences/s.

Usage: ``taskset -c 0,1 python bench/zh_text_speed.py [--n 3000]`` (pin to 2 cores for the
figure in BENCHMARKS.md).

Prints the model's lazy load costs (label space, weights) in a fresh object, then sentences/s of
``Router.route`` (the whole text side: sentence split, language id, TN, segmentation, model,
sandhi) over CPP dev sentences (about 32 characters each), with and without the model.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_zh as R

from mixvox.frontends.zh import plugin
from mixvox.frontends.zh.polymodel import PolyphoneModel


def _rate(texts: list[str], model: bool) -> float:
    from mixvox.pipeline import Router

    saved = plugin.default_model
    if not model:
        plugin.default_model = lambda: None  # type: ignore[assignment,return-value]
    try:
        router = Router()
        router.route("测试一下还有没有问题。")  # build frontends and load tables first
        if model:
            plugin.default_model().wait_onnx()
        t0 = time.perf_counter()
        for t in texts:
            router.route(t)
        return len(texts) / (time.perf_counter() - t0)
    finally:
        plugin.default_model = saved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="sentences per measurement")
    args = ap.parse_args(argv)
    m = PolyphoneModel()
    t0 = time.perf_counter()
    m.load_labels()
    t1 = time.perf_counter()
    m.load()
    t2 = time.perf_counter()
    m.wait_onnx()
    t3 = time.perf_counter()
    print(f"model label space load  {1000 * (t1 - t0):7.1f} ms (first polyphone question)")
    print(f"model weights load      {1000 * (t2 - t1):7.1f} ms (first sentence that needs it)")
    print(f"ONNX Runtime ready      {1000 * (t3 - t2):7.1f} ms later (background; numpy meanwhile)")
    texts = [t for t, _, _ in R.cpp_cases()][: args.n]
    for model in (False, True, False, True):  # alternated: the machine's load varies
        name = "with model" if model else "no model  "
        print(f"Router.route {name}    {_rate(texts, model):7.0f} sentences/s ({len(texts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
