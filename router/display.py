"""Human-readable rendering of the IR for ``mixvox route`` (and for debugging in a REPL).

The text goes to a terminal, so anything that could move the cursor or reorder the line
(control characters, bidi overrides, zero-width marks) is shown as an escape instead of being
printed raw, and column padding counts East Asian wide characters as two cells.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from mixvox.interfaces import EngineInfo
from mixvox.ir import Chunk, Issue, Sentence, Span, Utterance, Word


def safe(text: str) -> str:
    """``text`` with control, format and unpaired surrogate characters escaped (``\\x1b``)."""
    out: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "\t" or cat not in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(ch)
        else:
            o = ord(ch)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
    return "".join(out)


def cells(text: str) -> int:
    """Terminal columns ``text`` takes (wide/full-width characters count two)."""
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cells(text))


def quote(text: str) -> str:
    return "«" + safe(text) + "»"


#: Longest issue text shown in a warning line (a 1 MB run of emoji is one issue).
MAX_SHOWN_ISSUE_TEXT = 40


def format_issue(issue: Issue) -> str:
    where = f"[{issue.start}:{issue.end}]"
    text = issue.text
    if len(text) > MAX_SHOWN_ISSUE_TEXT:
        text = text[:MAX_SHOWN_ISSUE_TEXT] + "…"
    shown = f" {quote(text)}" if text else ""
    return f"{issue.code} {where}{shown}: {safe(issue.message)}"


def _format_word(word: Word, width: int) -> str:
    left = pad(safe(word.text) if word.text else "∅", width)
    spoken = safe(word.spoken)
    if word.respelling:
        spoken += f" (say: {safe(word.respelling)})"
    tags: list[str] = []
    if word.kind != "word":
        tags.append(word.kind)
    if word.override:
        tags.append("lexicon")
    if word.break_after:
        tags.append(f"break={word.break_after}")
    phon = " ".join(word.phonemes)
    line = f"      {left} -> {spoken}"
    if phon:
        line += f"  /{safe(phon)}/"
    if tags:
        line += "  (" + ", ".join(tags) + ")"
    if word.override:
        for engine, how in engine_renderings(word):
            line += f"\n      {'':<{width}}      {safe(engine)}: {safe(how)}"
    return line


def engine_renderings(word: Word) -> list[tuple[str, str]]:
    """``(engine, how)`` per installed engine for an override word (``mixvox route``)."""
    from mixvox.registry import get_registry

    out: list[tuple[str, str]] = []
    for _plugin, res in get_registry().call_all("mixvox_word_rendering", word=word):
        if isinstance(res, tuple) and len(res) == 2:
            out.append((str(res[0]), str(res[1])))
    return sorted(out)


def format_span(span: Span) -> list[str]:
    lines = [
        f"    {span.lang:<4} [{span.start}:{span.end}] {quote(span.text)} -> {quote(span.spoken)}"
    ]
    width = min(24, max((cells(safe(w.text)) for w in span.words), default=0))
    lines.extend(_format_word(w, width) for w in span.words)
    return lines


def format_sentence(index: int, sentence: Sentence) -> list[str]:
    lines = [
        f"  sentence {index} [{sentence.start}:{sentence.end}] matrix={sentence.matrix} "
        f"{quote(sentence.text)}"
    ]
    for span in sentence.spans:
        lines.extend(format_span(span))
    return lines


def format_utterance(utt: Utterance, chunks: list[Chunk] | None = None) -> str:
    """The whole analysis: input, spoken text, sentences -> spans -> words, then warnings.

    With ``chunks`` (the prosody plugin's cut), also the pieces an engine would speak at once.
    """
    lines = [f"input:  {quote(utt.input)}", f"spoken: {quote(utt.spoken)}"]
    for i, sent in enumerate(utt.sentences, 1):
        lines.extend(format_sentence(i, sent))
    if chunks is not None:
        lines.append(f"chunks ({len(chunks)}):")
        lines.extend(f"  {c.index} [{c.start}:{c.end}] {quote(c.spoken)}" for c in chunks)
    if utt.warnings:
        lines.append(f"warnings ({len(utt.warnings)}):")
        lines.extend("  " + format_issue(w) for w in utt.warnings)
    else:
        lines.append("warnings: none")
    return "\n".join(lines)


def format_table(rows: list[list[str]], header: list[str]) -> str:
    """A plain left-aligned table; the last column is not padded (it may be long)."""
    all_rows = [header, *rows]
    ncol = len(header)
    widths = [max(cells(r[i]) for r in all_rows) for i in range(ncol - 1)]
    out = []
    for r in all_rows:
        cols = [pad(r[i], widths[i]) for i in range(ncol - 1)] + [r[-1]]
        out.append("  ".join(cols).rstrip())
    return "\n".join(out)


def engine_status(info: EngineInfo, options: Any = None) -> str:
    """``available`` or ``unavailable: <reason>``; a crashing check is reported, not raised.

    ``options``: the engine's options object (default: the engine's defaults)."""
    try:
        why = info.can_run(info.default_options() if options is None else options)
    except Exception as exc:  # a broken plugin's check must not break the listing
        return f"unavailable: check failed: {type(exc).__name__}: {exc}"
    return "available" if why is None else f"unavailable: {why}"
