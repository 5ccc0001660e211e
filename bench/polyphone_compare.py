"""Compare polyphone choosers side by side on CPP dev (the table in BENCHMARKS.md).

Usage: ``python bench/polyphone_compare.py [--testdata DIR] [--old-zh DIR] [--examples N]``

Rows (accuracy on the marked character, lexical tones; all, odd lines, even lines, and split by
whether our segmentation makes the target a one-character word or part of a longer word):

* ``pypinyin``: pypinyin 0.5x alone;
* ``g2pM package``: the ``g2pM`` wheel as published (argmax over all 876 classes), if installed;
* ``BiLSTM alone``: the same weights as converted to ``polyphone_bilstm.npz``, with our candidate
  restriction, pypinyin for characters it does not cover;
* ``own NB (even lines)``: a naive-Bayes context classifier of our own trained on the EVEN dev
  lines only (characters at -2..+2 and the bigrams around the target); only its odd-line figure
  is a result (the even-line figure is training accuracy);
* ``mixvox, no model``: dictionary + word-internal rules + pypinyin;
* ``mixvox + own NB``: same frontend, NB in the model's place (odd lines only are a result);
* ``mixvox + BiLSTM``: the shipped pipeline (dictionary first, model where it does not decide;
  ``BiLSTM alone`` is the model overruling every dictionary word);
* ``--old-zh DIR``: a copy of an older ``frontends/zh`` (e.g. ``git archive fa3bb3a
  frontends/zh``) scored the same way (the rules of that version were written from failures on
  even lines, so its odd-line figure is the fair one).

The polyphone rules of the old version and nothing of the new pipeline were fitted on dev; the
BiLSTM was trained by g2pM's authors on the CPP train split (dev may have served them for model
selection, so its dev figures may be slightly optimistic).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_zh as R

from mixvox.frontends.zh.plugin import ZhFrontend
from mixvox.frontends.zh.polymodel import default_model
from mixvox.interfaces import FrontendContext, Lexicon
from mixvox.ir import Span

Case = tuple[str, int, str]
Predict = Callable[[str], dict[int, str]]


def word_len_at(fe: ZhFrontend, text: str, idx: int) -> int:
    """Length of the word our segmentation puts the target in (0 if not a Han word)."""
    ctx = FrontendContext(lexicon=Lexicon("zh"), warn=lambda *a: None, matrix="zh")
    for w in fe._analyze(Span("zh", text, 0, len(text)), ctx, sandhi=False):
        if w.start <= idx < w.end:
            return len(w.text)
    return 0


class NaiveBayes:
    """Per-character multinomial naive Bayes over a few context features (our own baseline)."""

    known: frozenset[str] = frozenset()  # every character is seen (no filtering)

    def __init__(self, cases: list[Case]) -> None:
        self.prior: dict[str, Counter[str]] = defaultdict(Counter)
        self.feat: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for text, idx, lb in cases:
            ch = text[idx]
            self.prior[ch][lb] += 1
            for f in self.features(text, idx):
                self.feat[(ch, lb)][f] += 1

    @staticmethod
    def features(text: str, i: int) -> list[str]:
        def c(k: int) -> str:
            return text[i + k] if 0 <= i + k < len(text) else "#"

        return [f"L1{c(-1)}", f"L2{c(-2)}", f"R1{c(1)}", f"R2{c(2)}", f"LL{c(-2)}{c(-1)}",
                f"RR{c(1)}{c(2)}", f"LR{c(-1)}{c(1)}"]  # fmt: skip

    def candidates(self, ch: str) -> tuple[str, ...]:
        return tuple(self.prior.get(ch, ()))

    def load(self) -> None:
        """Nothing to load (trained in ``__init__``)."""

    def only_reading(self, ch: str) -> str | None:
        c = self.candidates(ch)
        return c[0].replace("u:", "v") if len(c) == 1 else None

    def hidden_states(self, text: str) -> list[tuple[str, int] | None]:
        return [None] + [(text, i) for i in range(len(text))] + [None]

    def probabilities(self, state: tuple[str, int], cands: tuple[str, ...]) -> dict[str, float]:
        text, i = state
        ch, fs = text[i], self.features(text, i)
        scores = {}
        for lb in cands:
            cnt = self.feat[(ch, lb)]
            tot = sum(cnt.values()) + 1000
            s = math.log(self.prior[ch][lb])
            scores[lb.replace("u:", "v")] = s + sum(math.log((cnt[f] + 0.1) / tot) for f in fs)
        top = max(scores.values())
        z = sum(math.exp(v - top) for v in scores.values())
        return {k: math.exp(v - top) / z for k, v in scores.items()}

    def classify(self, state: tuple[str, int], cands: tuple[str, ...]) -> str:
        probs = self.probabilities(state, cands)
        return max(probs, key=probs.__getitem__)

    # the interface :class:`~mixvox.frontends.zh.polymodel.SentenceReadings` uses
    def hidden_layer(self, states: list[tuple[str, int] | None]) -> list[tuple[str, int] | None]:
        return states

    def choose(self, state: tuple[str, int], cands: tuple[str, ...]) -> str:
        return self.classify(state, cands)

    def sure(self, state: tuple[str, int], cands: tuple[str, ...], margin: float) -> str | None:
        probs = self.probabilities(state, cands)
        best = max(probs, key=probs.__getitem__)
        return best if probs[best] >= 1 - math.exp(-margin) else None

    def predict(self, text: str) -> dict[int, str]:
        out = {}
        for i, ch in enumerate(text):
            cands = self.candidates(ch)
            if len(cands) > 1:
                out[i] = self.classify((text, i), cands)
        return out


def with_fallback(first: Predict, second: Predict) -> Predict:
    return lambda t: {**second(t), **first(t)}


def score(cases: list[Case], kinds: list[int], predict: Predict) -> dict[str, tuple[int, int]]:
    res: dict[str, list[int]] = {k: [0, 0] for k in ("all", "odd", "even", "one", "multi")}
    for n, ((text, idx, lb), wl) in enumerate(zip(cases, kinds, strict=True)):
        ok = predict(text).get(idx, "").replace("v", "u:") == lb
        keys = ["all", "odd" if n % 2 else "even", "one" if wl == 1 else "multi"]
        for k in keys:
            res[k][0] += ok
            res[k][1] += 1
    return {k: (a, b) for k, (a, b) in res.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--testdata", type=Path, default=R.DEFAULT_TESTDATA)
    ap.add_argument("--old-zh", type=Path, help="a copy of an older frontends/zh to score too")
    ap.add_argument("--examples", type=int, default=0, help="print N failures of the pipeline")
    args = ap.parse_args(argv)
    cases = R.cpp_cases(args.testdata)
    fe = ZhFrontend()
    kinds = [word_len_at(fe, t, i) for t, i, _ in cases]
    model = default_model()
    nb = NaiveBayes(cases[0::2])
    rows: list[tuple[str, Predict]] = [("pypinyin", R.pypinyin_alone)]
    try:
        from g2pM import G2pM  # measuring only; mixvox never imports it

        g = G2pM()
        rows.append(("g2pM package", lambda t: dict(enumerate(g(t, char_split=True)))))
    except ImportError:
        pass
    rows.append(("BiLSTM alone", with_fallback(model.predict, R.pypinyin_alone)))
    rows.append(("own NB (even lines)", with_fallback(nb.predict, R.pypinyin_alone)))
    plain = ZhFrontend(polyphone_model=False)
    rows.append(("mixvox, no model", lambda t: plain.char_readings(t, sandhi=False)))
    fe_nb = ZhFrontend()
    fe_nb.model = nb  # type: ignore[assignment]
    rows.append(("mixvox + own NB", lambda t: fe_nb.char_readings(t, sandhi=False)))
    rows.append(("mixvox + BiLSTM", lambda t: fe.char_readings(t, sandhi=False)))
    if args.old_zh:
        sys.path.insert(0, str(args.old_zh.parent))
        old = importlib.import_module(f"{args.old_zh.name}.plugin").ZhFrontend()
        rows.append((f"old zh ({args.old_zh.name})", lambda t: old.char_readings(t, sandhi=False)))
    n_one = sum(1 for k in kinds if k == 1)
    print(f"CPP dev: {len(cases)} cases; target a one-character word: {n_one}, in a longer "
          f"word: {len(cases) - n_one}")  # fmt: skip
    head = f"{'chooser':26s} {'all':>7s} {'odd':>7s} {'even':>7s} {'1-char':>7s} {'multi':>7s}"
    print(head + "   sent/s")
    for name, pred in rows:
        t0 = time.perf_counter()
        r = score(cases, kinds, pred)
        rate = len(cases) / (time.perf_counter() - t0)
        cells = " ".join(f"{100 * a / b:6.2f}%" for a, b in (r[k] for k in
                         ("all", "odd", "even", "one", "multi")))  # fmt: skip
        print(f"{name:26s} {cells}   {rate:6.0f}")
    if args.examples:
        print("\nmixvox + BiLSTM failures:")
        shown = 0
        for (text, idx, lb), wl in zip(cases, kinds, strict=True):
            got = fe.char_readings(text, sandhi=False).get(idx, "").replace("v", "u:")
            if got != lb:
                print(f"  {'1' if wl == 1 else 'M'} {text[:idx]}[{text[idx]}]{text[idx + 1:]}"
                      f"  got {got} exp {lb}")  # fmt: skip
                shown += 1
                if shown >= args.examples:
                    break
    return 0


if __name__ == "__main__":
    sys.exit(main())
