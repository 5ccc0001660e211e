"""Score a held-out batch once, the way issue 7's first-contact figures are taken.

Held-out batches are written by people who read no frontend or router code and none of the
test tables' bodies; each is scored **once**, at first contact, with the code of the moment,
and the figure is recorded in BENCHMARKS.md as scored (later fixes never change it). The
batches themselves stay out of the repository until they are scored, so nobody tunes to them.

Three kinds, one file each (``#`` lines and blank lines are ignored):

* ``mixed``: ``text<TAB>expected`` with ``expected`` in the form of
  ``tests/data/zh_mixed_tech.tsv`` (spoken words in order, punctuation left out, English-frontend
  words in ``<...>``); exact match of :func:`report_zh.marked_spoken`.
* ``tn``: ``text<TAB>expected normalize_zh output``; whitespace removed and full-width
  punctuation folded before comparing (:func:`report_zh.canon`).
* ``poly``: ``marked sentence<TAB>pinyin`` with the one character in ``[...]``, its lexical
  reading (no sandhi), as ``tests/data/zh_everyday_polyphones.tsv``.

    python bench/score_heldout.py mixed batch13.tsv [--out batch13.out]

Prints every failure (input, got, expected) and a last line ``KIND FILE: P/N = R %``. For
``mixed`` a second figure, *same sounds*, also passes a line whose Chinese words are the same
and whose English groups have the same phonemes (ARPAbet without stress) as the expected
groups read on their own: a mechanical check of what earlier sessions sorted by hand as
"format-only" (``<GoPro>`` for ``<Go Pro>``, ``<raid>`` for ``<RAID>``, ``<main tainer>``
with the phonemes of maintainer). The exact figure stays the headline.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_zh import canon, marked_spoken

from mixvox.frontends.zh import ZhFrontend, normalize_zh


def rows(path: Path) -> list[tuple[int, str, str]]:
    """``(line number, text, expected)`` of each case; a line without a tab is an error."""
    out = []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        text, tab, exp = line.partition("\t")
        if not tab:
            raise SystemExit(f"{path}:{n}: no tab between the text and the expected reading")
        out.append((n, text.replace("\\t", "\t"), exp.strip()))
    return out


def _route_sounds(text: str) -> list[str]:
    """The router's reading of ``text``: Chinese words character by character, English words
    as phonemes without stress."""
    import mixvox

    out: list[str] = []
    for w in mixvox.route(text).words:
        if w.kind == "punct" or not w.spoken:
            continue
        if w.lang == "en":
            out += [re.sub(r"\d", "", ph) for ph in w.phonemes]
        else:
            out += list(w.spoken)
    return out


def _sounds(pieces: list[tuple[str, str]]) -> list[str]:
    """Chinese text character by character, English words as phonemes without stress."""
    out: list[str] = []
    for lang, text in pieces:
        if lang == "zh":
            out += [c for c in text if not c.isspace()]
            continue
        # The writers' form: letters said one by one are separate capitals (<G P U>), so a
        # run of capitals is a word (<RAID>): lower it, lest our own frontend spell it.
        out += _route_sounds(re.sub(r"\b[A-Z]{2,}\b", lambda m: m.group().lower(), text))
    return out


def _split_marked(marked: str) -> list[tuple[str, str]]:
    """``中文<English words>中文`` as ``[("zh", ...), ("en", ...), ...]``."""
    return [
        ("en", m[1:-1]) if m.startswith("<") else ("zh", m)
        for m in re.findall(r"<[^>]*>|[^<]+", marked)
    ]


def same_sounds(text: str, exp: str) -> bool:
    """The router's reading of ``text`` sounds like ``exp`` (see the module docstring)."""
    return _route_sounds(text) == _sounds(_split_marked(exp))


def join_groups(marked: str) -> str:
    """``<a><b c>`` -> ``<a b c>``: adjacent English groups as one (see the docstring)."""
    return re.sub(r">\s*<", " ", marked)


def score(kind: str, path: Path) -> tuple[int, int, list[str]]:
    cases = rows(path)
    fe = ZhFrontend() if kind == "poly" else None
    lines: list[str] = []
    passed = 0
    for n, text, exp in cases:
        if kind == "mixed":
            got = join_groups(marked_spoken(text))
            exp = join_groups(exp)
            ok = got == exp
            if not ok and same_sounds(text, exp):
                got += "\t(same sounds)"
        elif kind == "tn":
            got = normalize_zh(text)
            ok = canon(got) == canon(exp)
        else:
            assert fe is not None
            if "[" not in text or "]" not in text:
                raise SystemExit(f"{path}:{n}: no [marked] character")
            i = text.index("[")
            got = fe.char_readings(text.replace("[", "").replace("]", ""), sandhi=False)[i]
            ok = got == exp
        passed += ok
        lines.append(
            f"{'ok  ' if ok else 'FAIL'} {path.name}:{n}\t{text}\n\tgot {got}\n\texp {exp}"
        )
    return passed, len(cases), lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kind", choices=("mixed", "tn", "poly"))
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help="write every case (ok and FAIL) to this file")
    a = ap.parse_args(argv)
    all_lines: list[str] = []
    summary = []
    for f in a.files:
        p, t, lines = score(a.kind, f)
        all_lines += lines
        for ln in lines:
            if ln.startswith("FAIL"):
                print(ln)
        line = f"{a.kind} {f.name}: {p}/{t} = {100 * p / max(t, 1):.1f} %"
        if a.kind == "mixed":
            s = p + sum("(same sounds)" in ln for ln in lines)
            line += f"; same sounds {s}/{t} = {100 * s / max(t, 1):.1f} %"
        summary.append(line)
    if a.out:
        a.out.write_text("\n".join(all_lines + summary) + "\n", "utf-8")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
