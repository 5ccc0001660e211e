"""Propose ChatTTS homophone rows for the rare readings of the polyphones our model decides,
and measure how much of the text the table covers.

Usage:

* ``python bench/grow_homophones.py [--tokenizer DIR] > rows.tsv``: proposed rows (reviewed by
  hand before they went into ``engines/chattts/data/homophones.tsv``);
* ``python bench/grow_homophones.py --coverage [--top N]``: of all polyphone occurrences in the
  CPP dev sentences (every character the zh model decides, not only the marked one) that the zh
  frontend reads with a reading other than the character's usual one, how many the table
  substitutes (the figure in BENCHMARKS.md), and the most frequent uncovered pairs.

A character's *usual* reading stands for what ChatTTS says when context does not tell it
otherwise. No single estimate is good (pypinyin lists 佛 fu2 first; over CPP dev, Wikipedia, 长
is mostly zhang3), so three vote: the reading the zh frontend gives the character most often
over the CPP dev text, the reading that carries most jieba word frequency over pypinyin's phrase
table, and the frontend's reading of the character alone (``char_defaults.tsv``, else pypinyin's
first); a tie goes to the first.
A
substitute is a character that pypinyin gives exactly the wanted reading, that ChatTTS's
tokenizer knows as a single token, and that is the most frequent such character in jieba's
dictionary.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import jieba
from pypinyin.constants import PHRASES_DICT, PINYIN_DICT

from mixvox.frontends.zh.g2p import mark_to_tone3
from mixvox.frontends.zh.polymodel import default_model

sys.path.insert(0, str(Path(__file__).resolve().parent))

Occurrence = tuple[str, str, str]  # character, lexical reading, the word it is in


def readings(ch: str) -> list[str]:
    raw = PINYIN_DICT.get(ord(ch), "")
    out: list[str] = []
    for r in raw.split(","):
        if r and (t := mark_to_tone3(r)) not in out:
            out.append(t)
    return out


def cpp_occurrences(chars: set[str]) -> list[Occurrence]:
    """Every occurrence of ``chars`` in CPP dev with the zh frontend's lexical reading."""
    import report_zh as R

    from mixvox.frontends.zh.plugin import ZhFrontend
    from mixvox.interfaces import FrontendContext, Lexicon
    from mixvox.ir import Span

    fe = ZhFrontend()
    out: list[Occurrence] = []
    for text, _idx, _lb in R.cpp_cases():
        ctx = FrontendContext(lexicon=Lexicon("zh"), warn=lambda *a: None, matrix="zh")
        for w in fe._analyze(Span("zh", text, 0, len(text)), ctx, sandhi=False):
            if w.kind != "word" or w.lang != "zh" or len(w.phonemes) != len(w.text):
                continue
            for ch, py in zip(w.spoken, w.phonemes, strict=False):
                if ch in chars:
                    out.append((ch, py, w.spoken))
    return out


def usual_readings(occ: list[Occurrence], freq: dict[str, int]) -> dict[str, str]:
    """Character -> its usual reading (three estimates vote; see the module docstring)."""
    from mixvox.frontends.zh import polyphone

    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for ch, py, _w in occ:
        seen[ch][py] += 1
    use: dict[str, Counter[str]] = defaultdict(Counter)
    for w, pys in PHRASES_DICT.items():
        if len(pys) == len(w):
            for ch, p in zip(w, pys, strict=True):
                use[ch][mark_to_tone3(p[0])] += freq.get(w, 1)
    out: dict[str, str] = {}
    for ch in seen:
        votes = [max(seen[ch], key=seen[ch].__getitem__)]
        if use[ch]:
            votes.append(max(use[ch], key=use[ch].__getitem__))
        alone = polyphone.default(ch) or (readings(ch) or [""])[0]
        if alone:
            votes.append(alone)
        tally = Counter(votes)
        out[ch] = max(votes, key=lambda r: (tally[r], -votes.index(r)))
    return out


def coverage(
    occ: list[Occurrence], usual: dict[str, str], subs_for: dict[str, str], top: int
) -> int:
    """Print the table's coverage of rare readings over all polyphone occurrences of CPP dev."""
    from mixvox.engines.chattts.render import default_homophones

    table = default_homophones()
    need = covered = kept = 0
    missing: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for ch, py, word in occ:
        if py.endswith("5") or usual.get(ch, py) == py:
            continue
        need += 1
        if word in table.keep:
            kept += 1
        elif (ch, py) in table.subs:
            covered += 1
        else:
            missing[(ch, py)] += 1
            example.setdefault((ch, py), word)
    print(f"polyphone occurrences in CPP dev: {len(occ)}; read with a rare reading: {need}; "
          f"substituted: {covered}; keep list: {kept}; uncovered: {need - covered - kept} "
          f"({100 * (covered + kept) / max(1, need):.1f} % covered)")  # fmt: skip
    print(f"uncovered (char, reading) pairs: {len(missing)}; most frequent:")
    for (ch, py), n in missing.most_common(top):
        print(f"  {ch}\t{py}\t{n}\t{example[(ch, py)]}\tcandidate {subs_for.get(py, '-')}"
              f"\t(usual {usual.get(ch)})")  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared/chattts/asset/tokenizer"
    ap.add_argument("--tokenizer", type=Path, default=shared)
    ap.add_argument("--coverage", action="store_true", help="coverage on CPP dev instead")
    ap.add_argument("--top", type=int, default=30, help="uncovered pairs to list (--coverage)")
    args = ap.parse_args(argv)
    vocab = json.loads((args.tokenizer / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    freq: dict[str, int] = {}
    with open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8") as f:
        for line in f:
            w, n, *_ = line.split(" ")
            freq[w] = int(n)
    by_reading: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for cp in range(0x4E00, 0xA000):
        ch = chr(cp)
        r = readings(ch)
        if len(r) == 1 and ch in vocab and ch in freq:
            by_reading[r[0]].append((freq[ch], ch))
    subs_for = {r: max(v)[1] for r, v in by_reading.items() if v}
    m = default_model()
    m.load_labels()
    poly = {ch for ch in m._cands if len(m.candidates(ch)) > 1}
    occ = cpp_occurrences(poly)
    usual = usual_readings(occ, freq)
    if args.coverage:
        return coverage(occ, usual, subs_for, args.top)
    for ch in sorted(poly):
        common = usual.get(ch)
        for r in (m.classes[i].replace("u:", "v") for i in m.candidates(ch)):
            if common and r != common and not r.endswith("5") and r in subs_for:
                print(f"{ch}\t{r}\t{subs_for[r]}\t# usual {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
