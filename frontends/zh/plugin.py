"""The Mandarin frontend: normalization, word segmentation, pinyin and tone sandhi.

``ZhFrontend.analyze(span, ctx)`` turns one zh span into :class:`~mixvox.ir.Word` objects:

* user lexicon words are matched first (forward maximum matching, on the text as written and
  on its simplified form) and keep their pinyin (``override=True``);
* the rest is cut by :func:`.normalize.tokenize` into Han runs, read-out number expressions,
  punctuation, Latin letter runs and unreadable characters;
* Han runs are converted to simplified characters one for one (so offsets hold), segmented into
  words and given lexical pinyin (:mod:`.g2p`); tone sandhi (:mod:`.sandhi`) then runs over each
  phrase (a run of Chinese words between punctuation/spaces/Latin words).

Nothing is dropped silently: an unreadable character becomes an empty ``punct`` word covering
it, and a warning goes to ``ctx.warn``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pypinyin.constants import PINYIN_DICT

from mixvox.frontends.zh import polyphone
from mixvox.frontends.zh.g2p import ZhG2P, mark_to_tone3
from mixvox.frontends.zh.letters import spell
from mixvox.frontends.zh.normalize import (
    Piece,
    brands_from_lexicon,
    is_acronym,
    normalize_zh,
    tokenize,
)
from mixvox.frontends.zh.numbers import number_style
from mixvox.frontends.zh.polymodel import SentenceReadings, default_model
from mixvox.frontends.zh.sandhi import apply_sandhi
from mixvox.interfaces import FrontendContext, FrontendInfo, LexEntry, Lexicon
from mixvox.ir import Span, Word
from mixvox.options import EngineOptions, option
from mixvox.phonetics import canonical_pinyin
from mixvox.plugins.hookspecs import hookimpl
from mixvox.textutil import is_han

__all__ = ["ZhFrontend", "g2p_zh", "mixvox_register_frontends", "normalize_zh"]

#: An invisible format character read through inside a number (``12\u202e34``).
_FORMAT_CHAR_MESSAGE = "invisible formatting character U+{:04X} inside a number is ignored"
#: A Latin piece the normalizer wants spelled: capitals separated by spaces (``S O``).
_SPELLED = re.compile(r"[A-Z](?: [A-Z])+")
_CTX = 4  # characters of context each side for polyphone rules
#: Polyphonic measure words read as such right after a number (``3只猫`` zhī, ``第3行`` háng):
#: the number is a piece of its own, so the Han text's rules never see it before them.
_MEASURE_AFTER_NUMBER = {"只": "zhi1", "行": "hang2"}


def _after_number(b: _Builder, p: Piece) -> bool:
    """The Han piece ``p`` is glued right after a number the zh rules read (三, 第三, 二十)."""
    if not b.words:
        return False
    last = b.words[-1]
    return (
        last.end == b.base + p.start
        and last.lang == "zh"
        and last.kind == "word"
        and any(c.isdigit() for c in last.text)
        and last.spoken[-1:] in "零一二三四五六七八九十百千万两几"
    )


@lru_cache(maxsize=4096)
def _reading_changes(trad: str, simp: str) -> bool:
    """True when ``simp`` shares no reading with ``trad`` (pypinyin's lists, tones included)."""
    a, b = PINYIN_DICT.get(ord(trad)), PINYIN_DICT.get(ord(simp))
    if not a or not b:
        return False
    return not {mark_to_tone3(r) for r in a.split(",")} & {mark_to_tone3(r) for r in b.split(",")}


def _t2s_triggers(conv: Any) -> frozenset[str]:
    """Characters whose presence lets OpenCC's t2s change a text (empty: unknown, always run).

    For every dictionary entry that changes its key, the key characters it changes (all of
    them when the lengths differ): a text with none of these converts to itself, so the
    pure-Python converter (a third of a millisecond per sentence) can be skipped.
    """
    out: set[str] = set()
    try:
        conv.convert("")  # loads the dictionaries
        groups = conv._dict_chain_data
        for group in groups:
            for entry in group if isinstance(group, list) else [group]:
                for key, value in entry[2].items():
                    first = value.split(" ")[0]
                    if first == key:
                        continue
                    if len(first) == len(key):
                        out.update(k for k, v in zip(key, first, strict=True) if k != v)
                    else:
                        out.update(key)
    except Exception:  # another OpenCC build: no shortcut
        return frozenset()
    return frozenset(out)


def _cut_into_letters(word: str) -> bool:
    """A mixed-case word that is an English word in lower case and whose capitals would cut it
    into two or more single letters (``ZeRO`` -> Ze R O, ``PaLM`` -> Pa L M): read as the word.

    ``LaTeX`` (one single letter) and ``MoE`` stay with the English frontend's own reading."""
    if not (word.isascii() and word.isalpha()) or word.islower() or word.isupper():
        return False
    if len(word) < 4 or sum(c.isupper() for c in word) < 2 or not word[1:2].islower():
        return False
    from mixvox.frontends.en.g2p import cmudict

    if word.lower() not in cmudict():
        return False
    singles = 0
    k = 0
    while k < len(word):
        j = k + 1
        if word[k].isupper():
            while j < len(word) and word[j].islower():
                j += 1
        else:
            while j < len(word) and word[j].islower():
                j += 1
        singles += j - k == 1 and word[k].isupper()
        k = j
    return singles >= 2


def _has_digit(s: str) -> bool:
    return any("0" <= c <= "9" for c in s)


@dataclass
class _Unit:
    """A piece of a phrase that sandhi sees as one word; ``word`` indexes the output list."""

    text: str
    pinyin: list[str]
    word: int
    fixed: bool = False  # user override: sandhi must not change it


@dataclass
class _Builder:
    base: int
    ctx: FrontendContext
    words: list[Word] = field(default_factory=list)
    phrase: list[_Unit] = field(default_factory=list)
    phrases: list[list[_Unit]] = field(default_factory=list)
    sentence: tuple[str, SentenceReadings] | None = None  # the polyphone model's view

    def end_phrase(self) -> None:
        if self.phrase:
            self.phrases.append(self.phrase)
            self.phrase = []

    def warn(self, code: str, message: str, start: int, end: int) -> None:
        try:
            self.ctx.warn(code, message, self.base + start, self.base + end)
        except Exception:  # a broken callback must not take the frontend down
            pass


@dataclass
class ZhOptions(EngineOptions):
    """Options of the Mandarin frontend (config ``[frontend.zh]``, CLI flags, ``-F zh.KEY=V``)."""

    liang_bai: bool = option(
        False,
        help="A count that starts with 2 before 百 says 两 (--liang-bai: 两百, 两百五十, the "
        "colloquial form) or 二 (the default: 二百, the dictionary's and the news reader's).",
        flag="--liang-bai/--er-bai",
    )


class ZhFrontend:
    """Mandarin frontend (see the module docstring). One instance loads its tables once."""

    lang = "zh"

    def __init__(self, options: ZhOptions | None = None, *, polyphone_model: bool = True) -> None:
        self.options = options or ZhOptions()
        self.g2p = ZhG2P()
        self.model = default_model() if polyphone_model else None
        self._t2s: Any = None  # an OpenCC converter once loaded; False when unavailable
        self._t2s_triggers: frozenset[str] | None = None
        self._lex_cache: tuple[Lexicon, int, dict[str, int]] | None = None
        self._brand_cache: tuple[Lexicon, int, dict[str, str] | None] | None = None
        self._en: Any = None  # the English frontend, for Latin words (made on first use)

    # -- helpers -----------------------------------------------------------------------------
    def to_simplified(self, text: str) -> str:
        """Traditional -> simplified, one character for one (offsets stay valid)."""
        if self._t2s is None:
            try:
                from opencc import OpenCC

                self._t2s = OpenCC("t2s")
            except Exception:  # pragma: no cover - opencc is a dependency
                self._t2s = False
        if not self._t2s:
            return text
        if self._t2s_triggers is None:
            self._t2s_triggers = _t2s_triggers(self._t2s)
        if self._t2s_triggers and self._t2s_triggers.isdisjoint(text):
            return text  # no character that conversion could change (most simplified text)
        conv = self._t2s.convert(text)
        if len(conv) != len(text):
            conv = "".join(c if len(c := self._t2s.convert(ch)) == 1 else ch for ch in text)
        if conv == text:
            return conv
        # keep a traditional character whose simplified form has none of its readings
        # (閤门 ge2 men2 must not become 合门 he2 men2)
        return "".join(
            t if t != c and _reading_changes(t, c) else c for t, c in zip(text, conv, strict=True)
        )

    def _lex_index(self, lex: Lexicon) -> dict[str, int]:
        """First character -> longest lexicon word starting with it (bounded lookups)."""
        cached = self._lex_cache
        if cached is not None and cached[0] is lex and cached[1] == len(lex):
            return cached[2]  # same lexicon object, no layer added since
        index: dict[str, int] = {}
        for w in lex.words():
            if w:
                for k in {w[0], w[0].casefold()}:
                    index[k] = max(index.get(k, 0), len(w))
        self._lex_cache = (lex, len(lex), index)
        return index

    def _lex_match(
        self, text: str, simp: str, i: int, lex: Lexicon, index: dict[str, int]
    ) -> tuple[int, LexEntry] | None:
        longest = max(index.get(text[i], 0), index.get(simp[i], 0))
        for L in range(min(longest, len(text) - i), 0, -1):
            for src in (text, simp):
                e = lex.get(src[i : i + L])
                if e is not None:
                    return i + L, e
        return None

    # -- main entry --------------------------------------------------------------------------
    def analyze(self, span: Span, ctx: FrontendContext) -> list[Word]:
        """Words of ``span`` with absolute offsets; never raises (see module docstring).

        The number style of :attr:`options` holds for this call only (a context variable)."""
        try:
            with number_style(liang_bai=self.options.liang_bai):
                return self._analyze(span, ctx)
        except Exception as exc:  # last resort: report, cover the span, keep going
            try:
                ctx.warn("frontend-error", f"zh frontend failed: {exc!r}", span.start, span.end)
            except Exception:
                pass
            return [Word(span.text, "", [], span.start, span.end, "zh", kind="punct")]

    def _analyze(self, span: Span, ctx: FrontendContext, sandhi: bool = True) -> list[Word]:
        text = span.text
        if not text:
            return []
        b = _Builder(span.start, ctx)
        simp = self.to_simplified(text)
        lex = ctx.lexicon
        index = self._lex_index(lex) if lex is not None and len(lex) else {}
        i = gap = 0
        n = len(text)
        while i < n:
            m = (
                self._lex_match(text, simp, i, lex, index)
                if index.get(text[i]) or index.get(simp[i])
                else None
            )
            if m is None:
                i += 1
                continue
            end, entry = m
            if gap < i:
                self._gap(b, text, simp, gap, i)
            self._override(b, text, i, end, entry)
            i = gap = end
        if gap < n:
            self._gap(b, text, simp, gap, n)
        b.end_phrase()
        self._finish(b, sandhi)
        return b.words

    def _override(self, b: _Builder, text: str, i: int, j: int, entry: LexEntry) -> None:
        if entry.spoken is not None:
            # a replacement may itself hold digits ("3D打印"): read those the usual way
            spoken = normalize_zh(entry.spoken) if _has_digit(entry.spoken) else entry.spoken
        else:
            spoken = self.to_simplified(text[i:j])
        hans = [c for c in spoken if is_han(c)]
        phon, bad = canonical_pinyin(entry.phonemes)
        fixed = True
        if len(phon) != len(hans) or bad:
            if entry.phonemes:
                why = (
                    f"syllables not in tone-numbered pinyin: {bad}"
                    if bad
                    else f"{len(phon)} syllables for {len(hans)} Han characters"
                )
                b.warn(
                    "bad-override",
                    f"lexicon entry {entry.word!r} ({entry.source or 'lexicon'}): {why}; "
                    "using own pinyin",
                    i,
                    j,
                )
            phon = self._pinyin_of(b, "".join(hans), i, j)
            fixed = False
        widx = len(b.words)
        b.words.append(
            Word(text[i:j], spoken, phon, b.base + i, b.base + j, "zh", override=True,
                 respelling=entry.respelling)
        )  # fmt: skip
        if hans:
            b.phrase.append(_Unit("".join(hans), list(phon), widx, fixed=fixed))
        else:
            b.end_phrase()

    def _pinyin_of(self, b: _Builder, han: str, i: int, j: int) -> list[str]:
        out: list[str] = []
        for w in self.g2p.segment(han):
            py = self.g2p.spoken(w, self.g2p.word_pinyin(w))
            out.extend(p or "" for p in py)
        if any(not p for p in out):
            b.warn("oov", "no pinyin for some characters", i, j)
            out = [p or "e5" for p in out]
        return out

    def _brands(self, lex: Lexicon | None) -> dict[str, str] | None:
        """Brand rows added by lexicon entries ``"<brand> #"`` (see ``data/brands.tsv``)."""
        if lex is None or not len(lex):
            return None
        cached = self._brand_cache
        if cached is not None and cached[0] is lex and cached[1] == len(lex):
            return cached[2]
        rows = brands_from_lexicon(
            {w: e.spoken for w in lex.words() if w.endswith(" #") and (e := lex.get(w))}
        )
        self._brand_cache = (lex, len(lex), rows or None)
        return rows or None

    def _gap(self, b: _Builder, text: str, simp: str, start: int, end: int) -> None:
        last = start
        before = getattr(b.ctx, "before", "") + text[:start]
        for p in tokenize(text[start:end], self._brands(b.ctx.lexicon), before=before[-32:]):
            hidden = tuple(k + start for k in p.hidden)
            p = Piece(p.start + start, p.end + start, p.kind, p.spoken, p.issue, hidden)
            for k in hidden:  # 12\u202e34: read through, reported here
                b.warn("format-char", _FORMAT_CHAR_MESSAGE.format(ord(text[k])), k, k + 1)
            if p.start > last:  # spaces between pieces end a phrase
                b.end_phrase()
            last = p.end
            if p.kind == "han":
                self._han(b, text, simp, p)
            elif p.kind == "num":
                self._num(b, text, p)
            elif p.kind == "latin":
                self._latin(b, text, p)
            elif p.kind == "punct":
                b.end_phrase()
                b.words.append(
                    Word(text[p.start : p.end], p.spoken, [], b.base + p.start, b.base + p.end,
                         "zh", "punct")
                )  # fmt: skip
            else:  # skip
                b.end_phrase()
                code, msg = p.issue or ("unreadable", "not read")
                b.warn(code, msg, p.start, p.end)
                b.words.append(
                    Word(text[p.start : p.end], "", [], b.base + p.start, b.base + p.end, "zh",
                         "punct")
                )  # fmt: skip
        if end > last:
            b.end_phrase()

    def _han(self, b: _Builder, text: str, simp: str, p: Piece) -> None:
        s = simp[p.start : p.end]
        pos = 0
        if self.model is not None and (b.sentence is None or b.sentence[0] != simp):
            # the model reads the whole span (punctuation included), once, on first need
            b.sentence = (simp, SentenceReadings(self.model, simp))
        sent = b.sentence[1] if b.sentence is not None else None
        seg = self.g2p.segment(s)
        cued = polyphone.sentence_cued()
        prior: tuple[str, ...] | None = None  # the sentence's words before this run, on need
        n_prior = len(b.words)
        # a number right after the run (这款笔记本重1.35kg) is the word rules' "#"
        nxt_ch = simp[p.end : p.end + 1]
        tail = ("#",) if nxt_ch.isdigit() else ()
        for wi, w in enumerate(seg):
            a, z = p.start + pos, p.start + pos + len(w)
            left = simp[max(p.start, a - _CTX) : a]
            right = simp[z : min(p.end, z + _CTX)]
            guess = sure = None
            if sent is not None:
                guess = lambda k, a=a: sent.reading(a + k)  # noqa: E731
                sure = lambda k, a=a: sent.sure(a + k)  # noqa: E731
            prev = seg[wi - 1] if wi else ""
            nxt = seg[wi + 1] if wi + 1 < len(seg) else ""
            before = tuple(seg[max(0, wi - 6) : max(0, wi - 1)])
            after = tuple(seg[wi + 2 : wi + 6]) + tail if wi + 1 < len(seg) else tail
            earlier: tuple[str, ...] = ()
            if w in cued or w[0] in cued:
                if prior is None:
                    prior = _sentence_words(b.words, n_prior)
                earlier = prior + tuple(seg[:wi])
            py = self.g2p.word_pinyin(
                w, left, right, guess, prev, nxt, sure, before, after, earlier
            )
            if wi == 0 and w in _MEASURE_AFTER_NUMBER and _after_number(b, p):
                py = [_MEASURE_AFTER_NUMBER[w]]  # 3只猫 zhi1, 第3行 hang2: the measure word
            if all(py):
                b.words.append(Word(text[a:z], w, py, b.base + a, b.base + z, "zh"))
                # the unit carries the surface layer's neutral tones (认识 shi5) into sandhi;
                # the word keeps lexical citation tones until _finish writes surface ones
                b.phrase.append(_Unit(w, self.g2p.spoken(w, list(py)), len(b.words) - 1))
            else:  # characters without any reading: split them out and report them
                for k, ch in enumerate(w):
                    if py[k]:
                        b.words.append(Word(text[a + k], ch, [py[k]], b.base + a + k,
                                            b.base + a + k + 1, "zh"))  # fmt: skip
                        b.phrase.append(_Unit(ch, [py[k]], len(b.words) - 1))
                    else:
                        b.end_phrase()
                        b.warn("oov", f"no reading for {ch!r}", a + k, a + k + 1)
                        b.words.append(Word(text[a + k], "", [], b.base + a + k,
                                            b.base + a + k + 1, "zh", "punct"))  # fmt: skip
            pos += len(w)

    def _num(self, b: _Builder, text: str, p: Piece) -> None:
        widx = len(b.words)
        phon: list[str] = []
        units: list[_Unit] = []
        for w in self.g2p.segment(p.spoken):
            if not any(is_han(c) for c in w):
                # a list's 、 or ， inside a reading: no syllable, and a pause for sandhi
                # (一点二、一点三: the second 一 is yi4 before 点, not yi1 after a digit)
                b.phrase.extend(units)
                units = []
                b.end_phrase()
                continue
            py = [x or "e5" for x in self.g2p.word_pinyin(w)]
            units.append(_Unit(w, self.g2p.spoken(w, py), widx))
            phon.extend(py)
        b.words.append(Word(text[p.start : p.end], p.spoken, phon, b.base + p.start,
                            b.base + p.end, "zh"))  # fmt: skip
        b.phrase.extend(units)

    def _latin(self, b: _Builder, text: str, p: Piece) -> None:
        b.end_phrase()
        word = p.spoken
        en = b.ctx.lexicons.get("en") if b.ctx.lexicons else None
        entry = None
        for lx in (b.ctx.lexicon, en):
            if lx is not None and entry is None:
                entry = lx.get(word)
        if entry is not None and (entry.phonemes or entry.spoken or entry.respelling):
            shown = entry.spoken or word
            if not entry.spoken and entry.respelling:
                from mixvox.frontends.en.normalize import lexicon_form

                shown = lexicon_form(word, entry.respelling)  # macOS: "mac O S", as in English
            b.words.append(
                Word(text[p.start : p.end], shown, list(entry.phonemes),
                     b.base + p.start, b.base + p.end, "en", override=True,
                     respelling=entry.respelling)
            )  # fmt: skip
            return
        if word != text[p.start : p.end] and _SPELLED.fullmatch(word):
            # H2SO4: the normalizer's element symbols, said letter by letter (S O, not "so")
            spoken, phones, _ = spell(word.replace(" ", ""))
            b.words.append(
                Word(text[p.start : p.end], spoken, phones, b.base + p.start, b.base + p.end, "en")
            )
            return
        if " to " in word or " two " in word:  # B2B read "B to B", Y2K "Y two K"
            a, mid, z = word.partition(" to ") if " to " in word else word.partition(" two ")
            spoken_a, ph_a, _ = spell(a)
            spoken_z, ph_z, _ = spell(z)
            b.words.append(
                Word(text[p.start : p.end], f"{spoken_a}{mid}{spoken_z}",
                     ph_a + ["T", "UW1"] + ph_z, b.base + p.start, b.base + p.end, "en")
            )  # fmt: skip
            return
        if len(word) > 1 and any(c.isalpha() for c in word):
            words = self._english(b, text, p)
            if words:
                b.words.extend(words)
                return
        spoken, phones, bad = spell(word)
        if not is_acronym(word):
            b.warn(
                "spelled-out",
                f"Latin word {word!r} inside Chinese text is read letter by letter",
                p.start,
                p.end,
            )
        for k in bad:
            b.warn("unreadable", f"no letter name for {word[k]!r}", p.start + k, p.start + k + 1)
        b.words.append(
            Word(text[p.start : p.end], spoken, phones, b.base + p.start, b.base + p.end, "en")
        )

    def _english(self, b: _Builder, text: str, p: Piece) -> list[Word]:
        """A Latin word inside a zh span, read by the English frontend (``WARNING`` is a word,
        ``GPU`` is spelled, ``Wi-Fi`` and ``C++`` are said as people say them)."""
        from mixvox.frontends.en.plugin import EnFrontend

        if self._en is None:
            self._en = EnFrontend()
        en_lex = b.ctx.lexicons.get("en") if b.ctx.lexicons else None
        ctx = FrontendContext(
            lexicon=en_lex if en_lex is not None else Lexicon("en"),
            warn=b.ctx.warn,
            matrix="zh",
            lexicons=b.ctx.lexicons,
        )
        if p.spoken == "No.":  # No.1: the abbreviation of "number"
            words = self._en.analyze(Span("en", "number", b.base + p.start, b.base + p.end), ctx)
            for w in words:
                w.text, w.start, w.end = text[p.start : p.end], b.base + p.start, b.base + p.end
            return words
        word = text[p.start : p.end]
        if p.spoken != word and p.spoken.replace("-", "").lower() == word.lower():
            # riscv: the zh rules give the written form people read (RISC-V, "risk five")
            words = self._en.analyze(Span("en", p.spoken, b.base + p.start, b.base + p.end), ctx)
            for w in words:
                w.text, w.start, w.end = word, b.base + p.start, b.base + p.end
            if any(w.spoken for w in words):
                return words
        if _cut_into_letters(word):
            # ZeRO, PaLM: capitals that would cut an English word into single letters (Ze R O)
            words = self._en.analyze(
                Span("en", word.lower(), b.base + p.start, b.base + p.end), ctx
            )
            for w in words:
                w.text, w.start, w.end = word, b.base + p.start, b.base + p.end
                if w.spoken.casefold() == word.casefold() and not w.respelling:
                    # shown as written, as the English frontend shows it (ZeRO, said "zero")
                    w.respelling, w.spoken = w.spoken, word
            if any(w.spoken for w in words):
                return words
        span = Span("en", word, b.base + p.start, b.base + p.end)
        words = self._en.analyze(span, ctx)
        if not any(w.spoken for w in words):
            return []
        return words

    def char_readings(self, text: str, *, sandhi: bool = True) -> dict[int, str]:
        """Pinyin of each Han character of ``text`` that is read as itself, by index.

        ``sandhi=False`` gives lexical tones (what polyphone benchmarks score). Characters
        inside normalized expressions (numbers, dates) are not included.
        """
        ctx = FrontendContext(lexicon=Lexicon("zh"), warn=lambda *a: None, matrix="zh")
        words = self._analyze(Span("zh", text, 0, len(text)), ctx, sandhi=sandhi)
        out: dict[int, str] = {}
        for w in words:
            if w.lang == "zh" and w.kind == "word" and len(w.text) == len(w.phonemes):
                if all(is_han(c) for c in w.text):
                    for k, p in enumerate(w.phonemes):
                        out[w.start + k] = p
        return out

    def _finish(self, b: _Builder, sandhi: bool = True) -> None:
        """Run sandhi per phrase and write surface pinyin back into the words."""
        if not sandhi:
            return
        per_word: dict[int, list[str]] = {}
        for phrase in b.phrases:
            texts = [u.text for u in phrase]
            pys = apply_sandhi(texts, [u.pinyin for u in phrase], self.g2p.split)
            for u, py in zip(phrase, pys, strict=True):
                per_word.setdefault(u.word, []).extend(u.pinyin if u.fixed else py)
        for idx, py in per_word.items():
            if len(py) == len(b.words[idx].phonemes):
                b.words[idx].phonemes = py


#: Punctuation that ends a sentence: ``@X`` word rules look back across commas, not past these.
_SENTENCE_END = frozenset("。！？!?；;…")


def _sentence_words(words: list[Word], end: int) -> tuple[str, ...]:
    """The last words of ``words[:end]`` that are in the current sentence (across commas; at
    most ``polyphone.EARLIER``), oldest first: Han words and numbers, as spoken."""
    out: list[str] = []
    for k in range(end - 1, -1, -1):
        w = words[k]
        if w.kind == "punct":
            if any(c in _SENTENCE_END for c in w.text):
                break
            continue
        if w.lang == "zh" and w.spoken:
            out.append(w.spoken)
            if len(out) >= polyphone.EARLIER:
                break
    out.reverse()
    return tuple(out)


_DEFAULT: ZhFrontend | None = None


def _default() -> ZhFrontend:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ZhFrontend()
    return _DEFAULT


def g2p_zh(text: str) -> list[str]:
    """Tone-numbered pinyin after sandhi, one syllable per Han character of the spoken text.

    ``g2p_zh("你好")`` -> ``["ni2", "hao3"]``; numbers are normalized first
    (``g2p_zh("3个")`` -> ``["san1", "ge4"]``); Latin letters and punctuation give nothing.
    """
    ctx = FrontendContext(lexicon=Lexicon("zh"), warn=lambda *a: None, matrix="zh")
    words = _default().analyze(Span("zh", text, 0, len(text)), ctx)
    return [p for w in words if w.lang == "zh" for p in w.phonemes]


@hookimpl(trylast=True)
def mixvox_register_frontends(register: Callable[[FrontendInfo], None]) -> None:
    register(
        FrontendInfo(
            "zh",
            ZhFrontend,
            options=ZhOptions,
            description="Mandarin: TN (numbers, dates, units, money), pypinyin+jieba G2P, "
            "polyphone rules, tone sandhi",
        )
    )
