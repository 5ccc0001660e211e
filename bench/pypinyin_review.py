"""List pypinyin phrase entries that the polyphone model reads differently, for a hand review.

Usage: ``python bench/pypinyin_review.py [--out FILE] [--below 0.05]``

For every multi-character word of pypinyin's phrase dictionary (not in our own table) and every
character of it that the context model decides, the model reads the word alone; a line is
written where it puts less than ``--below`` on pypinyin's reading. Lines are sorted by the
word's frequency in jieba's list (most frequent first), as TSV: log-probability, word, position,
character, pypinyin's reading, the model's reading, its probability, pypinyin's probability.

The model, trained on sentences, is often wrong on a word alone (相声, 分子): the list only
points a reviewer at entries worth checking against a dictionary. The fixes that came out of it
are in ``frontends/zh/data/phrase_fixes.tsv`` (each checked by hand against Xiandai Hanyu
Cidian); no test set is read here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pypinyin.constants import PHRASES_DICT

from mixvox.frontends.zh.g2p import ZhG2P, mark_to_tone3
from mixvox.frontends.zh.polymodel import default_model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the TSV here (default: stdout)")
    ap.add_argument("--below", type=float, default=0.05, help="pypinyin's probability under")
    args = ap.parse_args(argv)
    m = default_model()
    m.load()
    m.wait_onnx()
    g = ZhG2P()
    g.load()
    rows = []
    for w, ph in PHRASES_DICT.items():
        if len(w) < 2 or len(ph) != len(w) or g.is_own(w):
            continue
        py = [mark_to_tone3(p[0]) for p in ph]
        ks = [k for k, c in enumerate(w) if len(m.candidates(c)) > 1]
        if not ks:
            continue
        hs = m.hidden_states(w)
        for k in ks:
            pr = m.probabilities(hs[k + 1], m.candidates(w[k]))
            top = max(pr, key=pr.__getitem__)
            if top != py[k] and pr.get(py[k], 0.0) < args.below:
                rows.append((g.log_prob(w), w, k, py[k], top, pr[top], pr.get(py[k], 0.0)))
    rows.sort(key=lambda r: -r[0])
    out = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    for lp, w, k, a, b, p, q in rows:
        out.write(f"{lp:.1f}\t{w}\t{k}\t{w[k]}\t{a}\t{b}\t{p:.3f}\t{q:.3f}\n")
    if args.out:
        out.close()
    print(f"{len(rows)} word/character pairs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
