"""Built-in prosody: break levels on words, and synthesis chunks cut at natural boundaries.

Why it matters: a neural engine speaks one chunk per model run; a chunk cut inside a clause, or one too
long for the model, is heard as a wrong pause or a run-on. So chunks end where a reader would
pause anyway: sentence ends first, then clause ends, then word boundaries, never inside a word
or a number read as several words.

Break levels (``Word.break_after``, constants in :mod:`mixvox.ir`) describe the *gap* after a
token. Punctuation and control tokens are not spoken units: a gap lies between two spoken
words, and every token in front of that gap (the word and the punctuation or break tokens that
follow it) carries the gap's level: in ``今天，我们走。`` ``今天`` and ``，`` carry 2, ``我们`` 1,
``走`` and ``。`` 3. Tokens that open the next word (``（``, ``[laugh]``) carry 0, the gap between
them and their word.

Levels: sentence end 3; ``， ; : 、``, dashes, ellipses, brackets and closing quotes 2; an
ordinary word boundary 1; 0 between words read from one source token (``3:30`` -> "three
thirty"). A clause longer than :data:`LONG_CLAUSE_SYLLABLES` without punctuation gets extra
level-2 breaks at the best word boundary: before a conjunction or preposition, at a language
switch, never after a word that binds to the right (``the``, ``在``) nor before a particle
(``的``, ``了``).

The levels are recomputed from scratch on every call (frontends need not set them), so calling
the hook twice on one utterance gives the same result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mixvox.interfaces import MixvoxError
from mixvox.ir import (
    BREAK_CLAUSE,
    BREAK_NONE,
    BREAK_SENTENCE,
    BREAK_WORD,
    Chunk,
    Utterance,
    Word,
    join_spoken,
)
from mixvox.plugins.hookspecs import hookimpl
from mixvox.textutil import is_han

__all__ = [
    "LONG_CLAUSE_SYLLABLES",
    "MIN_PHRASE_SYLLABLES",
    "TARGET_PHRASE_SYLLABLES",
    "assign_breaks",
    "mixvox_prosody",
    "plan_chunks",
    "syllables",
]

#: A clause with more syllables than this and no punctuation gets inserted clause breaks.
LONG_CLAUSE_SYLLABLES = 20
#: Preferred length of the pieces such a clause is cut into.
TARGET_PHRASE_SYLLABLES = 12
#: No inserted break leaves a piece shorter than this (unless nothing else is possible).
MIN_PHRASE_SYLLABLES = 4

_SENTENCE_END = frozenset("。！？!?.｡")
_CLAUSE = frozenset("，,、;；:：—–―-…⋯~～︰")
_CLOSING = frozenset(")）]］】」』”’》〉›»｝}")
_OPEN_BRACKETS = frozenset("(（[［【《〈｛{")
_OPEN_QUOTES = frozenset("“‘«‹「『")
_STRAIGHT_QUOTES = frozenset("\"'")

#: Control tokens that are pauses: they belong to the text before them.
_PAUSE_CONTROLS = {"[uv_break]": BREAK_CLAUSE, "[v_break]": BREAK_CLAUSE}
_LONG_PAUSE_CONTROLS = {"[lbreak]", "[llbreak]"}

_EN_CONJ = frozenset(
    "and or but because so if when while where which who whom whose although though unless "
    "until since whereas then".split()
)
_EN_PREP = frozenset(
    "in on at for with from by about into over under during without through between across "
    "against via after before".split()
)
_EN_BINDS_RIGHT = (
    _EN_CONJ
    | _EN_PREP
    | frozenset("the a an of to my your his her its our their this these those that".split())
)
_ZH_CONJ = frozenset(
    "和 与 及 以及 并且 而且 但是 但 可是 然而 所以 因此 因为 如果 虽然 然后 或者 还是 而 并 "
    "不过 否则 同时 于是 只要 除非 即使 尽管 以便".split()
)
_ZH_PREP = frozenset("在 把 被 对 从 给 向 跟 对于 关于 通过 为了 根据 按照 由于 让".split())
_ZH_BINDS_LEFT = frozenset("的 地 得 了 着 过 吗 呢 吧 啊 呀 们 个".split())
_ZH_BINDS_RIGHT = _ZH_CONJ | _ZH_PREP

_VOWEL_GROUPS = re.compile(r"[aeiouy]+")


# ---------------------------------------------------------------------------------------------
# Token roles and groups
# ---------------------------------------------------------------------------------------------


def _is_spoken(w: Word) -> bool:
    return w.kind == "word" and bool(w.spoken.strip())


def _chars(w: Word) -> str:
    return (w.spoken or "") + (w.text or "")


def _is_opening(w: Word, text: str) -> bool:
    """Punctuation that opens what follows (``（``, ``“``, a straight quote before a word)."""
    chars = (w.spoken or w.text).strip()
    if not chars:
        return False
    if all(c in _OPEN_BRACKETS or c in _OPEN_QUOTES for c in chars):
        return True
    if all(c in _STRAIGHT_QUOTES for c in chars):
        before = text[w.start - 1] if 0 < w.start <= len(text) else " "
        after = text[w.end] if 0 <= w.end < len(text) else " "
        return before.isspace() and not after.isspace()
    return False


def _role(w: Word, text: str) -> str:
    """``word`` (spoken unit), ``lead`` (belongs to the next word) or ``trail`` (to the last)."""
    if _is_spoken(w):
        return "word"
    if w.kind == "control":
        tok = w.spoken.strip()
        if tok in _PAUSE_CONTROLS or tok in _LONG_PAUSE_CONTROLS or tok.startswith("[break_"):
            return "trail"
        return "lead"  # [laugh], [oral_N], [speed_N]: they colour what follows
    if w.kind == "punct" and _is_opening(w, text):
        return "lead"
    return "trail"  # closing/clause/sentence punctuation, words with nothing to say


def _trail_level(w: Word) -> int:
    """The gap level a trailing token imposes."""
    if w.kind == "control":
        tok = w.spoken.strip()
        if tok in _LONG_PAUSE_CONTROLS:
            return BREAK_SENTENCE
        return BREAK_CLAUSE if tok in _PAUSE_CONTROLS or tok.startswith("[break_") else BREAK_WORD
    if w.kind != "punct":
        return BREAK_WORD
    chars = set(_chars(w))
    if chars & (_SENTENCE_END - {"."}):
        return BREAK_SENTENCE
    if "." in chars:  # a full stop ends a sentence; "..." and "…" are a pause inside one
        body = w.spoken.strip() or w.text.strip()
        return BREAK_CLAUSE if "…" in chars or ".." in body else BREAK_SENTENCE
    if chars & (_CLAUSE | _CLOSING | _OPEN_BRACKETS | _OPEN_QUOTES | _STRAIGHT_QUOTES):
        return BREAK_CLAUSE
    return BREAK_WORD


def _lead_level(w: Word) -> int:
    """The gap level a leading token imposes on the gap before it."""
    if w.kind == "punct" and set(_chars(w)) & _OPEN_BRACKETS:
        return BREAK_CLAUSE
    return BREAK_WORD


@dataclass
class _Group:
    """One spoken word with the punctuation/control tokens glued to it (never split)."""

    sentence: int
    lead: list[Word] = field(default_factory=list)
    word: Word | None = None
    trail: list[Word] = field(default_factory=list)

    def tokens(self) -> list[Word]:
        return [*self.lead, *([self.word] if self.word is not None else []), *self.trail]


def _groups(utt: Utterance) -> list[_Group]:
    groups: list[_Group] = []
    carry: list[Word] = []  # lead tokens of a sentence without any spoken word
    for si, sent in enumerate(utt.sentences):
        first = len(groups)
        pending = carry
        carry = []
        for w in sent.words:
            role = _role(w, utt.input)
            if role == "word":
                groups.append(_Group(si, lead=pending, word=w))
                pending = []
            elif role == "lead" or not groups:
                pending.append(w)
            else:
                # "哈哈[laugh]，": what trails punctuation was not leading the next word after all
                groups[-1].trail.extend(pending)  # may glue to the previous sentence's last word
                groups[-1].trail.append(w)
                pending = []
        if pending:
            if len(groups) > first:
                groups[-1].trail.extend(pending)  # "[laugh]" at a sentence end stays there
            else:
                carry = pending
    if carry:
        if groups:
            groups[-1].trail.extend(carry)
        else:
            groups.append(_Group(max(len(utt.sentences) - 1, 0), lead=carry))
    return groups


# ---------------------------------------------------------------------------------------------
# Break levels
# ---------------------------------------------------------------------------------------------


def _joined(a: Word, b: Word) -> bool:
    """Two words read from one source token (``3:30`` -> three, thirty): no break between."""
    if a.end > a.start and b.end > b.start:
        return b.start < a.end
    return (a.start == a.end or b.start == b.end) and b.start <= a.end and b.start >= a.start


def syllables(w: Word) -> int:
    """Rough syllable count of a word: what the long-clause rule measures.

    From the phonemes when the frontend gave them (pinyin syllables, ARPAbet vowels), else
    Han characters plus Latin vowel groups. A spoken word counts at least 1.
    """
    if not _is_spoken(w):
        return 0
    if w.phonemes:
        if w.lang == "en":
            n = sum(1 for p in w.phonemes if p[-1:].isdigit())
        else:
            n = len(w.phonemes)
        return max(n, 1)
    s = w.spoken.lower()
    return max(1, sum(1 for ch in s if is_han(ch)) + len(_VOWEL_GROUPS.findall(s)))


def _gap_levels(groups: list[_Group]) -> list[int]:
    """Level of the gap after each group, from punctuation, controls and sentence ends."""
    levels: list[int] = []
    for i, g in enumerate(groups):
        if i == len(groups) - 1 or groups[i + 1].sentence != g.sentence:
            levels.append(BREAK_SENTENCE)
            continue
        nxt = groups[i + 1]
        level = BREAK_WORD
        for t in g.trail:
            level = max(level, _trail_level(t))
        for t in nxt.lead:
            level = max(level, _lead_level(t))
        if (
            level == BREAK_WORD
            and not g.trail
            and not nxt.lead
            and g.word is not None
            and nxt.word is not None
            and _joined(g.word, nxt.word)
        ):
            level = BREAK_NONE
        levels.append(level)
    return levels


def _boundary_score(left: Word | None, right: Word | None) -> int:
    """How good a word boundary is for an inserted clause break (higher is better)."""
    if left is None or right is None:
        return 0
    lw = left.spoken.strip().lower()
    rw = right.spoken.strip().lower()
    score = 0
    if rw in _EN_CONJ or rw in _ZH_CONJ:
        score += 3
    elif rw in _EN_PREP or rw in _ZH_PREP:
        score += 2
    if left.lang != right.lang:
        score += 1
    if lw in _EN_BINDS_RIGHT or lw in _ZH_BINDS_RIGHT:
        score -= 3
    if rw in _ZH_BINDS_LEFT:
        score -= 3
    return score


def _insert_clause_breaks(groups: list[_Group], levels: list[int]) -> None:
    """Cut clauses longer than :data:`LONG_CLAUSE_SYLLABLES` at their best word boundaries.

    Greedy left to right: each cut is chosen within the next ``LONG_CLAUSE_SYLLABLES``
    syllables, so the work is linear in the clause length.
    """
    syl = [syllables(g.word) if g.word is not None else 0 for g in groups]
    n = len(groups)
    start = 0
    while start < n:
        end = start
        while end < n - 1 and levels[end] < BREAK_CLAUSE:
            end += 1
        # clause = groups[start..end]; gaps start..end-1 are candidates
        remaining = sum(syl[start : end + 1])
        i = start
        while remaining > LONG_CLAUSE_SYLLABLES:
            best, best_score, fallback = -1, -(10**9), -1
            acc = 0
            j = i
            while j < end:
                acc += syl[j]
                if acc > LONG_CLAUSE_SYLLABLES:
                    break
                if levels[j] == BREAK_WORD:
                    if fallback < 0 or acc <= TARGET_PHRASE_SYLLABLES:
                        fallback = j
                    if acc >= MIN_PHRASE_SYLLABLES and remaining - acc >= MIN_PHRASE_SYLLABLES:
                        score = 10 * _boundary_score(groups[j].word, groups[j + 1].word) - abs(
                            acc - TARGET_PHRASE_SYLLABLES
                        )
                        if score > best_score:
                            best, best_score = j, score
                j += 1
            cut = best if best >= 0 else fallback
            if cut < 0:  # a long unbreakable group: cut at the first word boundary after it
                cut = next((k for k in range(j, end) if levels[k] == BREAK_WORD), -1)
            if cut < 0:
                break  # no word boundary left in this clause: leave it whole
            levels[cut] = BREAK_CLAUSE
            remaining -= sum(syl[i : cut + 1])
            i = cut + 1
        start = end + 1


def _apply(groups: list[_Group], levels: list[int]) -> None:
    for g, level in zip(groups, levels, strict=True):
        for t in g.lead:
            t.break_after = BREAK_NONE if g.word is not None else level
        if g.word is not None:
            g.word.break_after = level
        for t in g.trail:
            t.break_after = level


def _analyse(utt: Utterance) -> tuple[list[_Group], list[int]]:
    groups = _groups(utt)
    levels = _gap_levels(groups)
    _insert_clause_breaks(groups, levels)
    _apply(groups, levels)
    return groups, levels


def assign_breaks(utt: Utterance) -> None:
    """Set ``break_after`` on every word of ``utt`` (see the module docstring for the rules)."""
    _analyse(utt)


# ---------------------------------------------------------------------------------------------
# Chunking
# ---------------------------------------------------------------------------------------------


class _Sizes:
    """O(1) spoken length of any run of groups, exactly as :func:`join_spoken` would join it."""

    def __init__(self, groups: list[_Group]) -> None:
        self.prefix = [0]
        self.space_prefix = [0]
        last: str | None = None
        for g in groups:
            pieces = [t.spoken for t in g.tokens() if t.spoken]
            self.prefix.append(self.prefix[-1] + len(join_spoken(pieces)))
            if pieces and last is not None:
                gap = len(join_spoken([last, pieces[0]])) - len(last) - len(pieces[0])
            else:
                gap = 0
            self.space_prefix.append(self.space_prefix[-1] + gap)
            if pieces:
                last = pieces[-1]

    def size(self, lo: int, hi: int) -> int:
        """Length of the joined spoken text of groups ``lo..hi-1``."""
        if hi <= lo:
            return 0
        # space_prefix[k+1] counts the space in front of group k; the first group has none.
        return self.prefix[hi] - self.prefix[lo] + self.space_prefix[hi] - self.space_prefix[lo + 1]


class _Packer:
    """Turns groups with gap levels into chunk ranges ``(lo, hi)`` of at most ``limit`` chars."""

    def __init__(self, groups: list[_Group], levels: list[int], limit: int) -> None:
        self.groups = groups
        self.levels = levels
        self.limit = limit
        self.sizes = _Sizes(groups)

    def pack(self, lo: int, hi: int, level: int) -> list[tuple[int, int]]:
        """Cut groups ``lo..hi-1`` at gaps of at least ``level`` and pack the pieces greedily.

        A piece too long on its own is cut again one level lower; word boundaries are chosen
        by :meth:`split_words`; at level 0 each group stands alone (a single word longer than
        the limit becomes its own chunk).
        """
        if level == BREAK_WORD:
            return self.split_words(lo, hi)
        size, levels, limit = self.sizes.size, self.levels, self.limit
        pieces: list[tuple[int, int]] = []
        s = lo
        for j in range(lo, hi - 1):
            if levels[j] >= level:
                pieces.append((s, j + 1))
                s = j + 1
        pieces.append((s, hi))

        out: list[tuple[int, int]] = []
        cur: tuple[int, int] | None = None
        for a, b in pieces:
            if size(a, b) > limit:
                if cur is not None:
                    out.append(cur)
                    cur = None
                if level == BREAK_NONE or b - a == 1:
                    out.append((a, b))
                else:
                    out.extend(self.pack(a, b, level - 1))
            elif cur is None:
                cur = (a, b)
            elif size(cur[0], b) <= limit:
                cur = (cur[0], b)
            else:
                out.append(cur)
                cur = (a, b)
        if cur is not None:
            out.append(cur)
        return out

    def split_words(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """Cut a clause that is too long at its best word boundaries.

        Greedy fill would leave orphans ("... over the lazy" + "dog"), so each cut aims at an
        even share of what is left and prefers boundaries before conjunctions/prepositions,
        never after a word that binds to the right. Level-0 gaps are used only when a number
        group alone is longer than the limit.
        """
        size, levels, limit, groups = self.sizes.size, self.levels, self.limit, self.groups
        out: list[tuple[int, int]] = []
        a = lo
        while a < hi and size(a, hi) > limit:
            remaining = size(a, hi)
            pieces = -(-remaining // limit)  # fewest pieces the rest can possibly fit in
            ideal = remaining / pieces
            best, best_score = -1, float("-inf")
            loose, loose_score = -1, float("-inf")  # best cut that may cost an extra piece
            for b in range(a + 1, hi):  # piece a..b-1, cut in the gap after group b-1
                piece = size(a, b)
                if piece > limit:
                    break
                if levels[b - 1] < BREAK_WORD:
                    continue
                score = 10 * _boundary_score(groups[b - 1].word, groups[b].word) - abs(
                    piece - ideal
                )
                if remaining - piece <= (pieces - 1) * limit:
                    if score > best_score:
                        best, best_score = b, score
                elif score > loose_score:
                    loose, loose_score = b, score
            if best < 0:
                best = loose
            if best < 0:  # the first word group alone is too long: cut it at level 0
                e = a + 1
                while e < hi and levels[e - 1] < BREAK_WORD:
                    e += 1
                out.extend(self.pack(a, e, BREAK_NONE) if e - a > 1 else [(a, e)])
                a = e
                continue
            out.append((a, best))
            a = best
        if a < hi:
            out.append((a, hi))
        return out


def plan_chunks(utt: Utterance, max_chunk_chars: int) -> list[Chunk]:
    """Set break levels and cut ``utt`` into chunks of at most ``max_chunk_chars`` characters.

    Size is ``len(chunk.spoken)``. Sentences are packed together while they fit; a longer
    sentence is cut at clause breaks, a longer clause at word boundaries, and only a single
    word (with its punctuation) longer than the limit exceeds it. Every word of ``utt`` is in
    exactly one chunk, in order; chunks are numbered from 0.
    """
    if isinstance(max_chunk_chars, bool) or not isinstance(max_chunk_chars, int):
        raise MixvoxError(f"max_chunk_chars must be an integer, not {max_chunk_chars!r}")
    if max_chunk_chars < 1:
        raise MixvoxError(f"max_chunk_chars must be at least 1, not {max_chunk_chars}")
    groups, levels = _analyse(utt)
    if not groups:
        return []
    ranges = _Packer(groups, levels, max_chunk_chars).pack(0, len(groups), BREAK_SENTENCE)
    return [
        Chunk(index=i, words=[t for g in groups[a:b] for t in g.tokens()])
        for i, (a, b) in enumerate(ranges)
    ]


@hookimpl(trylast=True)
def mixvox_prosody(utterance: Utterance, max_chunk_chars: int) -> list[Chunk]:
    """Built-in prosody; ``trylast`` so a user's prosody plugin is asked first."""
    return plan_chunks(utterance, max_chunk_chars)
