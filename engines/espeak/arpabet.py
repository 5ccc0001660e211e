"""ARPAbet -> espeak-ng phoneme mnemonics, so pronunciation overrides are spoken exactly.

espeak reads ``[[...]]`` in its input as its own phoneme mnemonics (when synthesis is asked to
allow phoneme input). An English override (``[nginx](/EH1 N JH AH0 N EH1 K S/)``, a lexicon
``/.../`` entry, a plugin :class:`~mixvox.LexEntry` with phonemes) is turned into those
mnemonics for the ``en-us`` voice, so what is heard is the override, not espeak's guess from
the spelling. The table follows espeak's own transcriptions of the English lexical sets
(``father`` f'A:D3, ``strut`` str'Vt, ``nurse`` n'3:s ...): stressed and unstressed ``AH``
differ (``V``/``@``), as do ``ER`` (``3:``/``3``) and ``IY`` (``i:``/``i``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["VOWELS", "CONSONANTS", "to_espeak"]

#: ARPAbet vowel -> (stressed mnemonic, unstressed mnemonic).
VOWELS: dict[str, tuple[str, str]] = {
    "AA": ("A:", "A:"),
    "AE": ("a", "a"),
    "AH": ("V", "@"),
    "AO": ("O:", "O:"),
    "AW": ("aU", "aU"),
    "AY": ("aI", "aI"),
    "EH": ("E", "E"),
    "ER": ("3:", "3"),
    "EY": ("eI", "eI"),
    "IH": ("I", "I"),
    "IY": ("i:", "i"),
    "OW": ("oU", "oU"),
    "OY": ("OI", "OI"),
    "UH": ("U", "U"),
    "UW": ("u:", "u:"),
}
CONSONANTS: dict[str, str] = {
    "B": "b", "CH": "tS", "D": "d", "DH": "D", "F": "f", "G": "g", "HH": "h", "JH": "dZ",
    "K": "k", "L": "l", "M": "m", "N": "n", "NG": "N", "P": "p", "R": "r", "S": "s",
    "SH": "S", "T": "t", "TH": "T", "V": "v", "W": "w", "Y": "j", "Z": "z", "ZH": "Z",
}  # fmt: skip


def to_espeak(phones: Sequence[str]) -> str | None:
    """``["EH1", "N", "JH", "AH0", "N"]`` -> ``"'EndZ@n"``; ``None`` if a phone is not ARPAbet.

    Primary stress is written ``'`` and secondary ``,`` right before the vowel, as espeak
    itself writes them.
    """
    out: list[str] = []
    for ph in phones:
        p = ph.strip().upper()
        base, stress = (p[:-1], p[-1]) if p[-1:].isdigit() else (p, "")
        if base in VOWELS:
            if stress not in ("0", "1", "2"):
                return None
            loud, soft = VOWELS[base]
            out.append({"1": "'", "2": ","}.get(stress, "") + (soft if stress == "0" else loud))
        elif base in CONSONANTS and not stress:
            out.append(CONSONANTS[base])
        else:
            return None
    return "".join(out) if out else None
