"""Ions written with a charge (``Na+``, ``SO4²⁻``): :func:`mixvox.frontends.chem.ion`."""

from __future__ import annotations

import pytest

from mixvox.frontends import chem
from mixvox.langid import matrix_decision


@pytest.mark.parametrize(
    ("token", "body", "charge"),
    [
        ("Na+", "Na", 1),
        ("Cl-", "Cl", -1),
        ("Fe3+", "Fe", 3),
        ("Fe²⁺", "Fe", 2),
        ("SO42-", "SO4", -2),  # the last digit is the charge
        ("SO4²⁻", "SO4", -2),
        ("NH4+", "NH4", 1),  # the 4 is the body's: NH has no charge 4
        ("NO3-", "NO3", -1),
        ("PO43-", "PO4", -3),
    ],
)
def test_ions(token: str, body: str, charge: int) -> None:
    assert chem.ion(token) == chem.Ion(body, charge)


@pytest.mark.parametrize("token", ["C+", "A-", "B+", "Co-", "Fe4+", "Na-", "NaCl-", "H2O+"])
def test_no_ions(token: str) -> None:
    """Grades, a charge the body never takes, a wrong sign, a compound."""
    assert chem.ion(token, "溶液中的离子") is None


def test_one_letter_ion_needs_chemistry() -> None:
    """``K+`` alone is a grade or a name as often as potassium; near 离子/浓度 it is the ion."""
    assert chem.ion("K+") is None
    assert chem.ion("H+", "溶液的H+浓度") == chem.Ion("H", 1)


def test_capital_function_word_before_number_is_a_label() -> None:
    """``鞋码EUR 38，US 6``: US before a number is a size system, not the word "us"."""
    assert matrix_decision("鞋码EUR 38，US 6")[0] == "zh"


def test_subscript_counts() -> None:
    """``CO₃²⁻``, ``H₃O⁺``: subscript digits are the body's counts."""
    assert chem.ion("CO₃²⁻") == chem.Ion("CO3", -2)
    assert chem.ion("H₃O⁺") == chem.Ion("H3O", 1)


def test_another_ion_is_a_cue() -> None:
    """``H+与OH-结合生成水``: another ion in the sentence makes ``H+`` the ion too."""
    assert chem.ion("H+", "H+与OH-结合生成水") == chem.Ion("H", 1)
