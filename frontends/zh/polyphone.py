"""Readings of polyphonic characters that are not inside a known phrase.

Used only when a character is not covered by a phrase entry (ours or pypinyin's). Two tables
in ``data/``, both written for this project from standard Mandarin usage (Xiandai Hanyu Cidian
conventions), not learnt from a test set:

* ``char_defaults.tsv`` — the reading to use when nothing else decides. pypinyin lists
  readings in an order that sometimes puts a rare one first (炔 gui4 before que1, 晟 cheng2
  before sheng4);
* ``polyphone_rules.tsv`` — context rules ``char, reading, left contexts, right contexts``: the
  first rule whose left context ends with one of its left strings, or whose right context starts
  with one of its right strings, wins (a fifth column ``both`` requires both). Contexts are the
  rest of the character's own word. A left context of only ``+`` means any character before
  it in the word (率 lv4 after a noun: 利率, 准确率; the exceptions 轻率 草率 … come first).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

Rule = tuple[str, tuple[str, ...], tuple[str, ...], bool]


def _lines(name: str) -> list[list[str]]:
    text = resources.files("mixvox.frontends.zh").joinpath("data").joinpath(name).read_text("utf-8")
    return [ln.split("\t") for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


@lru_cache(maxsize=1)
def tables() -> tuple[dict[str, str], dict[str, list[Rule]]]:
    """``(defaults, rules)`` loaded once from the data files."""
    defaults = {cols[0]: cols[1].strip() for cols in _lines("char_defaults.tsv")}
    rules: dict[str, list[Rule]] = {}
    for cols in _lines("polyphone_rules.tsv"):
        ch, reading, left, right = (c.strip() for c in cols[:4])
        both = len(cols) > 4 and cols[4].strip() == "both"
        lefts = () if left == "-" else tuple(left.split())
        rights = () if right == "-" else tuple(right.split())
        rules.setdefault(ch, []).append((reading, lefts, rights, both))
    return defaults, rules


def rule(ch: str, left: str, right: str) -> str | None:
    """The reading a context rule gives ``ch`` between ``left`` and ``right``, or ``None``.

    Callers pass the rest of the character's own word as context, so that a rule never fires
    across a word boundary (吉林/省/长岭县 is not 省长).
    """
    _, rules = tables()
    for reading, lefts, rights, both in rules.get(ch, ()):
        if lefts == ("+",):  # any character before it in the word (利率, 准确率: lv4)
            hit_l = bool(left)
        else:
            hit_l = bool(lefts) and left.endswith(lefts)
        hit_r = bool(rights) and right.startswith(rights)
        if (hit_l and hit_r) if both else (hit_l or hit_r):
            return reading
    return None


WordRule = tuple[str, tuple[str, ...], tuple[str, ...], bool]


@lru_cache(maxsize=1)
def word_rules() -> dict[str, list[WordRule]]:
    """``data/word_rules.tsv`` (see its header): char -> [(reading, prev, next, both)]."""
    out: dict[str, list[WordRule]] = {}
    for lineno, cols in enumerate(_lines("word_rules.tsv"), 1):
        if len(cols) < 4 or len(cols[1].split()) != len(cols[0].strip()):
            raise ValueError(f"word_rules.tsv: bad rule {cols!r} (rule {lineno})")
        ch, reading, prev, nxt = (c.strip() for c in cols[:4])
        both = len(cols) > 4 and cols[4].strip() == "both"
        prevs = () if prev == "-" else tuple(prev.split())
        nexts = () if nxt == "-" else tuple(nxt.split())
        out.setdefault(ch, []).append((reading, prevs, nexts, both))
    return out


#: How many words before the previous one a ``*B+A`` rule looks at (把/借/我/的/笔/还: 把 is
#: the fourth word before 笔).
_FAR = 5


#: How many words back an ``@X`` entry looks, across commas (the sentence's earlier clauses).
EARLIER = 12


@lru_cache(maxsize=1)
def sentence_cued() -> frozenset[str]:
    """Rule keys (characters, or whole words such as 涨起来) with an ``@X`` entry: only these
    need the words of the sentence's earlier clauses (the caller builds them for these only)."""
    return frozenset(
        ch
        for ch, rules in word_rules().items()
        if any(e.startswith("@") for r in rules for e in r[1])
    )


def _prev_hit(
    entry: str, prev: str, before: tuple[str, ...] = (), earlier: tuple[str, ...] = ()
) -> bool:
    if entry[0] == "@" and len(entry) > 1:
        # @X: X is one of the words before this one in the sentence, across commas (豆子泡了
        # 一夜，都涨起来了: @泡 reads 涨 zhàng 'swell'); whole words, as everywhere
        return entry[1:] in earlier[-EARLIER:]
    if "+" in entry and len(entry) > 1:
        # B+A: the previous word is A and the word before it B (心里/很/闷); *B+A: B is one
        # of the _FAR words before A (心里/有点/很/闷 is 闷 men4, 天气/很/闷 men1); a
        # trailing + (B+, *B+) accepts any previous word (*把+: 把/作业/落 la4)
        far, _, near = entry.rpartition("+")
        if not prev or (near and prev != near) or not before:
            return False
        if far.startswith("*"):
            return far[1:] in before[-_FAR:]
        return before[-1] == far
    if entry == "*":
        return True
    if entry == "^":
        return not prev  # the start of the run of Han text
    if entry == "+":
        return bool(prev)
    if entry == "AA":
        return len(prev) >= 2 and prev[-1] == prev[-2]
    if entry.startswith("~"):
        return len(prev) >= 2 and prev.endswith(entry[1:])
    return prev == entry


def _next_hit(entry: str, nxt: str, after: tuple[str, ...] = ()) -> bool:
    if "+" in entry:
        # A+B: the next word is A and the word after it B ($: nothing after A), or B is the
        # next few words together (落/在/家里, 吐/了/一/地: whole words, never part of one);
        # A+*B: B is one of the three words after A (扎/着/两个/小辫子)
        near, _, far = entry.partition("+")
        if nxt != near:
            return False
        if far == "$":
            return not after
        if far == "%":
            return _numeral_next(after)
        if not far:  # A+: some word follows A (任/小/明)
            return bool(after) and after[0] != "#"
        if far.startswith("*"):
            return far[1:] in after[:3]
        joined = ""
        for w in after[:4]:
            joined += w
            if joined == far:
                return True
            if len(joined) >= len(far):
                break
        return False
    if entry == "$":
        return not nxt  # the end of the run of Han text (a clause end: 下次再/还。)
    if entry == "#":
        return not nxt and after[:1] == ("#",)  # a number follows the run: 重/1.35kg
    if entry == "%":
        return _numeral_next((nxt, *after) if nxt else after)
    if entry == "%h":
        # a Han amount only, not digits (桌子/得/两个/人 děi; 得/3/分 is left to the model:
        # the unit after the digits, which tells points from time or money, is not seen)
        return nxt[:1] in NUMERALS
    if entry == "AABB":
        # a reduplicated AABB word (收拾/得/干干净净 de5, 长/得/结结实实)
        return len(nxt) == 4 and nxt[0] == nxt[1] and nxt[2] == nxt[3]
    if len(entry) > 1 and entry[0] == "…":
        return nxt.endswith(entry[1:])  # …X: the next word ends with X (得/一百分 dé)
    if len(entry) > 1 and entry[0] == "*":
        # *B: B is the next word or one of the two after it (为/公司/效力)
        return entry[1:] == nxt or entry[1:] in after[:2]
    if entry.endswith("…"):
        return nxt.startswith(entry[:-1])
    return nxt == entry


#: Characters that start a Han number or an amount (三分, 两担, 几块钱, 半天).
NUMERALS = frozenset("一二两三四五六七八九十百千万几半零")


def _numeral_next(after: tuple[str, ...]) -> bool:
    """The first of ``after`` is a Han number word (三分, 一点) or the ``#`` of a digit."""
    return bool(after) and (after[0] == "#" or after[0][:1] in NUMERALS)


def after_word(
    ch: str,
    prev: str,
    nxt: str = "",
    before: tuple[str, ...] = (),
    after: tuple[str, ...] = (),
    earlier: tuple[str, ...] = (),
    *,
    need_prev: bool = False,
) -> str | None:
    """Reading of the one-character word ``ch`` decided by the whole words around it (also of
    a word with rules of its own, 背着: syllables joined by spaces, ``bei1 zhe5``).

    Works on words, not characters: ``prev`` and ``nxt`` are the complete neighbouring words
    ("" at the edge of a run of Han text), so 土地 or 地震 (one word each) never reach here and
    递交/了/结案 is not 了结. ``before`` / ``after``: the words before ``prev`` and after
    ``nxt`` in text order (a few of each), for rules that name two words on one side
    (落/在/家里 la4, 心里/很/闷 men4); those too match whole words only. ``earlier``: all the
    words before ``ch`` in its sentence, across punctuation, for ``@X`` entries (given only for
    the keys of :func:`sentence_cued`). ``need_prev``: only a rule that names the previous
    word itself counts, or its form (``~X``, ``AA``): the last character of a rare glued word
    (钥匙卡: its rule must name 钥匙; 偷偷地: AA) — 都's "any word" rule must not read 奥古斯都 dōu.
    """
    for reading, prevs, nexts, both in word_rules().get(ch, ()):
        if need_prev:
            if not any(
                e == prev or ((e == "AA" or e[0] == "~") and _prev_hit(e, prev)) for e in prevs
            ):
                continue
            hit_p = True
        else:
            hit_p = any(_prev_hit(e, prev, before, earlier) for e in prevs)
        hit_n = any(_next_hit(e, nxt, after) for e in nexts)
        if (hit_p and hit_n) if both else (hit_p or hit_n):
            return reading
    return None


@lru_cache(maxsize=1)
def heteronyms() -> dict[str, tuple[tuple[int, frozenset[str]], ...]]:
    """``data/heteronyms.tsv`` (see its header): word -> ((position, readings), ...)."""
    out: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for lineno, cols in enumerate(_lines("heteronyms.tsv"), 1):
        if len(cols) != 3 or not cols[1].strip().isdigit():
            raise ValueError(f"heteronyms.tsv: bad entry {cols!r} (entry {lineno})")
        word, pos, readings = cols[0].strip(), int(cols[1]), frozenset(cols[2].split())
        if pos >= len(word) or len(readings) < 2:
            raise ValueError(f"heteronyms.tsv: bad entry {cols!r} (entry {lineno})")
        out.setdefault(word, []).append((pos, readings))
    return {w: tuple(v) for w, v in out.items()}


def anywhere_rule(ch: str, left: str, right: str) -> str | None:
    """The reading of ``ch`` when the first context rule that matches is an any-left (``+``)
    rule: it holds wherever the character stands after another in a word, so however a rare
    word is cut (房贷利率, 准确率) it is kept against the model's guess."""
    _, rules = tables()
    for reading, lefts, rights, both in rules.get(ch, ()):
        if lefts == ("+",):
            return reading if left else None
        hit_l = bool(lefts) and left.endswith(lefts)
        hit_r = bool(rights) and right.startswith(rights)
        if (hit_l and hit_r) if both else (hit_l or hit_r):
            return None
    return None


def default(ch: str) -> str | None:
    """Our default reading of ``ch`` where pypinyin lists a rare one first, or ``None``."""
    return tables()[0].get(ch)


def choose(ch: str, left: str, right: str) -> str | None:
    """A context rule's reading, else our default reading, else ``None`` (pypinyin decides)."""
    return rule(ch, left, right) or default(ch)


#: First characters of two-character words ending in 子 where 子 keeps its full tone zi3.
ZI3_FIRST = set(
    "男女孔老君电原分质中量粒因莲瓜父母天才赤弟学游卵精孢光离核诸王太公世庶长次独嫡养犬孝浪舟夫"
    "内外仙妻其之三四五六七八九十百千万儿孙臣士庄墨荀孟韩列曾朱程管晏鬼骄赘舍鱼虾"
)


#: Characters before a word-final 儿 that make it the noun 'child' (er2), not the erhua suffix.
ER2_BEFORE = set("女婴幼孤健男胎宠少患育托产病孙侄犬群小生新豚混")


#: Direction words before a word-final 边 that make it the toneless locative suffix (bian5);
#: not 旁边 / 身边 / 周边 / 一边 (full tone biān).
LOCATIVE_BEFORE_BIAN = set("东西南北上下左右里外前后这那")


def suffix_reading(word: str, idx: int) -> str | None:
    """Neutral suffixes 们 / 子 / 儿 / locative 边 at the end of a word no phrase table knows."""
    if idx == 0 or idx != len(word) - 1:
        return None
    ch = word[idx]
    if ch == "们":
        return "men5"
    if ch == "子" and len(word) == 2 and word[0] not in ZI3_FIRST:
        return "zi5"
    if ch == "边" and word[-2] in LOCATIVE_BEFORE_BIAN:
        return "bian5"  # locative suffix: 西南边, 东北边 (XHC 东边 dōng·bian, 里边 lǐ·bian)
    if ch == "儿" and word[-2] not in ER2_BEFORE:
        return "er5"  # erhua suffix: 空当儿, 一点儿 (but 女儿, 婴儿, 健儿 keep er2)
    return None
