"""Speed of the text side with the zh polyphone model: start-up cost and sentences/s.

Usage: ``taskset -c 0,1 python bench/zh_text_speed.py [--n 3000] [--ab]`` (pin to 2 cores for
the figure in BENCHMARKS.md).

``--ab``: on a shared machine absolute figures swing with the load, so this compares in one
process, runs alternated, the text side with and without its speed shortcuts (the segmenter
tries words longer than four characters only after a long-word head; OpenCC runs only on text
with a character it could change): the ratio is the figure to trust.

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


def _ab(texts: list[str], rounds: int = 3) -> None:
    """Shortcuts off vs on, alternated, one router (the text side as users call it)."""
    from mixvox.frontends.zh import g2p
    from mixvox.pipeline import Router

    router = Router()
    router.route("测试一下还有没有问题。")
    plugin.default_model().wait_onnx()
    fe = router._frontend("zh")
    short, triggers = g2p._SHORT, fe._t2s_triggers
    rates: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for on in (False, True):
            g2p._SHORT = short if on else 99  # 99: every length is tried, as before
            fe._t2s_triggers = triggers if on else frozenset()  # empty: always convert
            t0 = time.perf_counter()
            for t in texts:
                router.route(t)
            rates[on].append(len(texts) / (time.perf_counter() - t0))
    g2p._SHORT, fe._t2s_triggers = short, triggers
    for on in (False, True):
        name = "shortcuts on " if on else "shortcuts off"
        cells = " ".join(f"{r:6.0f}" for r in rates[on])
        print(f"Router.route with model, {name}  {cells} sentences/s")
    ratio = sum(rates[True]) / sum(rates[False])
    print(f"ratio on/off {ratio:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000, help="sentences per measurement")
    ap.add_argument("--ab", action="store_true", help="shortcuts off vs on, one process")
    args = ap.parse_args(argv)
    if args.ab:
        _ab([t for t, _, _ in R.cpp_cases()][: args.n])
        return 0
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
