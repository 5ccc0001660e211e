"""Reading Arabic numbers aloud in Mandarin.

Pure string functions, no regexes: the normalizer (:mod:`.normalize`) decides *which* reading a
number gets (cardinal, digits, year, phone ...) and calls one of these.

Conventions (see ``CONVENTIONS.md``):

* Sections of four digits (个/万/亿/万亿); ``零`` once for any run of zeros inside a number;
  a leading ``1`` before ``十`` is dropped only at the very start (``10`` -> 十,
  ``110000`` -> 十一万, ``50010`` -> 五万零一十); a 万/亿 section worth 10-19 after 零 drops
  it too (``10000100000`` -> 一百亿零十万, as NeMo).
* ``两`` replaces ``二`` for a ``2`` in the 千 position and for a bare ``2`` section before
  万/亿 (``2000`` -> 两千, ``20000`` -> 两万, ``12000`` -> 一万两千). A 2 in the 百 place says
  二 (``200`` -> 二百, ``1200`` -> 一千二百: the 现代汉语词典 entry for 两, "在多位数中，百、十、
  个位用'二'", NeMo's readings and our held-out writers). The colloquial 两百 for a 2 that
  *leads* a count (``200`` -> 两百, ``250`` -> 两百五十, ``200万`` -> 两百万) is the user's
  choice: :func:`number_style` (``[frontend.zh] liang_bai = true``); callers pass
  ``liang_bai=False`` where a number is an ordinal, a name or a fraction, which keep 二百 in
  either style (第二百, H二百, 百分之二百). A bare ``2`` is 二 unless the caller asks for 两
  (``2个`` -> 两个).
* More than 16 integer digits are read digit by digit: the largest unit is 万亿.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

DIGITS = "零一二三四五六七八九"
PHONE_DIGITS = "零幺二三四五六七八九"
_SECTION_UNITS = ["", "万", "亿", "万亿"]
#: Integers longer than this are read digit by digit (no unit above 万亿).
MAX_CARDINAL_DIGITS = 16

#: Whether a 2 leading a count before 百 says 两 (see :func:`number_style`). A context
#: variable, so that routers with different options may share a thread or run in parallel.
_LIANG_BAI: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "mixvox_zh_liang_bai", default=False
)


@contextlib.contextmanager
def number_style(*, liang_bai: bool) -> Iterator[None]:
    """Within the block, a count that starts with 2 before 百 says 两 (``liang_bai=True``:
    两百, 两百五十, the colloquial form) or 二 (the default: 二百, the dictionary's form)."""
    token = _LIANG_BAI.set(liang_bai)
    try:
        yield
    finally:
        _LIANG_BAI.reset(token)


def read_digits(digits: str, *, yao: bool = False) -> str:
    """Read a digit string one digit at a time (``2024`` -> 二零二四; ``yao`` reads 1 as 幺).

    Non-digit characters are skipped; the caller only passes ASCII digits.
    """
    table = PHONE_DIGITS if yao else DIGITS
    return "".join(table[ord(c) - 48] for c in digits if "0" <= c <= "9")


def _read_section(sec: str, *, leading: bool, liang_bai: bool) -> str:
    """Read one section of at most four digits (no leading zeros handling beyond 零 runs).

    ``leading`` is true for the most significant section of the whole number (it may drop the
    ``一`` of ``一十``); ``liang_bai`` allows ``两百`` when the 百 digit leads the number and
    the style in force (:func:`number_style`) asks for it.
    """
    liang_bai = liang_bai and _LIANG_BAI.get()
    sec = sec.rjust(4, "0")
    units = ["千", "百", "十", ""]
    out: list[str] = []
    zero_pending = False
    started = False
    for i, c in enumerate(sec):
        d = ord(c) - 48
        if d == 0:
            if started:
                zero_pending = True
            continue
        if zero_pending:
            out.append("零")
            zero_pending = False
        unit = units[i]
        if d == 2 and unit == "千":
            out.append("两")
        elif d == 2 and unit == "百" and not started and leading and liang_bai:
            out.append("两")
        elif d == 1 and unit == "十" and not started and leading:
            pass  # 十, 十五, 十万
        else:
            out.append(DIGITS[d])
        out.append(unit)
        started = True
    return "".join(out)


def read_cardinal(digits: str, *, liang: bool = False, liang_bai: bool = True) -> str:
    """Read a non-negative integer given as ASCII digits (``"1024"`` -> 一千零二十四).

    ``liang`` reads a bare ``2`` (the whole number) as 两 (for ``2个`` -> 两个); ``liang_bai``
    marks a count whose leading 2 before 百 may say 两 when :func:`number_style` asks for it
    (``False``: always 二百, for ordinals, names, fractions). Leading zeros
    are ignored (``007`` -> 七). More than :data:`MAX_CARDINAL_DIGITS` digits fall back to
    :func:`read_digits` so that any input is read in linear time.
    """
    digits = digits.lstrip("0")
    if not digits:
        return "零"
    if len(digits) > MAX_CARDINAL_DIGITS:
        return read_digits(digits)
    if digits == "2":
        return "两" if liang else "二"
    sections: list[str] = []
    n = len(digits)
    first = n % 4 or 4
    sections.append(digits[:first])
    for i in range(first, n, 4):
        sections.append(digits[i : i + 4])
    out: list[str] = []
    zero_pending = False
    count = len(sections)
    for idx, sec in enumerate(sections):
        unit = _SECTION_UNITS[count - 1 - idx]
        if int(sec) == 0:
            zero_pending = True
            continue
        leading = idx == 0
        if not leading and (zero_pending or sec[0] == "0"):
            out.append("零")
        zero_pending = False
        if sec.lstrip("0") == "2" and unit and (leading or liang):
            text = "两"
        else:
            # a 万/亿 section worth 10-19 after 零 starts afresh: 一百亿零十万 (the last
            # section keeps its 一: 五万零一十)
            fresh = bool(unit) and 10 <= int(sec) <= 19
            text = _read_section(sec, leading=leading or fresh, liang_bai=liang_bai)
        out.append(text + unit)
    return "".join(out)


def read_decimal(
    int_part: str, frac_part: str, *, liang: bool = False, liang_bai: bool = True
) -> str:
    """``3.14`` -> 三点一四 (the fraction is read digit by digit, trailing zeros kept)."""
    whole = read_cardinal(int_part or "0", liang=False, liang_bai=liang_bai)
    if not frac_part:
        return whole
    return whole + "点" + read_digits(frac_part)


def read_number(text: str, *, liang: bool = False, liang_bai: bool = True) -> str:
    """Read ``123``, ``1,234``, ``3.5`` (no sign): a convenience used by several rules."""
    text = text.replace(",", "")
    if "." in text:
        ip, _, fp = text.partition(".")
        return read_decimal(ip, fp, liang_bai=liang_bai)
    return read_cardinal(text, liang=liang, liang_bai=liang_bai)
