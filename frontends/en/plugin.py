"""The English frontend and its plugin registration.

:class:`EnFrontend` turns an ``en`` span into IR words: :mod:`.normalize` gives each slice of
the input its spoken form, :mod:`.g2p` gives ARPAbet (with homograph context taken across word
boundaries), and lexicon entries win over both. Heavy data (CMUdict, the neural model) is
loaded on first use, once per process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mixvox.frontends.en.g2p import g2p_en_word, pronounce
from mixvox.frontends.en.normalize import Normalizer, Tok, normalize_en
from mixvox.frontends.en.numbers import number_style
from mixvox.interfaces import FrontendContext, FrontendInfo, LexEntry
from mixvox.ir import Span, Word
from mixvox.options import EngineOptions, option
from mixvox.plugins.hookspecs import hookimpl

__all__ = ["EnFrontend", "EnOptions", "g2p_en_word", "mixvox_register_frontends", "normalize_en"]

_WARN_MESSAGES = {
    "emoji": "emoji in English text is not spoken",
    "emoticon": "emoticon in English text is not spoken",
    "control-char": "control character skipped",
    "symbol": "symbol has no English reading and is not spoken",
    "unsupported-script": "letters of a script the English frontend cannot read are skipped",
    "combining-mark": "combining mark without a letter to carry it (on a digit or symbol) "
    "is not spoken",
    "format-char": "invisible formatting character inside a word is ignored (the word is read "
    "whole)",
}
_STRIP = '.,;:!?"()[]{}'


@dataclass
class EnOptions(EngineOptions):
    """Options of the English frontend (config ``[frontend.en]``, CLI flags, ``-F en.KEY=V``)."""

    number_and: bool = option(
        True,
        help='English numbers say "and" (one hundred and five, the default) or not '
        "(--no-number-and: American, one hundred five).",
        flag="--number-and/--no-number-and",
    )


class EnFrontend:
    """English frontend: normalization, CMUdict + neural G2P, lexicon overrides."""

    lang = "en"

    def __init__(self, options: EnOptions | None = None) -> None:
        self.options = options or EnOptions()

    def analyze(self, span: Span, ctx: FrontendContext) -> list[Word]:
        """Words of ``span`` with absolute offsets; never raises on odd input.

        The number style of :attr:`options` holds for this call only (a context variable),
        so routers with different options may share a thread or run in parallel."""
        try:
            with number_style(and_=self.options.number_and):
                return self._analyze(span, ctx)
        except Exception as exc:  # last resort: report, keep every character accounted for
            ctx.warn(
                "frontend-error",
                f"English frontend failed on this span ({type(exc).__name__}: {exc}); "
                "the span is not spoken",
                span.start,
                span.end,
            )
            return _fallback_words(span)

    def _analyze(self, span: Span, ctx: FrontendContext) -> list[Word]:
        lexicon = ctx.lexicon

        def lex_get(w: str) -> LexEntry | None:
            return lexicon.get(w) if lexicon is not None and w else None

        normalizer = Normalizer(lex_get)
        # Chinese readers say a hashtag's tag without its sign (今天的#OOTD): silent there
        normalizer.silent_hashtag = ctx.matrix == "zh"
        toks = normalizer.tokenize(span.text)
        for code, a, b in normalizer.issues:
            ctx.warn(code, _WARN_MESSAGES[code], span.start + a, span.start + b)
        # Flatten spoken words over the whole span so homographs see their neighbours.
        flat: list[tuple[int, str]] = []
        for ti, t in enumerate(toks):
            if t.kind == "word" and not (t.override and _entry_phonemes(t)):
                # A respelling says how to pronounce the word ("nginx" -> "engine x").
                source = (
                    t.lex.respelling
                    if isinstance(t.lex, LexEntry) and t.lex.respelling
                    else t.respelling or t.spoken
                )
                for w in source.split():
                    w2 = w.strip(_STRIP)
                    if w2:
                        flat.append((ti, w2))
            elif t.kind == "punct" and t.spoken in ".!?;:":
                flat.append((ti, ""))  # sentence punctuation cuts homograph context
        phonemes: dict[int, list[str]] = {}
        lex_hit: set[int] = set()
        for fi, (ti, w) in enumerate(flat):
            if not w:
                continue
            prev = flat[fi - 1][1] if fi > 0 else None
            nxt = flat[fi + 1][1] if fi + 1 < len(flat) else None
            entry = lex_get(w) if not (len(w) == 1 and w.isupper()) else None
            if entry is not None and entry.phonemes:
                ph = list(entry.phonemes)
                lex_hit.add(ti)
            else:
                ph = list(pronounce(w, prev or None, nxt or None).phonemes)
            phonemes.setdefault(ti, []).extend(ph)

        words: list[Word] = []
        base = span.start
        for ti, t in enumerate(toks):
            text = span.text[t.start : t.end]
            start, end = base + t.start, base + t.end
            if t.kind == "unread":
                ctx.warn(t.reason, _WARN_MESSAGES.get(t.reason, "not spoken"), start, end)
                words.append(Word(text, "", [], start, end, "en", kind="punct"))
                continue
            if t.kind == "punct" and t.reason == "markup":
                ctx.warn("markup", "markup is not read aloud (use SSML or a control token)",
                         start, end)  # fmt: skip
                words.append(Word(text, "", [], start, end, "en", kind="punct"))
                continue
            if t.kind == "punct":
                words.append(Word(text, t.spoken, [], start, end, "en", kind="punct"))
                continue
            respelling = t.respelling  # RAID shown as written, said "raid"
            override = t.override or ti in lex_hit
            if t.override and isinstance(t.lex, LexEntry):
                respelling = t.lex.respelling
            ph = _entry_phonemes(t) or phonemes.get(ti, [])
            if not ph and t.spoken.strip(_STRIP):
                ctx.warn("oov", f"no pronunciation found for {text!r}", start, end)
            words.append(
                Word(
                    text,
                    t.spoken,
                    ph,
                    start,
                    end,
                    "en",
                    kind="word",
                    override=override,
                    respelling=respelling,
                )
            )
        return words


def _entry_phonemes(t: Tok) -> list[str]:
    if t.override and isinstance(t.lex, LexEntry) and t.lex.phonemes:
        return list(t.lex.phonemes)
    return []


def _fallback_words(span: Span) -> list[Word]:
    """One silent word per non-space character, so offsets stay whole after a (reported)
    internal failure; the caller has already warned, nothing is dropped unannounced."""
    out = []
    for i, c in enumerate(span.text):
        if not c.isspace():
            out.append(Word(c, "", [], span.start + i, span.start + i + 1, "en", kind="punct"))
    return out


@hookimpl(trylast=True)
def mixvox_register_frontends(register: Callable[[FrontendInfo], None]) -> None:
    """Register the built-in English frontend (``trylast`` so user plugins win)."""
    register(
        FrontendInfo(
            "en",
            EnFrontend,
            description="English: rule-based normalization, CMUdict + g2p-en neural G2P (numpy)",
            options=EnOptions,
        )
    )
