"""English number words: cardinals, ordinals, decimals, years, digit strings.

Every function takes digit *strings* (not ints) so that huge inputs never turn into huge
Python integers or quadratic work: anything longer than :data:`MAX_CARDINAL_DIGITS` digits is
read digit by digit, which is linear in the input length.

Conventions (see ``CONVENTIONS.md``): cardinals say "and" inside their last group, where
NeMo and WeText put it (``123`` -> "one hundred and twenty three", ``1001`` -> "one thousand and
one", but ``123,000`` -> "one hundred twenty three thousand" and ``1,000,012`` -> "one million
twelve"); :func:`number_style` switches to the American reading without it.
Ordinals, years and the digits of codes never take "and". ``zero`` in decimals and digit
strings, ``oh`` inside years and clock minutes (``1905`` -> "nineteen oh five", ``10:05`` ->
"ten oh five").
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
#: Short-scale names for 10**(3*i).
SCALES = (
    "",
    "thousand",
    "million",
    "billion",
    "trillion",
    "quadrillion",
    "quintillion",
    "sextillion",
    "septillion",
    "octillion",
    "nonillion",
    "decillion",
)
#: Longer digit strings are read digit by digit (nobody says "one undecillion ...").
MAX_CARDINAL_DIGITS = 3 * len(SCALES)

#: Whether cardinals say "and" before their last part (see :func:`number_style`). A context
#: variable, so that one thread or task can read US style while others keep the default.
_AND: contextvars.ContextVar[bool] = contextvars.ContextVar("mixvox_en_number_and", default=True)


@contextlib.contextmanager
def number_style(*, and_: bool) -> Iterator[None]:
    """Within the block, cardinals say "and" (``and_=True``, the default: "one hundred and
    twenty three") or not (American: "one hundred twenty three")."""
    token = _AND.set(and_)
    try:
        yield
    finally:
        _AND.reset(token)


def says_and() -> bool:
    """The "and" convention in force (see :func:`number_style`)."""
    return _AND.get()


_ORDINAL_IRREGULAR = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}


def _below_1000(n: int, and_: bool = False) -> list[str]:
    out: list[str] = []
    h, rest = divmod(n, 100)
    if h:
        out += [ONES[h], "hundred"]
        if and_ and rest:
            out.append("and")
    if rest >= 20:
        t, o = divmod(rest, 10)
        out.append(TENS[t])
        if o:
            out.append(ONES[o])
    elif rest or not out:
        out.append(ONES[rest])
    return out


def digits_words(s: str, zero: str = "zero") -> str:
    """Read a digit string one digit at a time (``"004"`` -> "zero zero four")."""
    return " ".join(zero if c == "0" else ONES[int(c)] for c in s if c.isdecimal())


def cardinal(s: str, *, and_: bool | None = None) -> str:
    """Cardinal reading of a string of ASCII digits (commas allowed and ignored).

    Leading zeros are ignored (``"007"`` -> "seven"); callers that want them spoken use
    :func:`digits_words`. Strings longer than :data:`MAX_CARDINAL_DIGITS` are read digit by
    digit. ``and_`` overrides the convention in force (:func:`number_style`): with it the last
    group says "and" after "hundred" (``123``) or, below a hundred, after "thousand"
    (``1001`` -> "one thousand and one"); groups before the last never do (``123,000`` ->
    "one hundred twenty three thousand") and neither do bigger scales (``1,000,012`` -> "one
    million twelve"): where "and" stands is taken from NeMo and WeText, which agree.
    """
    if and_ is None:
        and_ = _AND.get()
    s = s.replace(",", "")
    if not s or not s.isdecimal():
        return digits_words(s)
    stripped = s.lstrip("0")
    if not stripped:
        return "zero"
    if len(stripped) > MAX_CARDINAL_DIGITS:
        return digits_words(s)
    groups: list[int] = []
    while stripped:
        groups.append(int(stripped[-3:]))
        stripped = stripped[:-3]
    words: list[str] = []
    for i in range(len(groups) - 1, -1, -1):
        g = groups[i]
        if g:
            if i == 0 and and_ and g < 100 and len(groups) > 1 and groups[1]:
                words.append("and")  # one thousand and one (not "one million and one")
            words += _below_1000(g, and_=and_ and i == 0)
            if SCALES[i]:
                words.append(SCALES[i])
    return " ".join(words)


def ordinal_of_words(words: str) -> str:
    """Turn the last word of a cardinal into its ordinal ("twenty one" -> "twenty first")."""
    head, _, last = words.rpartition(" ")
    if last in _ORDINAL_IRREGULAR:
        last = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return f"{head} {last}" if head else last


def ordinal(s: str) -> str:
    """Ordinal reading of a digit string (``"22"`` -> "twenty second"); never with "and"
    (``121st`` -> "one hundred twenty first", as both test sets say)."""
    return ordinal_of_words(cardinal(s, and_=False))


def plural_of_words(words: str) -> str:
    """Plural of a number word for decades and "in the 2000s" ("eighty" -> "eighties")."""
    head, _, last = words.rpartition(" ")
    if last.endswith("y"):
        last = last[:-1] + "ies"
    elif last == "six":
        last = "sixes"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def decimal(int_part: str, frac: str) -> str:
    """``("3", "14")`` -> "three point one four"; an empty integer part reads "point five"."""
    head = cardinal(int_part) if int_part else ""
    tail = digits_words(frac)
    if not frac:
        return head or "zero"
    return f"{head} point {tail}" if head else f"point {tail}"


def pair_reading(s: str) -> str:
    """Read a four-digit string in two halves, as years and model numbers are said.

    ``"1998"`` -> "nineteen ninety eight", ``"4070"`` -> "forty seventy",
    ``"1905"`` -> "nineteen oh five", ``"1900"`` -> "nineteen hundred",
    ``"2000"`` -> "two thousand". Other lengths fall back to :func:`cardinal`.
    """
    if len(s) != 4 or not s.isdecimal() or s[0] == "0":
        return cardinal(s)
    hi, lo = int(s[:2]), int(s[2:])
    if s[1:] == "000":
        return cardinal(s)
    if lo == 0:
        return f"{cardinal(s[:2])} hundred"
    if lo < 10:
        return f"{cardinal(s[:2])} oh {ONES[lo]}"
    return f"{cardinal(str(hi))} {cardinal(str(lo))}"


def year(s: str) -> str:
    """Year reading: ``1998`` -> "nineteen ninety eight", ``2005`` -> "two thousand five",
    ``2024`` -> "twenty twenty four", ``1066`` -> "ten sixty six", ``800`` -> "eight hundred".
    """
    if not s.isdecimal():
        return cardinal(s, and_=False)
    n = int(s) if len(s) <= 6 else -1
    if 2000 <= n <= 2009:
        return cardinal(s, and_=False)  # "two thousand five", as both test sets say
    if len(s) == 4 and s[0] != "0":
        return pair_reading(s)
    if len(s) == 3 and s[0] != "0" and s[1:] != "00" and int(s[1:]) >= 10:
        # 3-digit years: "eight seventy six" would be odd; most say "eight hundred seventy six"
        return cardinal(s, and_=False)
    return cardinal(s, and_=False)


def year_plural(s: str) -> str:
    """Decades and centuries: ``1980`` -> "nineteen eighties", ``2000`` -> "two thousands"."""
    return plural_of_words(year(s))


def clock_minutes(mm: str) -> str:
    """Minutes after the hour: ``"05"`` -> "oh five", ``"30"`` -> "thirty"."""
    n = int(mm)
    if n == 0:
        return ""
    if n < 10:
        return f"oh {ONES[n]}"
    return cardinal(mm)


def roman_to_int(s: str) -> int | None:
    """Value of a canonical Roman numeral (``"XIV"`` -> 14), or ``None`` if not canonical.

    Canonical means writing the value back gives the same string, which rejects look-alike
    words such as ``"IIII"`` or ``"VX"``.
    """
    vals = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    if not s or len(s) > 15 or any(c not in vals for c in s):
        return None
    total = 0
    for i, c in enumerate(s):
        v = vals[c]
        if i + 1 < len(s) and vals[s[i + 1]] > v:
            total -= v
        else:
            total += v
    if total <= 0 or total >= 4000 or int_to_roman(total) != s:
        return None
    return total


def int_to_roman(n: int) -> str:
    table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ]
    out = []
    for v, sym in table:
        while n >= v:
            out.append(sym)
            n -= v
    return "".join(out)


_FRACTION_DENOMS = {2: ("half", "halves"), 4: ("quarter", "quarters")}


def fraction(num: str, den: str) -> str:
    """``1/2`` -> "one half", ``3/4`` -> "three quarters", ``2/3`` -> "two thirds",
    ``5/16`` -> "five sixteenths", ``1/1000`` -> "one thousandth"; denominators of five or
    more digits (and 0, 1) read "X over Y". No "and" inside the
    numbers (``2 142/1`` -> "two and one hundred forty two over one", as NeMo says): the
    "and" of a mixed number must stay the only one."""
    n, d = num.lstrip("0") or "0", den.lstrip("0") or "0"
    if len(d) > 4 or d in ("0", "1") or len(n) > 6:
        return f"{cardinal(num, and_=False)} over {cardinal(den, and_=False)}"
    di = int(d)
    one = n == "1"
    if di in _FRACTION_DENOMS:
        sing, plur = _FRACTION_DENOMS[di]
        return f"{cardinal(n, and_=False)} {sing if one else plur}"
    o = ordinal(d)
    return f"{cardinal(n, and_=False)} {o if one else o + 's'}"
