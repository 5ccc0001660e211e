"""Chemical formulas in English and Chinese sentences (blind batch 9: ``NaCl`` was "nah C L"):
element symbols spelled, subscripts read as numbers in the sentence's language, and the
letter-digit tokens that are no formulas (``B2B``, ``KN95``, ``H100``, ``NaN``) left alone.
Rules: ``mixvox.frontends.chem``; conventions: ``frontends/en/CONVENTIONS.md``."""

from __future__ import annotations

import pytest

import mixvox
from mixvox.frontends import chem
from mixvox.frontends.en.normalize import normalize_en


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("NaCl", ["Na", "Cl"]),
        ("H2SO4", ["H", "2", "S", "O", "4"]),
        ("Ca(OH)2", ["Ca", "O", "H", "2"]),
        ("C12H22O11", ["C", "12", "H", "22", "O", "11"]),
        ("H2O", ["H", "2", "O"]),
    ],
)
def test_formulas_parse(token: str, parts: list[str]) -> None:
    got = chem.parse(token)
    assert got is not None
    assert [p.text for p in got] == parts


@pytest.mark.parametrize(
    "token",
    [
        "B2B", "O2O", "P2P",  # business words: "B to B"
        "KN95", "SN74",  # a two-digit number after two symbols is a model number
        "H100", "H20", "A100", "CPU1",  # one symbol, three digits, a subscript 1
        "CPU", "SOS",  # capitals without digits: an acronym
        "CoV", "HeLa", "PoE", "iOS", "Ca(OH)", "(OH)", "(H2O)", "H2O((",
    ],
)  # fmt: skip
def test_not_formulas(token: str) -> None:
    assert chem.parse(token) is None


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Dissolve NaCl in water.", "Dissolve N A C L in water."),
        ("Add NaOH and HCl.", "Add N A O H and H C L."),
        ("Pour H2SO4 on KMnO4.", "Pour H two S O four on K M N O four."),
        ("Glucose is C6H12O6.", "Glucose is C six H twelve O six."),
        ("SO₂ and CO₂ levels", "S O two and C O two levels"),
        ("Ca(OH)2 is lime.", "C A O H two is lime."),
        ("CaO and MgO", "C A O and M G O"),  # an oxide, although CMUdict has Cao
        # no formulas: left to the word and code rules
        ("NaN values on a GaN charger", "NaN values on a GaN charger"),
        ("a KN95 mask", "a K N ninety five mask"),
    ],
)
def test_formulas_in_english(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def _words(text: str) -> list[tuple[str, str]]:
    r = mixvox.route(text)
    return [(w.lang, w.spoken) for s in r.sentences for sp in s.spans for w in sp.words if w.spoken]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "这道化学题要算NaCl溶液的浓度。",
            [("zh", "这"), ("zh", "道"), ("zh", "化学题"), ("zh", "要"), ("zh", "算"),
             ("en", "N A C L"), ("zh", "溶液"), ("zh", "的"), ("zh", "浓度"), ("zh", "。")],
        ),
        ("H2SO4", [("en", "H"), ("zh", "二"), ("en", "S O"), ("zh", "四")]),
        ("Na2CO3", [("en", "N A"), ("zh", "二"), ("en", "C O"), ("zh", "三")]),
        ("C6H12O6", [("en", "C"), ("zh", "六"), ("en", "H"), ("zh", "十二"), ("en", "O"),
                     ("zh", "六")]),
        ("Ca(OH)2", [("en", "C A"), ("en", "O H"), ("zh", "二")]),
        ("(NH4)2SO4", [("en", "N H"), ("zh", "四"), ("zh", "二"), ("en", "S O"), ("zh", "四")]),
    ],
)  # fmt: skip
def test_formulas_in_chinese(text: str, expected: list[tuple[str, str]]) -> None:
    words = _words("加入" + text) if text.isascii() else _words(text)
    if text.isascii():
        assert words[0][1] == "加入"
        words = words[1:]
    assert words == expected


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("水是H2O。", "水是 H 二 O。"),  # was "H to O": the B2B rule
        ("还有B2B和O2O。", "还有 B to B 和 O to O。"),
    ],
)
def test_formula_or_business_word_in_chinese(text: str, spoken: str) -> None:
    assert mixvox.route(text).spoken == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("2H2 + O2 → 2H2O", "two H two plus O two to two H two O"),
        ("Fe + CuSO4 = FeSO4 + Cu", "F E plus C U S O four equals F E S O four plus C U"),
        ("CuSO4·5H2O", "C U S O four dot five H two O"),
        ("In + Out", "In plus Out"),  # a symbol that is an English word stays the word
        ("a 2B pencil and 4K video", "a two B pencil and four K video"),
    ],
)
def test_equations_coefficients_hydrates_in_english(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("2H2+O2=2H2O。", "二 H 二加 O 二等于二 H 二 O。"),  # was 二 H 二多 … 二 H to O
        ("Fe+CuSO4=FeSO4+Cu。", " F E 加 C U S O 四等于 F E S O 四加 C U。"),
        ("A+B=C。", " A 加 B 等于 C。"),
        ("C+O2→CO2。", " C 加 O 二生成 C O 二。"),  # the arrow was silent
    ],
)
def test_equations_in_chinese(text: str, spoken: str) -> None:
    assert mixvox.route("反应" + text).spoken == "反应" + spoken


@pytest.mark.parametrize(
    ("text", "spoken"),
    [
        ("Na⁺ and Cl⁻ ions", "N A plus and C L minus ions"),  # the charge was lost
        ("SO4²⁻ and Fe³⁺", "S O four two minus and F E three plus"),  # was "so four squared"
        ("H⁺ and OH⁻", "H plus and O H minus"),
    ],
)
def test_ions_in_english(text: str, spoken: str) -> None:
    assert normalize_en(text) == spoken


def test_ion_charges_are_not_split_from_a_non_formula() -> None:
    assert chem.split_charge("Na⁺") == ("Na", "", "plus")
    assert chem.split_charge("SO4²⁻") == ("SO4", "2", "minus")
    assert chem.split_charge("Na+") is None  # ASCII plus: "Na plus" something
    assert chem.parse("Xy", ion=True) is None
