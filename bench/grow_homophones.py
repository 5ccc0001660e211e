"""Propose ChatTTS homophone rows for the rare readings of the polyphones our model decides.

Usage: ``python bench/grow_homophones.py [--tokenizer DIR] > rows.tsv`` (rows were reviewed by
hand before they went into ``engines/chattts/data/homophones.tsv``).

For every character the zh context model decides (the CPP label space) and each of its readings
other than the most common one, pick a substitute: a character that pypinyin gives exactly this
one reading, that ChatTTS's tokenizer knows as a single token, and that is the most frequent such
character in jieba's dictionary. The "most common reading" of a character is the reading that
carries most jieba word frequency over pypinyin's phrase table (the words it occurs in).
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


def readings(ch: str) -> list[str]:
    raw = PINYIN_DICT.get(ord(ch), "")
    out: list[str] = []
    for r in raw.split(","):
        if r and (t := mark_to_tone3(r)) not in out:
            out.append(t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared/chattts/asset/tokenizer"
    ap.add_argument("--tokenizer", type=Path, default=shared)
    args = ap.parse_args(argv)
    vocab = json.loads((args.tokenizer / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
    freq: dict[str, int] = {}
    with open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8") as f:
        for line in f:
            w, n, *_ = line.split(" ")
            freq[w] = int(n)
    use: dict[str, Counter[str]] = defaultdict(Counter)
    for w, pys in PHRASES_DICT.items():
        if len(pys) != len(w):
            continue
        for ch, p in zip(w, pys, strict=True):
            use[ch][mark_to_tone3(p[0])] += freq.get(w, 1)
    by_reading: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for cp in range(0x4E00, 0xA000):
        ch = chr(cp)
        r = readings(ch)
        if len(r) == 1 and ch in vocab and ch in freq:
            by_reading[r[0]].append((freq[ch], ch))
    m = default_model()
    m.load_labels()
    for ch in sorted(m._cands):
        cands = [m.classes[i].replace("u:", "v") for i in m.candidates(ch)]
        if len(cands) < 2 or not use[ch]:
            continue
        common = max(cands, key=lambda r: use[ch][r])
        for r in cands:
            if r == common or r.endswith("5"):
                continue
            subs = sorted(by_reading.get(r, []), reverse=True)
            if subs:
                print(f"{ch}\t{r}\t{subs[0][1]}\t# common {common}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
