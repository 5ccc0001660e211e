"""Regression report for the English frontend against the shared test suites.

Usage::

    python bench/report_en.py            # all suites, full CMUdict test split (~30 s)
    python bench/report_en.py --g2p-sample 20   # every 20th G2P test word only
    python bench/report_en.py --failures        # every failing TN case, with its file
    python bench/report_en.py --tn-only         # TN figures only (a second)

Prints one line per test file: cases, passes, pass rate. Outputs are compared after
:func:`canonical` (documented in ``frontends/en/CONVENTIONS.md``): case-folded, punctuation
removed, runs of single letters merged (we write spelled acronyms "P M", NeMo writes "PM").
The "no-and" column also drops the word "and" on both sides. The TN total is printed for the
default convention ("one hundred and twenty three", as NeMo/WeText) and for the American one
without "and" (``numbers.number_style(and_=False)``), so the cost of either is visible.

The functions here are imported by ``tests/test_en_suites.py``, which asserts floors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mixvox.frontends.en import numbers
from mixvox.frontends.en.g2p import g2p_neural
from mixvox.frontends.en.normalize import normalize_en
from mixvox.interfaces import FrontendContext, Lexicon
from mixvox.ir import Span

TESTDATA = Path(
    os.environ.get("MIXVOX_TESTDATA", Path(__file__).resolve().parents[2] / "shared" / "testdata")
)
if not TESTDATA.is_dir():  # the checkout may sit elsewhere; fall back to the shared folder
    TESTDATA = Path("/work/shared/testdata")


_RE_CAPS = re.compile(r"\b[A-Z]{2,}\b")


def canonical(text: str, *, drop_and: bool = False, split_caps: bool = False) -> str:
    """Comparison form of a spoken string (see module docstring). ``split_caps`` reads
    all-capital words as spelled letters (NeMo's way of writing them); :func:`matches`
    accepts either form, because NeMo also keeps the capitals of the input (GO U HAUL)."""
    text = unicodedata.normalize("NFC", text)
    # Typographic apostrophes are apostrophes (the frontend folds them to ').
    text = text.translate({0x2019: "'", 0x2018: "'", 0x02BC: "'"})
    if split_caps:
        # NeMo writes spelled letters as capitals (PM EST, HTTP, WWW): spelled letters,
        # compared letter by letter whatever their grouping, as ours ("P M E S T") are.
        text = _RE_CAPS.sub(lambda m: " ".join(m.group()), text)
    text = text.casefold()
    chars = []
    for c in text:
        if c.isalnum() or c == "'" or unicodedata.combining(c):
            chars.append(c)
        else:
            chars.append(" ")
    words = [w.strip("'") for w in "".join(chars).split()]
    words = [w for w in words if w]
    if drop_and:
        words = [w for w in words if w != "and"]
    merged: list[str] = []
    run = ""
    for w in words:
        if len(w) == 1 and w.isalpha():
            run += w
            continue
        if run:
            merged.append(run)
            run = ""
        merged.append(w)
    if run:
        merged.append(run)
    return " ".join(merged)


@dataclass
class FileResult:
    name: str
    total: int
    passed: int
    passed_no_and: int
    failures: list[tuple[str, str, str]]

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def rate_no_and(self) -> float:
        return self.passed_no_and / self.total if self.total else 0.0


def matches(hyp: str, ref: str, *, drop_and: bool = False) -> bool:
    """Same reading after :func:`canonical`, with capitals as words or as spelled letters."""
    return any(
        canonical(hyp, drop_and=drop_and, split_caps=sc)
        == canonical(ref, drop_and=drop_and, split_caps=sc)
        for sc in (False, True)
    )


def _score(name: str, cases: list[tuple[str, list[str]]]) -> FileResult:
    passed = passed2 = 0
    failures = []
    for src, refs in cases:
        hyp = normalize_en(src)
        if any(matches(hyp, r) for r in refs):
            passed += 1
            passed2 += 1
            continue
        if any(matches(hyp, r, drop_and=True) for r in refs):
            passed2 += 1
        failures.append((src, hyp, refs[0]))
    return FileResult(name, len(cases), passed, passed2, failures)


def nemo_cases() -> Iterator[tuple[str, list[tuple[str, list[str]]]]]:
    """NeMo TN files: ``written~spoken`` (plus the multi-answer normalize_with_audio file)."""
    d = TESTDATA / "nemo_tn_en" / "data_text_normalization"
    for f in sorted(d.glob("test_cases_*.txt")):
        lines = f.read_text("utf-8").split("\n")
        cases: list[tuple[str, list[str]]] = []
        if f.name == "test_cases_normalize_with_audio.txt":
            cur: tuple[str, list[str]] | None = None
            for line in lines:
                if line.startswith("~"):
                    if cur and cur[1]:
                        cases.append(cur)
                    cur = (line[1:], [])
                elif line.strip() and cur is not None:
                    cur[1].append(line)
            if cur and cur[1]:
                cases.append(cur)
        else:
            for line in lines:
                if "~" not in line or not line.strip("~ "):
                    continue
                parts = line.split("~")
                cases.append((parts[0], parts[1:]))
        yield f"nemo/{f.name}", cases


def wetext_cases() -> Iterator[tuple[str, list[tuple[str, list[str]]]]]:
    d = TESTDATA / "wetext_tn" / "tn_english"
    for f in sorted(d.glob("*.txt")):
        cases = []
        for line in f.read_text("utf-8").splitlines():
            if "=>" not in line:
                continue
            src, _, ref = line.partition("=>")
            cases.append((src.strip(), [ref.strip()]))
        yield f"wetext/{f.name}", cases


def tn_results(*, and_: bool | None = None) -> list[FileResult]:
    """Scores per TN file; ``and_`` picks the "and" convention (``None``: the default)."""
    out = []
    style = numbers.number_style(and_=and_) if and_ is not None else None
    if style is not None:
        style.__enter__()
    try:
        for name, cases in [*nemo_cases(), *wetext_cases()]:
            out.append(_score(name, cases))
    finally:
        if style is not None:
            style.__exit__(None, None, None)
    return out


# ---------------------------------------------------------------------------------------------
# g2p-mix English cases (phonemes per English word)
# ---------------------------------------------------------------------------------------------


def _analyze(text: str):
    from mixvox.frontends.en.plugin import EnFrontend

    warns: list[tuple] = []
    ctx = FrontendContext(lexicon=Lexicon("en"), warn=lambda *a: warns.append(a), matrix="en")
    return EnFrontend().analyze(Span("en", text, 0, len(text)), ctx)


def _latin_runs(text: str) -> list[tuple[int, int]]:
    runs = []
    i = 0
    while i < len(text):
        if (
            text[i].isascii()
            and not text[i].isspace()
            or unicodedata.category(text[i]).startswith(("L", "N", "M"))
            and ord(text[i]) < 0x2E80
        ):
            j = i
            while (
                j < len(text)
                and not text[j].isspace()
                and (ord(text[j]) < 0x2E80 or 0xFF00 <= ord(text[j]) <= 0xFFEF)
            ):
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    return runs


def g2pmix_results() -> list[FileResult]:
    """English parts of g2p-mix: whole-English texts and English words inside mixed ones."""
    d = TESTDATA / "g2pmix_zh_en_cases"
    results = []
    # 1) smoke benchmark: English texts -> normalized + phones; mixed -> English word phones.
    smoke = json.loads((d / "benchmarks_data_smoke.json").read_text("utf-8"))["cases"]
    total = passed = 0
    failures = []
    for case in smoke:
        text = case["text"]
        if not any(c.isascii() and c.isalpha() for c in text.replace("Ａ", "A")) and not any(
            "\uff21" <= c <= "\uff5a" for c in text
        ):
            continue
        native = [p for p in case["expected_native"] if p.split()[0].isupper()]
        has_han = any("\u4e00" <= c <= "\u9fff" for c in text)
        if has_han:
            # English words only: the runs of Latin letters in the text.
            words = [
                text[a:b]
                for a, b in _latin_runs(text)
                if any(c.isalpha() and c.isascii() for c in text[a:b])
            ]
            got = [
                " ".join(w.phonemes) for word in words for w in _analyze(word) if w.kind == "word"
            ]
            ok = got == native[-len(got) :] if got else False
        else:
            ws = _analyze(text)
            got_norm = normalize_en(text)
            got_ph = " ".join(p for w in ws for p in w.phonemes)
            ok = canonical(got_norm, drop_and=True) == canonical(
                case["expected_normalized"], drop_and=True
            ) and got_ph.replace(" AH0 N D", "") == " ".join(native).replace(" AH0 N D", "")
            got = [got_norm, got_ph]
        total += 1
        passed += ok
        if not ok:
            failures.append((text, str(got), str(native)))
    results.append(
        FileResult(
            "g2pmix/benchmarks_data_smoke.json (en parts, no-and)", total, passed, passed, failures
        )
    )
    # 2) homographs with spans.
    homo = json.loads((d / "benchmarks_data_english_homographs.json").read_text("utf-8"))["cases"]
    total = passed = 0
    failures = []
    for case in homo:
        ws = _analyze(case["text"])
        for tgt in case["targets"]:
            a, b = tgt["span"]
            got = [" ".join(w.phonemes) for w in ws if w.start == a and w.end == b]
            ok = got == tgt["expected_native"]
            total += 1
            passed += ok
            if not ok:
                failures.append((case["text"], str(got), str(tgt["expected_native"])))
    results.append(
        FileResult(
            "g2pmix/benchmarks_data_english_homographs.json", total, passed, passed, failures
        )
    )
    # 3) g2p section of the text-normalization cases: English words with "native".
    tn = json.loads((d / "tests_cases_text_normalization.json").read_text("utf-8"))["g2p"]
    total = passed = 0
    failures = []
    for case in tn:
        if "native" not in case:
            continue
        eng = [p for p in case["native"] if p.split()[0].isupper()]
        words = [case["text"][a:b] for a, b in _latin_runs(case["text"])]
        got = [" ".join(w.phonemes) for word in words for w in _analyze(word) if w.kind == "word"]
        ok = got == eng
        total += 1
        passed += ok
        if not ok:
            failures.append((case["text"], str(got), str(eng)))
    results.append(
        FileResult(
            "g2pmix/tests_cases_text_normalization.json (g2p, en)", total, passed, passed, failures
        )
    )
    return results


# ---------------------------------------------------------------------------------------------
# CMUdict test split through the neural model only
# ---------------------------------------------------------------------------------------------


def _edit_distance(a: list[str], b: list[str]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def g014b2b_refs() -> dict[str, list[list[str]]]:
    refs: dict[str, list[list[str]]] = {}
    path = TESTDATA / "cmudict_g2p_en" / "g014b2b.test"
    for line in path.read_text("utf-8").splitlines():
        if "\t" not in line:
            continue
        word, phones = line.split("\t", 1)
        refs.setdefault(word, []).append(phones.split())
    return refs


@dataclass
class G2PResult:
    words: int
    wer: float
    per: float
    seconds: float


def g2p_neural_eval(sample_every: int = 1) -> G2PResult:
    """WER/PER of the neural model alone on g014b2b (stress stripped; any reference counts)."""
    refs = g014b2b_refs()
    items = sorted(refs.items())[::sample_every]
    errors = 0
    edits = 0
    ref_len = 0
    t0 = time.perf_counter()
    for word, prons in items:
        hyp = [p.rstrip("012") for p in g2p_neural(word.lower())]
        dists = [_edit_distance(hyp, r) for r in prons]
        best = min(range(len(prons)), key=lambda i: dists[i])
        errors += dists[best] > 0
        edits += dists[best]
        ref_len += len(prons[best])
    dt = time.perf_counter() - t0
    return G2PResult(len(items), errors / len(items), edits / ref_len, dt)


_ARPA_IPA = {
    "AA": "ɑ", "AE": "æ", "AH": "ə", "AO": "ɔ", "AW": "aʊ", "AY": "aɪ", "EH": "ɛ", "ER": "ɝ",
    "EY": "eɪ", "IH": "ɪ", "IY": "i", "OW": "oʊ", "OY": "ɔɪ", "UH": "ʊ", "UW": "u", "B": "b",
    "CH": "tʃ", "D": "d", "DH": "ð", "F": "f", "G": "ɡ", "HH": "h", "JH": "dʒ", "K": "k",
    "L": "ɫ", "M": "m", "N": "n", "NG": "ŋ", "P": "p", "R": "ɹ", "S": "s", "SH": "ʃ", "T": "t",
    "TH": "θ", "V": "v", "W": "w", "Y": "j", "Z": "z", "ZH": "ʒ",
}  # fmt: skip


def arpabet_to_ipa(phones: list[str]) -> str:
    """ARPAbet -> the IPA of ipa-dict/CharsiuG2P, stress marks left out (ipa-dict writes every AH as schwa)."""
    out = []
    for p in phones:
        base = p.rstrip("012")
        out.append(_ARPA_IPA.get(base, "?"))
    return "".join(out)


def charsiu_eval(*, neural_only: bool) -> tuple[int, float]:
    """Word accuracy on CharsiuG2P eng-us (500 words; any listed variant, stress ignored)."""
    from mixvox.frontends.en.g2p import g2p_en_word

    path = TESTDATA / "charsiu_g2p_test" / "eng-us.tsv"
    total = ok = 0
    for line in path.read_text("utf-8").splitlines():
        if "\t" not in line:
            continue
        word, ipa = line.split("\t", 1)
        refs = {v.replace("ˈ", "").replace("ˌ", "").strip() for v in ipa.split(",")}
        phones = g2p_neural(word) if neural_only else g2p_en_word(word)
        total += 1
        ok += arpabet_to_ipa(phones) in refs
    return total, ok / total if total else 0.0


def throughput(repeat: int = 50) -> tuple[int, float]:
    """Words per second of the whole frontend on a realistic mixed paragraph (warm caches)."""
    text = (
        "On January 5, 2024 at 3:30 PM Dr. Smith paid $5.99 for 1.6 GB on an RTX 4070 "
        "(i7-12700K, H200) via https://example.com; e.g. C++ v2.0 is 50% faster in 22 ms. "
        "The refuse collectors refuse to record a new record for NASA's GPUs in the 1980s."
    )
    words = _analyze(text)  # warm-up: loads CMUdict and the neural model
    t0 = time.perf_counter()
    for _ in range(repeat):
        words = _analyze(text)
    dt = time.perf_counter() - t0
    return len(words) * repeat, len(words) * repeat / dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--g2p-sample", type=int, default=1, help="use every Nth G2P test word")
    ap.add_argument("--show-failures", type=int, default=0, help="print N failures per file")
    ap.add_argument("--failures", action="store_true", help="print every failing TN case")
    ap.add_argument("--tn-only", action="store_true", help="TN figures only (skip G2P)")
    args = ap.parse_args(argv)
    print(f"{'file':62s} {'cases':>5s} {'pass':>5s} {'rate':>7s} {'no-and':>7s}")
    tn = tn_results()
    rows = tn if args.tn_only else [*tn, *g2pmix_results()]
    shown = 10**9 if args.failures else args.show_failures
    for r in rows:
        print(f"{r.name:62s} {r.total:5d} {r.passed:5d} {r.rate:7.1%} {r.rate_no_and:7.1%}")
        for src, hyp, ref in r.failures[:shown]:
            print(f"    {src!r}\n      got: {hyp!r}\n      ref: {ref!r}")
    total = sum(r.total for r in tn)
    passed, no_and = sum(r.passed for r in tn), sum(r.passed_no_and for r in tn)
    print(
        f"{'NeMo + WeText en TN TOTAL (default: with and)':62s} {total:5d} {passed:5d} "
        f"{passed / total:7.1%} {no_and / total:7.1%}"
    )
    for label, style in (("with and", True), ("US, without and", False)):
        rs = tn_results(and_=style)
        by_set = []
        for prefix in ("nemo/", "wetext/"):
            sub = [r for r in rs if r.name.startswith(prefix)]
            t, p = sum(r.total for r in sub), sum(r.passed for r in sub)
            by_set.append(f"{prefix[:-1]} {p}/{t} {p / t:.1%}")
        t, p = sum(r.total for r in rs), sum(r.passed for r in rs)
        print(f"  convention {label:16s}: {p}/{t} = {p / t:.1%} raw ({', '.join(by_set)})")
    if args.tn_only:
        return 0
    for neural_only in (False, True):
        n, acc = charsiu_eval(neural_only=neural_only)
        label = "neural only" if neural_only else "CMUdict + neural"
        print(
            f"charsiu_g2p_test/eng-us.tsv ({label}, stress ignored): {n} words, accuracy {acc:.1%}"
        )
    n, wps = throughput()
    print(f"frontend throughput: {n} words analysed, {wps:,.0f} words/s (one core, warm)")
    g = g2p_neural_eval(args.g2p_sample)
    print(
        f"cmudict_g2p_en/g014b2b.test (neural only, stress stripped): {g.words} words, "
        f"WER {g.wer:.1%}, PER {g.per:.1%}, {g.seconds:.1f} s ({g.seconds / g.words * 1e3:.2f} ms/word)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
