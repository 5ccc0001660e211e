"""Chemical formulas (``NaCl``, ``H2SO4``, ``KMnO4``, ``Ca(OH)2``, ``C6H12O6``) found in text.

A chemical formula is read symbol by symbol: every element symbol spelled as its letters
(``NaCl`` -> N A C L, never "nah C L"; ``SO4`` -> S O four, never "so four") and every
subscript read as a number in the language of the sentence (``H2O`` -> H two O in English,
H 二 O in a Chinese sentence). The English and the Chinese frontends share this parser so that
both decide the same way what a formula is.

Written text is full of tokens made of capitals and digits that are no formulas (``B2B``,
``PS5``, ``KN95``, ``H100``, ``SU7``), so a token counts as a formula only when

* it parses completely into element symbols of the periodic table (a capital and at most one
  lower-case letter), subscripts and parenthesised groups followed by a subscript;
* it has at least two element symbols;
* it has a subscript, or a two-letter symbol (``NaCl``, ``HCl``, ``NaOH``: without digits and
  without a mixed-case symbol, capitals are an acronym, and an acronym is spelled anyway);
* no subscript is ``1`` or starts with ``0`` (formulas never write them: ``CPU1``, ``A01``);
  a two-digit subscript only in a formula with subscripts at two places or more
  (``C6H12O6``, ``C12H22O11``; not ``KN95``, a mask standard, nor ``SN74``); never three
  digits (``H100`` is a GPU);
* a letter, ``2``, a letter (``B2B``, ``O2O``, ``P2P``: "B to B" business words) is a formula
  only for the compounds of that shape (first ``H``, ``N`` or ``K``, then ``O`` or ``S``:
  ``H2O``, ``H2S``, ``N2O``, ``K2O``).

Words that merely look like formulas are left to the caller's word rules: CMUdict words
(``NaN``, ``GaN``, ``TiN``) are checked by the caller; :data:`NOT_FORMULAS` lists the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The 118 element symbols.
ELEMENTS = frozenset(
    """
    H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se
    Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb
    Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm
    Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og
    """.split()
)

#: Mixed-case names that parse as formulas but are no chemistry: ``SARS-CoV-2`` (co V),
#: the HeLa cell line, LiPo batteries (said "lie-po").
NOT_FORMULAS = frozenset({"CoV", "HeLa", "LiPo"})

#: Element symbols that are English words: alone they stay words, even next to a ``+``
#: (``In+Out``, ``He+She``); ``Fe``, ``Mg``, ``Cu`` alone in an equation are symbols.
_WORD_SYMBOLS = frozenset("He In As At Be No Am Re Os Pa Po Ho La Ta Ti Mo".split())

_TOKEN = re.compile(r"\(?[A-Z][A-Za-z0-9()]*")  # (NH4)2SO4 starts with a group
_PART = re.compile(r"[A-Z][a-z]?|\d+|[()]")


@dataclass(frozen=True)
class Part:
    """One part of a formula: an element ``symbol`` or a ``count`` (the digits of a subscript)."""

    kind: str  # "symbol" | "count"
    text: str


#: Signs of a chemical equation: next to one, a lone symbol with a count is a molecule
#: (``2H2+O2=2H2O``: H2 and O2).
EQUATION_SIGNS = frozenset("+=→⇌⟶↑↓")


_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_CHARGE = re.compile(r"(.+?)([⁰¹²³⁴⁵⁶⁷⁸⁹]?)([⁺⁻])")


def split_charge(token: str) -> tuple[str, str, str] | None:
    """An ion's body, charge digits and sign (``SO4²⁻`` -> ``SO4``, ``2``, ``minus``;
    ``Na⁺`` -> ``Na``, ``""``, ``plus``), or ``None`` without a superscript charge. ASCII
    ``Na+`` is left alone: it is as often "Na plus" something."""
    m = _CHARGE.fullmatch(token)
    if m is None:
        return None
    body, digits, sign = m.groups()
    if digits == "¹":
        return None
    return body, digits.translate(_SUPERSCRIPT_DIGITS), "plus" if sign == "⁺" else "minus"


def parse(token: str, *, equation: bool = False, ion: bool = False) -> list[Part] | None:
    """The parts of ``token`` if the whole of it is a chemical formula by the rules of this
    module, else ``None``. Parentheses are not parts: ``Ca(OH)2`` -> Ca O H 2. With
    ``equation`` (the token stands next to a sign of :data:`EQUATION_SIGNS`), one symbol with
    a count or of two letters is a formula too (``O2``, ``Cl2``, ``Mg``). With ``ion`` (a
    superscript charge follows), one symbol is a formula (``H⁺``, ``Fe³⁺``)."""
    if not token or not _TOKEN.fullmatch(token) or token in NOT_FORMULAS:
        return None
    pieces = _PART.findall(token)
    if "".join(pieces) != token:
        return None  # a lower-case letter that belongs to no symbol (PoE, iOS, SoC)
    parts: list[Part] = []
    depth = 0
    counts_at = 0
    prev = ""
    for p in pieces:
        if p == "(":
            if depth or prev == "(":
                return None  # one level of parentheses is all formulas in prose use
            depth = 1
        elif p == ")":
            if not depth or prev == "(":
                return None
            depth = 0
        elif p[0].isdigit():
            if prev in ("", "(") or prev[0].isdigit():
                return None
            if p == "1" or p[0] == "0" or len(p) > 2:
                return None
            parts.append(Part("count", p))
            counts_at += 1
        else:
            if p not in ELEMENTS:
                return None
            parts.append(Part("symbol", p))
        prev = p
    if depth:
        return None
    if ")" in pieces and not all(
        k + 1 < len(pieces) and pieces[k + 1][0].isdigit() for k, p in enumerate(pieces) if p == ")"
    ):
        return None  # a group without a count after it: (OH) is no formula
    symbols = [p for p in parts if p.kind == "symbol"]
    counts = [p for p in parts if p.kind == "count"]
    if len(symbols) == 1 and ion:
        pass  # Na⁺, Fe³⁺, Cl⁻
    elif len(symbols) < 2 and not (
        equation
        and len(symbols) == 1
        and (
            (len(counts) == 1 and len(counts[0].text) == 1)
            or (not counts and len(token) == 2 and token not in _WORD_SYMBOLS)
        )
    ):
        return None  # 2Mg+O2: Mg and O2 in an equation
    if not counts and not ion and not any(len(s.text) == 2 for s in symbols):
        return None  # CPU, SOS: capitals without digits are an acronym
    if any(len(c.text) == 2 for c in counts) and counts_at < 2:
        return None  # KN95, SN74: a model number, not a subscript
    if (
        len(token) == 3
        and token[1] == "2"
        and token[0].isupper()
        and token[2].isupper()
        and not (token[0] in "HNK" and token[2] in "OS")
    ):
        return None  # B2B, O2O, P2P: "B to B"
    return parts


def spelled(symbol: str) -> str:
    """An element symbol as its letters in capitals (``Na`` -> ``N A``)."""
    return " ".join(symbol.upper())


#: Ions a text names by formula and charge (``Na+``, ``Cl⁻``, ``Fe3+``, ``SO4²⁻``): the
#: body -> the charges it takes (signed). Only these are recognised with an ASCII sign,
#: since ``C+``, ``A-`` or ``K+`` alone are grades and names as often; the superscript
#: form is recognised for any body that parses as a formula (:func:`split_charge`).
ION_CHARGES: dict[str, tuple[int, ...]] = {
    "H": (1, -1), "Li": (1,), "Na": (1,), "K": (1,), "Rb": (1,), "Cs": (1,), "Ag": (1,),
    "Cu": (1, 2), "Be": (2,), "Mg": (2,), "Ca": (2,), "Sr": (2,), "Ba": (2,), "Zn": (2,),
    "Cd": (2,), "Hg": (2,), "Al": (3,), "Fe": (2, 3), "Co": (2, 3), "Ni": (2,), "Mn": (2,),
    "Cr": (3,), "Pb": (2,), "Sn": (2, 4), "Au": (1, 3), "Pt": (2,),
    "F": (-1,), "Cl": (-1,), "Br": (-1,), "I": (-1,), "O": (-2,), "S": (-2,), "N": (-3,),
    "OH": (-1,), "NH4": (1,), "H3O": (1,), "SO4": (-2,), "SO3": (-2,), "HSO4": (-1,),
    "HSO3": (-1,), "NO3": (-1,), "NO2": (-1,), "CO3": (-2,), "HCO3": (-1,), "PO4": (-3,),
    "HPO4": (-2,), "H2PO4": (-1,), "ClO": (-1,), "ClO3": (-1,), "ClO4": (-1,), "MnO4": (-1, -2),
    "SiO3": (-2,), "Cr2O7": (-2,), "CrO4": (-2,), "AlO2": (-1,), "S2O3": (-2,), "SCN": (-1,),
    "CN": (-1,), "C2O4": (-2,), "CH3COO": (-1,),
}  # fmt: skip

#: Words of a sentence about chemistry: with one of them near, a one-letter ion with an
#: ASCII sign (``H+``, ``K+``, ``I-``) is an ion too.
ION_CUES = (
    "离子", "溶液", "电解", "浓度", "化学", "反应", "电荷", "价", "酸", "碱", "盐", "沉淀",
    "水解", "氧化", "还原", "电离", "中和", "pH", "ion", "solution",
)  # fmt: skip
#: Another ion of two letters or more in the sentence is a cue too (``H+与OH-结合生成水``).
_RE_OTHER_ION = re.compile(r"(?:OH|Na|Cl|Ca|Mg|Fe|Cu|Ag|Zn|Al|Ba|SO4|NO3|NH4|CO3)[1-4]?[+\-⁺⁻]")

_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_ASCII_ION = re.compile(r"([A-Z][A-Za-z0-9()]*)([+-])")


@dataclass(frozen=True)
class Ion:
    """An ion written in text: its ``body`` (``SO4``) and signed ``charge`` (-2)."""

    body: str
    charge: int


def ion(token: str, context: str = "") -> Ion | None:
    """The ion that ``token`` writes, or ``None``: a superscript charge after any formula
    (``Na⁺``, ``SO4²⁻``, ``Fe³⁺``), or an ASCII charge (``Na+``, ``Cl-``, ``Fe3+``, ``SO42-``,
    ``NH4+``) after a body of :data:`ION_CHARGES` with a charge it takes. A one-letter body
    with an ASCII sign needs a word of :data:`ION_CUES` in ``context`` (``K+`` alone is as
    often a grade or a name)."""
    token = token.translate(_SUBSCRIPT_DIGITS)  # CO₃²⁻, H₃O⁺: subscripts are the counts
    sup = split_charge(token)
    if sup is not None:
        body, digits, sign = sup
        if parse(body, ion=True) is None:
            return None
        return Ion(body, (int(digits) if digits else 1) * (1 if sign == "plus" else -1))
    m = _ASCII_ION.fullmatch(token)
    if m is None:
        return None
    head, polarity = m.group(1), (1 if m.group(2) == "+" else -1)
    # Fe3+, SO42-: a last digit is the charge when the body before it takes that charge;
    # NH4+, NO3-: else it is the body's own (with the charge 1 or the body's only charge)
    found: Ion | None = None
    if head[-1] in "1234" and polarity * int(head[-1]) in ION_CHARGES.get(head[:-1], ()):
        found = Ion(head[:-1], polarity * int(head[-1]))
    elif head in ION_CHARGES:
        charges = ION_CHARGES[head]
        if polarity in charges:
            found = Ion(head, polarity)
        elif len(charges) == 1 and charges[0] * polarity > 0:
            found = Ion(head, charges[0])  # SO4-, Ca+: the polarity alone names the ion
    if found is None:
        return None
    body = found.body
    if (
        len(body) == 1
        and not any(c in context for c in ION_CUES)
        and not _RE_OTHER_ION.search(context)
    ):
        return None
    return found
