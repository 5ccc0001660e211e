"""Character-level helpers shared by the router and the frontends.

All helpers here keep string length (one output character per input character) so that
offsets computed on the folded text are valid in the user's original text.
"""

from __future__ import annotations

import unicodedata

# Full-width ASCII block U+FF01..U+FF5E maps to U+0021..U+007E; U+3000 is the ideographic space.
_FOLD = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FOLD[0x3000] = 0x20
# A few look-alikes users paste from documents; all single characters.
_FOLD.update(
    {
        0x2018: ord("'"),  # ‘
        0x2019: ord("'"),  # ’
        0x201C: ord('"'),  # “
        0x201D: ord('"'),  # ”
        0x2013: ord("-"),  # – en dash
        0x2014: ord("-"),  # — em dash (single)
        0x2212: ord("-"),  # − minus sign
        0x00A0: ord(" "),  # no-break space
        0x2009: ord(" "),  # thin space
        0x202F: ord(" "),  # narrow no-break space
    }
)


def fold_width(text: str) -> str:
    """Map full-width ASCII, typographic quotes/dashes and odd spaces to plain ASCII, 1:1.

    ``"ＲＴＸ　４０７０"`` -> ``"RTX 4070"``. The result has the same length as the input.
    Chinese punctuation (，。：) is *not* folded: it carries prosody and is handled by the
    zh frontend.
    """
    return text.translate(_FOLD)


def fold_char(ch: str) -> str:
    return chr(_FOLD.get(ord(ch), ord(ch)))


def is_han(ch: str) -> bool:
    """Han ideograph (CJK unified ideographs, extensions, compatibility ideographs, 〇)."""
    o = ord(ch)
    return (
        0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or 0x20000 <= o <= 0x323AF
        or 0xF900 <= o <= 0xFAFF
        or 0x2F800 <= o <= 0x2FA1F
        or o == 0x3007
    )


def is_latin_letter(ch: str) -> bool:
    """ASCII or Latin-script letter (after :func:`fold_width`)."""
    if "a" <= ch <= "z" or "A" <= ch <= "Z":
        return True
    if ord(ch) < 0xC0 or not ch.isalpha():
        return False
    try:
        return unicodedata.name(ch).startswith("LATIN")
    except ValueError:
        return False


def is_emoji(ch: str) -> bool:
    o = ord(ch)
    return (
        0x1F000 <= o <= 0x1FAFF
        or 0x2600 <= o <= 0x27BF
        or 0x1F900 <= o <= 0x1F9FF
        or o in (0x200D, 0xFE0F, 0xFE0E, 0x20E3)
        or 0x1F3FB <= o <= 0x1F3FF
        or 0xE0020 <= o <= 0xE007F
    )


def script_of(ch: str) -> str:
    """Coarse script class of one character.

    Returns one of ``han``, ``latin``, ``digit``, ``space``, ``punct``, ``symbol``, ``emoji``,
    ``kana``, ``hangul``, ``control``, ``other``.
    """
    c = fold_char(ch)
    if is_han(c):
        return "han"
    if c.isspace():
        return "space"
    if "0" <= c <= "9":
        return "digit"
    if is_latin_letter(c):
        return "latin"
    o = ord(c)
    if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "kana"
    if 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
        return "hangul"
    if is_emoji(c):
        return "emoji"
    cat = unicodedata.category(c)
    if cat in ("Cc", "Cf", "Cs", "Co", "Cn"):
        return "control"
    if cat.startswith("P"):
        return "punct"
    if cat.startswith("S"):
        return "symbol"
    if cat == "Nd":  # other decimal digits (Arabic-Indic ...): not read
        return "other"
    if cat.startswith("N"):  # ², ½, Ⅻ
        return "symbol"
    return "other"


def is_control(ch: str) -> bool:
    """A control or format character that no engine should receive (``\t\n\r`` excepted).

    NUL in particular ends a C string: passed on, it silently cuts the rest of the text.
    """
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs")


def control_runs(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every run of control characters in ``text``."""
    runs: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        if is_control(text[i]):
            j = i + 1
            while j < n and is_control(text[j]):
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    return runs


def strip_controls(text: str) -> str:
    """``text`` with control/format characters replaced by spaces (the rest kept whole)."""
    if not any(is_control(ch) for ch in text):
        return text
    return "".join(" " if is_control(ch) else ch for ch in text)


#: Measure units written after a number (lower case): ``22ms``, ``80 GB``, ``3.5GHz``. A
#: word among these after a number is the number's unit, not an English word.
UNITS = frozenset(
    """b kb mb gb tb pb kib mib gib tib bit bits bps kbps mbps gbps hz khz mhz ghz thz ms us ns ps
    s sec secs min mins h hr hrs d m cm mm km nm um g kg mg t l ml w kw mw v mv kv a ma mah wh kwh
    f c k x p fps dpi ppi px pt em rem db dbm mph kph kmh rpm cc lb lbs oz ft in yd mi gal psi
    flops tflops gflops pflops tops qps ops iops cal kcal kj iu mmhg pa kpa mpa hp nit nits lm lux
    inch inches mol mmol bar mbar tsp tbsp""".split()
)
