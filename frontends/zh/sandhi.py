"""Mandarin tone sandhi and common neutral tones, applied to a phrase of words.

A *phrase* is a run of Chinese words with no punctuation, space or Latin word inside; sandhi
never crosses those. Input: the words (simplified Han) and their lexical TONE3 pinyin (one
list per word); output: surface pinyin, same shape. Rules, in order:

1. lexical clean-up: 一 -> yi1 and 不 -> bu4. The g2p layer already gives these base tones
   (it undoes the sandhi forms pypinyin's phrase table stores: 一起 yì, 不是 bú); this step
   only guards callers that pass other readings, so the tones of 一 / 不 are set once, below;
2. neutral tones: A一A / A不A (看一看, 去不去), V不C (看不懂), reduplicated monosyllabic verbs
   (看看), sentence particles (吧 吗 呢 啊 ...), 们, 个 after a non-numeral;
3. 不: bu2 before a 4th tone;
4. 一: yi1 in numbers and ordinals (第一, 一二三, 十一, 一月, 统一), yi2 before a 4th tone,
   yi4 before other tones;
5. third tone: inside each word by its internal structure (a 2+1 word 展览馆 -> 2 2 3, a 1+2
   word 纸老虎 -> 3 2 3), then across word boundaries from right to left (我 也 很好 ->
   wo2 ye3 hen2 hao3).
"""

from __future__ import annotations

from collections.abc import Callable

NUMERALS = set("零〇一二两三四五六七八九十百千万亿幺")
_DIGITS = set("零〇一二三四五六七八九十幺")
_PARTICLES = {
    "吧": "ba5", "吗": "ma5", "呢": "ne5", "啊": "a5", "呀": "ya5", "嘛": "ma5", "啦": "la5",
    "哦": "o5", "哇": "wa5", "呗": "bei5", "们": "men5", "的": "de5", "么": "me5",
}  # fmt: skip
_REDUP_VERBS = set("看想试说走听问等谈聊找玩学写读尝摸猜洗擦动转逛歇坐跑跳念算数查比量商")


def tone(p: str) -> int:
    return int(p[-1]) if p and p[-1].isdigit() else 0


def set_tone(p: str, t: int) -> str:
    if not p or not p[-1].isdigit():
        return p
    return p[:-1] + str(t)


Splitter = Callable[[str], list[str]]


def apply_sandhi(
    words: list[str], pinyins: list[list[str]], split: Splitter | None = None
) -> list[list[str]]:
    """Return surface pinyin for one phrase. ``split(word)`` gives a word's sub-words."""
    pys = [list(p) for p in pinyins]
    flat_chars = "".join(words)
    # positions of each word in the flat sequence
    offsets: list[int] = []
    pos = 0
    for w in words:
        offsets.append(pos)
        pos += len(w)

    def flat_tone(k: int) -> int:
        if k < 0 or k >= len(flat_chars):
            return 0
        wi, ci = _locate(offsets, words, k)
        return tone(pys[wi][ci])

    # 1. lexical clean-up of 一 / 不
    for wi, w in enumerate(words):
        for ci, ch in enumerate(w):
            if ch == "一" and pys[wi][ci].startswith("yi"):
                pys[wi][ci] = "yi1"
            elif ch == "不" and pys[wi][ci].startswith("bu"):
                pys[wi][ci] = "bu4"

    # 2. neutral tones
    for wi, w in enumerate(words):
        p = pys[wi]
        if len(w) == 3 and w[1] in "一不" and w[0] == w[2]:
            p[1] = set_tone(p[1], 5)
            p[2] = p[0]  # 数一数: both halves read alike
        elif len(w) == 3 and w[1] == "不" and w[0] != "不":
            p[1] = set_tone(p[1], 5)  # V不C: 看不懂, 对不起, 来不及
        elif len(w) == 2 and w[0] == w[1] and w[0] in _REDUP_VERBS:
            p[1] = set_tone(p[1], 5)
        elif len(w) == 1 and w in _PARTICLES and wi > 0:  # a phrase-initial 啊 is an interjection
            if w != "的" or p[0].startswith("de"):  # 的 di4/di2 only inside words (目的, 的确)
                p[0] = _PARTICLES[w]
        elif w == "啊" and len(words) == 1:
            p[0] = "a1"  # 啊，… : an interjection on its own
        elif w == "个" and wi > 0 and words[wi - 1][-1] not in NUMERALS | set("几多每某"):
            p[0] = "ge5"
    # A 一 A / A 不 A whatever the word split (看 一 看, 想 不想, 好不好)
    for k in range(1, len(flat_chars) - 1):
        a, ch, b = flat_chars[k - 1], flat_chars[k], flat_chars[k + 1]
        if ch in "一不" and a == b and a not in NUMERALS:
            wi, ci = _locate(offsets, words, k)
            pys[wi][ci] = set_tone(pys[wi][ci], 5)
            wa, ca = _locate(offsets, words, k - 1)
            wb, cb = _locate(offsets, words, k + 1)
            pys[wb][cb] = pys[wa][ca]

    # 3./4. 不 and 一 by the following syllable
    for k, ch in enumerate(flat_chars):
        if ch not in "一不":
            continue
        wi, ci = _locate(offsets, words, k)
        cur = pys[wi][ci]
        if tone(cur) == 5:
            continue
        nxt = flat_tone(k + 1)
        nxt_ch = flat_chars[k + 1] if k + 1 < len(flat_chars) else ""
        prev_ch = flat_chars[k - 1] if k > 0 else ""
        if ch == "不":
            if nxt == 4:
                pys[wi][ci] = "bu2"
            continue
        w = words[wi]
        if (
            not nxt_ch
            or prev_ch == "第"
            or prev_ch in _DIGITS
            or nxt_ch in _DIGITS
            or nxt_ch in "月号"
            or (nxt_ch == "日" and prev_ch == "月")  # 一月一日
            or (len(w) > 1 and ci == len(w) - 1)
        ):
            pys[wi][ci] = "yi1"
        elif nxt == 4 or (nxt == 5 and nxt_ch in "个"):
            pys[wi][ci] = "yi2"
        elif nxt in (1, 2, 3):
            pys[wi][ci] = "yi4"

    # 5. third tone: inside words, then across words right to left
    for wi, w in enumerate(words):
        pys[wi] = _third_in_word(w, pys[wi], split)
    for wi in range(len(words) - 2, -1, -1):
        left, right = pys[wi], pys[wi + 1]
        if left and right and tone(left[-1]) == 3 and tone(right[0]) == 3:
            left[-1] = set_tone(left[-1], 2)
    return pys


def _locate(offsets: list[int], words: list[str], k: int) -> tuple[int, int]:
    lo, hi = 0, len(offsets) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if offsets[mid] <= k:
            lo = mid
        else:
            hi = mid - 1
    return lo, k - offsets[lo]


def _third_in_word(word: str, py: list[str], split: Splitter | None, depth: int = 0) -> list[str]:
    """Third-tone sandhi inside one word, following its sub-word structure."""
    n = len(py)
    if n < 2 or sum(1 for p in py if tone(p) == 3) < 2:
        return py
    if n == 2:
        if tone(py[0]) == 3 and tone(py[1]) == 3:
            py[0] = set_tone(py[0], 2)
        return py
    if n == 4:
        parts = [word[:2], word[2:]]  # four-character words and idioms are 2+2
    else:
        parts = split(word) if (split and depth < 4) else []
    if len(parts) < 2 or sum(len(x) for x in parts) != n:
        parts = [word[i : i + 2] for i in range(0, n, 2)] if n >= 4 else list(word)
    subs: list[list[str]] = []
    pos = 0
    for part in parts:
        subs.append(_third_in_word(part, py[pos : pos + len(part)], split, depth + 1))
        pos += len(part)
    for i in range(len(subs) - 2, -1, -1):
        if tone(subs[i][-1]) == 3 and tone(subs[i + 1][0]) == 3:
            subs[i][-1] = set_tone(subs[i][-1], 2)
    return [p for s in subs for p in s]
