"""Word segmentation and lexical pinyin for Mandarin (before tone sandhi).

Sources, first match wins:

1. ``data/phrases.tsv`` — our own word table (polyphone words pypinyin gets wrong or lacks,
   neutral tones such as 漂亮 piao4 liang4/5: citation tone lexically, spoken neutral), and
   ``data/phrase_fixes.tsv`` — corrected readings of words that do not join the segmenter's
   vocabulary (a reading fix never changes how a sentence is cut); ``data/heteronyms.tsv``
   lets the context model choose between a dictionary word's senses (肚子 du4 / du3);
2. pypinyin's phrase dictionary (``PHRASES_DICT``);
3. per character: context rules in :mod:`.polyphone`, the context model, else pypinyin's first
   reading.

A *rare* word of pypinyin's table (or one assembled from sub-words) takes the context model's
reading of a character where the model is near certain (see :meth:`ZhG2P.word_pinyin`).

Segmentation is a dynamic programme over the vocabulary (our table, pypinyin's phrases and
OpenCC's simplified phrase list): fewest words, then fewest single characters. It gives real
words for prosody and the word structure that third-tone sandhi needs. Everything is loaded
once per :class:`ZhG2P` instance, on first use.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from functools import lru_cache
from importlib import resources

from pypinyin.constants import PHRASES_DICT, PINYIN_DICT
from pypinyin.contrib.tone_convert import to_tone3

from mixvox.frontends.zh import polyphone

_MAX_WORD = 8

#: ``guess(k)`` -> the context model's reading of character ``k`` of a word, or ``None``.
Guess = Callable[[int], "str | None"]


@lru_cache(maxsize=4096)
def mark_to_tone3(p: str) -> str:
    """``'lǜ'`` -> ``'lv4'``, ``'le'`` -> ``'le5'`` (pypinyin's tone-mark strings to TONE3)."""
    return to_tone3(p, neutral_tone_with_five=True)


def _load_table(name: str) -> tuple[dict[str, list[str]], dict[str, tuple[int, ...]]]:
    """``(readings, unstressed)`` of a phrase table.

    A syllable written ``shi2/5`` is a content morpheme read unstressed in that word: its
    lexical reading is the citation tone ``shi2``, and ``unstressed[word]`` lists its position
    so that the surface layer speaks it neutral (see :meth:`ZhG2P.spoken`).
    """
    table: dict[str, list[str]] = {}
    unstressed: dict[str, tuple[int, ...]] = {}
    text = resources.files("mixvox.frontends.zh").joinpath("data").joinpath(name).read_text("utf-8")
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, _, pins = line.partition("\t")
        syl = pins.split()
        if len(syl) != len(word):
            raise ValueError(f"{name}:{lineno}: {word!r} has {len(word)} chars, {len(syl)} syl")
        soft = tuple(k for k, s in enumerate(syl) if s.endswith("/5"))
        for k in soft:
            lex = syl[k][:-2]
            if lex[-1:] not in ("1", "2", "3", "4"):
                raise ValueError(f"{name}:{lineno}: {syl[k]!r}: X/5 needs a citation tone 1-4")
            syl[k] = lex
        table[word] = syl
        if soft:
            unstressed[word] = soft
    return table, unstressed


def _jieba_dict_path() -> str | None:
    try:
        import jieba  # only its dictionary file is used
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(jieba.__file__), "dict.txt")
    return path if os.path.exists(path) else None


#: Words up to this length are looked up directly by the segmenter; longer ones only where the
#: text has the first ``_SHORT`` characters of one (2 % of the vocabulary is longer).
_SHORT = 4

#: A dictionary word counted at most this often in jieba's list is "rare": the context model
#: may overrule pypinyin's reading of it where it is near certain (chosen on CPP even lines).
_RARE = 10

#: Particles that jieba's word list glues to the end of a word (坦率地, 地走了): in a rare word
#: our rule for them stands against the model's guess.
_END_PARTICLES = frozenset("地得着了的")

#: Particles (and the complement 满) that jieba glues after a one-character verb (闷得, 背着,
#: 还了, 结满): the verb is read by its word rules as if the particle were a word of its own.
_VERB_PARTICLES = frozenset("得着了过满")

#: Most dictionary words whose reading a :class:`ZhG2P` keeps once made (a few MB at most).
_FIXED_MAX = 50_000

Tables = tuple[
    dict[str, list[str]],
    dict[str, float],
    int,
    frozenset[str],
    float,
    dict[str, tuple[int, ...]],
    dict[str, str],
    dict[str, str],
]

#: Common surnames with one reading: the given names jieba lists after them (its ``nr`` words)
#: tell which characters are usual in a given name, at each of its two places.
_PLAIN_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓彭萧田董袁潘蒋蔡余杜叶程苏魏吕"
    "丁沈姜范傅钟卢汪戴崔陆廖姚方金邱夏谭贾邹石熊孟秦阎薛侯雷白龙段郝孔邵史毛常顾赖武康贺严尹"
    "钱施牛洪龚"
)

#: Polyphonic surnames whose names jieba keeps whole are read with the surname reading (the
#: one after 姓 in ``data/word_rules.tsv``). Left out: surnames that are also a verb or an
#: adverb before an office or a verb in jieba's ``nr`` list (任中书 'appointed 中书', 曾率军
#: 'once led the army': their given-name statistics are no different from 任正非's), and
#: surnames whose ``nr`` words are mostly transliterations or places (华莱士, 华清池).
_NAME_SURNAMES = frozenset("单解查仇区盖缪覃翟朴")

#: Polyphonic surnames that are also a verb or an adverb (任 'appoint', 曾 'once'): jieba's
#: three-character ``nr`` words with them (任正非, 曾志伟, but also 任中书 'appointed 中书', 曾率军
#: 'once led the army') are read as a name only in a person's context (:func:`_person_context`).
_CUED_SURNAMES = frozenset("任曾")

#: Words right after a person's name: titles and forms of address (任正非/先生, 曾/总) and
#: verbs of saying (任正非/表示, 曾志伟/说). 任中书/说 'appointed 中书, said' does not occur.
_AFTER_NAME = frozenset(
    "先生 女士 小姐 老师 同学 师傅 老板 总 董 教授 医生 大夫 院士 主任 经理 总裁 董事长 校长 "
    "局长 书记 部长 同志 阿姨 叔叔 大爷 大妈 奶奶 爷爷 姐 哥 姐姐 哥哥 夫妇 一家 本人 "
    "说 说过 说道 表示 指出 认为 称 声称 强调 透露 回应 坦言 直言 介绍 提到 告诉 回答 问 问道 "
    "答道 笑道 解释 宣布 承认 感叹 呼吁 回忆 写道 曾说 也说 还说 曾经 笑着说".split()
)

#: Words right before a person's name: roles (华为/创始人/任正非, 演员/曾志伟) and verbs that take
#: a person (采访/任正非). A bare 和/跟 is left out (他/和/任中书 …: the office reading stays).
_BEFORE_NAME = frozenset(
    "创始人 创办人 董事长 总裁 总经理 老板 演员 歌手 导演 艺人 主持人 作家 教授 老师 院士 "
    "影帝 明星 前辈 先生 女士 采访 专访 拜访 对话 遇见 见到 认识 喜欢 崇拜 偶像".split()
)

#: A character is usual at a place of a given name when jieba lists it there this often.
_GIVEN_MIN = 10

#: Characters of transliterations and place names, never of a Chinese given name read here
#: (缪尔达 Myrdal, 查普曼 Chapman, 解上州 'sent to the prefecture').
_NOT_GIVEN = frozenset("尔斯普莱泰州郡县")


def _names(
    heads: dict[str, list[str]], first: dict[str, int], second: dict[str, int]
) -> dict[str, str]:
    """Person names that jieba keeps whole (单田芳, 解晓东, 区瑞强), with the surname reading.

    ``heads``: jieba's three-character ``nr`` words by first character, for the surnames of
    ``_NAME_SURNAMES``; ``first`` / ``second``: how often jieba has each character at the
    first and second place of a given name after a plain surname. A word is a name when its
    two last characters are both usual in a given name (at least ``_GIVEN_MIN`` times) and
    neither they nor its first two make a word (解甲归 is no name). Without this, such a word
    is read by the context model, trained on text where 单 is mostly dān (单田芳 dan1).
    """
    out: dict[str, str] = {}
    for ch, words in heads.items():
        reading = polyphone.after_word(ch, "姓")
        if not reading:
            continue
        for w in words:
            if (
                first.get(w[1], 0) >= _GIVEN_MIN
                and second.get(w[2], 0) >= _GIVEN_MIN
                and not _NOT_GIVEN.intersection(w[1:])
            ):
                out[w] = reading
    return out


@lru_cache(maxsize=2)
def _shared_tables(jieba_path: str | None) -> Tables:
    """Our phrase table, word log-probabilities, the longest word length, long-word heads,
    the log-probability of a word counted ``_RARE`` times (``-inf`` without counts), and our
    table's unstressed positions (``X4/5`` syllables).

    The heads are the first ``_SHORT`` characters of every longer word: the segmenter tries
    lengths above ``_SHORT`` only where the text has one (a quarter of its lookups otherwise).

    Cached per dictionary path and shared by every :class:`ZhG2P` (the tables are read-only
    and the frequency list is large: one copy per process is enough).
    """
    own, unstressed = _load_table("phrases.tsv")
    fixes, soft_fixes = _load_table("phrase_fixes.tsv")  # readings only: not in `freq` below
    freq: dict[str, int] = {}
    heads: dict[str, list[str]] = {}
    first: dict[str, int] = {}
    second: dict[str, int] = {}
    if jieba_path:
        with open(jieba_path, encoding="utf-8") as f:
            for line in f:
                parts = line.split(" ", 2)
                if len(parts) >= 2 and parts[1].strip().isdigit():
                    w = parts[0]
                    freq[w] = int(parts[1])
                    if len(w) == 3 and len(parts) == 3 and parts[2].startswith("nr"):
                        if w[0] in _PLAIN_SURNAMES:
                            first[w[1]] = first.get(w[1], 0) + 1
                            second[w[2]] = second.get(w[2], 0) + 1
                        elif w[0] in _NAME_SURNAMES or w[0] in _CUED_SURNAMES:
                            heads.setdefault(w[0], []).append(w)
    else:
        for w in PHRASES_DICT:
            freq[w] = 10
    for w in own:
        freq[w] = max(freq.get(w, 0), 2000)
    own = {**fixes, **own}
    unstressed = {**soft_fixes, **unstressed}
    logtotal = math.log(sum(freq.values()) or 1)
    logp = {w: math.log(f) - logtotal for w, f in freq.items() if f > 0}
    maxlen = 1
    long_heads: set[str] = set()
    for w in logp:
        if len(w) > _SHORT:
            long_heads.add(w[:_SHORT])
            maxlen = max(maxlen, len(w))
    if not long_heads:
        maxlen = max((len(w) for w in logp), default=1)
    rare = math.log(_RARE) - logtotal if jieba_path else -math.inf
    for ch in heads:  # a name is a person's whole name: not a word of two of its characters
        if ch not in _CUED_SURNAMES:  # (曾子墨: 曾子 is a word; _cued_names filters its own)
            heads[ch] = [w for w in heads[ch] if w[1:] not in freq and w[:2] not in freq]
    names = {
        w: r
        for w, r in _names(heads, first, second).items()
        if w not in own and w[0] not in _CUED_SURNAMES
    }
    cued = _cued_names(heads, own, freq)
    return own, logp, min(16, maxlen), frozenset(long_heads), rare, unstressed, names, cued


class ZhG2P:
    """Segmentation + lexical (pre-sandhi) pinyin.

    The segmenter is a maximum-probability path over a word-frequency dictionary (the
    ``dict.txt`` that ships with the ``jieba`` package, read directly; jieba's own code and
    global state are not used), plus our phrase table. Without jieba it falls back to
    pypinyin's phrase list with unit frequencies. Tables load on first use.
    """

    def __init__(self) -> None:
        self._own: dict[str, list[str]] | None = None
        self._logp: dict[str, float] = {}
        self._maxlen = 1
        self._heads: frozenset[str] = frozenset()
        self._rare_logp = -math.inf
        self._fixed: dict[str, tuple[str, ...]] = {}  # dictionary words' readings, once made
        self._unk = -30.0
        self._unstressed: dict[str, tuple[int, ...]] = {}
        self._names: dict[str, str] = {}  # 单田芳 -> shan4: names jieba keeps whole
        self._cued_names: dict[str, str] = {}  # 任正非 -> ren2: a name in a person's context

    def load(self) -> None:
        if self._own is not None:
            return
        own, logp, maxlen, heads, rare, unstressed, names, cued = _shared_tables(_jieba_dict_path())
        self._cued_names = cued
        self._logp, self._maxlen, self._heads, self._rare_logp = logp, maxlen, heads, rare
        self._unstressed = unstressed
        self._names = names
        self._unk = min(logp.values(), default=-25.0) - 5.0  # an unknown single character
        self._own = own

    # -- segmentation --------------------------------------------------------------------------
    def split(self, word: str) -> list[str]:
        """Sub-words of a dictionary word (its best segmentation without the whole word)."""
        return self.segment(word, whole=False)

    def segment(self, text: str, extra: set[str] | None = None, *, whole: bool = True) -> list[str]:
        """Cut a Han string into words along the most probable path (unigram word model)."""
        self.load()
        n = len(text)
        if n <= 1:
            return [text] if text else []
        logp, unk, heads, maxlen = self._logp, self._unk, self._heads, self._maxlen
        get = logp.get
        best = [0.0] + [-math.inf] * n
        back = [0] * (n + 1)
        for i in range(n):
            base = best[i]
            if base == -math.inf:
                continue
            top = min(maxlen, n - i)
            if top > _SHORT and text[i : i + _SHORT] not in heads:
                top = _SHORT  # no longer word starts here
            if not whole and top == n:
                top -= 1
            for L in range(1, top + 1):
                w = text[i : i + L]
                lp = get(w)
                if extra and w in extra:
                    lp = max(lp if lp is not None else -math.inf, -8.0)
                if lp is None:
                    if L > 1:
                        continue
                    lp = unk
                score = base + lp
                if score > best[i + L]:
                    best[i + L], back[i + L] = score, i
        words: list[str] = []
        j = n
        while j > 0:
            i = back[j]
            words.append(text[i:j])
            j = i
        words.reverse()
        if whole and "不" in text:
            return _question_recut(words, logp, self._rare_logp)
        return words

    def _rare(self, word: str) -> bool:
        """A word outside our table that jieba counts at most ``_RARE`` times (or not at all)."""
        assert self._own is not None
        return word not in self._own and self._logp.get(word, -math.inf) <= self._rare_logp

    def _in_dictionary(self, word: str) -> bool:
        """In our table or pypinyin's: its reading does not depend on the sentence."""
        return word in (self._own or {}) or word in PHRASES_DICT

    def is_own(self, w: str) -> bool:
        """In our own tables (phrases or reading fixes): never overruled by the model."""
        self.load()
        return w in (self._own or {})

    def log_prob(self, w: str) -> float:
        """The segmenter's log-probability of ``w`` (``-99`` for a word it does not know)."""
        self.load()
        return self._logp.get(w, -99.0)

    def is_word(self, w: str) -> bool:
        self.load()
        return w in self._logp

    # -- pinyin ------------------------------------------------------------------------------
    def word_pinyin(
        self,
        word: str,
        left: str = "",
        right: str = "",
        guess: Guess | None = None,
        prev: str = "",
        nxt: str = "",
        sure: Guess | None = None,
        before: tuple[str, ...] = (),
        after: tuple[str, ...] = (),
        earlier: tuple[str, ...] = (),
    ) -> list[str]:
        """Lexical pinyin of one word (simplified Han), using the text around it for context.

        ``guess(k)``: the context model's reading of the word's ``k``-th character (or
        ``None``), asked only where no dictionary entry covers that character (a common
        dictionary word is never overruled: on CPP even lines that lost more than it won, and
        it turned 已经了结 into le5). Returns one syllable per character; a character without any reading gets ``""``. ``prev``/``nxt``:
        the words around this one in the same run of Han text (word-sequence rules for
        one-character words: 认真/地 de5, 跑/得/很快 de5). ``sure(k)``: the model's reading of
        character ``k`` where it is near certain (``None`` otherwise); it overrules pypinyin's
        reading of a *rare* word (at most ``_RARE`` in jieba's counts, or none: 新圩镇 wei2,
        叶儿 er2), never our own table or a common word (相声, 妥当: chosen on CPP even lines).
        ``before`` / ``after``: the words before ``prev`` and after ``nxt`` (word rules that
        name two words on one side: 落/在/家里). ``earlier``: the words before this one in
        its sentence, across commas (word rules with ``@X``: 泡/了/一夜/，/都/涨起来 zhàng).
        """
        if len(word) == 1:
            by_pred = _a_not_a(word, prev, nxt, before, after)
            if by_pred:
                return [by_pred]
            if nxt == "不" and after and len(after[0]) > 1 and after[0][0] == word:
                # X/不/XY: the first X reads as in the word XY of the question's second half
                # (还/不/还给/他 huán, 重/不/重要 zhòng); jieba joins the second X to what follows
                return [self._word_pinyin(after[0])[0]]
            by_word = polyphone.after_word(word, prev, nxt, before, after, earlier)
            if by_word:
                return [by_word]
        else:
            by_word = polyphone.after_word(word, prev, nxt, before, after, earlier)
            if by_word:  # 背着/书包 bei1, 背着/父母 bei4: a word whose sense its object shows
                return by_word.split()
            if len(word) == 2 and word[0] == word[1] and not self._in_dictionary(word):
                # a reduplicated verb no dictionary lists (教教我, 量量体温) reads as the verb
                # alone would in the same place (教/我 jiao1), not as the model's guess
                by_verb = polyphone.after_word(word[0], prev, nxt, before, after)
                if by_verb:
                    return [by_verb, by_verb]
            if len(word) == 2 and word[1] in _VERB_PARTICLES and not self._in_dictionary(word):
                # jieba's V得 / V着 / V了 (屋里/闷得/喘不过气): the verb reads as it would right
                # before the particle (闷/得 after 屋里: mēn), the particle as after that verb
                tail = (nxt, *after) if nxt else after
                by_verb = polyphone.after_word(word[0], prev, word[1], before, tail, earlier)
                if by_verb:
                    py = self._word_pinyin(word, left, right, guess)
                    part = polyphone.after_word(word[1], word[0], nxt, (*before, prev), after)
                    return [by_verb, part or py[1]]
            glued = self._glued(word, prev, nxt, before, after, earlier)
            if glued is not None:
                return glued
            fixed = self._fixed.get(word)
            if fixed is not None:
                return list(fixed)
            senses = polyphone.heteronyms().get(word)
            if senses is not None:
                return self._by_sense(word, senses, guess)
        py = self._word_pinyin(word, left, right, guess)
        surname = self._names.get(word) if len(word) == 3 else None
        if len(word) == 3 and word in self._cued_names and _person_context(prev, nxt, before):
            surname = self._cued_names[word]  # 任正非/先生 rén, 曾志伟/说 zēng
        if surname:
            py[0] = surname  # 单田芳 shan4, 解晓东 xie4: a name jieba keeps whole
        if (
            len(word) > 1
            and word[-1] == "儿"
            and py[-1] == "er2"
            and word not in (self._own or {})
            and word[-2] not in polyphone.ER2_BEFORE
        ):
            py[-1] = "er5"  # erhua suffix (这儿, 一点儿), not the noun 儿 'child'
        if len(word) > 1:
            if self._rare(word):
                if sure is not None:
                    kept = self._own_parts(word)
                    if surname:
                        kept.add(0)
                    for k in range(len(word)):
                        r = None if k in kept else sure(k)
                        if r:
                            py[k] = r
            elif (
                len(self._fixed) < _FIXED_MAX
                and self._in_dictionary(word)
                and word not in self._cued_names  # its reading depends on the words around it
            ):
                self._fixed[word] = tuple(py)  # a dictionary word reads the same everywhere
        return py

    def _glued(
        self,
        word: str,
        prev: str,
        nxt: str,
        before: tuple[str, ...],
        after: tuple[str, ...],
        earlier: tuple[str, ...],
    ) -> list[str] | None:
        """A polyphone that the unigram cut glued to a neighbour, read by its word rules as
        the word of its own it is, or ``None``.

        * Its last character, after a word: a rare word (at most ``_RARE``) that is a word
          plus a character with word rules (钥匙卡/在/锁/里: 钥匙 + 卡 qiǎ 'stuck'; jieba lists
          钥匙卡 'key card' three times). Only a rule that names the word before counts
          (``need_prev``), so a card word (门禁卡/在/前台) stays kǎ.
        * Its first character, before a word that the second one starts: a two-character
          word whose second character makes a word at least ten times as frequent with the
          next word (扒鸡/蛋壳: 鸡蛋 1355 against 扒鸡 14) is that character, then the word it
          starts (扒 before 鸡蛋壳: bā 'peel').

        The cut itself is kept (prosody); only the readings change, and only where a rule
        decides.
        """
        rules = polyphone.word_rules()
        if word in (self._own or {}) or word in polyphone.heteronyms():
            return None
        logp = self._logp
        if len(word) >= 3 and word[-1] in rules and self._rare(word):
            head = word[:-1]
            if head in logp:
                ctx = (*before, prev) if prev else before
                r = polyphone.after_word(word[-1], head, nxt, ctx, after, earlier, need_prev=True)
                if r and " " not in r:
                    return [*self._word_pinyin(head), r]
        if len(word) == 2 and word[0] in rules and nxt:
            cross = logp.get(word[1] + nxt[0])
            if cross is not None and cross >= logp.get(word, -math.inf) + math.log(10):
                text = word[1] + nxt
                v = next(text[:L] for L in range(len(text), 1, -1) if text[:L] in logp)
                tail = ((text[len(v) :],) if len(v) < len(text) else ()) + after
                r = polyphone.after_word(word[0], prev, v, before, tail, earlier)
                if r and " " not in r:
                    return [r, self._word_pinyin(v)[0]]
        return None

    def _by_sense(
        self,
        word: str,
        senses: tuple[tuple[int, frozenset[str]], ...],
        guess: Guess | None,
    ) -> list[str]:
        """A heteronym word (``data/heteronyms.tsv``: 肚子 du4/du3, 勾当 gou4/gou1): its
        dictionary reading, except where the context model picks another reading of the
        word's list for that character. Never cached: the reading depends on the sentence.
        """
        py = self._word_pinyin(word)
        if guess is not None:
            for k, readings in senses:
                r = guess(k)
                if r in readings:
                    py[k] = r
        return py

    def _word_pinyin(
        self, word: str, left: str = "", right: str = "", guess: Guess | None = None
    ) -> list[str]:
        self.load()
        assert self._own is not None
        own = self._own.get(word)
        if own is not None:
            return list(own)
        if len(word) > 1:
            ph = PHRASES_DICT.get(word)
            if ph is not None and len(ph) == len(word):
                return _base_tones(word, [mark_to_tone3(p[0]) for p in ph])
        if len(word) == 4 and word[0] == word[1] and word[2] == word[3]:
            # AABB reduplication of a word AB reads as AB (结结实实 as 结实 jiē, 干干净净 as
            # 干净 gān); otherwise each character keeps its own reading (马马虎虎)
            ab = word[0] + word[2]
            ab_py = self._own.get(ab)
            if ab_py is None and ab in PHRASES_DICT and len(PHRASES_DICT[ab]) == 2:
                ab_py = _base_tones(ab, [mark_to_tone3(p[0]) for p in PHRASES_DICT[ab]])
            if ab_py is not None:
                return [ab_py[0], ab_py[0], ab_py[1], ab_py[1]]
            a = self.char_pinyin(word[0], "", "", word[0], 0, _at(guess, 0))
            b = self.char_pinyin(word[2], "", "", word[2], 0, _at(guess, 2))
            return [a, a, b, b]
        if len(word) > 2:
            parts = self._phrase_split(word)
            if len(parts) > 1:
                out2: list[str] = []
                pos = 0
                for part in parts:
                    if len(part) == 1:  # a lone character: rules see the whole word (数一数)
                        ctx_l, ctx_r = word[:pos], word[pos + 1 :]
                        out2.append(self.char_pinyin(part, ctx_l, ctx_r, word, pos,
                                                     _at(guess, pos)))  # fmt: skip
                        pos += 1
                        continue
                    out2 += self.word_pinyin(
                        part,
                        left + word[:pos],
                        word[pos + len(part) :] + right,
                        _shift(guess, pos),
                    )
                    pos += len(part)
                return out2
        out: list[str] = []
        for k, ch in enumerate(word):
            # context rules see the word only: a rule for 了结 must not fire in 递交/了/结案
            out.append(self.char_pinyin(ch, word[:k], word[k + 1 :], word, k, _at(guess, k)))
        return out

    def _own_parts(self, word: str) -> set[int]:
        """Positions of ``word`` read by an entry of our own table inside it (别着急: 着急).

        A rare word read by its parts keeps those parts' readings: the model's near-certain
        reading overrules pypinyin's guess for a rare word, never our table (别着急 was zhe5
        ji2; 着急 zhao2 ji2 is in ``phrases.tsv``). pypinyin's words inside it are not kept:
        the forward split can cut the word wrongly (水分子 is 水/分子, not 水分/子: fen1), and
        the model reads such a word better (CPP even lines: 煞车失灵 lost, nothing else).
        In a two-character rare word a context rule of ours is kept the same way (塞进), and
        in a rare pypinyin phrase a word of our table inside it (上当受骗: 上当 dang4).
        """
        assert self._own is not None
        out: set[int] = set()
        if word in self._own:
            return out
        if word in PHRASES_DICT:
            # a rare pypinyin phrase holding a word of our table (上当受骗: 上当 dang4)
            for i in range(len(word)):
                for j in range(i + 2, len(word) + 1):
                    if word[i:j] in self._own:
                        out.update(range(i, j))
            return out
        if len(word) == 2:
            # a context rule of ours reading one character from the other (塞进 sai1, 腿折
            # she2) is ours too; in a longer word the rule's context may be cut wrongly
            # (水分子: 分 fen4 by the rule for 水分, fen1 by the model)
            return {k for k in (0, 1) if polyphone.rule(word[k], word[:k], word[k + 1 :])}
        if len(word) == 3 and word[1] in "不得着了过" and polyphone.rule(word[0], "", word[1:]):
            out.add(0)  # a verb, a particle, one more (背不动 bei1, 闷着头 men1): one clear cut
        if len(word) == 3 and word[1] == "得" and polyphone.rule("得", word[0], word[2]):
            out.add(1)  # the 得 of V得C read by our rule (说得对 de5: the model was sure of dé)
        # a measure word right after a numeral, read by our rule (这三只 zhī: the model said zhǐ)
        out.update(k for k in range(1, len(word)) if word[k - 1] in polyphone.NUMERALS
                   and polyphone.rule(word[k], word[:k], word[k + 1 :]))  # fmt: skip
        pos = 0
        parts = self._phrase_split(word)
        # a pypinyin word is kept too where the segmenter cuts the word the same way (抽空来:
        # 抽空/来 both ways, 抽空 kòng; the model was sure of kōng); where the two cuts
        # differ the forward one may be wrong (水分子: 水分/子 forward, 水/分子 by the segmenter)
        # (a heteronym word of two senses is left to the model: 供养父母 gōng, 供养佛祖 gòng)
        agreed = len(parts) > 1 and parts == self.split(word)
        senses = polyphone.heteronyms()
        for part in parts:
            if len(part) > 1 and (
                part in self._own or (agreed and part in PHRASES_DICT and part not in senses)
            ):
                out.update(range(pos, pos + len(part)))
            pos += len(part)
        # a rule that holds after any character (率 lv4: 房贷利率) does not depend on the cut
        out.update(k for k in range(1, len(word)) if polyphone.anywhere_rule(
            word[k], word[:k], word[k + 1 :]))  # fmt: skip
        # nor does a particle that ends the word, read by its rule (jieba's fragment 坦率地: de5)
        last = len(word) - 1
        if word[last] in _END_PARTICLES and polyphone.rule(word[last], word[:last], ""):
            out.add(last)
        return out

    def _phrase_split(self, word: str) -> list[str]:
        """Forward maximum matching of a long word on the pinyin phrase tables."""
        assert self._own is not None
        parts: list[str] = []
        i, n = 0, len(word)
        while i < n:
            for L in range(min(n - i, _MAX_WORD), 0, -1):
                w = word[i : i + L]
                if L == 1 or w in self._own or w in PHRASES_DICT:
                    parts.append(w)
                    i += L
                    break
        return parts

    def unstressed(self, word: str) -> tuple[tuple[int, str], ...]:
        """``(position, citation syllable)`` of each syllable of ``word`` that is spoken
        neutral over a citation tone (an ``X4/5`` syllable of our table).

        Mirrors :meth:`_word_pinyin`: our table's entry, else (a word no dictionary knows,
        read by its parts) the parts' syllables; a pypinyin word keeps pypinyin's tones.
        """
        self.load()
        assert self._own is not None
        own = self._own.get(word)
        if own is not None:
            return tuple((k, own[k]) for k in self._unstressed.get(word, ()))
        if len(word) <= 2 or word in PHRASES_DICT or not self._unstressed:
            return ()
        if len(word) == 4 and word[0] == word[1] and word[2] == word[3]:
            return ()  # AABB: each character on its own (马马虎虎), as _word_pinyin reads it
        out: list[tuple[int, str]] = []
        pos = 0
        for part in self._phrase_split(word):
            if len(part) > 1:
                out += [(pos + k, c) for k, c in self.unstressed(part)]
            pos += len(part)
        return tuple(out)

    def spoken(self, word: str, py: list[str]) -> list[str]:
        """The surface layer's input to sandhi: ``py`` with the word's unstressed syllables in
        the neutral tone (认识 ren4 shi2 -> ren4 shi5).

        Lexical readings keep citation tones, as polyphone benchmarks (CPP) write them; what is
        spoken has the neutral tone. A syllable the context model changed to another reading
        (a rare word it overrules: 一小部分 fen1) is spoken as the model read it.
        """
        soft = self.unstressed(word) if len(word) > 1 else ()
        if not soft or len(py) != len(word):
            return py
        out = list(py)
        for k, cit in soft:
            if out[k] == cit:
                out[k] = cit[:-1] + "5"
        return out

    def char_pinyin(
        self,
        ch: str,
        left: str,
        right: str,
        word: str,
        idx: int = -1,
        model: Callable[[], str | None] | None = None,
    ) -> str:
        """Reading of one character: neutral suffix rule, context rule, model, then pypinyin.

        ``left``/``right`` are the rest of the word the character is in; ``model`` is the
        context model's reading of it in the sentence (asked only if nothing before decides).
        """
        if idx >= 0:
            suffix = polyphone.suffix_reading(word, idx)
            if suffix:
                return suffix
        rule = polyphone.rule(ch, left, right)
        if rule:
            return rule
        guessed = model() if model is not None else None
        if guessed:
            return guessed
        default = polyphone.default(ch)
        if default:
            return default
        readings = PINYIN_DICT.get(ord(ch))
        if not readings:
            return ""
        return mark_to_tone3(readings.split(",", 1)[0])


def _cued_names(
    heads: dict[str, list[str]], own: dict[str, list[str]], freq: dict[str, int]
) -> dict[str, str]:
    """jieba's three-character ``nr`` words of the verb-like surnames (``_CUED_SURNAMES``)
    that may be a person's name, with the surname reading: the two last characters make no
    word (任/中书 'appointed 中书', 曾/率军, 任/北平 are phrases) and are no transliteration.

    No given-name statistics (曾荫权, 任继愈, 曾子墨 fail them): the reading needs a person's
    context besides (:func:`_person_context`), which the phrases never have.
    """
    out: dict[str, str] = {}
    for ch in _CUED_SURNAMES:
        reading = polyphone.after_word(ch, "姓")
        if not reading:
            continue
        for w in heads.get(ch, ()):
            if w not in own and w[1:] not in freq and not _NOT_GIVEN.intersection(w[1:]):
                out[w] = reading
    return out


def _person_context(prev: str, nxt: str, before: tuple[str, ...] = ()) -> bool:
    """The words around a jieba ``nr`` word of a verb-like surname show a person: a title or
    a verb of saying after it, or a role or a verb that takes a person before it, also with
    了 between (采访/了/曾宝仪). See ``_AFTER_NAME``, ``_BEFORE_NAME``."""
    if nxt in _AFTER_NAME or prev in _BEFORE_NAME:
        return True
    return prev == "了" and bool(before) and before[-1] in _BEFORE_NAME


def _question_recut(words: list[str], logp: dict[str, float], rare: float) -> list[str]:
    """Give back the first X of a yes-no question X不X that the cut glued to the words
    before it: 明/天空/不/空 -> 明天/空/不/空 ('are you free tomorrow').

    The previous word and the glued word's head must make a word that is not rare (more than
    ``_RARE`` in jieba's counts: 明天, 后天), so 这片/天空/不/空 is kept. Either half of the
    question may be jieba's 不X (明/天空/不空).
    """
    out = list(words)
    for i in range(1, len(out) - 1):
        w, q = out[i], out[i + 1]
        if len(w) < 2 or w[-1] in "不没":
            continue
        x = w[-1]
        if not (q == "不" + x or (q == "不" and i + 2 < len(out) and out[i + 2] == x)):
            continue
        merged = out[i - 1] + w[:-1]
        if logp.get(merged, -math.inf) > rare:
            out[i - 1 : i + 1] = [merged, x]
    return out


def _base_tones(word: str, py: list[str]) -> list[str]:
    """``py`` with 一 as yi1 and 不 as bu4 (their base tones) wherever pypinyin's phrase
    table stores a sandhi form (一起 yì, 一定 yí, 不是 bú, but 一共 yī, 不对 bù).

    The lexical layer holds base tones only, as CPP and our own tables write them; the tone
    of 一 / 不 before the next syllable is put on once, by :func:`.sandhi.apply_sandhi`, so
    what is spoken is the same (一起 is still said yì qǐ) and ``char_readings(sandhi=False)``
    no longer shows yì in 一起 and yī in 一共.
    """
    for k, ch in enumerate(word):
        if ch == "一" and py[k][:2] == "yi" and py[k] != "yi5":
            py[k] = "yi1"
        elif ch == "不" and py[k][:2] == "bu" and py[k] != "bu5":
            py[k] = "bu4"
    return py


#: What may close a yes-no question X不X (长不长吗 is unusual, 长不长呢 / 长不长啊 are not).
_QUESTION_END = frozenset(("吗", "呢", "啊", "呀", "吧", "啦"))


def _a_not_a(
    word: str, prev: str, nxt: str, before: tuple[str, ...], after: tuple[str, ...]
) -> str | None:
    """The reading of ``word`` in a yes-no question X不X, or ``None`` elsewhere.

    Either X of 长/不/长 (or X before jieba's 不X: 难/不难) reads as the predicate alone: at the
    end of the question as after 很 (长不长 cháng, 重不重 zhòng, 难不难 nán), before an
    object as before that object (还/不/还/钱 huán, 长/不/长/个子 zhǎng). The word rules
    decide; ``None`` where they do not (the caller goes on as usual).
    """
    if nxt == "不" and after[:1] == (word,):
        tail = after[1:]
    elif nxt == "不" + word:
        tail = after
    elif prev == "不" and before[-1:] == (word,):
        tail = (nxt, *after) if nxt else after
    else:
        return None
    # 不X is the other half of the question: where no rule reads X as a predicate after 很
    # (还 has none) or before the object (还/不/还/我), X reads as after 不 in the same
    # place (不/还 at the clause end huán: 你还不还 was hái)
    if not tail or tail[0] in _QUESTION_END or tail[0] == "#":
        # the words before the question stay visible to *B+A rules (你/空/不/空: a person
        # is free, kòng; 这里/空/不/空: a place is empty, kōng)
        ctx = before if prev == "不" else (*before, prev)  # the second X: before has the first
        return polyphone.after_word(word, "很", "") or polyphone.after_word(word, "不", "", ctx)
    return polyphone.after_word(word, "", tail[0], (), tail[1:]) or polyphone.after_word(
        word, "不", tail[0], (), tail[1:])  # fmt: skip


def _at(guess: Guess | None, k: int) -> Callable[[], str | None] | None:
    return (lambda: guess(k)) if guess is not None else None


def _shift(guess: Guess | None, pos: int) -> Guess | None:
    if guess is None or pos == 0:
        return guess
    return lambda k: guess(k + pos)
