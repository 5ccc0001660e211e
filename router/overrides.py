"""Inline English overrides keep the built-in reading as their text.

``[XQZ](/Z IH1 K S/)`` gives phonemes; engines that speak phonemes (espeak) use them exactly,
engines that read text (the neural one) respell them from CMUdict, and when no respelling is faithful
they fall back to ``Word.spoken``. That fallback must be no worse than having no override, so
``spoken`` is what the English frontend would have said for the bracket text (``X Q Z``), not
the bare bracket text the override scanner stored.
"""

from __future__ import annotations

from collections.abc import Callable

from mixvox.interfaces import FrontendContext, Lexicon
from mixvox.ir import EN, Span

__all__ = ["fill_builtin_spoken"]


def fill_builtin_spoken(span: Span, frontend: Callable[[str], object | None], matrix: str) -> None:
    """Give English override words of ``span`` the frontend's own spoken text (in place)."""
    for w in span.words:
        if w.lang != EN or not w.override or not w.phonemes or not w.spoken.strip():
            continue
        fe = frontend(EN)
        if fe is None:
            return
        ctx = FrontendContext(
            lexicon=Lexicon(EN), warn=lambda *_a: None, matrix=matrix, lexicons={}
        )
        try:
            words = fe.analyze(Span(EN, w.spoken, 0, len(w.spoken)), ctx)  # type: ignore[attr-defined]
        except Exception:  # a better fallback text only; the override itself stands
            continue
        said = " ".join(x.spoken for x in words if x.kind == "word" and x.spoken.strip())
        if said and not any(c.isdigit() for c in said):
            w.spoken = said
