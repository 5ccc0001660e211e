"""Whether a word written in capitals can be said as a word (``OPPO``, ``LENOVO``, ``XIAOMI``).

CMUdict decides for the words it knows. For the rest, an all-capital token is either an
acronym that is spelled (``HTTP``, ``GPIO``, ``NVME``) or a name written in capitals by its
owner's style or in a headline (brands: ``OPPO``, ``LENOVO``, ``TENCENT``, ``XIAOMI``,
``HUAWEI``; tech words said as words: ``SOTA``, ``FIFO``, ``IMAP``, ``POSIX``, ``EBITDA``).
People say a capital token as a word when its letters make syllables a speaker can say, so
the test here is phonotactic: every consonant cluster is one that English allows where it
stands (``GP`` cannot start a word, ``TM`` cannot end one), vowels come in runs of at most two
and there are at least two syllables; or the token is at least two syllables of Mandarin
pinyin (Chinese brand names: ``XIAOMI`` xiao mi, ``MEITUAN``, ``KUAISHOU``). Measured on
CMUdict's own acronyms of 4-8 letters (the ones it spells): 16 of 58 pass the test, and
CMUdict's entry is consulted first, so they stay spelled. Acronyms that pass but are spelled
by those who use them are rows of ``data/acronyms.tsv`` (``UEFI``).
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Mandarin syllables without tones (the single vowels a/e/o and the syllabic nasals are left
#: out: "O PEN AI" is no Chinese name).
_PINYIN = frozenset(
    """
    ai an ang ao ba bai ban bang bao bei ben beng bi bian biao bie bin bing bo bu ca cai can
    cang cao ce cen ceng cha chai chan chang chao che chen cheng chi chong chou chu chua chuai
    chuan chuang chui chun chuo ci cong cou cu cuan cui cun cuo da dai dan dang dao de dei den
    deng di dia dian diao die ding diu dong dou du duan dui dun duo ei en eng er fa fan fang fei
    fen feng fo fou fu ga gai gan gang gao ge gei gen geng gong gou gu gua guai guan guang gui
    gun guo ha hai han hang hao he hei hen heng hong hou hu hua huai huan huang hui hun huo ji
    jia jian jiang jiao jie jin jing jiong jiu ju juan jue jun ka kai kan kang kao ke kei ken
    keng kong kou ku kua kuai kuan kuang kui kun kuo la lai lan lang lao le lei leng li lia lian
    liang liao lie lin ling liu long lou lu luan lun luo ma mai man mang mao me mei men meng mi
    mian miao mie min ming miu mo mou mu na nai nan nang nao ne nei nen neng ni nian niang niao
    nie nin ning niu nong nu nuan nuo ou pa pai pan pang pao pei pen peng pi pian piao pie pin
    ping po pou pu qi qia qian qiang qiao qie qin qing qiong qiu qu quan que qun ran rang rao re
    ren reng ri rong rou ru ruan rui run ruo sa sai san sang sao se sen seng sha shai shan shang
    shao she shei shen sheng shi shou shu shua shuai shuan shuang shui shun shuo si song sou su
    suan sui sun suo ta tai tan tang tao te teng ti tian tiao tie ting tong tou tu tuan tui tun
    tuo wa wai wan wang wei wen weng wo wu xi xia xian xiang xiao xie xin xing xiong xiu xu xuan
    xue xun ya yan yang yao ye yi yin ying yo yong you yu yuan yue yun za zai zan zang zao ze zei
    zen zeng zha zhai zhan zhang zhao zhe zhei zhen zheng zhi zhong zhou zhu zhua zhuai zhuan
    zhuang zhui zhun zhuo zi zong zou zu zuan zui zun zuo
    """.split()
)

#: Consonant clusters that may start an English word (and the pinyin initials zh, x, q).
_ONSETS = frozenset(
    "b c d f g h j k l m n p r s t v w x y z bl br ch cl cr dr fl fr gl gr kl kr ph pl pr sc sh "
    "sk sl sm sn sp st sw th tr tw wh wr zh chr sch scr shr spl spr squ str thr qu".split()
)
#: Consonant clusters that may end an English word (doubled letters too: DIMM, ASSESS).
_CODAS = frozenset(
    "b c d f g k l m n p r s t v x z ck ct ft ld lf lk ll lm ln lp ls lt mb mp nc nd ng nk ns nt "
    "pt rb rc rd rf rg rk rl rm rn rp rs rt sh sk sp ss st th ch tch tz ff gg dd mm nn pp tt zz "
    "lts nts".split()
)
_RE_GROUPS = re.compile(r"[aeiouy]+|[^aeiouy]+")


def pinyin_syllables(w: str) -> int:
    """The fewest pinyin syllables that make up ``w`` (lower case), 0 when none do."""
    n = len(w)
    best: list[int | None] = [None] * (n + 1)
    best[n] = 0
    for i in range(n - 1, -1, -1):
        for j in range(i + 2, min(n, i + 6) + 1):
            rest = best[j]
            if rest is not None and w[i:j] in _PINYIN:
                cur = best[i]
                best[i] = rest + 1 if cur is None else min(cur, rest + 1)
    return best[0] or 0


def _inner_cluster(g: str) -> bool:
    """A consonant cluster between two vowels: a coda and an onset (``PP``, ``NT``, ``NTR``)."""
    if len(g) == 1 or (len(g) == 2 and (g in _ONSETS or g in _CODAS)):
        return True
    return any(g[:i] in _CODAS and g[i:] in _ONSETS for i in range(1, len(g)))


def english_sayable(w: str) -> bool:
    """Whether ``w`` (lower-case letters) is two or more syllables English allows."""
    groups = _RE_GROUPS.findall(w)
    vowels = [g for g in groups if g[0] in "aeiouy"]
    if len(vowels) < 2 or any(len(v) > 2 for v in vowels):
        return False
    for i, g in enumerate(groups):
        if g[0] in "aeiouy":
            continue
        if i == 0:
            if g not in _ONSETS:
                return False
        elif i == len(groups) - 1:
            if g not in _CODAS:
                return False
        elif len(g) > 3 or not _inner_cluster(g):
            return False
    return True


@lru_cache(maxsize=4096)
def sayable(w: str) -> bool:
    """Whether the letters of ``w`` (4 or more, any case) are said as a word, not spelled."""
    low = w.lower()
    if len(low) < 4 or not low.isascii() or not low.isalpha():
        return False
    return pinyin_syllables(low) >= 2 or english_sayable(low)
