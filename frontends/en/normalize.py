"""English text normalization: written tokens -> spoken English, with offsets kept.

:func:`tokenize` cuts a span's text into :class:`Tok` pieces, each covering an exact slice of the
input (absolute offsets are added by the frontend) and carrying its spoken form. The text is
first folded with :func:`mixvox.textutil.fold_width` (length-preserving), so offsets on the
folded text are offsets in the user's text.

Design rules:

* One whitespace-separated chunk gives its leading/trailing punctuation as ``punct`` pieces and
  its core as one piece whenever a rule reads the core as a whole (``3:30``, ``$5.99``,
  ``i7-12700K``); only the generic fallback cuts a core further.
* Every regular expression here is anchored and free of nested quantifiers, so matching is
  linear; huge digit strings are read digit by digit (:mod:`.numbers`).
* Nothing is dropped silently: what cannot be read is returned as an ``unread`` piece and the
  frontend reports it with ``ctx.warn``.

The conventions chosen where English has several readings are listed in ``CONVENTIONS.md``.
"""

from __future__ import annotations

import importlib.resources
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from mixvox.frontends import chem
from mixvox.frontends.en import numbers as num
from mixvox.frontends.en.g2p import cmudict
from mixvox.frontends.en.sayable import sayable
from mixvox.phonetics import ARPABET_CONSONANTS, ARPABET_VOWELS
from mixvox.textutil import fold_width, is_emoji, is_latin_letter

# ---------------------------------------------------------------------------------------------
# Data tables
# ---------------------------------------------------------------------------------------------


def _read_tsv(name: str) -> list[list[str]]:
    text = importlib.resources.files(__package__).joinpath("data").joinpath(name).read_text("utf-8")
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rows.append(line.split("\t"))
    return rows


@dataclass(frozen=True)
class Tables:
    acronyms: dict[str, str]
    abbreviations: dict[str, str]
    abbreviations_folded: dict[str, str]
    units: dict[str, tuple[str, str, bool]]  # unit -> (singular, plural, spaced_ok)
    units_folded: dict[str, tuple[str, str, bool]]
    special: dict[str, str]
    special_folded: dict[str, str]
    unit_words: frozenset[str]  # spoken unit names, singular and plural ("millimeters")
    brands: dict[str, str]  # casefolded name -> how the digits after it are read (brands.tsv)


@lru_cache(maxsize=1)
def tables() -> Tables:
    """The data files of ``frontends/en/data``, parsed once."""
    acr = {r[0]: r[1] for r in _read_tsv("acronyms.tsv") if len(r) >= 2}
    abbr = {r[0]: r[1] for r in _read_tsv("abbreviations.tsv") if len(r) >= 2}
    rows = [r for r in _read_tsv("units.tsv") if len(r) >= 4]
    units = {r[0]: (r[1], r[2], r[3].strip() in ("any", "exact")) for r in rows}
    exact = {r[0] for r in rows if r[3].strip() == "exact"}
    special = {r[0]: r[1] for r in _read_tsv("special.tsv") if len(r) >= 2}
    return Tables(
        acronyms=acr,
        abbreviations=abbr,
        abbreviations_folded={k.casefold(): v for k, v in abbr.items() if k.islower()},
        units=units,
        units_folded={k.casefold(): v for k, v in units.items() if v[2] and k not in exact},
        special=special,
        special_folded={k.casefold(): v for k, v in special.items()},
        unit_words=frozenset(w.lower() for r in rows for w in (r[1], r[2]) if " " not in w),
        brands={
            r[0].casefold(): r[1].strip()
            for r in _read_tsv("brands.tsv")
            if len(r) >= 2 and r[1].strip() in BRAND_MODES
        },
    )


#: How the digits after a name of ``data/brands.tsv`` are read (see :func:`_standard_digits`).
BRAND_MODES = ("model", "maker", "standard")

MONTHS = (
    "January February March April May June July August September October November December"
).split()
_MONTH_ABBR = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8,
    "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH_FULL = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}

CURRENCIES = {
    "$": ("dollar", "dollars", "cent", "cents"),
    "US$": ("U S dollar", "U S dollars", "cent", "cents"),
    "HK$": ("Hong Kong dollar", "Hong Kong dollars", "cent", "cents"),
    "NT$": ("New Taiwan dollar", "New Taiwan dollars", "cent", "cents"),
    "NZ$": ("New Zealand dollar", "New Zealand dollars", "cent", "cents"),
    "S$": ("Singapore dollar", "Singapore dollars", "cent", "cents"),
    "A$": ("Australian dollar", "Australian dollars", "cent", "cents"),
    "C$": ("Canadian dollar", "Canadian dollars", "cent", "cents"),
    "R$": ("real", "reais", "centavo", "centavos"),
    "€": ("euro", "euros", "cent", "cents"),
    "£": ("pound", "pounds", "penny", "pence"),
    "¥": ("yen", "yen", "", ""),
    "₩": ("won", "won", "", ""),
    "₹": ("rupee", "rupees", "paisa", "paise"),
    "₽": ("ruble", "rubles", "kopek", "kopeks"),
}
_SCALE_SUFFIX = {
    "k": "thousand", "K": "thousand", "m": "million", "M": "million", "mm": "million",
    "b": "billion", "B": "billion", "bn": "billion", "t": "trillion", "T": "trillion",
}  # fmt: skip
_SCALE_WORDS = {"thousand", "million", "billion", "trillion", "bn"}
#: Scale abbreviations that may follow an amount of money after a space: ``¥30 b``, ``$2 bn``.
_SPACED_SCALE = frozenset(("k", "K", "m", "M", "mm", "b", "B", "bn", "t", "T"))

#: Characters stripped off the front / back of a chunk as punctuation.
_LEAD_PUNCT = set("\"'([{<«¿¡_`「『【《〈（")
#: CJK punctuation too: an English span of a Chinese sentence may end in ``。`` (``2008。``
#: is the year, not the code "twenty oh eight" the generic reader made of it).
_TRAIL_PUNCT = set(".,;:!?\"')]}>»…_`。、，；：！？」』】》〉）")
#: Punctuation that stays a ``punct`` piece with ``spoken`` = the character.
_PUNCT_CHARS = set(".,;:!?\"'()[]{}-…«»‹›、。，：；！？*_`|")

_REGNAL_NAMES = frozenset(
    "Henry Louis Elizabeth George Edward Charles James William Richard John Pope Pius Leo "
    "Benedict Gregory Alexander Peter Catherine Frederick Philip Napoleon Mary Victoria "
    "Ramesses Constantine Ptolemy Otto Gustav Clement Innocent Urban Boniface Paul Francis "
    "Ferdinand Isabella Anne Harold Malcolm David Robert Stephen Ivan Nicholas Mohammed "
    "Ramses Mehmed Suleiman Murad Selim Amenhotep Thutmose Seti Cyrus Darius Xerxes Artaxerxes "
    "Justinian Theodosius Basil Wilhelm Rudolf Sigismund Casimir Wladyslaw Sancho Alfonso "
    "Juan Pedro Manuel Afonso Umberto Vittorio Haakon Olaf Harald Christian Carl Gustaf Eric "
    "Magnus Boris Vasily Ludwig Maximilian Leopold Joseph Franz Ernest Augustus Sixtus Julius "
    "Martin Nero Akhenaten Tutankhamun Amenemhat Senusret Hatshepsut Cleopatra Antiochus "
    "Seleucus Philippe Kamehameha Rama Hirohito Akihito Naruhito".split()
)
#: Titles before a ruler's name: ``Pharaoh Seti II``, ``Sultan X IV`` are ordinals after them.
_REGNAL_TITLES = frozenset(
    "King Queen Pope Tsar Czar Emperor Empress Pharaoh Sultan Shah Kaiser Prince Princess "
    "Duke Duchess Saint St. Grand Archduke Count Countess Emir Caliph".split()
)
_SEQUENCE_WORDS = frozenset(
    "war chapter part volume vol act book phase type class stage section episode article "
    "appendix level mark gen season round world schedule title bowl".split()
)

# Anchored, nested-quantifier-free patterns (linear time).
#: Prefixes of a mail's subject before a colon (``Re: Q3 Budget``; "R E" was spelled).
_MAIL_PREFIXES = {"re": "re", "fwd": "forward", "fw": "forward", "aw": "A W"}
#: Modifier and special keys of a key combination, as they are said (``Ctrl`` control).
_KEY_NAMES = {
    "ctrl": "control", "control": "control", "cmd": "command", "command": "command",
    "⌘": "command", "shift": "shift", "⇧": "shift", "alt": "alt", "option": "option",
    "opt": "option", "⌥": "option", "⌃": "control", "win": "windows", "fn": "function",
    "super": "super", "meta": "meta", "del": "delete", "esc": "escape", "ins": "insert",
    "pgup": "page up", "pgdn": "page down", "enter": "enter", "return": "return", "tab": "tab",
    "space": "space", "backspace": "backspace", "home": "home", "end": "end",
}  # fmt: skip
_MODIFIER = r"(?:Ctrl|CTRL|ctrl|Control|Cmd|CMD|cmd|Command|Shift|SHIFT|shift|Alt|ALT|alt|Option|Opt|Win|Fn|Super|Meta|[⌘⇧⌥⌃])"
#: A key combination: modifiers and one key joined by ``+`` (``Ctrl+C``, ``Cmd+Shift+P``).
_RE_KEY_COMBO = re.compile(
    _MODIFIER + r"(?:\+" + _MODIFIER + r")*\+(?:[A-Za-z0-9]|F\d{1,2}|[A-Z][a-z]{1,8}|[⌘⇧⌥⌃])"
)
#: A name of capitals joined by ``&`` (``AT&T``, ``S&P``, ``H&M``, ``R&D``), maybe possessive.
_RE_AMPERSAND_NAME = re.compile(r"([A-Z]{1,4})&([A-Z]{1,4})('s)?")
_RE_INT = re.compile(r"\d+")
_SUBSCRIPT_DIGITS = "₀₁₂₃₄₅₆₇₈₉"
_SUBSCRIPT_TABLE = str.maketrans(_SUBSCRIPT_DIGITS, "0123456789")
#: ``log₂``, ``log₁₀``: a logarithm whose subscript is its base.
_RE_LOG_BASE = re.compile(r"(log|lg)([₀-₉]+)")
#: A programming language of ``special.tsv`` glued to its version: ``C#12``, ``C++20``.
_RE_LANGUAGE_VERSION = re.compile(r"(C\+\+|C#|F#|\.NET)(\d{1,2}(?:\.\d{1,2})?)")
_RE_DIGITS_LETTER = re.compile(r"\d+[A-Za-z]")
_ROUND_PLURALS = {
    "100s": "hundreds",
    "1000s": "thousands",
    "1,000s": "thousands",
    "10,000s": "tens of thousands",
    "100,000s": "hundreds of thousands",
    "1,000,000s": "millions",
}
_RE_QUARTER_SLASH = re.compile(r"Q([1-4])/((?:19|20)\d\d)")
_RE_TO_PRESENT = re.compile(r"((?:1[5-9]|20)\d\d)[-–—](present|now|today|date)", re.I)
_RE_H_TIME = re.compile(r"(\d{1,2})h(\d{2})")
#: Words before a clock time ("at 19h30"); elsewhere ``3h45`` is a duration.
_CLOCK_CUES = frozenset("at from until till by before after around since".split())
_RE_SEASON_EPISODE = re.compile(r"[sS](\d{1,2})[eE](\d{1,3})")
_RE_CVE = re.compile(r"CVE-((?:19|20)\d\d)-(\d{4,7})")
#: IEEE 802 standards with an amendment: 802.11ax -> eight oh two dot eleven A X.
_RE_IEEE_802 = re.compile(r"802\.(\d{1,2})([a-zA-Z]{1,3})?")
#: After a standards name: ISO 9001:2015 (its edition), IEC 60601-1 (its part).
_RE_STANDARD_EDITION = re.compile(r"(\d{2,5}):((?:19|20)\d\d)")
_RE_STANDARD_PART = re.compile(r"(\d{3,5})-(\d{1,2})")
_RE_NUMBER = re.compile(r"([-+]?)(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d+))?")
_RE_TIME = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2}))?([ap]\.?m\.?)?", re.I)
#: Durations written with h / m / s: ``3h``, ``1h30m``, ``2m30s`` (a lone ``45m`` is meters
#: unless hours come before it).
_RE_DURATION = re.compile(r"(?:(\d{1,4})h)?(?:(\d{1,4})m(?!s))?(?:(\d{1,4})s)?")
_RE_DURATION_H = re.compile(r"\d{1,4}h")
_DURATION_NAMES = (("hour", "hours"), ("minute", "minutes"), ("second", "seconds"))
_RE_FEET_INCHES = re.compile(r"(\d{1,2})'(?:(\d{1,2})\"?)?")
_RE_TIME_ZONED = re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})")
_RE_WORD_RATE = re.compile(r"([A-Za-z]{2,20})/([A-Za-z]{1,5})")
_RE_COMMA_DECIMAL = re.compile(r"\d{1,3},\d{2}")
_RE_RATING = re.compile(r"(\d{1,3}\.\d{1,2})/(\d{1,3})")
_RE_ISO_DATETIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?"
)
#: Time-zone abbreviations, spelled after a time (``12:30 a.m. est`` -> A M E S T).
_TIME_ZONES = frozenset(
    "est edt cst cdt mst mdt pst pdt akst akdt hst utc gmt bst cet cest eet eest ist jst kst "
    "aest aedt sgt hkt".split()
)
_RE_AMPM_ZONE = re.compile(r"([ap]\.?m\.?)(" + "|".join(sorted(_TIME_ZONES)) + r")", re.I)
#: A ratio: the part after the colon is not two digits, so it cannot be clock minutes.
_RE_RATIO = re.compile(r"(\d{1,6}):(\d|\d{3,6}|\d{1,3}(?:,\d{3})+)")
_RE_TIME_DOT = re.compile(r"(\d{1,2})\.(\d{2})([ap]\.?m\.?)", re.I)
_RE_HOUR_AMPM = re.compile(r"(\d{1,2})([ap]\.?m\.?)", re.I)
_RE_ISO_DATE = re.compile(r"(\d{4})([-.])(\d{1,2})\2(\d{1,2})")
_RE_YMD_SLASH = re.compile(r"(\d{4})(/)(\d{1,2})/(\d{1,2})")
_RE_DMY = re.compile(r"(\d{1,2})([/.\-])(\d{1,2})\2(\d{4}|\d{2})")
_RE_ORDINAL = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)", re.I)
_RE_DECADE = re.compile(r"(\d{3}0)s|'(\d0)s")
_RE_DECADE2 = re.compile(r"([2-9]0)s")
#: A version with a pre-release tag (semver): 1.0.0-beta.2, v2.1-rc1, 3.0.0-alpha.
_RE_PRERELEASE = re.compile(
    r"([vV]?\d+(?:\.\d+)+)-(alpha|beta|rc|pre|preview|dev|nightly|snapshot)(?:\.?(\d{1,4}))?",
    re.I,
)
#: A version with a wildcard part: 3.x, v18.x, 1.2.x.
_RE_VERSION_X = re.compile(r"[vV]?\d+(?:\.\d+)*\.[xX]")
_RE_VERSION = re.compile(r"[vV](\d+(?:\.\d+)*)(?:\.x)?")
_RE_DOTTED = re.compile(r"\d+(?:\.\d+){2,}")
_RE_DOTTED_ANY = re.compile(r"\d+(?:\.\d+)+")
_RE_FRACTION = re.compile(r"(\d+)[/⁄](\d+)")  # also U+2044 FRACTION SLASH
_RE_FRACTION_ORD = re.compile(r"(\d+)[/⁄](\d+)(?:st|nd|rd|th)(s?)", re.I)
_RE_DIGIT_GROUPS = re.compile(r"\+?\d{1,4}(?:[-.]\d{1,4}){2,5}")
_RE_PHONE = re.compile(r"(?:\+?1[-.])?(?:\(\d{3}\)|\d{3})[-.]\d{3}[-.]\d{4}|\d{3}-\d{4}")
_RE_DECIMAL_RANGE = re.compile(r"\d{1,6}\.\d{1,6}-\d{1,6}(?:\.\d{1,6})?|\d{1,6}-\d{1,6}\.\d{1,6}")
_RE_SCORE_RANGE = re.compile(
    r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)-(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
)
#: A phone number with a parenthesised area code, searched in the whole span because it spans
#: several chunks: ``+1 (123) 456-7890``, ``(555)555-5555``.
_RE_PAREN_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3} ?|1[ .-]?)?\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}(?![\w])"
    # international numbers written with spaces: +44 20 7946 0958, +86 138 0013 8000
    r"|(?<![\w+])\+\d{1,3}(?: \d{1,6}){2,5}(?![\w.,]\d)"
    # with the trunk zero in brackets: +44 (0)20 7946 0958
    r"|(?<![\w+])\+\d{1,3} \(0\) ?\d{1,5}(?: \d{1,6}){1,4}(?![\w.,]\d)"
)
#: Toll-free vanity numbers: ``1-800-GO-U-HAUL``, ``1-888-FLOWERS``.
_RE_VANITY = re.compile(r"(?:1-)?8\d\d-[A-Z0-9]{1,10}(?:-[A-Z0-9]{1,10}){0,4}")
#: Codes read character by character after a cue word: ``ab9453``, ``834921``, ``X7-55A``.
_RE_CODE = re.compile(r"[A-Za-z0-9]{1,32}(?:-[A-Za-z0-9]{1,32}){0,4}")
#: Ranges of two dimensions, ``2x8``, which a spaced unit may follow (``2x8 m2``).
#: Two-character comparison operators, read as words wherever they stand.
_MATH_PAIRS = {
    "<=": "is less than or equal to", ">=": "is greater than or equal to",
    "!=": "is not equal to", "==": "equals", "=>": "implies", "->": "to",
    "<>": "is not equal to", "&&": "and", "||": "or", "<-": "gets", "~=": "tilde equals",
}  # fmt: skip
_WEEKDAYS = {
    "mon": "Monday", "tue": "Tuesday", "tues": "Tuesday", "wed": "Wednesday",
    "thu": "Thursday", "thur": "Thursday", "thurs": "Thursday", "fri": "Friday",
    "sat": "Saturday", "sun": "Sunday",
}  # fmt: skip
_CURRENCY_CODES = frozenset("USD EUR GBP JPY CNY RMB INR CHF CAD AUD".split())
_CODE_SYMBOL = {"USD": "US$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹"}
#: Words before "20s" that make it a decade or an age, not twenty seconds.
_DECADE_CUES = frozenset("the early late mid mid- his her their my our your its roaring".split())
#: Words before a 3-4 digit number that names something (read in pairs: room one oh one).
_NOMINAL_CUES = frozenset(
    "room rm flight gate platform route highway hwy interstate bus suite apt apartment "
    "channel track pier port extension ext ext.".split()
)
#: Words before an HTTP-style status code, read as people say them ("four oh four").
_STATUS_CUES = frozenset("http https status error code".split())
#: Words after which ``5/1`` is a date (month/day), not a fraction.
_DATE_CUES = frozenset(
    "on by until till til from since before after due dated born through thru".split()
)
#: Two-letter day abbreviations of calendars that are no English words; read as days only
#: before a number (a date or a time).
_WEEKDAY_2 = {"Tu": "Tuesday", "Th": "Thursday", "Fr": "Friday", "Sa": "Saturday"}
_RE_DAY_RANGE = re.compile(
    r"(mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?(?:[-–~](mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?)?",
    re.I,
)
#: Command-line options: ``--help``, ``--dry-run``, ``-v``, ``-la`` (a leading dash before
#: letters; ``-5`` is a number).
_RE_CLI_OPT = re.compile(
    r"--?[A-Za-z][A-Za-z0-9]{0,30}(?:-[A-Za-z0-9]{1,30}){0,4}(?:=[A-Za-z0-9_.:/-]{1,64})?"
)
#: ``__init__``, ``__main__.py``, ``__len__()``: Python's "dunder" names.
_RE_DUNDER = re.compile(r"__([A-Za-z][A-Za-z0-9]{0,30})__((?:\.[A-Za-z0-9]{1,8})+|\(\))?")
_DUNDERS = frozenset(
    "init main name file doc dict class len str repr call new del eq ne lt le gt ge hash bool "
    "iter next enter exit getitem setitem contains add sub mul all slots version path "
    "future builtins import annotations module qualname".split()
)
#: File paths and host:port identifiers, read by parts like URLs.
_RE_PATH = re.compile(
    r"(?:~|\.{1,2})?/[\w.~-]+(?:/[\w.~-]*)*"  # /usr/bin, ~/.bashrc, ./build.sh, ../a
    r"|[A-Za-z]:\\[\w.\\ -]*"  # C:\Users\a.txt
    r"|[A-Za-z_][\w.-]*(?:/[\w.-]+)*/[\w-]+\.[A-Za-z][A-Za-z0-9]{0,7}"  # src/utils/io.py
    r"|\.[A-Za-z][\w-]*(?:/[\w.-]+)+"  # .github/workflows/ci.yml, .vscode/settings.json
    r"|[A-Za-z][\w.-]*:\d{2,5}"  # localhost:8080
    r"|\d{1,3}(?:\.\d{1,3}){3}:\d{2,5}"  # 127.0.0.1:8000
)
#: Verbs after which a comparison sign drops its own "is" ("was < 0.05": was less than).
_COPULA_VERBS = frozenset("is was are were be been being isn't wasn't aren't stays remains".split())
_COMPARE_AFTER_OPERAND = {
    "<": "is less than", ">": "is greater than", "<=": "is less than or equal to",
    ">=": "is greater than or equal to", "≤": "is less than or equal to",
    "≥": "is greater than or equal to",
}  # fmt: skip
#: Signs glued to the front of a number (no left operand), longest first: said as words.
_SIGN_WORDS = (
    ("+/-", "plus or minus"), ("<=", "at most"), (">=", "at least"), ("~", "about"),
    ("～", "about"), ("∼", "about"), ("≈", "approximately"), ("±", "plus or minus"),
    ("≤", "at most"), ("≥", "at least"), ("<", "less than"), (">", "more than"),
)  # fmt: skip
_RE_TILDE_RANGE = re.compile(r"(-?)(\d+(?:\.\d+)?)(%?)[~～](-?\d\S*)")
_RE_SIGNED_RANGE = re.compile(
    r"(-?\d{1,9}(?:\.\d{1,9})?)-(\d{1,9}(?:\.\d{1,9})?)([^\d\s.,-][^\s]{0,8})?"
)
_RE_NEG_RANGE = re.compile(r"(-?\d{1,9}(?:\.\d{1,9})?)-(-\d{1,9}(?:\.\d{1,9})?)")
_RE_SCI = re.compile(r"([-+]?)(\d+(?:\.\d+)?|\.\d+)[eE]([-+−]?)(\d{1,3})")
_RE_DIMENSION = re.compile(r"\d+(?:\.\d+)?[x×]\d+(?:\.\d+)?")
_RE_HALF = re.compile(r"([12])H(\d{2}|\d{4})")
_RE_DECADE_NUM = re.compile(r"1[0-9][0-9]0|20[0-9]0")
_RE_QUARTER = re.compile(r"([1-4])Q(\d{2}|\d{4})")
_RE_INITIALS = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]\.?")
_RE_DOMAIN = re.compile(r"[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.([A-Za-z]{2,})(?:/\S*)?")
_RE_MONTH_RANGE = re.compile(r"([A-Za-z]{3,9})\.?[-–]([A-Za-z]{3,9})\.?")
_RE_MONTH_DAY = re.compile(r"([A-Za-z]{3,9})\.?-(\d{1,2})(?:-(\d{4}))?")
#: Counted things written short before a rate (``100 req/s``, ``50 tok/s``, tqdm's ``it/s``).
_RATE_COUNTS = {
    "req": "requests", "reqs": "requests", "tok": "tokens", "toks": "tokens", "it": "iterations",
    "img": "images", "imgs": "images", "op": "operations", "ops": "operations",
    "msg": "messages", "msgs": "messages", "pkt": "packets", "pkts": "packets",
}  # fmt: skip
_RATE_UNITS = {
    "mo": "month", "month": "month", "yr": "year", "year": "year", "wk": "week", "week": "week",
    "d": "day", "day": "day", "hr": "hour", "h": "hour", "hour": "hour", "min": "minute",
    "s": "second", "sec": "second", "ea": "each",
}  # fmt: skip
_RE_EMAIL = re.compile(r"[A-Za-z0-9._%+\-&]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+(?:/\S*)?")
_RE_URL = re.compile(r"(?:[a-zA-Z][a-zA-Z0-9+.\-]*://|www\.)\S+")
_RE_URL_START = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{0,31}://|www\.", re.I)
#: Digit strings without thousands separators longer than this are IDs: read digit by digit.
MAX_GROUPED_DIGITS = 15
#: A chunk core longer than this (a pasted hash, a 10,000-digit number, a run-on token), or a
#: plain digit run longer than :data:`SLICE_CHARS`, is read in slices of at most
#: :data:`SLICE_CHARS` characters, one word each: no word outgrows a synthesis chunk (chunks
#: never split a word), and time and memory per word stay bounded.
MAX_CORE_CHARS = 64
SLICE_CHARS = 16
#: Street-type abbreviations read as such after a name or a number (``Elm St``, ``1st Ave``).
_STREET = {
    "st": "street", "ave": "avenue", "rd": "road", "blvd": "boulevard", "ct": "court",
    "hwy": "highway", "expy": "expressway", "ln": "lane", "dr": "drive", "pkwy": "parkway",
    "sq": "square",
}  # fmt: skip
_STREET_WORDS = frozenset(
    "street avenue road boulevard drive lane court way highway expressway parkway place "
    "square terrace circle".split()
)
_DIRECTIONS = {
    "N": "North", "S": "South", "E": "East", "W": "West",
    "NE": "Northeast", "NW": "Northwest", "SE": "Southeast", "SW": "Southwest",
}  # fmt: skip
_STATES = {
    "AL": "Alabama", "AK": "Alaska", "AZ": "Arizona", "AR": "Arkansas", "CA": "California",
    "CO": "Colorado", "CT": "Connecticut", "DE": "Delaware", "FL": "Florida", "GA": "Georgia",
    "HI": "Hawaii", "ID": "Idaho", "IL": "Illinois", "IN": "Indiana", "IA": "Iowa",
    "KS": "Kansas", "KY": "Kentucky", "LA": "Louisiana", "ME": "Maine", "MD": "Maryland",
    "MA": "Massachusetts", "MI": "Michigan", "MN": "Minnesota", "MS": "Mississippi",
    "MO": "Missouri", "MT": "Montana", "NE": "Nebraska", "NV": "Nevada",
    "NH": "New Hampshire", "NJ": "New Jersey", "NM": "New Mexico", "NY": "New York",
    "NC": "North Carolina", "ND": "North Dakota", "OH": "Ohio", "OK": "Oklahoma",
    "OR": "Oregon", "PA": "Pennsylvania", "RI": "Rhode Island", "SC": "South Carolina",
    "SD": "South Dakota", "TN": "Tennessee", "TX": "Texas", "UT": "Utah", "VT": "Vermont",
    "VA": "Virginia", "WA": "Washington", "WV": "West Virginia", "WI": "Wisconsin",
    "WY": "Wyoming", "DC": "D C",
}  # fmt: skip
#: State codes that are also common words/acronyms: read as states only before a ZIP code.
_AMBIGUOUS_STATES = frozenset("OK IN OR ME HI OH ID LA MA CO DE SC MS MI".split())
#: Words after which a dotted number is a version: "version 3.10" -> three point ten.
_VERSION_WORDS = frozenset(
    "version ver release build update patch firmware kernel "
    # software whose numbers are versions: "Python 3.12" is three point twelve
    "python node node.js java ruby rust perl php kotlin swift scala julia golang go dart "
    "ios macos ipados watchos android windows ubuntu debian fedora centos rhel linux "
    "cuda pytorch tensorflow numpy pandas django rails react angular vue gcc clang llvm "
    "chrome firefox safari docker kubernetes postgresql postgres mysql redis nginx bash".split()
)
#: Words after which a code or number is read character by character ("PIN 1234").
_ID_CUES = frozenset(
    "id pin otp code passcode password pwd ssn iban imei imsi cvv cvc "
    "passport license licence vin isbn issn sku upc ean asin".split()
)
#: Words that make "X number 123" / "X no. 123" / "X # 123" an identifier ("order number").
_NUMBER_CUES = _ID_CUES | frozenset(
    "order account acct tracking confirmation reference ref invoice ticket card member "
    "membership customer policy case serial booking transaction routing phone mobile cell "
    "fax employee student patient claim reservation receipt".split()
)
_NUMBER_WORDS = frozenset(("number", "no", "no.", "num", "#", "nr"))
_COPULAS = frozenset(("is", "was", "=", "are"))
#: Two-letter English words, said as words inside URLs, paths and identifiers.
_SHORT_WORDS = frozenset(
    "my go to in on up me we do no so of it is at by or an as be he if".split()
)
_TLDS = frozenset(
    "com org net edu gov io ai dev app co uk de fr jp cn ru it es nl info biz me tv us ca au "
    "in ch se no fi dk pl be at cz kr tw hk sg br mx ly gg xyz sh".split()
)


# ---------------------------------------------------------------------------------------------
# Pieces
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Tok:
    """A piece of the span: ``text[start:end]`` (local offsets) read as ``spoken``.

    ``kind`` is ``word``, ``punct`` or ``unread`` (skipped, to be reported by the caller).
    ``override`` marks pieces whose reading came from the lexicon (``lex`` holds the entry).
    ``respelling`` is set when ``spoken`` keeps the word as written (``RAID``, ``Airbnb``) and
    the reading is another text (``raid``, ``Air B N B``): what engines that read text write,
    and what phonemes are looked up for (see :func:`_shown_as_written`).
    """

    start: int
    end: int
    spoken: str
    kind: str = "word"
    override: bool = False
    lex: object | None = None
    reason: str = ""
    respelling: str | None = None


LexGet = Callable[[str], object | None]


def _spelled(words: list[str]) -> bool:
    """Spelled letters (``G P U``), also with a plural or possessive ending (``G P Us``)."""
    return all(len(w) == 1 for w in words[:-1]) and (
        len(words[-1]) == 1 or (len(words[-1]) <= 3 and words[-1][1:] in ("s", "'s"))
    )


def _shown_as_written(src: str, said: str, table: str | None) -> bool:
    """Does a word read ``said`` keep its written form ``src`` in ``Word.spoken``?

    Users write a word said as a word the way it is spelled (``RAID``, ``IKEA``, ``Airbnb``,
    ``ImageNet``, ``maintainer``), so its ``spoken`` shows it so and the reading moves to the
    respelling (what text-reading engines write, and what phonemes are found for): a reading that
    only changes case or cuts the letters into parts (``raid``, ``Air B N B``, ``Image Net``,
    ``main tainer``), and a respelling of the acronym table for a capital or lower-case word said
    as words (``GUI`` gooey, ``JPEG`` jay peg, ``CRISPR`` crisper, ``mypy`` my pie, ``stdin``
    standard in). Spelled letters stay spelled (``GPU`` -> ``G P U``, ``GPUs`` -> ``G P Us``), as
    do readings with spelled letters (``dmesg`` D message, ``WWII``) and camelCase identifiers of
    three words or more (``getUserName``; but ``visionOS``).
    """
    if len(src) < 2 or said == src or not src.isascii() or not src.isalpha():
        return False
    words = said.split()
    if not words or _spelled(words):
        return False
    if "".join(words).casefold() == src.casefold():
        # getUserName (words only) is an identifier read by parts; visionOS, iPadOS are names
        identifier = all(len(w) >= 2 for w in words) and len(words) >= 3
        return not (src[0].islower() and not src.islower() and identifier)
    respelled = src.istitle() and not _subsequence(src.lower(), "".join(words).lower())
    return (
        said == table
        # GUI, SaaS; mypy (my pie); Vite (veet; but Ctrl control, Esc escape are expansions)
        and (sum(c.isupper() for c in src) >= 2 or src.islower() or respelled)
        and len(words) <= 2
        and all(len(w) >= 2 and w.isalpha() for w in words)
    )


def _written_form(src: str, said: str) -> str:
    """How a word shown as written appears: as written, except that in a mixed-case word the
    capitals said as letters are spaced letters, as users write them (``macOS`` said "mac O S"
    -> "mac O S", ``ChatGPT`` -> "Chat G P T", ``NVLink`` -> "N V Link"; ``Airbnb`` said "Air
    B N B" stays "Airbnb": its letters are lower case). Three held-out writers wrote ``<mac O
    S>`` and ``<i O S>``; others ``<AirPods>``, ``<TypeScript>``, ``<Airbnb>``."""
    words = said.split()
    if src.isupper() or src.islower() or "".join(words).casefold() != src.casefold():
        return src
    out = ""
    pos = 0
    prev_spelled = False
    for w in words:
        part = src[pos : pos + len(w)]
        pos += len(w)
        spelled = len(w) == 1 and part.isupper()
        if not spelled and len(part) > 1 and not part[1:].islower():
            return src  # DDoS ("D dos"): no part to show apart
        if out and (spelled or prev_spelled):
            out += " "
        out += part
        prev_spelled = spelled
    return out


def lexicon_form(src: str, respelling: str) -> str:
    """The shown form of a lexicon word that gives a respelling and no spoken form: as written
    (``PyTorch``, ``NeurIPS``), its spelled capitals spaced (``macOS`` "mac O S"; ``iOS`` said
    "eye O S" -> "i O S": the capitals the respelling ends with as letters), spelled letters as
    spelled (``IPv`` "I P V")."""
    words = respelling.split()
    if not src.isascii() or not src.isalpha() or not words:
        return src
    if _spelled(words) and "".join(words).casefold() == src.casefold():
        return respelling  # IPv: I P V
    shown = _written_form(src, respelling)
    if shown != src:
        return shown
    m = re.search(r"[A-Z]{2,}$", src)
    if m and src[: m.start()].islower() and words[-len(m.group()) :] == list(m.group()):
        return f"{src[: m.start()]} {' '.join(m.group())}"  # iOS, watchOS: "i O S"
    return src


def _named_dash(s: str, start: int, i: int) -> bool:
    """The dash at ``s[i]`` joins a name in a setting's value (``LANG=en_US.UTF-8``,
    ``charset=ISO-8859-1``): three or more letters before it, after an ``=``; in an equation
    (``x=a-8``) the dash is a minus."""
    m = re.search(r"[A-Za-z]+$", s[start:i])
    return m is not None and len(m.group()) >= 3 and "=" in s[:i]


def _capital_expansion(src: str, said: str) -> bool:
    """``Dr.`` doctor, ``Inc.`` incorporated, ``St`` street: a capitalised abbreviation (a
    capital, then lower-case letters, maybe a dot) read as lower-case words that start with its
    letter."""
    letters = src.rstrip(".")
    return (
        2 <= len(letters) <= 5
        and letters.isascii()
        and letters.isalpha()
        and letters[0].isupper()
        and letters[1:].islower()
        and said[:1] == letters[0].lower()
        and said.replace(" ", "").isalpha()
        and said.islower()
        and said.casefold() != letters.casefold()
        and letters not in ("No", "Nos")  # No. 7: "number", as in a Chinese sentence (No.1)
        and len(said) > len(letters)
        and _subsequence(letters.lower(), said)  # an expansion (Ltd limited); not Vite "veet"
    )


def _subsequence(short: str, long: str) -> bool:
    """Are the letters of ``short`` in ``long`` in order (``ltd`` in ``limited``)?"""
    it = iter(long)
    return all(c in it for c in short)


_RE_LETTER_RUN = re.compile(r"[A-Za-z]{2,}")


def _shown_runs(
    src: str, said: str, acronyms: Mapping[str, str], lex: Callable[[str], str | None]
) -> str | None:
    """The shown form of a piece read by parts (a URL, a path, an address: ``localhost:3000``
    said "local host colon three thousand", ``~/Downloads`` said "tilde slash downloads"): each
    run of letters of ``src`` that the reading cuts into parts, or a capitalised word it writes
    in lower case, is shown as written when :func:`_shown_as_written` would show it so on
    its own ("localhost colon three thousand", "tilde slash Downloads"); ``None`` when nothing
    changes."""
    runs = _RE_LETTER_RUN.findall(src)
    if not runs or not src.isascii():
        return None
    words = said.split()
    out: list[str] = []
    i = p = 0
    while i < len(words):
        hit = None
        for q in range(p, min(p + 3, len(runs))):
            r = runs[q].casefold()
            lexical = lex(runs[q])
            if lexical and words[i : i + len(lexical.split())] == lexical.split():
                hit = (q, i + len(lexical.split()))  # nginx said "engine x"
                break
            acc = ""
            for j in range(i, min(i + 8, len(words))):
                acc += words[j].casefold()
                if acc == r:
                    hit = (q, j + 1)
                    break
                if not r.startswith(acc):
                    break
            if hit:
                break
        if hit is None:
            out.append(words[i])
            i += 1
            continue
        q, j = hit
        part = " ".join(words[i:j])
        # a word in another case only when it is capitalised (~/Downloads, Node.js); capitals
        # read as words stay the words (CUDA_VISIBLE_DEVICES: "cooda visible devices")
        case_only = j - i == 1 and not runs[q].istitle()
        as_written = (
            not case_only and _shown_as_written(runs[q], part, acronyms.get(runs[q]))
        ) or (
            lex(runs[q]) == part  # /etc/nginx: the lexicon word as written, said "engine x"
        )
        out.append(_written_form(runs[q], part) if as_written else part)
        i, p = j, q + 1
    text = " ".join(out)
    return text if text != said else None


def _is_punct_char(c: str) -> bool:
    return c in _PUNCT_CHARS or unicodedata.category(c).startswith("P")


#: Invisible characters that join or hyphenate inside a word (soft hyphen, ZWNJ, ZWJ, word
#: joiner, invisible operators, a BOM inside text): the word is read without them.
_JOINERS = frozenset("\u00ad\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")
#: Punctuation that marks up text rather than phrasing it (markdown ``_x_``, ```x```, a
#: snake_case underscore cut off by the generic reader): silent, never left in ``spoken``.
_SILENT_PUNCT = frozenset("_`")


def _punct_spoken(c: str) -> str:
    return "" if c in _SILENT_PUNCT else c


def letters_spoken(s: str) -> str:
    """``"gpu"`` -> ``"G P U"`` (spelled acronym, capital letters as the engine should say)."""
    return " ".join(c.upper() for c in s if c.isalpha())


#: A number with one decimal point and nothing else (``0.93``).
_RE_PLAIN_DECIMAL = re.compile(r"[0-9]+\.[0-9]+")
#: Three-consonant runs that English words do have (``strap``, ``latch``, ``sixths``): a short
#: address label with one of these may be a word; with any other run it is spelled.
_RE_SAYABLE_CLUSTER = re.compile(
    r"str|scr|spl|spr|squ|thr|chr|shr|sch|nch|tch|ght|ngs|nks|nts|nds|rst|rch|rth|lth|mpt|ndl"
)
_RE_THREE_CONSONANTS = re.compile(r"[^aeiouy]{3}")


def _has_vowel(s: str) -> bool:
    return any(c in "aeiouyAEIOUY" for c in s)


# ---------------------------------------------------------------------------------------------
# The normalizer
# ---------------------------------------------------------------------------------------------


class Normalizer:
    """Reads one span of English text.

    :meth:`tokenize` keeps per-call context (neighbouring chunks, a currency name that moves
    after "billion") on the instance, so use one instance per thread; creating one is cheap
    (the data tables are shared and loaded once).
    """

    def __init__(self, lex_get: LexGet | None = None) -> None:
        self.t = tables()
        self.lex_get = lex_get or (lambda _w: None)
        #: ``(code, start, end)`` of problems inside pieces that are read (a combining mark
        #: on a digit or a symbol), set by :meth:`tokenize`; the frontend warns about them.
        self.issues: list[tuple[str, int, int]] = []
        self._format_chars: list[tuple[str, int, int]] = []
        self._trails: list[str] = []
        self._silent_trail: set[int] = set()
        self._caps_phrase: set[int] = set()
        self._before_prev = ""
        #: A hashtag's ``#`` is not said (set by the frontend when the sentence is Chinese).
        self.silent_hashtag = False
        self._core_texts: list[str] = []
        self._money_prev = ""

    # -- chunking ---------------------------------------------------------------------------

    def tokenize(self, text: str) -> list[Tok]:
        """Cut ``text`` into pieces (local offsets) covering every non-space character."""
        folded = fold_width(text)
        n = len(folded)
        chunks: list[tuple[int, int]] = []
        markup: set[int] = set()  # chunk starts that are markup (<noise/>, [HH AH0 L OW1])
        emoticons: set[int] = set()  # chunk starts that are emoticons (:-), ^_^)
        i = 0
        while i < n:
            if folded[i].isspace():
                i += 1
                continue
            j = i
            mk = _markup_at(folded, i)
            if mk:
                chunks.append((i, mk))
                markup.add(i)
                i = mk
                continue
            emo = _RE_EMOTICON.match(folded, i) if i == 0 or folded[i - 1].isspace() else None
            if emo:  # :) ;-) :D ^_^ standing on their own: a face, not punctuation and letters
                chunks.append((i, emo.end(1)))
                emoticons.add(i)
                i = emo.end(1)
                continue
            # Inside a URL, ``?`` ``,`` ``;`` ``!`` before a letter belong to it (``a?b=1``).
            url = _RE_URL_START.match(folded, i) is not None
            # "--help" is read whole (only at the start of a chunk: "I--test" is two words)
            opt = i + 1 if folded[i] in "([{\"'" else i
            cli = (
                folded[opt : opt + 1] == "-"
                and (i == 0 or folded[i - 1].isspace())
                and _RE_CLI_OPT.match(folded, opt) is not None
            )
            while j < n and not folded[j].isspace():
                if j > i and folded[j] in "<[" and _markup_at(folded, j):
                    break  # go<noise/>home
                if text[j] == "—" and not url:
                    if j == i:
                        j += 1  # "was—how": an em dash stands between words, a pause
                    break
                if (
                    folded[j] == "-"
                    and folded.startswith("--", j)
                    and not url
                    and not (j == opt and cli)
                    and not (folded[j - 1 : j].isdecimal() and folded[j + 2 : j + 3].isdecimal())
                ):
                    if j > i:
                        break  # "Francis I--test": a double dash stands between words
                    while j < n and folded[j] == "-":
                        j += 1
                    break
                j += 1
                if _is_hard_break(folded, j - 1) and not (url and folded[j - 1] in ",;!?"):
                    break
            chunks.append((i, j))
            i = j
        cores: list[tuple[int, int]] = []
        leads: list[list[Tok]] = []
        trails: list[list[Tok]] = []
        for a, b in chunks:
            if a in markup:
                leads.append([])
                cores.append((b, b))
                trails.append([Tok(a, b, folded[a:b], "punct", reason="markup")])
                continue
            if a in emoticons:
                leads.append([])
                cores.append((b, b))
                trails.append([Tok(a, b, "", "unread", reason="emoticon")])
                continue
            self._prev_core = folded[cores[-1][0] : cores[-1][1]] if cores else ""
            lead, (ca, cb), trail = self._split_chunk(folded, a, b)
            leads.append(lead)
            cores.append((ca, cb))
            trails.append(trail)
        self._shouting = self._is_shouting(folded, cores)
        # a core that is a command-line option standing on its own ("ls -la", "--help")
        self._cli_ok = [
            all(c in "([{\"'" for c in folded[a0:ca]) and (a0 == 0 or folded[a0 - 1].isspace())
            for (a0, _), (ca, _) in zip(chunks, cores, strict=True)
        ]
        phones = [
            m.span()
            for m in _RE_PAREN_PHONE.finditer(folded)
            if sum(c.isdecimal() for c in m.group()) >= 8  # "+3 5 6" is no phone number
        ]
        out: list[Tok] = []
        self._format_chars = []
        self._pending_suffix: dict[int, str] = {}
        self._pending_spoken: dict[int, str] = {}
        self._silent_trail = set()  # cores whose trailing dot is part of them (ca. 1900)
        core_texts = [folded[a:b] for a, b in cores]
        self._core_texts = core_texts
        equation = "=" in core_texts or any("^" in c for c in core_texts)
        self._trails = ["".join(folded[t.start : t.end] for t in tr) for tr in trails]
        self._caps_phrase = self._caps_phrases(core_texts, leads)
        for k, (ca, cb) in enumerate(cores):
            out += leads[k]
            if cb > ca:
                if phones and any(pa <= ca and cb <= pb for pa, pb in phones):
                    sign = "plus " if folded[ca] == "+" else ""
                    pieces = [Tok(ca, cb, sign + _phone(folded[ca:cb]))]
                elif k in self._pending_spoken:
                    said = self._pending_spoken[k]
                    pieces = [Tok(ca, cb, said, "word" if said else "punct")]
                elif cb - ca > MAX_CORE_CHARS or (
                    cb - ca > SLICE_CHARS and _is_digits(folded, ca, cb)
                ):
                    pieces = self._read_slices(folded, ca, cb, core_texts, k)
                else:
                    pieces = self._read_core(folded, ca, cb, core_texts, k)
                if k in self._pending_suffix and pieces:
                    last = pieces[-1]
                    last.spoken = f"{last.spoken} {self._pending_suffix[k]}".strip()
                out += pieces
            raw = text[chunks[k][0] : chunks[k][1]]
            dash = (
                _spaced_dash(
                    raw if raw in ("–", "—") else folded[chunks[k][0] : chunks[k][1]],
                    core_texts,
                    k,
                    equation,
                    self._trails,
                )
                if cb == ca
                else None
            )
            if k in self._silent_trail and trails[k][:1]:
                trails[k][0].spoken = ""  # ca. 1900: the abbreviation's dot, no pause
            if dash is not None:
                trails[k] = [Tok(t.start, t.end, dash) for t in trails[k]]
            elif trails[k]:
                self._read_trail(folded, trails[k], core_texts, k, equation)
            out += trails[k]
        for t in out:  # a dash read as a pause keeps its own form (was—how: an em dash)
            if t.kind == "punct" and t.spoken == "-" and text[t.start : t.end] in ("–", "—"):
                t.spoken = text[t.start]
        for t in out:
            if t.kind == "word" and not t.override and t.respelling is None:
                src = folded[t.start : t.end]
                if (
                    t.spoken.endswith("'s")
                    and src.endswith("s")
                    and not src.endswith("'s")
                    and _spelled(t.spoken.split())
                ):  # GPUs: shown "G P Us" as written, said (and respelled) "G P U's"
                    t.respelling, t.spoken = t.spoken, t.spoken[:-2] + "s"
                elif _shown_as_written(src, t.spoken, self.t.acronyms.get(src)):
                    # RAID: shown RAID, said "raid"; macOS shown "mac O S"
                    written = _written_form(src, t.spoken)
                    if written != t.spoken:
                        t.respelling, t.spoken = t.spoken, written
                elif "-" in src and src.replace("-", "").isalpha() and src.isascii():
                    parts = self._shown_parts(src, t.spoken)
                    if parts is not None:  # DeepSeek-V: "DeepSeek V", said "Deep Seek V"
                        t.respelling, t.spoken = t.spoken, parts
                elif _capital_expansion(src, t.spoken) and self._unit(src, spaced=True) is None:
                    # Dr. Smith, Apple Inc., Main St: the word of a capitalised abbreviation is
                    # shown with its capital (said the same)
                    t.respelling, t.spoken = t.spoken, t.spoken[0].upper() + t.spoken[1:]
                else:
                    runs = _shown_runs(src, t.spoken, self.t.acronyms, self._lex_said)
                    if runs is not None:  # localhost:3000, ~/Downloads: the words as written
                        t.respelling, t.spoken = t.spoken, runs
        _curl_quotes(folded, out)
        _close_function_parens(folded, out)
        self.issues = _stray_marks(folded, out) + self._format_chars
        return out

    def _read_trail(
        self, s: str, trail: list[Tok], cores: list[str], k: int, equation: bool
    ) -> None:
        """Trailing punctuation that is read: ``12"`` outside a quotation is inches; in an
        equation a dash between numbers is minus (``1- 2 = 5``, ``3 - 1 = 2``)."""
        first = trail[0]
        c = s[first.start]
        core = cores[k]
        nxt = cores[k + 1] if k + 1 < len(cores) else ""
        if c == '"' and "'" in core and _RE_FEET_INCHES.fullmatch(core):
            first.spoken = ""  # 6'2": the inches are already said
        elif (
            c == '"'
            and core[:1].isdecimal()
            and _RE_NUMBER.fullmatch(core)
            and len(core.partition(".")[0].replace(",", "")) <= 3  # "April 1, 2011": no inches
            and _open_quotes(s, first.start) % 2 == 0
        ):
            before = cores[k - 1].lower() if k > 0 else ""
            adjective = (
                before in _DETERMINERS
                and nxt.isalpha()
                and nxt.lower() not in ("and", "or", "of", "to", "by", "x")
            )
            first.spoken = "inch" if core == "1" or adjective else "inches"  # a 15" laptop
            first.kind = "word"
        elif (
            c == "'"
            and len(trail) == 1
            and core.isdecimal()
            and len(core) <= 2
            and nxt.isdecimal()
            and self._trails[k + 1 : k + 2] == ['"']
        ):  # 5' 10": feet, then inches
            first.spoken, first.kind = ("foot" if core == "1" else "feet"), "word"
        elif (
            c == "-"
            and len(trail) == 1
            and equation
            and (_operand(core) or (not core and _operand(cores[k - 1] if k else "")))
            and _operand(nxt)
        ):
            first.spoken, first.kind = "minus", "word"

    def _read_slices(self, s: str, a: int, b: int, cores: list[str], k: int) -> list[Tok]:
        """An overlong core, slice by slice (see :data:`MAX_CORE_CHARS`); digit-only slices
        are read digit by digit, as the whole run would be (no slice becomes a "year")."""
        out: list[Tok] = []
        for sa, sb in _slices(s, a, b):
            if _is_digits(s, sa, sb):
                out.append(Tok(sa, sb, num.digits_words(s[sa:sb])))
            else:
                out += self._read_core(s, sa, sb, cores, k)
        return out

    def _split_chunk(self, s: str, a: int, b: int) -> tuple[list[Tok], tuple[int, int], list[Tok]]:
        lead: list[Tok] = []
        trail: list[Tok] = []
        ca, cb = a, b
        opt_at = a + 1 if s[a] in "([{\"'" else a
        m = _RE_CLI_OPT.match(s, opt_at, b) if s[opt_at : opt_at + 1] == "-" else None
        if m and (a == 0 or s[a - 1].isspace()):
            # "--dry-run", "-v": a command-line option; the dashes are read ("dash dash")
            if all(s[i] in _TRAIL_PUNCT for i in range(m.end(), b)):
                rest = [Tok(i, i + 1, _punct_spoken(s[i]), "punct") for i in range(m.end(), b)]
                lead = [Tok(a, opt_at, s[a], "punct")] if opt_at > a else []
                return lead, (opt_at, m.end()), rest
        m = _RE_DUNDER.match(s, a, b) if s[a] == "_" else None
        if m and (m.group(2) or m.group(1).lower() in _DUNDERS):
            # __init__: the underscores belong to the name (not markdown emphasis)
            if all(_is_punct_char(s[i]) for i in range(m.end(), b)):
                rest = [Tok(i, i + 1, _punct_spoken(s[i]), "punct") for i in range(m.end(), b)]
                return [], (a, m.end()), rest
        if (
            cb - ca > 1
            and s[ca] == "*"
            and s[ca + 1].isdecimal()
            and (a == 0 or s[a - 1].isspace())
        ):
            lead.append(Tok(ca, ca + 1, "star"))  # dial *67
            ca += 1
        for sign, said in _SIGN_WORDS:
            n = len(sign)
            if (
                cb - ca > n
                and s.startswith(sign, ca)
                and (s[ca + n].isdecimal() or s[ca + n] in "$€£¥.-")
                and s[ca:cb] not in _MATH_PAIRS  # "x <- 5": an assignment arrow, "gets"
            ):
                # "~5 ms", "≈3.2%", "±0.2 mm", "≥5 years", "<5%": a sign before a number is
                # a word of its own, so that the number and its unit are read as usual
                if sign in _COMPARE_AFTER_OPERAND and _operand(getattr(self, "_prev_core", "")):
                    said = _COMPARE_AFTER_OPERAND[sign]  # "x <5": a comparison after all
                lead.append(Tok(ca, ca + n, said))
                ca += n
                break
        while (
            ca < cb
            and not (  # '90s, '00s. (a decade keeps its apostrophe, before punctuation too)
                (dm := _RE_DECADE.match(s, ca, cb))
                and all(c in _TRAIL_PUNCT for c in s[dm.end() : cb])
            )
            and (
                s[ca] in _LEAD_PUNCT
                or (s[ca] == "." and _RE_EMAIL.fullmatch(s, ca + 1, cb) is not None)
                or (
                    s[ca] == "-"
                    and cb - ca > 1
                    and not (s[ca + 1].isdecimal() or s[ca + 1] == "." or s[ca + 1] in CURRENCIES)
                )
            )
            and not self._special_at(s, ca, cb)
        ):
            lead.append(Tok(ca, ca + 1, _punct_spoken(s[ca]), "punct"))
            ca += 1
        while cb > ca:
            c = s[cb - 1]
            if c not in _TRAIL_PUNCT and c != "-":
                break
            core = s[ca:cb]
            if c == "." and self._keeps_final_dot(core):
                break
            if self._special_at(s, ca, cb):
                break
            if c == "'" and core[:-1].lower().endswith("s") and cb - ca > 2 and s[ca].isalpha():
                break  # plural possessive: students'
            trail.append(Tok(cb - 1, cb, _punct_spoken(c), "punct"))
            cb -= 1
        trail.reverse()
        return lead, (ca, cb), trail

    def _special_at(self, s: str, a: int, b: int) -> bool:
        core = s[a:b]
        if core in ("<", ">") or core in _MATH_PAIRS:
            return True  # "x < 5": a comparison, not a bracket
        return core in self.t.special and len(core) > 1

    def _keeps_final_dot(self, core: str) -> bool:
        t = self.t
        prev = getattr(self, "_prev_core", "")
        if prev and prev[0].isdecimal() and self._unit_after_number(core[:-1], prev):
            return False  # "for 2-3 min.": a unit, and the dot ends the sentence
        if core[:-1].lower() in _TIME_ZONES and _clock_before(prev):
            return False  # "at 2pm EST.": the zone, and the dot ends the sentence
        if core == "Max." and prev[:1].isupper() | prev[:1].isdecimal():
            return False  # "iPhone 15 Pro Max.": the model's name, not "maximum"
        if core in t.abbreviations or core.casefold() in t.abbreviations_folded:
            return True
        if core in ("St.", "Dr.", "st.", "dr.", "ST.", "DR."):
            return True
        if _RE_INITIALS.fullmatch(core):
            return True
        if core[:-1].lower() in _MONTH_ABBR:
            return True
        return bool(self.lex_get(core))

    def _caps_in_text(self, core: str, prev: str, nxt: str, k: int) -> bool:
        """``ON`` in capitals among lower-case words (``turn it ON``: a switch state) and ``OR``
        between two terms (``x OR y``, ``CPU OR GPU``, ``a = 1 OR b = 2``); ``Toronto, ON``,
        ``the OR`` (an operating room) stay letters."""
        if not prev or (k > 0 and self._trails[k - 1]):
            return False
        if prev.lower() in _DETERMINERS:
            return False
        if core == "ON":
            return not prev[:1].isupper() and (not nxt or nxt.islower())
        return bool(nxt)  # CPU OR GPU, x OR y: between two terms

    def _caps_phrases(self, cores: list[str], leads: list[list[Tok]]) -> set[int]:
        """Indexes of capital words that form a phrase of words (``GO TO``, ``THE END``,
        ``BUY NOW``, ``DON'T PANIC``): two or more all-capital words in a row with no
        punctuation between them, each of them a word (a capital function word or a CMUdict
        word that CMUdict does not spell), at least one a function word; a capital word that
        is none (an acronym) cuts the row (``AI FOR ALL`` -> A I for all). ``IT`` counts only at
        the end of the run or before a function word (``DO IT``, not ``IT TEAM``)."""
        out: set[int] = set()
        run: list[int] = []

        def article(words: list[str], j: int) -> bool:
            # GOT A MINUTE, THIS IS A TEST: "a" before a word; PLAN A, TYPE A IS: the letter
            return (
                words[j] == "A"
                and j + 1 < len(words)
                and not (j and words[j - 1].lower() in _LETTER_LABELS)
            )

        def flush() -> None:
            # cut the run at capitals that are no word (AI FOR ALL: "A I" then "for all")
            words = [cores[i] for i in run]
            seg: list[int] = []
            for j, w in enumerate(words + [""]):
                if w and (
                    article(words, j) if w == "A" else self._caps_wordish(w, words[j + 1 : j + 2])
                ):
                    seg.append(j)
                    continue
                if len(seg) >= 2 and any(
                    words[x] in _CAPS_PHRASE_FUNCTION
                    or words[x] == "A"
                    or self._caps_word(words[x])  # LOW BATTERY, WET PAINT, DRY RUN
                    for x in seg
                ):
                    out.update(run[x] for x in seg)
                seg = []
            # THE ROI OF SEO, HOW TO USE AI IN 2024: a run with a function word that is no
            # acronym (THE, FOR, HOW ...) is English in capitals, so its short function words
            # are words even between acronyms (OF, IN, A)
            if len(words) >= 2 and any(self._strong_function(w) for w in words):
                out.update(
                    run[j]
                    for j, w in enumerate(words)
                    if (w in _CAPS_FUNCTION_WORDS or article(words, j))
                )
            run.clear()

        for k, c in enumerate(cores):
            base = c.replace("'", "")
            if (
                (len(base) >= 2 or base == "A")
                and base.isalpha()
                and base.isupper()
                and c[0] != "'"
            ):
                if run and (self._trails[run[-1]] or leads[k]):
                    flush()
                run.append(k)
            else:
                flush()
        flush()
        return out

    def _strong_function(self, w: str) -> bool:
        """A capital function word of three or more letters that is never an acronym."""
        said = self.t.acronyms.get(w)
        return len(w) >= 3 and w in _CAPS_PHRASE_FUNCTION and said is not None and said.islower()

    def _caps_wordish(self, w: str, after: list[str]) -> bool:
        """``w`` (all capitals) can be read as a word inside a capital phrase."""
        if w == "IT":
            return not after or after[0] in _CAPS_PHRASE_FUNCTION
        if w in _CAPS_PHRASE_FUNCTION:
            return True
        said = self.t.acronyms.get(w)
        if said is not None:
            return said.islower()  # NOT, YES, MAX: listed as words; GPU-like entries are not
        low = w.lower()
        return _has_vowel(w) and low in cmudict() and not _spelled_in_cmudict(low.replace("'", ""))

    def _is_shouting(self, s: str, cores: list[tuple[int, int]]) -> bool:
        """True when most alphabetic words are all capitals (a headline, not acronyms)."""
        alpha = [s[a:b] for a, b in cores if s[a:b].isalpha()]
        caps = [w for w in alpha if len(w) > 1 and w.isupper()]
        return (
            len(caps) >= 3
            and len(caps) * 2 > len(alpha)
            and any(len(w) >= 4 and w.lower() in cmudict() for w in caps)
        )

    # -- reading one core -------------------------------------------------------------------

    def _read_core(self, s: str, a: int, b: int, cores: list[str], k: int) -> list[Tok]:
        core = s[a:b]
        if (
            b - a == 2
            and core.isdecimal()
            and a > 0
            and s[a - 1] == "'"
            and (a == 1 or s[a - 2].isspace() or s[a - 2] in _OPENERS)
        ):  # in '69, class of '05: a year without its century ("oh five", not "zero five")
            if core == "00":
                return [Tok(a, b, "two thousand")]
            short = f"oh {num.cardinal(core[1])}" if core[0] == "0" else num.cardinal(core)
            return [Tok(a, b, short)]
        prev = cores[k - 1] if k > 0 else ""
        self._before_prev = cores[k - 2] if k >= 2 else ""  # "Pharaoh Seti II"
        nxt = cores[k + 1] if k + 1 < len(cores) else ""
        if any(c in _SUBSCRIPT_DIGITS for c in core) and any(c.isalpha() for c in core):
            m = _RE_LOG_BASE.search(core)
            if m and m.start() > 0 and not core[m.start() - 1].isalnum():
                # O(log₂ n): what stands before the logarithm, then the logarithm
                cut = a + m.start()
                return self._read_core(s, a, cut, cores, k) + self._read_core(s, cut, b, cores, k)
            if (
                m
                and m.start() == 0
                and (m.end() < len(core) or nxt[:1].isalnum() or nxt[:1] == "(")
            ):
                # log₂8 = 3, log₁₀ x: the subscript after log is the base, "log base two of
                # eight" (it was "log twenty eight": base and argument run together)
                base = num.cardinal(m.group(2).translate(_SUBSCRIPT_TABLE))
                head = Tok(a, a + m.end(), f"{m.group(1)} base {base} of")
                if m.end() == len(core):
                    return [head]
                return [head, *self._read_core(s, a + m.end(), b, cores, k)]
            plain = core.translate(_SUBSCRIPT_TABLE)
            if plain.isascii():  # CO₂, PM₂.₅, x₁: a formula's subscripts are its digits
                reading = self._read_whole(plain, prev, nxt, k, cores)
                if reading is None and not all(c.isalnum() or c in ".-'" for c in plain):
                    # CO₂=5, a₁+a₂: an equation glued to a formula; read by runs like its
                    # ASCII form, so no sign is lost (the = used to vanish)
                    return self._fallback(s[:a] + plain + s[b:], a, b, prev, nxt)
                return [Tok(a, b, reading or self._alnum(plain))]
        if not core.isascii():
            clean = self._clean_word(core)
            if clean is not None:
                # co\u00adoperate, the ﬁ ligature: invisible joiners and compatibility
                # letters inside a word are not letters of their own; read the word whole
                for i, c in enumerate(core):
                    if c in _JOINERS:
                        self._format_chars.append(("format-char", a + i, a + i + 1))
                return [Tok(a, b, self._read_alpha(clean, prev, nxt))]
        entry = self.lex_get(core)
        if entry is None and any(c.isalpha() and not is_latin_letter(c) for c in core):
            said = self._numeric(core, prev, nxt, k, cores) if core[0].isdecimal() else None
            if said is not None:  # 45º, 20ºC: units written with a non-Latin letter
                return [Tok(a, b, said)]
            if k > 0 and self._unit_after_number(core, prev):
                sing, plur, _ = self._unit(core, spaced=True)  # type: ignore[misc]
                return [Tok(a, b, sing if _is_one(prev) else plur)]
            return self._fallback(s, a, b, prev, nxt)
        if entry is not None:
            spoken = getattr(entry, "spoken", None)
            if spoken is None and not getattr(entry, "respelling", None):
                # Phonemes only: engines that read text keep the built-in reading (XYZW ->
                # "X Y Z W"), so an override never reads worse than none.
                spoken = self.builtin_reading(s, a, b, cores, k)
            if spoken is None and isinstance(getattr(entry, "respelling", None), str):
                spoken = lexicon_form(core, entry.respelling)  # type: ignore[attr-defined]
            return [Tok(a, b, spoken or core, "word", True, entry)]
        spoken = self._read_whole(core, prev, nxt, k, cores)
        if spoken is None and core.endswith("'s") and len(core) > 2 and core[0].isdecimal():
            inner = self._read_whole(core[:-2], prev, nxt, k, cores)
            if inner is not None:
                spoken = inner + "'s"
        if spoken is None and core.endswith("+") and len(core) > 2 and core[-2].isalnum():
            inner = self._read_whole(core[:-1], prev, nxt, k, cores)
            if inner is not None and (core[0].isdecimal() or core[0] in CURRENCIES):
                spoken = inner + " plus"  # $200B+, 18+, 5k+
        if (
            spoken
            and prev.lower() == "between"
            and " to " in spoken
            and any(c in core for c in "-–~")
        ):
            spoken = spoken.replace(" to ", " and ", 1)  # between 20-30: twenty and thirty
        if spoken == "":
            return [Tok(a, b, "", "punct")]  # said elsewhere ("USD 250": after the number)
        if spoken is not None:
            return [Tok(a, b, spoken)]
        return self._fallback(s, a, b, prev, nxt)

    @staticmethod
    def _clean_word(core: str) -> str | None:
        """The letters of ``core`` without invisible joiners (soft hyphen, ZWJ, word joiner)
        and with compatibility letters decomposed (ﬁ -> fi), when that leaves a plain word;
        else ``None`` (the core is read as it is)."""
        stripped = "".join(c for c in core if c not in _JOINERS)
        clean = unicodedata.normalize("NFKC", stripped)
        if clean == core or not clean or not _is_wordlike(clean) or not clean.isascii():
            return None
        return clean

    def builtin_reading(self, s: str, a: int, b: int, cores: list[str], k: int) -> str:
        """What ``s[a:b]`` is read as without a lexicon entry (whole, else cut into runs)."""
        core = s[a:b]
        prev = cores[k - 1] if k > 0 else ""
        nxt = cores[k + 1] if k + 1 < len(cores) else ""
        try:
            spoken = self._read_whole(core, prev, nxt, k, cores)
            if spoken is None:
                spoken = " ".join(t.spoken for t in self._fallback(s, a, b, prev, nxt) if t.spoken)
        except Exception:  # only a better spelling for text engines; never fail the word
            return core
        return spoken or core

    def _read_whole(self, core: str, prev: str, nxt: str, k: int, cores: list[str]) -> str | None:
        """Spoken text for the whole core, or ``None`` to cut it up generically."""
        t = self.t
        if len(core) == 2 and core[1] == "-" and core[0].isupper() and _suspends(k, cores):
            return core[0]  # Vitamin A- and B-rich: a suspended hyphen, not the grade A minus
        m = _RE_LANGUAGE_VERSION.fullmatch(core)
        if m:  # C#12, C++20, .NET8: the language and its version ("C sharp twelve")
            return f"{t.special[m.group(1)]} {_version_parts(m.group(2).split('.'))}"
        if core.lower() in _MAIL_PREFIXES and k < len(self._trails) and self._trails[k] == ":":
            return _MAIL_PREFIXES[core.lower()]  # Re: Q3 Budget, Fwd: …: a mail's subject
        m = _RE_KEY_COMBO.fullmatch(core)
        if m:  # Ctrl+C, Cmd+Shift+P, Alt+F4, ⌘+K: one key combination, "control plus C"
            return " plus ".join(self._key_name(x) for x in core.split("+"))
        m = _RE_AMPERSAND_NAME.fullmatch(core)
        if m:  # AT&T, S&P, H&M, R&D, Q&A: one name, its letters and "and" (not "ampersand")
            said = " and ".join(self._acronym(x) for x in m.group(1, 2))
            return said + ("'s" if m.group(3) else "")
        if core in t.special:
            said = t.special[core]
            if said.startswith("is ") and prev.lower() in _COPULA_VERBS:
                return said[3:]  # "the p-value was < 0.05": no second verb
            return said
        if len(core) > 1 and core.casefold() in t.special_folded:
            return t.special_folded[core.casefold()]
        formula = self._formula(core, prev, nxt)
        if formula is not None:
            return formula  # NaCl, H2SO4: element symbols spelled, subscripts as numbers
        m = _RE_FORMULA_COMPOUND.fullmatch(core)
        if m and (formula := self._formula(m.group(1))) is not None:
            return f"{formula} {self.read_word(m.group(2))}"  # NaCl-based, H2O-soluble
        if core.isascii() and ("@" in core or "://" in core or core.lower().startswith("www.")):
            # ASCII only: read_electronic names ASCII symbols; other characters (``com²``,
            # ``/٣``) go to the fallback, which reads or reports them one by one.
            if _RE_EMAIL.fullmatch(core) or _RE_URL.fullmatch(core):
                return self.read_electronic(core)
        m = _RE_HANDLE.fullmatch(core) if core[0] == "@" else None
        if m:  # @openai, @elonmusk, @john_doe: a handle, "at" and the name as it is said
            return "at " + self._handle_name(m.group(1))
        m = _RE_CLI_OPT.fullmatch(core) if core[0] == "-" else None
        if m and k < len(self._cli_ok) and self._cli_ok[k]:
            dashes = "dash dash" if core.startswith("--") else "dash"
            name, eq, value = core.lstrip("-").partition("=")
            if eq:  # --march=native
                return f"{dashes} {self._alnum(name)} equals {self.read_electronic(value)}"
            if dashes == "dash" and name.isalpha() and len(name) <= 4:
                said = letters_spoken(name)  # -la, -xvf: a cluster of one-letter options
            else:
                said = self._alnum(name)
            return f"{dashes} {said}"
        m = _RE_DUNDER.fullmatch(core) if core[0] == "_" else None
        if m and (m.group(2) or m.group(1).lower() in _DUNDERS):
            # Python's __init__ / __main__.py: "dunder init", as programmers say it
            rest = self.read_electronic(m.group(2)) if m.group(2) else ""
            return f"dunder {self._alnum(m.group(1))} {rest}".strip()
        m = _RE_GLOB.fullmatch(core)
        if m:  # rm *.log: the wildcard and the extension
            return "star dot " + self.read_electronic(m.group(1))
        if _RE_DOTFILE.fullmatch(core):
            return "dot " + self.read_electronic(core[1:])  # .env, .gitignore, .eslintrc.json
        m = _RE_HEX.fullmatch(core)
        if m:  # 0x7fff: "zero X" and the hex digits one by one
            return "zero X " + _hex_chars(m.group(1))
        if _RE_HEX_COLOR.fullmatch(core) and any(c.isalpha() for c in core):
            return "hash " + _hex_chars(core[1:])  # #FF5733: a colour, character by character
        if _RE_UUID.fullmatch(core):
            return ", ".join(_hex_chars(g) for g in core.split("-"))  # one group per pause
        if core.isascii() and _RE_PATH.fullmatch(core):
            return self.read_electronic(core)  # ~/.bashrc, ./build.sh, C:\Users, localhost:8080
        m = _RE_DAY_RANGE.fullmatch(core)
        if m is not None:
            day, last = m.group(1).lower(), m.group(2)
            # a lone day needs its dot and a capital; "the Sun.", "I sat." are words
            single = "." in core and core[0].isupper() and day not in ("sun", "sat", "wed")
            # "Mon, Mar 3", "Fri 14 June", "Tue 10:00": a capitalised day before a date or time
            dated = (
                core[0].isupper()
                and core.rstrip(".").isalpha()
                and (
                    self._month_of(nxt) > 0
                    or _is_day(nxt)
                    or _RE_TIME.fullmatch(nxt) is not None
                    or _RE_HOUR_AMPM.fullmatch(nxt) is not None
                )
            )
            single = single or dated
            if last:  # Mon.-Sun., Mon-Fri
                return f"{_WEEKDAYS[day]} to {_WEEKDAYS[last.lower()]}"
            if single:  # Tue.
                return _WEEKDAYS[day]
        if core in _WEEKDAY_2 and nxt[:1].isdecimal():  # "for Tu (2/22)", "Th 10:00"
            return _WEEKDAY_2[core]
        m = _RE_TILDE_RANGE.fullmatch(core)
        if m:  # 10%~15%, -5~3°C: a tilde between two numbers is "to"
            sign, left, pct, right = m.groups()
            rw = self._read_whole(right, "", nxt, k, cores)
            if rw is not None:
                whole = None if sign or pct else self._read_whole(left, prev, "", k, cores)
                lw = whole or (
                    ("minus " if sign else "") + _plain_number(left) + (" percent" if pct else "")
                )
                return f"{lw} to {rw}"
        if (
            core[:1] == "#"
            and prev.lower() in _NUMBER_CUES
            and _RE_CODE.fullmatch(core, 1)
            and sum(c.isdecimal() for c in core) >= 3
        ):  # order #12345: "number one two three four five", an identifier
            return f"number {_code_chars(core[1:])}"
        if self._after_id_cue(k, cores) and _RE_CODE.fullmatch(core):
            digits = sum(c.isdecimal() for c in core)
            if digits >= 3 or (digits and core.isdecimal() and len(core) > 1):
                return _code_chars(core)
        m = _RE_F_STOP.fullmatch(core)
        if m:  # f/1.8: an aperture, "f one point eight"
            return f"F {_plain_number(m.group(1))}"
        m = _RE_QUARTER_SLASH.fullmatch(core)
        if m:  # Q3/2025: Q three twenty twenty five
            return f"Q {num.cardinal(m.group(1))} {num.year(m.group(2))}"
        m = _RE_TO_PRESENT.fullmatch(core)
        if m:  # 2019–present: twenty nineteen to present
            return f"{num.year(m.group(1))} to {m.group(2).lower()}"
        m = _RE_SEASON_EPISODE.fullmatch(core)
        if m:  # S02E05: season two episode five
            season, episode = str(int(m.group(1))), str(int(m.group(2)))
            return f"season {num.cardinal(season)} episode {num.cardinal(episode)}"
        m = _RE_CVE.fullmatch(core)
        if m:  # CVE-2024-3094: C V E, the year, the number as a model number
            return f"C V E {num.year(m.group(1))} {_model_digits(m.group(2))}"
        m = _RE_CODEC.fullmatch(core)
        if m:  # H.264, H.265: the letter, then the number as a model number
            return f"{m.group(1)} {_model_digits(m.group(2))}"
        if _RE_VANITY.fullmatch(core) and any(c.isalpha() for c in core):
            return self._vanity(core)
        m = _RE_PRERELEASE.fullmatch(core) or _RE_VERSION_X.fullmatch(core)
        if m:  # v1.2.3-beta.2, 3.0.0-rc1, Python 3.x: a version and its pre-release tag
            return read_version(core)
        r = self._alternatives(core, prev, nxt, k)
        if r is not None:
            return r
        if "/" in core and core[0].isalpha() and not _is_number(prev):
            unit = self._unit(core, spaced=True)  # "in TB/s", "km/h": a unit on its own
            if unit is not None:
                return unit[1]
        r = self._compound(core, prev, nxt, k, cores)
        if r is not None:
            return r
        if core[0] in CURRENCIES or _currency_prefix(core):
            r = self._money(core, nxt, k)
            if r is not None:
                return r
        if core[0] in "-−" and len(core) > 2 and core[1] in CURRENCIES:
            r = self._money(core[1:], nxt, k)
            if r is not None:
                return "minus " + r  # -$5: the sign is never lost
        if core[0].isdecimal() or (core[0] in "-+.'" and len(core) > 1):
            r = self._numeric(core, prev, nxt, k, cores)
            if r is not None:
                return r
        if (
            core in _CURRENCY_CODES
            and _is_number(nxt)
            and k + 1 < len(cores)
            and not self._trails[k]
            and k + 1 not in self._pending_suffix
            and not self._unit_after_number(cores[k + 2] if k + 2 < len(cores) else "", nxt)
        ):  # USD 250 -> two hundred and fifty U S dollars: the currency moves after the amount
            after = cores[k + 2] if k + 2 < len(cores) else ""
            sym = _CODE_SYMBOL.get(core)
            amount = self._money(sym + nxt, after, k + 1) if sym else None
            if amount is None and after.lower() not in _SCALE_WORDS:
                sing, plur, _ = self.t.units[core]
                number = self._plain_number(nxt, "", after, k + 1, [], as_year=False)
                amount = f"{number} {sing if _is_one(nxt) else plur}" if number else None
            if amount is not None:
                self._pending_spoken[k + 1] = amount
                return ""
        if core == "#" and _is_number(nxt):
            return "number"  # "account #: 99812"
        if core in ("x", "X", "×") and _is_number(prev) and _is_number(nxt):
            if "=" in cores:
                return "times"  # 3 x 4 = 12: a product in an equation (a 2 x 4 board: by)
            return "by"
        if core == "*" and _is_number(prev) and _is_number(nxt):
            return "times"
        if (
            core in ("x", "X", "×")
            and prev.isdecimal()
            and len(prev) <= 4
            and nxt[:1].isalpha()
            and "=" not in cores
            and not self._trails[k - 1]
            and not self._trails[k]
        ):  # 2 x RTX 4090, 4 x A100, 3 x daily: a multiplier, "two times" (was "two X")
            return "times"
        if core.lower() in ("am", "pm", "a.m.", "p.m.", "a.m", "p.m") and _RE_INT.fullmatch(
            prev.replace(":", "").replace("-", "")  # 10:30 am, 9-11 am, 9:00-10:30 am
        ):
            return letters_spoken(core)
        m = _RE_AMPM_ZONE.fullmatch(core) if core[0] in "aApP" else None
        if m and _RE_INT.fullmatch(prev.replace(":", "")):  # 1:59 p.m.est
            return f"{letters_spoken(m.group(1))} {letters_spoken(m.group(2))}"
        if core.replace(".", "").lower() in _TIME_ZONES and (
            prev.lower().rstrip(".") in ("am", "pm", "a.m", "p.m") or _clock_before(prev)
        ):
            return letters_spoken(core)  # 10:30 est, 1:59 p.m. e.s.t
        if (
            core in _DIRECTIONS
            and prev.isdecimal()
            and (_is_capitalized(nxt) or _RE_ORDINAL.fullmatch(nxt))
        ):
            return _DIRECTIONS[core]
        if core in _STATES and k > 0 and "," in self._trails[k - 1] and _is_capitalized(prev):
            zip_next = nxt.isdecimal() and len(nxt) == 5
            if zip_next or (not nxt and core not in _AMBIGUOUS_STATES):
                return _STATES[core]
        if (
            core in ("ca", "c")
            and k < len(self._trails)
            and self._trails[k] == "."
            and _looks_year(nxt)
        ):  # ca. 1900, c. 1850 (lower case only: CA. is California); the dot is silent
            self._silent_trail.add(k)
            return "circa"
        if (
            core in ("St", "Dr")
            and nxt[:1].isupper()
            and not (_is_capitalized(prev) or _is_number(prev) or _RE_ORDINAL.fullmatch(prev))
        ):  # St Louis, Dr Smith (no dot): a title, not CMUdict's first "street" / "drive"
            return "saint" if core == "St" else "doctor"
        if (
            core.lower() in ("re", "fwd", "fw")
            and k < len(self._trails)
            and self._trails[k] == ":"
            and (k == 0 or self._trails[k - 1])
        ):  # "Re: Q3 budget", "Fwd: notes": a mail subject's prefix (not the musical note)
            return "R E" if core.lower() == "re" else "forward"
        if core == "v" and (
            (_is_number(prev) and _is_number(nxt))
            or (_is_capitalized(prev) and _is_capitalized(nxt))
        ):  # 3 v 3, React v Vue, Roe v. Wade: versus (not the letter V)
            if k < len(self._trails) and self._trails[k] == ".":
                self._silent_trail.add(k)  # the abbreviation's dot, no sentence end
            return "versus"
        if core in ("X", "XS", "XR") and (
            prev == "iPhone" or (prev == "OS" and self._before_prev == "Mac")
        ):  # iPhone X, iPhone XS, Mac OS X: Apple's "ten"
            return " ".join(["ten", *core[1:]])
        if core == "Mt" and _is_capitalized(nxt):
            return "mount"  # Mt Fuji, Mt Hill (no dot): a mountain, whatever comes before
        if "." not in core and core in t.abbreviations:
            return t.abbreviations[core]
        street = _STREET.get(core.rstrip(".").lower())
        if street and (_is_capitalized(prev) or _RE_ORDINAL.fullmatch(prev) or prev.isdecimal()):
            if core.rstrip(".").lower() != "dr" or not nxt[:1].isupper():
                return street
        if core[-1] == "." and _is_day(prev) and self._month_of(core, lenient=True):
            pass  # "25 sept.": the month rule below says "of September"
        elif core[-1] == "." or "." in core:
            r = self._abbreviation(core, prev, nxt)
            if r is not None:
                return r
        day_range = _is_day_range(nxt)  # Dec 24-26, Jan 1-Mar 31
        month = self._month_of(core, lenient=_is_day(nxt) or _is_day(prev) or day_range)
        if month and day_range and not _is_day(prev):
            return MONTHS[month - 1]
        if month and core[0].isupper() and _looks_year(nxt) and not _is_day(prev):
            return MONTHS[month - 1]  # Sep 2025, Dec 2024: a month of a year
        if month and (_is_day(nxt) or _is_day(prev)):
            name = MONTHS[month - 1]
            if _is_day(prev) and not _is_day(nxt) and not _looks_year(nxt):
                return f"of {name}"
            if _is_day(prev) and _looks_year(nxt) and not _is_day(nxt):
                return f"of {name}"
            return name
        if k > 0 and (
            self._unit_after_number(core, prev) or self._spaced_letter_unit(core, k, cores)
        ):
            sing, plur, _ = self._unit(core, spaced=False)  # type: ignore[misc]
            before = cores[k - 2] if k >= 2 and not self._trails[k - 2] else ""
            one = _is_one(prev) or _unit_adjective(before, nxt) or _proper_fraction(prev, before)
            return sing if one else plur  # 1/2 tsp: one half teaspoon
        m = _RE_WORD_RATE.fullmatch(core)
        if (
            m
            and _is_number(prev.lstrip("~≈<>≤≥±+"))
            and (m.group(2).lower() in _RATE_UNITS or m.group(1).lower() in _RATE_COUNTS)
        ):
            # "8 glasses/day", "3 times/week"; "100 req/s", "50 tok/s", "52 min/year"
            what = m.group(1)
            unit = self._unit(what, spaced=True) if what.lower() not in _RATE_COUNTS else None
            said = _RATE_COUNTS.get(what.lower()) or (unit[1] if unit else self.read_word(what))
            per = _RATE_UNITS.get(m.group(2).lower()) or self.read_word(m.group(2))
            return f"{said} per {per}"
        if core == "in" and k >= 3 and cores[k - 2] in ("ft", "feet", "foot") and prev.isdecimal():
            return "inch" if prev == "1" else "inches"  # 6 ft 1 in
        if core in ("N", "S", "E", "W") and prev.endswith(("°", "º")) and prev[0].isdecimal():
            return _DIRECTIONS[core]  # 37.77° N
        if (
            k > 0
            and "^" in prev
            and prev[-1].isdecimal()
            and self._unit(core, spaced=False) is not None
        ):  # 3×10^8 m/s
            return self._unit(core, spaced=False)[1]  # type: ignore[index]
        if (
            k >= 3
            and cores[k - 2] in ("x", "X", "×", "by")
            and _is_number(prev)
            and _is_number(cores[k - 3])
            and self._unit(core, spaced=False) is not None
            and not self._trails[k - 1]
        ):  # "25 x 7 m": after a dimension a one-letter unit is a unit
            sing, plur, _ = self._unit(core, spaced=False)  # type: ignore[misc]
            return sing if _is_one(prev) else plur
        if _RE_VERSION.fullmatch(core):
            return read_version(core)
        if k in self._caps_phrase:
            return core.lower()  # GO TO, THE END, DON'T PANIC: a phrase in capitals
        if core in ("ON", "OR") and self._caps_in_text(core, prev, nxt, k):
            return core.lower()  # turn it ON, x OR y: the word, not the letters O N
        if core.isalpha() or _is_wordlike(core):
            # punctuation after the word ends what follows it: "(A) or (B)", "plan A."
            closed = k < len(self._trails) and self._trails[k] != "" and len(core) == 1
            return self._read_alpha(core, prev, "" if closed else nxt)
        m = _RE_DOMAIN.fullmatch(core)
        if m and m.group(1).lower() in _TLDS:
            return self.read_electronic(core)
        return None

    # -- identifiers ------------------------------------------------------------------------

    def _formula(self, core: str, prev: str = "", nxt: str = "") -> str | None:
        """A chemical formula read symbol by symbol (``NaCl`` -> N A C L, ``H2SO4`` -> H two S O
        four, ``2H2O`` two H two O, ``CuSO4·5H2O`` … dot five H two O), or ``None``; tokens of
        the tables and CMUdict words that are not spelled letters (``NaN``, ``GaN``) are no
        formulas. Next to ``+ = →`` a lone symbol with a count is one (``O2``, ``Fe``):
        :mod:`mixvox.frontends.chem`."""
        if core in self.t.acronyms or core in self.t.special:
            return None
        equation = prev in chem.EQUATION_SIGNS or nxt in chem.EQUATION_SIGNS
        charge = chem.split_charge(core)
        if charge is not None:  # SO4²⁻: S O four two minus; Na⁺ N A plus
            body, digits, sign = charge
            parts = chem.parse(body, ion=True)
            if parts is None or body in self.t.acronyms:
                return None
            said_ion = [
                chem.spelled(p.text) if p.kind == "symbol" else num.cardinal(p.text) for p in parts
            ]
            return " ".join(said_ion + ([num.cardinal(digits)] if digits else []) + [sign])
        said: list[str] = []
        for piece in _RE_HYDRATE_DOT.split(core):
            m = _RE_COEFFICIENT.fullmatch(piece)
            if m is None:
                return None
            coefficient, formula = m.groups()
            parts = chem.parse(formula, equation=equation)
            if parts is None:
                return None
            low = formula.lower()
            if formula.isalpha() and low in cmudict() and not _spelled_in_cmudict(low):
                if not (equation and len(formula) == 2) and not _RE_OXIDE.fullmatch(formula):
                    return None  # NaN, GaN: the word (but Fe, Cu in an equation, CaO: symbols)
            said.append(
                " ".join(
                    ([num.cardinal(coefficient)] if coefficient else [])
                    + [
                        chem.spelled(p.text) if p.kind == "symbol" else num.cardinal(p.text)
                        for p in parts
                    ]
                )
            )
        return " dot ".join(said)

    def _after_id_cue(self, k: int, cores: list[str]) -> bool:
        """True when core ``k`` follows a cue that makes it an identifier read character by
        character: ``PIN 1234``, ``ID: 123456789012``, ``order number 12345678``, ``your otp
        is ab9453``, ``code is 834921``. Punctuation other than ``:``/``#`` breaks the cue."""
        if k == 0 or k >= len(cores) or len(self._trails) < k:
            return False

        def word(j: int) -> str:
            if j < 0 or self._trails[j] not in ("", ":", "#"):
                return ""
            return cores[j].lower().rstrip(":#")

        w1, w2, w3 = word(k - 1), word(k - 2), word(k - 3)
        if w1 in _ID_CUES:
            return True
        if w1 in _COPULAS:
            w1, w2 = w2, w3
            w3 = word(k - 4)
            if w1 in _ID_CUES:
                return True
        if (
            w1 in ("in", "with")
            and w2 in ("ending", "ends")
            and (w3 in _NUMBER_CUES or w3 in _NUMBER_WORDS or w3 == "digits")
            and cores[k].isdecimal()
        ):
            return True  # "card ending in 8876": the last digits of a number
        return (w1 in _NUMBER_WORDS or cores[k - 1] == "#") and w2 in _NUMBER_CUES

    def _vanity(self, core: str) -> str:
        """``1-800-GO-U-HAUL`` -> "one, eight hundred, go U haul": letter groups that are
        dictionary words are said as words (that is the point of a vanity number)."""
        out: list[str] = []
        for part in core.split("-"):
            if part.isdecimal():
                if len(part) == 3 and part.endswith("00"):
                    out.append(num.cardinal(part))
                elif len(part) == 1:
                    out.append(num.cardinal(part))
                else:
                    out.append(num.digits_words(part))
            elif part.isalpha() and len(part) > 1 and part.lower() in cmudict():
                out.append(part.lower())
            else:
                out.append(_code_chars(part))
        # digit groups get a pause each; the letters of the name run on ("go U haul")
        parts = core.split("-")
        joined = out[0]
        for i in range(1, len(parts)):
            digits = parts[i - 1].isdecimal() or parts[i].isdecimal()
            joined += (", " if digits else " ") + out[i]
        return joined

    # -- numbers ----------------------------------------------------------------------------

    def _compound(self, core: str, prev: str, nxt: str, k: int, cores: list[str]) -> str | None:
        """``$50-$100`` / ``2pm-5pm`` -> "A to B"; ``$20/mo`` -> "twenty dollars per month";
        ``Jan-15-2020`` -> a date."""
        m = _RE_PREFIXED_RANGE.fullmatch(core)
        if m and m.group(1) == m.group(3) and _RE_INT.fullmatch(m.group(2) + m.group(4)):
            # Q1-Q3, H1-H2, W1-W4: the same prefix on both ends is a range
            a_, b_ = self._alnum(m.group(1) + m.group(2)), self._alnum(m.group(3) + m.group(4))
            return f"{a_} to {b_}"
        m = _RE_MONTH_RANGE.fullmatch(core)
        if (
            m
            and self._month_of(m.group(1), lenient=True)
            and self._month_of(m.group(2), lenient=True)
        ):
            ma, mb = (
                self._month_of(m.group(1), lenient=True),
                self._month_of(m.group(2), lenient=True),
            )
            return f"{MONTHS[ma - 1]} to {MONTHS[mb - 1]}"  # Jan-Mar
        m = _RE_DAY_MONTH.fullmatch(core)
        if m and self._month_of(prev, lenient=True) and self._month_of(m.group(2), lenient=True):
            # Jan 1-Mar 31: the first day, then the month of the second
            if int(m.group(1)) <= 31:
                if _is_day(nxt) and k + 1 < len(cores) and not self._trails[k]:
                    self._pending_spoken[k + 1] = num.ordinal(nxt.rstrip(","))
                return f"{num.ordinal(m.group(1))} to {MONTHS[self._month_of(m.group(2), lenient=True) - 1]}"
        m = _RE_MONTH_DAY.fullmatch(core)
        if m and self._month_of(m.group(1), lenient=True) and 1 <= int(m.group(2)) <= 31:
            words = (
                f"{MONTHS[self._month_of(m.group(1), lenient=True) - 1]} {num.ordinal(m.group(2))}"
            )
            return f"{words} {num.year(m.group(3))}" if m.group(3) else words
        if not (core[0].isdecimal() or core[0] in CURRENCIES) or len(core) > 64:
            return None
        for sep in ("-", "/"):
            if core.count(sep) != 1 or core.startswith(sep) or core.endswith(sep):
                continue
            left, right = core.split(sep)
            dl, dr = _RE_FRACTION.fullmatch(left), _RE_FRACTION.fullmatch(right)
            if sep == "-" and dl and dr and _valid_month_day(*dl.groups()):
                if _valid_month_day(*dr.groups()):  # 11/25-11/29: a range of dates
                    a_, b_ = dl.groups()
                    c_, d_ = dr.groups()
                    return (
                        f"{MONTHS[int(a_) - 1]} {num.ordinal(str(int(b_)))} to "
                        f"{MONTHS[int(c_) - 1]} {num.ordinal(str(int(d_)))}"
                    )
            if sep == "-" and _RE_NUMBER.fullmatch(left) and _RE_NUMBER.fullmatch(right):
                continue  # plain numeric ranges are read by _numeric
            if (
                sep == "-"
                and left[:1] in CURRENCIES
                and right[:1].isdecimal()
                and _RE_NUMBER.fullmatch(left[1:])
                and (
                    _RE_NUMBER.fullmatch(right)
                    or (right[-1:] in "kKMB" and _RE_NUMBER.fullmatch(right[:-1]))
                )
            ):  # $5-10, $10-15K: five to ten dollars (the currency belongs to both ends)
                rw = self._read_part(left[0] + right, left, nxt, k)
                if rw is not None:
                    return f"{_plain_number(left[1:].replace(',', ''))} to {rw}"
            if sep == "/" and _RE_FRACTION.fullmatch(core):
                continue
            if sep == "-" and _RE_NUMBER.fullmatch(left) and not _RE_TIME.match(right):
                # "1234-123kg": the unit makes the left end a quantity, not a year
                lw = self._plain_number(left, prev, "", k, [], as_year=False)
            else:
                # 2:00-3:30 PM: the am/pm after the range belongs to its start too
                shared = nxt if _RE_TIME.fullmatch(left) and _RE_TIME.fullmatch(right) else ""
                lw = self._read_part(left, prev, shared, k)
            if lw is None:
                continue
            if sep == "-" and right.isalpha() and right.islower() and _RE_FRACTION.fullmatch(left):
                return f"{lw} {self.read_word(right)}"  # a 1/4-inch bolt: one quarter inch
            if sep == "/":
                unit = (
                    _RATE_UNITS.get(right.lower()) or (self._unit(right, spaced=False) or ("",))[0]
                )
                if unit:  # "$0.5/hr" -> fifty cents per hour; "3 cc/s" is read by _numeric
                    return f"{lw} per {unit}"
                continue
            rw = self._read_part(right, left, nxt, k)
            if rw is not None:
                return f"{lw} to {rw}"
        return None

    def _alternatives(self, core: str, prev: str, nxt: str, k: int) -> str | None:
        """A slash between alternatives: ``Win 10/11`` -> ten or eleven, ``PCIe 4.0/5.0``,
        ``Python 3.11/3.12``; ``TCP/IP``, ``I/O``, ``A/B``, ``CI/CD`` -> the acronyms one after
        the other (the slash is not said, as people say "T C P I P").

        Numbers count as alternatives after a product or version name (a word with a capital
        inside, ``macOS`` ``PCIe`` ``USB``, or one of :data:`_VERSION_WORDS` /
        :data:`_ALTERNATIVE_CUES`), or when both sides are dotted (``3.0/3.1``: no fraction
        is written with decimals); ``2/3 of``, ``scored 10/11`` stay fractions."""
        m = _RE_DIFF_STAT.fullmatch(core)
        if m:  # +512/-128 lines: added and removed, "plus …, minus …" (it was "… slash minus …")
            return f"plus {num.cardinal(m.group(1))}, minus {num.cardinal(m.group(2))}"
        m = _RE_ACRONYM_PAIR.fullmatch(core)
        if m and core.upper() == core and core not in self.t.special:
            return " ".join(self._acronym(p) if len(p) > 1 else p for p in core.split("/"))
        m = _RE_NUMBER_ALTERNATIVES.fullmatch(core)
        if m is None or nxt.lower() == "of":
            return None
        parts = core.split("/")
        dotted = all("." in p for p in parts)
        cue = prev.lower().rstrip(".:")
        named = (
            cue in _VERSION_WORDS
            or cue in _ALTERNATIVE_CUES
            or (prev.isalpha() and any(c.isupper() for c in prev[1:]))
        )
        # 50/60 Hz, 110/220 V: numbers of two or more digits before a unit are choices
        # (1/2 lbs, 5/16 in are fractions)
        unit = (
            all(len(p) >= 2 for p in parts)
            and not _is_number(prev)
            and (self._unit_after_number(nxt, parts[-1]) or nxt in _SPACED_LETTER_UNITS)
        )
        if not (dotted or named or unit):
            return None
        said = [self._numeric(p, prev, "", k, []) for p in parts]
        if any(x is None for x in said):
            return None
        return " or ".join(said)  # type: ignore[arg-type]

    def _read_part(self, part: str, prev: str, nxt: str, k: int) -> str | None:
        """A money/time/number+unit sub-expression of a compound, or ``None``."""
        if not part:
            return None
        if part[0] in CURRENCIES:
            saved = dict(self._pending_suffix)
            r = self._money(part, "", k)
            self._pending_suffix = saved
            return r
        if part[0].isdecimal():
            return self._numeric(part, prev, nxt, k, [])
        return None

    def _numeric(self, core: str, prev: str, nxt: str, k: int, cores: list[str]) -> str | None:
        m = _RE_IEEE_802.fullmatch(core)
        if m:  # 802.11ax: "eight oh two dot eleven A X", as network engineers say it
            tail = f" {letters_spoken(m.group(2).upper())}" if m.group(2) else ""
            return f"eight oh two dot {num.cardinal(m.group(1))}{tail}"
        if self._brand_mode(prev) == "standard":
            m = _RE_STANDARD_EDITION.fullmatch(core)
            if m:  # ISO 9001:2015 -> nine thousand one, twenty fifteen
                return f"{_standard_digits(m.group(1))}, {num.year(m.group(2))}"
            m = _RE_STANDARD_PART.fullmatch(core)
            if m:  # IEC 60601-1, ISO 8601-1 -> ... dash one
                return f"{_standard_digits(m.group(1))} dash {num.cardinal(m.group(2))}"
        m = _RE_DURATION.fullmatch(core)
        if m and sum(g is not None for g in m.groups()) >= 2:
            # 3h 45m, 1h30m, 2m30s: "m" after hours or before seconds is minutes
            parts = []
            for val, (one, many) in zip(m.groups(), _DURATION_NAMES, strict=True):
                if val:
                    parts.append(f"{num.cardinal(val)} {one if val == '1' else many}")
            return " ".join(parts)
        if (
            core[-1:] == "m"
            and core[:-1].isdecimal()
            and (
                prev.lower().rstrip(":") in ("cpu", "cpus", "vcpu")
                or nxt.lower() in ("cpu", "vcpu")
            )
        ):  # cpu: 500m (Kubernetes): millicores, not meters
            return f"{num.cardinal(core[:-1])} {'millicore' if core == '1m' else 'millicores'}"
        m = _RE_H_TIME.fullmatch(core)
        if m and int(m.group(1)) <= 23 and int(m.group(2)) <= 59:
            h, mm = m.group(1), m.group(2)
            if prev.lower() in _CLOCK_CUES or int(h) >= 13:  # at 19h30: nineteen thirty
                clock = _time(h, mm, None, None, nxt)
                if clock:
                    return clock
            hours = "hour" if h == "1" else "hours"  # 3h45 left: a duration
            return f"{num.cardinal(h)} {hours} {num.cardinal(mm.lstrip('0') or '0')} minutes"
        if core[-1:] == "m" and core[:-1].isdecimal() and _RE_DURATION_H.fullmatch(prev):
            return f"{num.cardinal(core[:-1])} {'minute' if core == '1m' else 'minutes'}"
        m = _RE_FEET_INCHES.fullmatch(core)
        if m:  # 6'2" -> six feet two inches
            ft, inch = m.group(1), m.group(2)
            words = f"{num.cardinal(ft)} {'foot' if ft == '1' else 'feet'}"
            if inch:
                words += f" {num.cardinal(inch)} {'inch' if inch == '1' else 'inches'}"
            return words
        m = _RE_RATING.fullmatch(core)
        if m:  # 9.5/10, 4.5/5: a decimal over a number is a score "out of"
            return f"{_plain_number(m.group(1))} out of {num.cardinal(m.group(2))}"
        m = _RE_ISO_DATETIME.fullmatch(core)
        if m:  # 2024-03-15T10:30:00Z
            day = _date(m.group(1), m.group(2), m.group(3), dmy=False)
            clock = _time(m.group(4), m.group(5), None, None, "")
            if day and clock:
                return f"{day}, {clock}{_zone(m.group(7))}"
        m = _RE_TIME_ZONED.fullmatch(core)
        if m:  # 08:05:00+08:00, 10:30Z
            clock = _time(m.group(1), m.group(2), None, None, "")
            if clock:
                return f"{clock}{_zone(m.group(4))}"
        if core[-1:] == "k" and _RE_NUMBER.fullmatch(core[:-1]) and core[0].isdecimal():
            return f"{_plain_number(core[:-1])} thousand"  # 1.2k users (4K stays "four K")
        if (
            core[-1:] == "K"
            and _RE_NUMBER.fullmatch(core[:-1])
            and core[0].isdecimal()
            and ("." in core or len(core) >= 3)
            and _is_plural_noun(nxt)
        ):  # 10K steps, 2.5K stars: thousands (4K displays, 8K videos stay resolutions)
            return f"{_plain_number(core[:-1])} thousand"
        if (
            core[-1:] == "M"
            and _RE_NUMBER.fullmatch(core[:-1])
            and core[0].isdecimal()
            and ("." in core or len(core) >= 3 or _is_plural_noun(nxt))
        ):  # 1.5M units, 10M tokens, 1M users (3M, the company, stays)
            with num.number_style(and_=False):
                return f"{_plain_number(core[:-1])} million"
        m = _RE_SIGNED_RANGE.fullmatch(core)
        if m and (m.group(1).startswith("-") or m.group(3)):
            # -5-3°C, -5-3, 20-25°C: a range; a unit after it belongs to both ends
            unit = self._unit(m.group(3), spaced=False) if m.group(3) else None
            if unit is not None or not m.group(3):
                left = self._plain_number(m.group(1), prev, "", k, [], as_year=False)
                right = self._plain_number(m.group(2), "", "", k, [], as_year=False)
                if left and right:
                    tail = f" {unit[0] if _is_one(m.group(2)) else unit[1]}" if unit else ""
                    return f"{left} to {right}{tail}"
        m = _RE_NEG_RANGE.fullmatch(core)
        if m:  # -5--3, 2--1: a range whose end is negative; no sign is lost
            left = self._plain_number(m.group(1), prev, "", k, [], as_year=False)
            right = self._plain_number(m.group(2), "", nxt, k, [], as_year=False)
            if left and right:
                return f"{left} to {right}"
        m = _RE_SCI.fullmatch(core)
        if m:  # 1e-5 -> one E minus five: the exponent's sign is never lost
            sign, mant, exp_sign, exp = m.groups()
            lead = "minus " if sign == "-" else ""
            mid = " minus " if exp_sign in ("-", "−") else " plus " if exp_sign == "+" else " "
            return f"{lead}{_plain_number(mant)} E{mid}{num.cardinal(exp)}"
        m = _RE_TIME.fullmatch(core)
        if m:
            hh, mm, ss = m.group(1, 2, 3)
            if (
                ss is not None
                and int(hh) <= 23
                and int(mm) <= 59
                and int(ss) <= 59
                and (prev.lower() in _CLOCK_CUES or _RE_ISO_DATE.fullmatch(prev))
            ):  # at 10:23:45, 2025-01-15 10:23:45 (a log's timestamp): a clock time
                clock = f"{num.cardinal(str(int(hh)))} {num.clock_minutes(mm)}"
                if int(mm) == 0:
                    clock = f"{num.cardinal(str(int(hh)))} o'clock"
                sec = "second" if int(ss) == 1 else "seconds"
                return f"{clock} and {num.cardinal(str(int(ss)))} {sec}"
            r = _time(m.group(1), m.group(2), m.group(3), m.group(4), nxt)
            if r:
                return r
            if m.group(3) is None and m.group(4) is None and int(m.group(2)) < 60:
                # 25:30, 42:15 (no hour of a clock): a time of a race or a video, minutes
                # and seconds (was "twenty five: thirty", the colon a pause)
                mins, secs = m.group(1), m.group(2)
                return (
                    f"{num.cardinal(mins)} minutes and {num.cardinal(secs)} "
                    f"{'second' if int(secs) == 1 else 'seconds'}"
                )
        if core == "1:1" and (
            nxt.lower().rstrip("s") in _ONE_ON_ONE_NOUNS
            or (prev.lower() in ("weekly", "a", "our", "my", "your", "monthly") and not nxt)
        ):  # a 1:1 meeting: "one on one" (a 1:1 ratio stays "one to one")
            return "one on one"
        m = _RE_RATIO.fullmatch(core)
        if m:  # 16:9, 2:8, 1:100 -- a colon between numbers that is no clock time
            return f"{num.cardinal(m.group(1))} to {num.cardinal(m.group(2))}"
        m = _RE_TIME_DOT.fullmatch(core) or None
        if m:
            return _time(m.group(1), m.group(2), None, m.group(3), nxt)
        m = _RE_HOUR_AMPM.fullmatch(core)
        if m and 1 <= int(m.group(1)) <= 12:
            return f"{num.cardinal(m.group(1))} {letters_spoken(m.group(2))}"
        m = _RE_ISO_DATE.fullmatch(core) or _RE_YMD_SLASH.fullmatch(core)
        if m:
            r = _date(m.group(1), m.group(3), m.group(4), dmy=False)
            if r:
                return r
        m = _RE_DMY.fullmatch(core)
        if m:
            a_, sep, b_, y = m.group(1), m.group(2), m.group(3), m.group(4)
            if sep == "." or int(a_) > 12:
                r = _date(y, b_, a_, dmy=True)
            else:
                r = _date(y, a_, b_, dmy=False)
            if r:
                return r
        m = _RE_ORDINAL.fullmatch(core)
        if m:
            digits, suf = m.group(1), m.group(2).lower()
            if _ordinal_suffix(digits.replace(",", "")) == suf:
                words = num.ordinal(digits)
                if self._month_of(nxt, lenient=True) and not self._month_of(prev, lenient=True):
                    return words if prev.lower() == "the" else f"the {words}"
                return words
            # 111st, 21th, 3nd: no ordinal; read as written, the suffix's letters spelled (NeMo
            # reads it so; "twenty first" for 21th would guess what the writer meant)
            return f"{num.cardinal(digits)} {letters_spoken(suf)}"
        before = cores[k - 2].lower() if k >= 2 and k - 2 < len(cores) else ""
        if core in _ROUND_PLURALS and (
            nxt.lower() == "of"
            or prev.lower() in ("the", "in", "by", "into")
            or (prev.lower() == "of" and before in ("hundreds", "thousands", "tens", "millions"))
        ):  # 1,000s of users, the 100s digit, hundreds of 1000s (not "a timeout of 100s")
            return _ROUND_PLURALS[core]
        m = _RE_DECADE.fullmatch(core)
        if (
            not m
            and len(core) == 3
            and (
                prev.lower() in _DECADE_CUES  # "the 20s", "in his 20s": decades, ages
                or _RE_DECADE.fullmatch(prev)
            )
        ):
            m = _RE_DECADE2.fullmatch(core)
            if m:
                return num.plural_of_words(num.cardinal(m.group(1)))
        if m:
            if m.group(1):
                return num.year_plural(m.group(1))
            if m.group(2) in ("00", "10"):  # '00s, '10s: the 2000s and 2010s, not "zeros"
                return num.year_plural("20" + m.group(2))
            return num.plural_of_words(num.cardinal(m.group(2)))
        if (
            len(core) == 4
            and core.isdecimal()
            and nxt.lower() in ("hours", "hrs")
            and int(core[:2]) <= 23
            and int(core[2:]) <= 59
        ):  # 0900 hours -> oh nine hundred hours, 1430 hours -> fourteen thirty hours
            hh = f"oh {num.ONES[int(core[1])]}" if core[0] == "0" else num.cardinal(core[:2])
            mm = "hundred" if core[2:] == "00" else num.clock_minutes(core[2:])
            return f"{hh} {mm}"
        m = _RE_HALF.fullmatch(core)
        if m:  # 1H23 -> the first half of twenty three (as 1Q23 is a quarter)
            yy = m.group(2)
            year = num.year(yy) if len(yy) == 4 else num.cardinal(yy)
            return f"the {num.ordinal(m.group(1))} half of {year}"
        if nxt == "s" and cores and k + 1 < len(cores) and _RE_DECADE_NUM.fullmatch(core):
            if not self._trails[k]:  # "1980 s": a decade written with a space
                self._pending_spoken[k + 1] = ""
                return num.year_plural(core)
        m = _RE_QUARTER.fullmatch(core)
        if m:
            yy = m.group(2)
            return f"the {num.ordinal(m.group(1))} quarter of {num.year(yy) if len(yy) == 4 else num.cardinal(yy)}"
        if core.endswith("%"):
            inner = self._plain_number(core[:-1], prev, nxt, k, cores, as_year=False)
            if inner is not None:
                return f"{inner} percent"
        if prev.lower().rstrip(".") not in _VERSION_WORDS and _RE_DOTTED.fullmatch(core):
            parts = core.split(".")
            if len(parts) == 4 and all(len(p) <= 3 for p in parts):
                # IPv4-shaped (NeMo reads 987.987.0.40 the same way, valid or not)
                return " dot ".join(num.digits_words(p) for p in parts)
        version = prev.lower().rstrip(".") in _VERSION_WORDS and _RE_DOTTED_ANY.fullmatch(core)
        if (
            (_RE_PHONE.fullmatch(core) or _RE_DIGIT_GROUPS.fullmatch(core))
            and not _RE_DECIMAL_RANGE.fullmatch(core)  # 0.5-1.5 is a range, not digit groups
            and not version  # Chrome 120.0.6099.109 is a version, not a phone number
        ):
            groups = core.lstrip("+").replace(".", "-").split("-")
            if (
                core.startswith("+")
                or len(groups) >= 3
                and sum(map(len, groups)) >= 7
                or len(groups) >= 3
                and "-" in core
            ):
                if not (_RE_DOTTED.fullmatch(core) and sum(map(len, groups)) < 7):
                    return ("plus " if core.startswith("+") else "") + _phone(core)
            if _RE_LOCAL_PHONE.fullmatch(core) and (
                core.startswith("555")
                or core[4] == "0"
                or any(c.lower().rstrip(".:,") in _PHONE_CUES for c in cores[max(0, k - 3) : k])
            ):  # call me at 555-1234, 867-5309: a local number (not "100-1000 users")
                return _phone(core)
        if version:
            return _version_parts(core.split("."))
        m = _RE_DOTTED.fullmatch(core)
        if m:
            parts = core.split(".")
            return _version_parts(parts)
        m = _RE_FRACTION_ORD.fullmatch(core)
        if m:
            words = num.fraction(m.group(1), m.group(2))
            return f"and {words}" if prev.isdecimal() else words  # "23 4/5th", "2/3rds"
        m = _RE_FRACTION.fullmatch(core)
        if (
            m
            and _is_number(prev)
            and prev.isdecimal()
            and m.group(1) == "1"
            and m.group(2) in ("2", "4")
        ):
            return "and a " + ("half" if m.group(2) == "2" else "quarter")
        if m:
            a_, b_ = m.group(1), m.group(2)
            date_cue = (
                prev.lower() in _DATE_CUES or prev in _WEEKDAY_2 or _is_weekday(prev)
            ) and nxt.lower() != "of"  # "on 3/4 of the days" is a fraction
            if (date_cue or (a_[0] == "0" and len(a_) == 2)) and _valid_month_day(a_, b_):
                # "by 5/1", "born 04/15", "Tu (2/22)": month/day, as written in the US
                return f"{MONTHS[int(a_) - 1]} {num.ordinal(str(int(b_)))}"
            if (
                len(a_) == 4 and len(b_) == 2 and _looks_year(a_) and int(b_) == (int(a_) + 1) % 100
            ):  # the 2023/24 season: a year and the next one
                return f"{num.year(a_)} to {num.cardinal(b_)}"
            if len(b_) >= 2 and int(a_) >= int(b_) and b_[0] != "0":
                return f"{num.cardinal(a_)} {num.cardinal(b_)}"  # 80/20, 50/50: a split
            if (
                prev.lower() in _SCORE_FRACTION_CUES or nxt.lower() in _SCORE_FRACTION_UNITS
            ) and int(a_) <= int(b_) <= 100:  # scored 3/5, 4/5 stars: a score
                return f"{num.cardinal(a_)} out of {num.cardinal(b_)}"
            if (
                prev.lower() in _PROGRESS_CUES
                and int(a_) <= int(b_) <= 999
                and nxt.lower() != "of"  # "file 3/4 of the set": a part of it
            ):
                return f"{num.cardinal(a_)} of {num.cardinal(b_)}"  # step 2/5: two of five
            if prev.isdecimal() and len(b_) <= 2:
                return f"and {num.fraction(a_, b_)}"
            return num.fraction(a_, b_)
        m = _RE_SCORE_RANGE.fullmatch(core)
        if m and not core.startswith(("-", "+")):
            # "1980-1970 kg": a unit after the range makes both ends quantities, not years
            years = not self._unit_after_number(nxt, m.group(2))
            if (
                years
                and 3 <= len(m.group(1)) <= 4
                and m.group(1).isdecimal()
                and m.group(2).isdecimal()
                and self._brand_mode(prev) in ("model", "maker")
            ):  # Boeing 787-9: the model and its variant; the dash is silent
                return f"{_model_digits(m.group(1))} {num.cardinal(m.group(2), and_=False)}"
            if years and _RE_MODEL_VARIANT.fullmatch(core) and _model_cue(prev):
                # Boeing 737-800, a 747-400: a model and its variant, said as the maker does
                left_, right_ = core.split("-")
                return f"{_three_digit_year(left_)} {num.cardinal(right_, and_=False)}"
            if self._month_of(prev) and _is_day(m.group(1)) and _is_day(m.group(2)):
                return f"{num.ordinal(m.group(1))} to {num.ordinal(m.group(2))}"  # March 3-5
            if self._month_of(nxt, lenient=True) and _is_day(m.group(1)) and _is_day(m.group(2)):
                return f"the {num.ordinal(m.group(1))} to the {num.ordinal(m.group(2))} of"
            left = self._plain_number(m.group(1), prev, "", k, cores, as_year=years)
            right = self._plain_number(m.group(2), "", nxt, k, cores, as_year=years)
            if left and right:
                if m.group(1) == m.group(2):
                    return f"{left} {right}"  # 50-50: a split, not a range
                if (
                    years
                    and _descending(m.group(1), m.group(2))
                    and not self._hours_range(m.group(1), m.group(2), prev, nxt)
                ):
                    # "978-0", "3-1": a range goes up, so this is a code or a score and the
                    # hyphen is silent (unless a unit follows: "1980-1970 kg" is a range);
                    # a score is said with "to" (beat them 108-102, won 4-2, a 52-48 vote)
                    back = [c.lower() for c in cores[max(0, k - 3) : k]]
                    if _is_score(m.group(1), m.group(2), back, nxt):
                        return f"{left} to {right}"
                    return f"{left} {right}"
                return f"{left} to {right}"
        r = self._plain_number(core, prev, nxt, k, cores, as_year=True)
        if r is not None:
            return r
        # number + attached unit / scale: 5kg, 22ms, 100km/h, 4.4x, 30k
        j = 0
        while j < len(core) and (core[j].isdecimal() or core[j] in ".,-+"):
            j += 1
        if 0 < j < len(core):
            number, rest = core[:j], core[j:]
            unit = self._unit(rest, spaced=False)
            if (
                len(rest) == 1
                and rest.isupper()
                and number.isdecimal()
                and prev.lower().rstrip(".") in _SEAT_CUES
            ):  # seat 23A, gate 4B, row 12C: a place, not amperes
                return f"{_model_digits(number)} {rest}"
            if unit is not None:
                said = self._plain_number(number, prev, "", k, cores, as_year=False)
                if said is not None:
                    singular = _is_one(number) or _unit_adjective(prev, nxt)  # a 65W charger
                    return f"{said} {unit[0] if singular else unit[1]}"
            if rest.lower().startswith("/") and len(rest) > 1:
                unit = self._unit(rest[1:], spaced=False)
                said = self._plain_number(number, prev, "", k, cores, as_year=False)
                if unit is not None and said is not None:
                    return f"{said} per {unit[0]}"
        return None

    def _address_reading(self, core: str, k: int, cores: list[str]) -> str | None:
        """House numbers and ZIP codes: ``123 Laguna Ct`` -> "one twenty three", ``CA 95051``."""
        if not core.isdecimal() or not cores or k >= len(cores) or cores[k] != core:
            return None
        prev = cores[k - 1] if k > 0 else ""
        if len(core) == 5 and prev in _STATES:
            return num.digits_words(core)
        if len(core) > 5:
            return None
        for j in range(k + 1, min(k + 5, len(cores))):
            w = cores[j].rstrip(".").lower()
            if w in _STREET or w in _STREET_WORDS:
                if j == k + 1:
                    return None  # "5 St" is not an address
                break
            c = cores[j]
            if not (_is_capitalized(c) or c in _DIRECTIONS or _RE_ORDINAL.fullmatch(c)):
                return None
            if j > k + 1 and self._trails[j - 1 if j - 1 < len(self._trails) else -1]:
                return None  # punctuation between number and street type
        else:
            return None
        if len(core) <= 2:
            return num.cardinal(core)
        if len(core) == 3:
            # 123 -> one twenty three; 708 -> seven zero eight (NeMo; "oh" is heard too)
            return _three_digit_year(core, zero="zero")
        if len(core) == 4:
            return num.pair_reading(core)
        return num.digits_words(core)

    def _plain_number(
        self, core: str, prev: str, nxt: str, k: int, cores: list[str], *, as_year: bool
    ) -> str | None:
        """Integers and decimals with sign and thousands separators; ``None`` if not one.

        Before a scale word the number is a group of a larger one and says no "and"
        (``460 billion`` -> "four hundred sixty billion", as ``460,000,000,000`` would)."""
        if nxt.lower() in _SCALE_WORDS:
            with num.number_style(and_=False):
                return self._plain_number_inner(core, prev, nxt, k, cores, as_year=as_year)
        return self._plain_number_inner(core, prev, nxt, k, cores, as_year=as_year)

    def _plain_number_inner(
        self, core: str, prev: str, nxt: str, k: int, cores: list[str], *, as_year: bool
    ) -> str | None:
        if not core or not (core[0].isdecimal() or core[0] in "-+."):
            return None
        m = _RE_NUMBER.fullmatch(core)
        if not m or not (m.group(2) or m.group(3)):
            return None
        sign, ip, frac = m.group(1), m.group(2) or "", m.group(3)
        if frac is None and core.endswith("."):
            return None
        if (
            frac is not None
            and len(frac) == 2
            and len(ip) <= 2
            and not sign
            and nxt.lower().rstrip(".") in ("am", "pm", "a.m", "p.m")
        ):
            t = _time(ip, frac, None, None, nxt)
            if t:
                return t
        words: str
        addr = (
            None
            if (frac is not None or sign or "," in ip)
            else self._address_reading(core, k, cores)
        )
        if addr is not None:
            words = addr
        elif frac is not None:
            words = num.decimal(ip, frac)
        elif "," in ip:
            words = num.cardinal(ip)
        elif len(ip) > MAX_GROUPED_DIGITS:
            words = num.digits_words(ip)
        elif (
            nxt.replace(".", "").upper() in ("AD", "BC", "BCE", "CE") or prev.lower() == "year"
        ) and len(ip) in (3, 4):
            words = num.year(ip) if len(ip) == 4 else _three_digit_year(ip)
        elif len(ip) > 1 and ip[0] == "0":
            words = num.digits_words(ip)
        elif (
            3 <= len(ip) <= 5
            and (mode := self._brand_mode(prev)) is not None
            and not sign
            and not self._unit_after_number(nxt, ip)
            and not (mode == "maker" and _is_plural_noun(nxt))  # Intel 250 engineers
        ):  # ISO 9001, IEEE 754, Snapdragon 888, Dimensity 9300: a name's number
            words = _standard_digits(ip) if mode == "standard" else _model_digits(ip)
        elif len(ip) == 4 and self._model_context(prev):
            words = num.pair_reading(ip)
        elif (
            ip == "101"
            and (prev.isupper() or _is_capitalized(prev))
            and prev.isalpha()
            and prev.lower() not in _COMMAND_VERBS
            and prev.lower() not in _DETERMINERS
            and prev.lower() not in _SMALL_WORDS
        ):
            words = "one oh one"  # CS 101, Marketing 101: an introductory course
        elif len(ip) == 3 and nxt == "MAX" and ip[1:] != "00":
            words = _model_digits(ip)  # the 737 MAX: a model
        elif len(ip) == 3 and prev.lower() in _VERSION_WORDS:
            words = num.cardinal(ip, and_=False)  # Chrome 120: a version is a name, no "and"
        elif (
            len(ip) == 3
            and prev.lower() in ("dial", "call", "dialing", "dialled", "dialed")
            and not (nxt.isalpha() and nxt.islower() and nxt not in _AFTER_DIALLING)
        ):
            words = num.digits_words(ip)  # dial 999, call 112: an emergency or service number
        elif len(ip) == 3 and prev.lower().rstrip(":") in _STATUS_CUES and ip[1:] != "00":
            words = _three_digit_year(ip)  # HTTP 404 -> four oh four, error 503
        elif len(ip) in (3, 4) and self._nominal_cue(prev, k, cores):
            # room 101, flight UA 857, gate 1204: numbers that name, said in pairs
            words = _three_digit_year(ip) if len(ip) == 3 else num.pair_reading(ip)
        elif (
            as_year
            and len(ip) == 4
            and 1100 <= int(ip) <= 2099
            and not sign
            and not self._unit_after_number(nxt, ip)
            and nxt.lower() not in _SCALE_WORDS
            and not (int(ip) % 1000 == 0)
        ):
            words = num.year(ip)
        elif self._month_of(prev, lenient=True) and len(ip) <= 2 and 1 <= int(ip) <= 31:
            words = num.ordinal(ip)
        elif self._month_of(nxt, lenient=True) and len(ip) <= 2 and 1 <= int(ip) <= 31 and not sign:
            words = num.ordinal(ip) if prev.lower() == "the" else "the " + num.ordinal(ip)
        else:
            words = num.cardinal(ip)
        if sign == "-":
            words = "minus " + words
        elif sign == "+":
            words = "plus " + words
        return words

    @staticmethod
    def _hours_range(a: str, b: str, prev: str, nxt: str) -> bool:
        """``Mon-Fri 9-5``, ``open 9-5``, ``a 9-5 job``: clock hours, a range although the
        numbers go down (a score ``won 9-5`` stays a score)."""
        if not (a.isdecimal() and b.isdecimal() and 1 <= int(a) <= 12 and 1 <= int(b) <= 12):
            return False
        return (
            _RE_DAY_RANGE.fullmatch(prev) is not None
            or prev.lower() in ("open", "opens", "hours", "daily", "weekdays")
            or nxt.lower().rstrip(".,") in ("job", "jobs", "shift", "shifts", "workday", "daily")
        )

    def _nominal_cue(self, prev: str, k: int, cores: list[str]) -> bool:
        """``room 101``, ``flight UA 857``: a number after a word that names by number."""
        if prev.lower() in _NOMINAL_CUES:
            return True
        before = cores[k - 2].lower() if k >= 2 and k - 2 < len(cores) else ""
        return before == "flight" and prev.isupper() and len(prev) == 2

    def _brand_mode(self, prev: str) -> str | None:
        """How the digits after ``prev`` are read when it names a product line or a standard
        (``data/brands.tsv``, or a lexicon entry ``"<name> #"`` whose spoken is a mode);
        ``ISO/IEC`` counts when one of its parts does."""
        if not prev[:1].isupper():
            return None
        entry = self.lex_get(prev + " #")
        said = getattr(entry, "spoken", None) if entry is not None else None
        if said in BRAND_MODES:
            return said
        for name in prev.removesuffix("'s").removesuffix("’s").split("/"):
            mode = self.t.brands.get(name.casefold()) if name[:1].isupper() else None
            if mode is not None:
                return mode
        return None

    def _model_context(self, prev: str) -> bool:
        """``RTX 4070``, ``GTX 1080``: four digits after an all-caps product name."""
        return (
            len(prev) >= 2
            and prev.isalpha()
            and prev.isupper()
            and prev not in ("AD", "BC", "CE", "BCE")
            and prev not in self.t.acronyms
        )

    def _unit(self, u: str, *, spaced: bool) -> tuple[str, str, bool] | None:
        t = self.t
        for cand in (u, u.replace("μ", "µ")):
            hit = t.units.get(cand)
            if hit is not None and (hit[2] or not spaced):
                return hit
            hit = t.units_folded.get(cand.casefold())
            if hit is not None:
                return hit
        if "/" in u:
            a, _, b = u.partition("/")
            # "3 cc/s": after a space the first unit must be one that may stand spaced
            ua, ub = self._unit(a, spaced=spaced), self._unit(b, spaced=False)
            if ua and ub:
                return (f"{ua[0]} per {ub[0]}", f"{ua[1]} per {ub[0]}", False)
        return None

    def _spaced_letter_unit(self, core: str, k: int, cores: list[str]) -> bool:
        """A one-letter unit after a spaced number: ``a 700 W supply``, ``12 V``, ``2 A``,
        ``wait 30 s``, ``5 m``, ``2 L``. Spaced single letters are units only here: right after
        a plain number with nothing between, not after a label that numbers things
        (``Section 5 A``, ``Plan 9 A``, ``row 3 B``), and not before another letter, a digit
        or ``'s`` (``5 A B C``, ``3 A's``): there a letter is a letter."""
        head, slash, tail = core.partition("/")  # 3 W/m2, 5 V/div: a rate of a letter unit
        if slash and (head not in _SPACED_LETTER_UNITS or self._unit(tail, spaced=False) is None):
            return False
        if head not in _SPACED_LETTER_UNITS or k == 0 or k >= len(cores):
            return False
        prev = cores[k - 1]
        amount = (  # 700 W, 110/220 V, 100-240 V
            _RE_PLAIN_NUM.fullmatch(prev)
            or _RE_NUMBER_ALTERNATIVES.fullmatch(prev)
            or (_RE_SCORE_RANGE.fullmatch(prev) and not _descending(*prev.split("-", 1)))
        )
        if not amount or self._trails[k - 1]:
            return False
        label = cores[k - 2].lower().rstrip(".:#") if k >= 2 else ""
        if label in _SEQUENCE_WORDS or label in _LABEL_WORDS or label in _NUMBER_WORDS:
            return False
        if k >= 2 and len(cores[k - 2]) == 1 and cores[k - 2].isalpha() and label != "a":
            return False  # "A 5 B": a list of letters and numbers
        nxt = cores[k + 1] if k + 1 < len(cores) and not self._trails[k] else ""
        if nxt.lower() in ("or", "and", "to") and k + 2 < len(cores):
            nxt = cores[k + 2]  # "1 A or B": letters to choose from
        return not (nxt[:1].isdecimal() or (len(nxt) == 1 and nxt.isalpha()))

    def _unit_after_number(self, core: str, prev: str) -> bool:
        if not core or not prev:
            return False
        if _RE_SCORE_RANGE.fullmatch(prev):
            prev = prev.rsplit("-", 1)[1]
        elif _RE_DIMENSION.fullmatch(prev):
            prev = re.split("[x×]", prev)[1]  # "2x8 m2"
        elif _RE_FRACTION.fullmatch(prev):
            prev = "2"  # "4 1/2 lbs": plural
        if not (
            prev.lower() in _SCALE_WORDS
            or (_RE_NUMBER.fullmatch(prev) and any(c.isdecimal() for c in prev))
        ):
            return False
        return self._unit(core, spaced=True) is not None

    def _money(self, core: str, nxt: str, k: int) -> str | None:
        """``$5.99``, ``£2.01``, ``$45 billion``, ``$2.5M``; a number before a scale (word or
        abbreviation) says no "and" (see :meth:`_plain_number`)."""
        rest = core[len(_currency_prefix(core) or core[0]) :]
        scaled = nxt.lower() in _SCALE_WORDS or nxt in _SPACED_SCALE
        if scaled or (rest[-1:].isalpha() and rest[-2:-1].isdecimal()) or rest.endswith("bn"):
            with num.number_style(and_=False):
                return self._money_inner(core, nxt, k)
        return self._money_inner(core, nxt, k)

    def _money_inner(self, core: str, nxt: str, k: int) -> str | None:
        before = self._core_texts[k - 1] if 0 < k <= len(self._core_texts) else ""
        self._money_prev = before if k > 0 and not self._trails[k - 1] else ""
        sym = _currency_prefix(core) or core[0]
        rest = core[len(sym) :]
        names = CURRENCIES[sym]
        scale = ""
        for suf in ("bn", "mm", "k", "K", "m", "M", "b", "B", "t", "T"):
            if rest.endswith(suf) and rest[: -len(suf)][-1:].isdecimal():
                scale = _SCALE_SUFFIX[suf]
                rest = rest[: -len(suf)]
                break
        if sym == "€" and _RE_COMMA_DECIMAL.fullmatch(rest):
            rest = rest.replace(",", ".")  # €2,50: a decimal comma (euros are written so)
        m = _RE_NUMBER.fullmatch(rest)
        if not rest or not m or m.group(1) or not (m.group(2) or m.group(3)):
            return None
        ip, frac = m.group(2) or "", m.group(3)
        unit_one, unit_many, sub_one, sub_many = names
        if not scale and nxt in _SPACED_SCALE and k + 1 not in self._pending_suffix:
            # "¥30 b": an abbreviated scale after a space reads as the word, currency after it
            words = num.decimal(ip, frac) if frac else num.cardinal(ip or "0")
            self._pending_spoken[k + 1] = f"{_SCALE_SUFFIX[nxt]} {unit_many}"
            return words
        if not scale and nxt.lower() in _SCALE_WORDS:
            # "$45 billion": the currency name moves after the scale word.
            words = num.decimal(ip, frac) if frac else num.cardinal(ip or "0")
            self._pending_suffix[k + 1] = unit_many
            return words
        if scale:
            words = num.decimal(ip, frac) if frac else num.cardinal(ip or "0")
            return f"{words} {scale} {unit_many}"
        ip_i = int(ip.replace(",", "")) if ip and len(ip) <= 30 else None
        if frac is not None and len(frac) > 2:
            frac = frac.rstrip("0").ljust(2, "0")  # $1.2320 -> 1.232, $12.0500 -> 12.05
        if frac is not None and sub_many and len(frac) <= 3 and (len(frac) <= 2 or frac[2:] == "0"):
            cents = int((frac + "0")[:2])
            main = ""
            if ip_i:
                main = f"{num.cardinal(ip)} {unit_one if ip_i == 1 else unit_many}"
            if cents == 0:
                return main or f"zero {unit_many}"
            sub = f"{num.cardinal(str(cents))} {sub_one if cents == 1 else sub_many}"
            # "twenty dollars fifty cents": no "and" between the units, as NeMo says; the
            # "and" of the numbers themselves (one hundred and five dollars) stays clear.
            return f"{main} {sub}" if main else sub
        if frac is not None:
            return f"{num.decimal(ip, frac)} {unit_many}"
        words = num.cardinal(ip)
        prev = self._money_prev
        one = ip_i == 1 or _unit_adjective(prev, nxt)  # a $5 bill: five dollar
        return f"{words} {unit_one if one else unit_many}"

    # -- words ------------------------------------------------------------------------------

    def _abbreviation(self, core: str, prev: str, nxt: str) -> str | None:
        t = self.t
        low = core.lower()
        if low in ("st.", "st"):
            return (
                "saint"
                if nxt[:1].isupper() and not _is_capitalized(prev) and not _is_number(prev)
                else "street"
            )
        if low in ("dr.",):
            if _is_capitalized(prev) and not nxt[:1].isupper():
                return "drive"
            return "doctor"
        if low in ("no.", "nos.") and not _is_number(nxt):
            return None
        if core in t.abbreviations:
            return t.abbreviations[core]
        if core.casefold() in t.abbreviations_folded:
            return t.abbreviations_folded[core.casefold()]
        month = self._month_of(core)
        if month and (core[0].isupper() or _is_day(prev) or _is_day(nxt) or _looks_year(nxt)):
            return MONTHS[month - 1]
        if _RE_INITIALS.fullmatch(core):
            return letters_spoken(core)
        return None

    def _month_of(self, core: str, *, lenient: bool = False) -> int:
        """Month number of a month name/abbreviation; lower-case abbreviations (and lower-case
        "may") count only when ``lenient`` (the caller saw a day number next to it)."""
        low = core.lower().rstrip(".")
        if low in _MONTH_FULL:
            if low == "may" and core[0] != "M" and not lenient:
                return 0
            return _MONTH_FULL[low]
        if low in _MONTH_ABBR and (core[0].isupper() or lenient or core.endswith(".")):
            return _MONTH_ABBR[low]
        return 0

    def _read_alpha(self, core: str, prev: str, nxt: str) -> str:
        """A word of letters (inner apostrophes/hyphens allowed): word, acronym or camelCase."""
        roman = self._roman(core, prev, nxt)
        if roman is not None:
            return roman
        if "-" in core:
            parts = core.split("-")
            if all(parts):
                if parts[0] in _REGION_CODES and parts[1].lower() in _REGION_DIRECTIONS:
                    parts[0] = parts[0].upper()  # us-east, eu-west-2: a cloud region's code
                return " ".join(self._read_alpha(p, "", "") if p.isalpha() else p for p in parts)
        return self.read_word(core, prev, nxt)

    def read_word(self, w: str, prev: str = "", nxt: str = "") -> str:
        """One alphabetic word -> spoken (acronyms spelled, camelCase split)."""
        t = self.t
        if w in t.acronyms:
            return t.acronyms[w]
        if len(w) > 1 and w.isalpha() and w.casefold() in t.special_folded:
            return t.special_folded[w.casefold()]  # RoBERTa-large: a part with its reading
        base = w.replace("'", "")
        if len(w) == 1:
            if (
                w == "A"
                and nxt[:1].islower()
                and nxt.lower() not in _NO_ARTICLE_BEFORE
                and not _is_number(prev)
                and prev.lower() not in _LETTER_LABELS
            ):
                return "a"  # "A cat"; but "1 A or B", "Type A personality": the letter
            return w.upper() if w not in ("a", "I") else w
        if w in ("id", "ids"):
            return "I D" if w == "id" else "I D's"  # WHERE id = 5, the ids: never Freud's id
        if _RE_LAUGH.fullmatch(w):
            return w.lower()  # HAHAHA, HEHE, Hahaha: laughter, never the letters H A H A
        if base.isupper() and base.isalpha():
            if w == "IT" and prev.lower() in _DETERMINERS:
                return "I T"  # THE IT TEAM, OUR IT DEPARTMENT: information technology
            if self._shouting and w.lower() in cmudict() and not _spelled_in_cmudict(w.lower()):
                return w.lower()  # a headline; but HTML, SQL stay spelled (CMUdict spells them)
            if w == "TO" and nxt in ("B", "C", "G", "b", "c", "g"):
                return "to"  # TO B, TO C: business jargon (to businesses, to consumers)
            if w in _CAPS_FUNCTION_WORDS and any(self._caps_word(x) for x in (prev, nxt)):
                return w.lower()  # DO NOT, GO TO: a shouted phrase, not the letters D O
            return self._acronym(w)
        if len(base) > 2 and base[:-1].isupper() and base[-1] == "s" and base[:-1].isalpha():
            # GPUs, APIs: plural of an acronym
            stem = base[:-1]  # GPUs, GPU's, CPUs' (a plural possessive)
            sp = t.acronyms.get(stem) or self._acronym(stem)
            apostrophe = " " in sp or len(sp) == 1 or w.endswith("'s")
            return sp + ("'s" if apostrophe else "s")  # NVIDIA's: nvidia's (was "nvidias")
        low = w.lower()
        if len(w) <= 5 and w.isalpha() and not _has_vowel(w) and low not in cmudict():
            return letters_spoken(w)  # ssh, npm, IPv: no vowel, no word: said letter by letter
        stem, apo, rest = w.partition("'")
        if apo and rest in ("d", "s", "ed", "ing") and stem.islower() and _primary_spelled(stem):
            return f"{letters_spoken(stem)}'{rest}"  # cc'd, pr's: the letters, then the ending
        if 2 <= len(w) <= 4 and w.isalpha() and w.islower() and w not in ("ok", "cu"):
            if _primary_spelled(w) or (len(w) == 2 and w not in cmudict()):
                # cc, pr, hr, ui, api, url (CMUdict's first reading is the letters), qa, ux
                # (no word at all): spelled in ``spoken`` too, so text engines spell them
                return letters_spoken(w)
        if (
            len(w) >= 5
            and low[0] == "x"
            and w[1:].islower()
            and low not in cmudict()
            and low[1:] in cmudict()
        ):
            return f"X {low[1:]}"  # xlarge, xterm, xpath, Xcode: the letter X, then the word
        if w.islower() and len(w) >= 8 and w.isascii() and not _dict_word(w):
            # lower case only: a capitalised name is more often no compound (Coursera)
            parts = _compound_split(w)
            if parts:
                # elasticsearch, typescript, dataloader: two CMUdict words written together
                # (the neural model garbled them: "typescript" T AY1 S P IH2 K T R AH2 P)
                return " ".join(parts)
        if w.islower() or (w[0].isupper() and w[1:].islower()):
            return w
        if len(w) == 2 and w[0].islower() and w[1].isupper():
            return letters_spoken(w)  # pH, dB, eV (no number before: no unit): the letters
        parts = _camel_split(w)
        # iOS, macOS, ChatGPT: a capitals part is an acronym, so split even if CMUdict knows
        # the whole spelling (it has "ios" the island); iPhone, YouTube stay whole.
        has_acronym_part = any(len(p) > 1 and p.isupper() for p in parts)
        if (
            len(parts) == 2
            and len(parts[0]) == 2
            and len(parts[1]) >= 2
            and parts[1].isupper()
            and low in cmudict()
            and not _spelled_in_cmudict(low)
        ):
            return low  # ZeRO, GaN: a word with capitals for style, not "Ze R O"
        if (
            len(parts) >= 2
            and len(parts[-1]) == 1
            and parts[-1].isupper()
            and len(w) >= 5
            and "".join(parts[:-1]).lower() in cmudict()
        ):  # SpaceX: the word and the letter (CMUdict's "spacex" is S P EY1 S AH0 K S)
            return f"{self.read_word(''.join(parts[:-1]))} {parts[-1]}"
        if low in cmudict() and not has_acronym_part:
            if _spelled_in_cmudict(low):
                return letters_spoken(w)  # PhD, MiB: CMUdict spells it, so text engines must
            return w
        if len(parts) > 1:
            return " ".join(self.read_word(p) for p in parts)
        return w

    def _caps_word(self, w: str) -> bool:
        """An all-capital word of 3+ letters that is read as a word (``NOT``, ``WARNING``)."""
        return len(w) >= 3 and w.isalpha() and w.isupper() and self._acronym(w).islower()

    def _acronym(self, w: str) -> str:
        t = self.t
        if w in t.acronyms:
            return t.acronyms[w]
        letters_only = "".join(c for c in w if c.isalpha())
        if (
            len(letters_only) >= 4
            and _has_vowel(letters_only)
            and _dict_word(letters_only.lower())
            and not _spelled_in_cmudict(letters_only.lower())
        ):  # WARNING, ERROR, LOCK, RETRIES: words; HTML, ESPN: CMUdict spells them, so do we
            return letters_only.lower()
        rest = letters_only[1:].lower()
        if (
            letters_only == w
            and len(rest) >= 4
            and _has_vowel(rest)
            and rest in cmudict()
            and not _spelled_in_cmudict(rest)
            and not _dict_word(letters_only.lower())
        ):  # VLOOKUP, XLOOKUP, ECOMMERCE, ETRADE: a letter and a word ("V lookup")
            return f"{w[0]} {rest}"
        low = letters_only.lower()
        if letters_only == w and len(w) >= 4 and low not in cmudict():
            head = low[:-1]
            if (
                len(head) >= 4
                and w[-1] in "BCDFGJKMNPQRTVXZ"
                and head in cmudict()
                and not _spelled_in_cmudict(head)
            ):
                return f"{head} {w[-1]}"  # TYPEC, LINKERD: a word and a letter ("type C")
            parts = _compound_split(low) if len(w) >= 8 else None
            if parts:
                return " ".join(parts)  # PYTHONPATH, CHANGELOG: two words in capitals
            if sayable(w):
                # OPPO, LENOVO, XIAOMI, SOTA, POSIX: letters that make syllables are said as
                # a word (it was O P P O); CMUdict's own acronyms stay spelled (see sayable)
                return low
        return letters_spoken(w)

    def _roman(self, core: str, prev: str, nxt: str = "x") -> str | None:
        """Roman numerals only in unambiguous places: ``Henry VIII``, ``World War II``."""
        if not core.isupper() or not core.isalpha():
            return None
        value = num.roman_to_int(core)
        if value is None:
            return None
        p = prev.rstrip(".")
        if p == "GTA" and core in ("IV", "V", "VI"):
            return num.cardinal(str(value))  # GTA V: the game's number
        if p.lower() in _SEQUENCE_WORDS and (len(core) >= 2 or core in ("I", "V", "X")):
            return num.cardinal(str(value))
        if (len(core) >= 2 or not nxt or core in ("V", "X")) and (
            p in _REGNAL_NAMES or (self._before_prev in _REGNAL_TITLES and p[:1].isupper())
        ):
            # a lone "I" only before punctuation or the end ("Francis I." but "Francis I think")
            return "the " + num.ordinal(str(value))
        if (
            len(core) >= 2
            and set(core) <= set("IVX")
            and 2 <= value <= 39
            and len(p) >= 2
            and p[0].isupper()
            and p[1:].islower()
            and p.isalpha()
            and core not in self.t.acronyms
            and p.lower() not in _COMMAND_VERBS  # "Use VI": the editor
        ):  # Rocky IV, Final Fantasy VII, Type II, Phase III: a title's or a kind's number
            return num.cardinal(str(value))
        if (
            len(core) >= 2
            and set(core) <= set("IVX")
            and 2 <= value <= 12
            and re.fullmatch(r"[A-Z]{1,3}\d{1,4}", p)
        ):
            # Sony A7 III, RX100 VII: a camera's generation after its model code, the number
            # (it was spelled I I I; the zh frontend says A 七，三)
            return num.cardinal(str(value))
        if core in ("II", "III") and len(p) >= 2 and p.isupper() and p.isalpha():
            # SATA III, USB II, DDR II: a generation after an all-capital name, said as the
            # number ("SATA three", as the zh frontend's SATA 三); II and III are no acronym
            # nor word (it was spelled I I I)
            return num.cardinal(str(value))
        return None

    # -- URLs, e-mails ----------------------------------------------------------------------

    def read_electronic(self, core: str) -> str:
        """Read a URL / e-mail / domain by parts: ``a.b@c.com`` -> "a dot b at c dot com"."""
        out: list[str] = []
        i, n = 0, len(core)
        names = {
            ".": "dot", "@": "at", "/": "slash", ":": "colon", "-": "dash", "_": "underscore",
            "?": "question mark", "=": "equals", "&": "ampersand", "#": "hash", "~": "tilde",
            "%": "percent", "+": "plus", ",": "comma", ";": "semicolon", "!": "exclamation mark",
            "*": "star", "$": "dollar", "\\": "backslash",
        }  # fmt: skip
        while i < n:
            c = core[i]
            j = i
            if c.isalpha():
                while j < n and core[j].isalpha():
                    j += 1
                out.append(self._url_word(core[i:j]))
            elif c.isdecimal():
                while j < n and core[j].isdecimal():
                    j += 1
                run = core[i:j]
                if len(run) in (4, 5) and run.endswith("000") and run[0] != "0":
                    out.append(num.cardinal(run))  # /rtx-6000: a round model number
                else:
                    out.append(num.digits_words(run))
            else:
                j = i + 1
                out.append(names.get(c, c))
            i = j
        return " ".join(x for x in out if x)

    def _shown_parts(self, src: str, said: str) -> str | None:
        """The shown form of a hyphenated word read part by part (``DeepSeek-V`` -> "DeepSeek
        V", said "Deep Seek V"): each part as :func:`_shown_as_written` shows it; ``None`` when
        nothing changes or the reading is not the parts' readings (``Wi-Fi`` wifi)."""
        parts = src.split("-")
        if not all(parts):
            return None
        readings = [self._read_alpha(p, "", "") for p in parts]
        if " ".join(readings) != said:
            return None
        shown = [
            _written_form(p, r) if _shown_as_written(p, r, self.t.acronyms.get(p)) else r
            for p, r in zip(parts, readings, strict=True)
        ]
        out = " ".join(shown)
        return out if out != said else None

    def _key_name(self, key: str) -> str:
        """One key of a combination: a modifier's name, a letter spelled, ``F4``, a key word."""
        if key in _KEY_NAMES or key.lower() in _KEY_NAMES:
            return _KEY_NAMES.get(key) or _KEY_NAMES[key.lower()]
        if len(key) == 1:
            return key.upper() if key.isalpha() else self._alnum(key)
        return self._alnum(key) if any(c.isdecimal() for c in key) else self.read_word(key)

    def _handle_name(self, name: str) -> str:
        """The name of a social-media handle, part by part (``_`` and ``.`` are silent).

        A part with a fixed reading keeps it (``openai`` -> open A I, as the brand is said);
        a lower-case part is read like a label of an address (``elonmusk`` -> elon musk,
        ``nasa`` -> Nasa); capitals, camelCase and digits as everywhere (``OpenAIDevs``,
        ``user42``)."""
        t = self.t
        out: list[str] = []
        for part in re.split(r"[_.]+", name):
            if not part:
                continue
            if part.casefold() in t.special_folded:
                out.append(t.special_folded[part.casefold()])
            elif part.isalpha() and part.islower() and part.upper() in t.acronyms:
                out.append(t.acronyms[part.upper()])
            elif part.isalpha() and part.islower() and len(part) > 3:
                out.append(self._url_word(part))
            else:
                out.append(self._alnum(part))
        return " ".join(out)

    def _lex_said(self, w: str) -> str | None:
        """The text a lexicon entry gives ``w`` (its spoken form or respelling), if any."""
        entry = self.lex_get(w) if len(w) > 1 else None
        said = getattr(entry, "spoken", None) or getattr(entry, "respelling", None)
        return said if isinstance(said, str) else None

    def _url_word(self, w: str) -> str:
        low = w.lower()
        said = self._lex_said(w)
        if said is not None:
            return said  # docs/CHANGELOG.md, /etc/nginx: a lexicon word inside an address
        if low in ("www", "http", "https", "ftp"):
            return letters_spoken(low)
        if low == "edu":
            return "E D U"  # mit.edu, pku.edu.cn: "dot E D U" (was the word, EH1 D Y UW0)
        if low in ("com", "org", "net", "gov", "info", "co"):
            return low
        if low in ("jpg", "jpeg"):
            return "jay peg"
        if w == low and low in self.t.acronyms:
            return self.t.acronyms[low]  # report.docx: doc X; aws.amazon.com: A W S
        if low in _PATH_WORDS:
            return _PATH_WORDS[low]  # /usr/local/bin: slash user slash local slash bin
        if low in _SHORT_WORDS and not w.isupper():
            return low  # /home/my_files: "my" is a word, "io" "js" are spelled
        if len(low) <= 2 or (len(low) == 3 and low not in cmudict()) or _primary_spelled(low):
            return letters_spoken(low)  # abc, api: CMUdict's first reading spells them
        if w.isupper() and len(w) > 1:
            return self._acronym(w)
        if not _has_vowel(low) and low not in cmudict():
            return letters_spoken(low)  # WgXcQ (a video id), xkcd: no vowel, no word
        if (
            4 <= len(low) <= 5
            and low not in cmudict()
            and _RE_THREE_CONSONANTS.search(low)
            and not _RE_SAYABLE_CLUSTER.search(low)
        ):
            return letters_spoken(low)  # icbc.com.cn, ipfs.io: three consonants no word has
        if len(low) >= 5 and low[0] == "x" and low not in cmudict() and low[1:] in cmudict():
            return f"X {low[1:]}"  # m5.xlarge, xsmall: the size letter, then the word
        if len(low) >= 6 and low not in cmudict():
            parts = _dict_split(low) if len(low) >= 8 else None
            if parts:
                return " ".join(parts)  # enterpriseservices -> enterprise services
            for n in (4, 3, 2):  # rtxprohelp -> R T X pro help: an acronym, then words
                head, rest = low[:n], low[n:]
                if _has_vowel(head):
                    continue
                tail = [rest] if rest in cmudict() else _dict_split(rest, min_len=3)
                if tail:
                    return " ".join([letters_spoken(head), *tail])
        return low

    # -- generic fallback -------------------------------------------------------------------

    def _fallback(self, s: str, a: int, b: int, prev: str, nxt: str) -> list[Tok]:
        """Cut a core no rule read whole into runs: letters/digits together, symbols apart."""
        pieces: list[Tok] = []
        i = a
        alnum_start = None
        equation = "=" in s[a:b]
        while i <= b:
            c = s[i] if i < b else " "
            inner = (
                (
                    c in "-_."
                    and alnum_start is not None
                    and i + 1 < b
                    and s[i + 1].isalnum()
                    and not (equation and c == "-" and not _named_dash(s, alnum_start, i))
                )
                or (  # 5,000-word: a thousands separator inside a compound
                    c == ","
                    and alnum_start is not None
                    and s[i - 1].isdecimal()
                    and _is_digits(s, i + 1, min(i + 4, b))
                    and i + 4 <= b
                    and not s[i + 4 : i + 5].isdecimal()
                )
            )
            readable = (
                c.isdecimal()
                or is_latin_letter(c)
                or (unicodedata.combining(c) and alnum_start is not None)
            )
            if readable or (c == "'" and alnum_start is not None) or inner:
                if alnum_start is None:
                    alnum_start = i
                i += 1
                continue
            if alnum_start is not None:
                run = s[alnum_start:i]
                if (
                    _RE_PLAIN_DECIMAL.fullmatch(run)
                    and alnum_start >= 2
                    and s[alnum_start - 1] == "="
                    and s[alnum_start - 2] not in "=!<>:"
                ):  # p=0.93, AUC=0.93: a value, "zero point nine three" (numpy==1.26: a version)
                    whole, _, frac = run.partition(".")
                    pieces.append(Tok(alnum_start, i, num.decimal(whole, frac)))
                else:
                    pieces.append(Tok(alnum_start, i, self._alnum(run)))
                alnum_start = None
            if i < b:
                sym = self._symbol(s, i, prev, nxt)
                sym.end = min(sym.end, b)
                pieces.append(sym)
                i = sym.end
            else:
                i += 1
        return [p for p in pieces if p.end > p.start]

    def _alnum(self, w: str) -> str:
        """Mixed letters and digits: ``i7-12700K``, ``H200``, ``x86``, ``Qwen2.5``, ``1080p``.

        Numbers inside a code never say "and" (``133-ABC`` -> "one hundred thirty three A B
        C", ``A321`` -> "A three twenty one"): it is a name, not a quantity. Runs of digits
        alone (``114...48``) and a number before a unit word (``123.2-millimeters``) are
        quantities and keep the convention in force."""
        if not any(c.isalpha() for c in w):
            return self._alnum_inner(w)
        with num.number_style(and_=False):
            return self._alnum_inner(w)

    def _alnum_inner(self, w: str) -> str:
        m = _RE_CODE_PLURAL.fullmatch(w)
        if m:  # H100s, A100s, F150s: more than one of the model ("H one hundreds")
            said = self._alnum_inner(m.group(1))
            if said.split()[-1].isalpha() and said.split()[-1].islower():
                return num.plural_of_words(said)
        if w.isalpha() or _is_wordlike(w):
            return self._read_alpha(w, "", "")
        if "-" in w and len(w) <= 200:
            # COVID-19, mid-1980s, GPT-4o: read the parts on their own, the hyphen is silent.
            parts = [p for p in w.split("-") if p]
            if (
                len(parts) >= 2
                and parts[0] in _REGION_CODES
                and parts[1].rstrip("0123456789") in _REGION_DIRECTIONS
            ):  # us-east-1, GCP's us-central1: the region's code is spelled
                parts[0] = parts[0].upper()
            out_parts = []
            prev = ""
            skip = -1
            for pi, part in enumerate(parts):
                if pi == skip:
                    continue
                r = None
                if part[0].isdecimal():
                    after = parts[pi + 1] if pi + 1 < len(parts) else ""
                    unit = (
                        self._unit(after, spaced=False)
                        if len(after) >= 2
                        and after.isalpha()
                        and after.islower()
                        and after not in ("in", "us")  # 2-in-1: the word, not inches
                        else None
                    )
                    if unit is not None and _RE_NUMBER.fullmatch(part):
                        # a 30-min call, a 5-km run: a unit inside a compound is singular
                        r = f"{self._numeric(part, prev, '', 0, []) or part} {unit[0]}"
                        skip = pi + 1
                    elif len(part) == 3 and part.isdecimal() and after[:1].isdecimal():
                        r = _model_digits(part)  # 777-300ER: a model, then its variant
                    elif (
                        3 <= len(part) <= 5
                        and part.isdecimal()
                        and pi > 0
                        and self._brand_mode(parts[pi - 1]) == "standard"
                    ):  # ISO-9001, IEC-61508: a standard's number
                        r = _standard_digits(part)
                    elif (
                        len(part) in (3, 4)
                        and part.isdecimal()
                        and pi > 0
                        and parts[pi - 1].isupper()  # letters, all capitals (DDR5 too)
                        and not after
                    ):  # SHA-256, AES-128, DDR5-6400: the number of a name, said as a model's
                        r = _model_digits(part)
                    elif after.lower() in self.t.unit_words or (
                        after.islower() and len(after) >= 3 and after in cmudict()
                    ):  # 123.2-millimeters, a 208-page report: a quantity, not a code
                        with num.number_style(and_=True):
                            r = self._numeric(part, prev, "", 0, [])
                    else:
                        r = self._numeric(part, prev, "", 0, [])
                out_parts.append(r if r is not None else self._alnum(part))
                prev = part
            return " ".join(x for x in out_parts if x)
        out: list[str] = []
        i, n = 0, len(w)
        is_code = any(c.isalpha() for c in w)
        while i < n:
            c = w[i]
            j = i + 1
            if c.isdecimal():
                while j < n and w[j].isdecimal():
                    j += 1
                digits = w[i:j]
                k = j
                while k < n and w[k].isalpha():
                    k += 1
                unit = self._unit(w[j:k], spaced=False) if k > j else None
                if (
                    unit is not None
                    and i == 0  # 60Hz, not the serial W26s / 25d08A
                    and (k == n or not w[k].isalnum())
                    and w[j:k] not in ("x",)
                ):
                    out.append(f"{num.cardinal(digits)} {unit[0] if digits == '1' else unit[1]}")
                    j = k
                elif (
                    w[j : j + 1] in ("x", "X")
                    and w[j + 1 : j + 2].isdecimal()
                    and not (w[j] == "X" and _RE_DIGITS_LETTER.match(w, j + 1))
                ):  # 2x8, 8x7B: "by"; but 5800X3D is the letter X, then "three D"
                    out.append(f"{_model_digits(digits, code=is_code)} by")
                    j += 1
                else:
                    out.append(_model_digits(digits, code=is_code))
            elif c.isalpha():
                while j < n and (w[j].isalpha() or unicodedata.combining(w[j])):
                    j += 1
                if (
                    j - i >= 3
                    and w[j - 1] == "v"
                    and w[i : j - 1].isupper()
                    and w[j : j + 1].isdecimal()
                ):
                    j -= 1  # YOLOv8: the name, then "V eight" (as IPv6 is I P V six)
                run = w[i:j]
                if not is_latin_letter(run[0]):
                    out.append(run)
                elif (
                    "_" in w
                    and run.isupper()
                    and len(run) >= 3
                    and run not in self.t.acronyms
                    and _has_vowel(run)
                    and _dict_word(run.lower())
                    and not _spelled_in_cmudict(run.lower())
                ):
                    out.append(run.lower())  # LD_LIBRARY_PATH, MAX_RETRIES: words of a name
                elif "_" in w and run in _CAPS_FUNCTION_WORDS and len(w) > len(run) + 3:
                    out.append(run.lower())  # IS_LOADED, TIME_TO_LIVE: "is loaded", "to"
                elif "_" in w and run.lower() in ("id", "ids"):
                    out.append("I D's" if len(run) == 3 else "I D")  # user_id, item_ids
                elif (
                    run.isupper()
                    or not _has_vowel(run)
                    or (
                        len(run) <= 3
                        and not (len(run) > 1 and run.islower() and run in cmudict())
                        and not (  # Gen5, Pro2: a capitalised word, then its number
                            len(run) == 3 and run.istitle() and run.lower() in cmudict()
                        )
                    )
                ):
                    out.append(
                        self.t.acronyms.get(run)
                        or ("_" in w and _PATH_WORDS.get(run))  # my_var, tmp_dir: var, temp
                        or (self._lex_said(run) if run.isupper() and len(run) >= 4 else None)
                        or (self._acronym(run) if run.isupper() and "." in w else None)
                        or letters_spoken(run)
                    )
                else:
                    out.append(self.read_word(run))
            elif c == "." and out and i > 0 and w[i - 1].isdecimal() and j < n and w[j].isdecimal():
                out.append("point")
            elif c == ".":
                out.append("dot")
            i = j
        return " ".join(x for x in out if x)

    def _symbol(self, s: str, i: int, prev: str, nxt: str) -> Tok:
        c = s[i]
        t = self.t
        two = s[i : i + 2]
        if len(two) == 2 and _is_mark(two[1]):
            # "=\u0338" is how "≠" may arrive (decomposed): read the composed symbol
            composed = unicodedata.normalize("NFC", two)
            if len(composed) == 1 and composed in t.special:
                return Tok(i, i + 2, t.special[composed], reason="composed")
        if two in _MATH_PAIRS and not (two == "<-" and s[i + 2 : i + 3].isdecimal()):
            return Tok(i, i + 2, _MATH_PAIRS[two])  # x<=5, a!=b; x<-5 is "less than minus"
        if (
            c == ":"
            and _RE_CELL_END.search(s, 0, i) is not None
            and _RE_CELL.match(s, i + 1) is not None
        ):
            return Tok(i, i + 1, "to")  # =SUM(A1:A10): a range of cells, "A one to A ten"
        if c == "~" and s[i + 1 : i + 2] == "/":
            return Tok(i, i + 1, "tilde")  # host:~/dir: a home directory, not "about"
        if c == "~" and 0 < i and s[i - 1].isalpha() and s[i + 1 : i + 2].isdecimal():
            return Tok(i, i + 1, "tilde")  # HEAD~3, numpy~=1.26: git's and pip's tilde
        if c in "~～" and 0 < i and s[i - 1].isdecimal() and s[i + 1 : i + 2].isdecimal():
            return Tok(i, i + 1, "to")  # 5~10
        if c == "-" and 0 < i and s[i - 1].isalnum() and s[i + 1 : i + 2].isalnum():
            return Tok(i, i + 1, "minus")  # only reached in equations (see _fallback)
        if c in "-−" and 0 < i and s[i - 1] in "<>=≤≥≠*/+(" and s[i + 1 : i + 2].isdecimal():
            return Tok(i, i + 1, "minus")  # x<-5, a=-3, 2*-4: a sign after an operator
        if c == "#":
            if s[i + 1 : i + 2].isdecimal():
                return Tok(i, i + 1, "number")
            j = i + 1
            while j < len(s) and s[j].isalpha():
                j += 1
            tag = s[i + 1 : j]
            if (
                tag[:1].isalpha()
                and tag.lower() not in _DIRECTIVES
                and (i == 0 or s[i - 1].isspace())
                and s[j : j + 1] != "#"  # #mytext# is a marked word, not a hashtag
            ):  # #MachineLearning: as social media read it; in a Chinese sentence silent
                return (
                    Tok(i, i + 1, "", "punct") if self.silent_hashtag else Tok(i, i + 1, "hashtag")
                )
            return Tok(i, i + 1, "hash")  # #include, #!/bin/sh
        if c == "(" and s[i + 1 : i + 2].isalnum() and _function_before(s, i):
            return Tok(i, i + 1, "of")  # f(x), O(n log n), sqrt(2): "F of X"
        if (
            c == "*"
            and 0 < i
            and s[i - 1].isalnum()
            and s[i + 1 : i + 2].isalnum()
            and (i < 2 or not s[i - 2].isalnum())
            and not s[i + 2 : i + 3].isalpha()
        ):
            return Tok(i, i + 1, "times")  # a*b, 2*x: one-character terms
        if (
            c == "*"
            and prev
            and (i == 0 or s[i - 1].isspace())
            and (i + 1 == len(s) or s[i + 1].isspace())
        ):
            return Tok(i, i + 1, "star")  # SELECT * FROM, rm -rf *: a wildcard (a bullet
            # "* item" at the start of a span, with nothing before it, stays silent)
        if c == "*" and (i == 0 or s[i - 1].isspace()) and re.match(r"/\d", s[i + 1 : i + 3]):
            return Tok(i, i + 1, "star")  # */5 * * * *: a cron step, "star slash five" (the
            # star was lost, glued to the word before)
        if c == "^" and 0 < i and s[i - 1].isalnum() and s[i + 1 : i + 2].isalnum():
            # x^2 -> x squared, 2^10 -> two to the power of ten
            exp = s[i + 1]
            if exp in "23" and not s[i + 2 : i + 3].isalnum():
                return Tok(i, i + 2, "squared" if exp == "2" else "cubed")
            return Tok(i, i + 1, "to the power of")
        if c in t.special:
            return Tok(i, i + 1, t.special[c])
        if c in CURRENCIES:
            return Tok(i, i + 1, CURRENCIES[c][0])
        if c == "*" and 0 < i and s[i - 1].isdecimal() and i + 1 < len(s) and s[i + 1].isdecimal():
            return Tok(i, i + 1, "times")
        if _is_punct_char(c):
            return Tok(i, i + 1, _punct_spoken(c), "punct")
        numeric = _numeric_char(c)
        if numeric:
            return Tok(i, i + 1, numeric)
        if is_emoji(c):
            return Tok(i, i + 1, "", "unread", reason="emoji")
        if _is_mark(c):  # a mark on a symbol or on nothing ("+\u0303", "=\u20dd")
            return Tok(i, i + 1, "", "unread", reason="combining-mark")
        cat = unicodedata.category(c)
        if cat.startswith("C"):
            return Tok(i, i + 1, "", "unread", reason="control-char")
        if cat.startswith("S"):
            return Tok(i, i + 1, "", "unread", reason="symbol")
        if cat.startswith("Z"):
            return Tok(i, i + 1, "", "punct")
        if c.isalpha():
            # A run of letters of another script (Cyrillic, Han ...) is one unread piece.
            j = i + 1
            while j < len(s) and s[j].isalpha() and not is_latin_letter(s[j]):
                j += 1
            return Tok(i, j, "", "unread", reason="unsupported-script")
        return Tok(i, i + 1, "", "unread", reason="unsupported-script")


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


#: Emoticons written with ASCII punctuation, as a chunk of their own (then only trailing
#: punctuation): ``:)`` ``;-)`` ``:D`` ``:'(`` ``(:`` ``^_^`` ``T_T`` ``-_-`` ``o_O``. Not
#: ``8)`` (a list item), ``<3`` (a comparison), ``XD`` (an acronym).
_RE_EMOTICON = re.compile(
    r"((?:[:;=][-'^o]?[()\[\]DPpOo/\\|*$@3]|[(][-']?[:;=]|\^_*\^|T_T|;_;|-_-|>_<|[oO]_[oO])"
    r")(?=[.,!?]*(?:\s|$))"
)

_RE_TAG = re.compile(
    r"</?[A-Za-z][A-Za-z0-9_:-]{0,31}(?:=[^<>\s]{0,32})?"
    r"(?:\s{1,4}[A-Za-z_:][\w:.-]{0,31}=(?:\"[^\"<>]{0,100}\"|'[^'<>]{0,100}'|[^\s<>]{1,100})){0,8}"
    r"\s{0,4}/?>"
)
_RE_BRACKETED = re.compile(r"\[[^\[\]\n]{1,200}\]")
_IPA_ONLY = frozenset("ˈˌəɪʊɑɔɛɹɫʃʒθðŋæʌɐɚɝɾʔːɒɜɡ")


def _markup_at(s: str, i: int) -> int:
    """End of markup starting at ``i`` (an XML-like tag, a bracketed ARPAbet or IPA
    transcription), or 0. Markup is passed through, never read out (NeMo does the same)."""
    if s[i] == "<":
        m = _RE_TAG.match(s, i)
        return m.end() if m else 0
    if s[i] == "[":
        m = _RE_BRACKETED.match(s, i)
        if not m:
            return 0
        inner = m.group()[1:-1]
        parts = inner.split()
        arpabet = bool(parts) and all(
            p.rstrip("012") in ARPABET_VOWELS | ARPABET_CONSONANTS and p.rstrip("012").isupper()
            for p in parts
        )
        if (arpabet and len(parts) >= 2) or any(c in _IPA_ONLY for c in inner):
            return m.end()
    return 0


#: The dot of a hydrate (``CuSO4·5H2O``) and a formula's coefficient (``2H2O``).
_RE_HYDRATE_DOT = re.compile(r"[·•∙]")
_RE_COEFFICIENT = re.compile(r"([2-9]|[1-9][0-9])?([A-Z].*)")
#: A metal oxide of two symbols (``CaO``, ``MgO``, ``CuO``): a formula although CMUdict has
#: the letters as a name (Cao).
_RE_OXIDE = re.compile(r"[A-Z][a-z]O")
#: A formula and a lower-case word joined by a hyphen (``NaCl-based``).
_RE_FORMULA_COMPOUND = re.compile(r"([A-Z][A-Za-z0-9]*)-([a-z]{2,})")


@lru_cache(maxsize=4096)
def _dict_word(w: str) -> bool:
    """``w`` (lower case) is a CMUdict word or a regular inflection of one (``retries``,
    ``timeouts``, ``retried``, ``loading``): capitals made of it are read as the word."""
    d = cmudict()
    if w in d:
        return True
    if len(w) < 5:
        return False
    stems = []
    if w.endswith("ies"):
        stems.append(w[:-3] + "y")
    if w.endswith("es"):
        stems.append(w[:-2])
    if w.endswith("s"):
        stems.append(w[:-1])
    if w.endswith("ied"):
        stems.append(w[:-3] + "y")
    if w.endswith("ed"):
        stems += [w[:-2], w[:-1]]
    if w.endswith("ing"):
        stems += [w[:-3], w[:-3] + "e"]
    return any(len(st) >= 3 and st in d and not _spelled_in_cmudict(st) for st in stems)


def _spelled_in_cmudict(w: str) -> bool:
    """True when CMUdict's pronunciation of ``w`` is its letters spelled (api, cpu, url):
    an acronym, although the dictionary lists it."""
    spelled: list[str] = []
    for c in w:
        if c not in _LETTER_NAMES:
            return False
        spelled += _LETTER_NAMES[c]
    return any([p.rstrip("012") for p in pron] == spelled for pron in cmudict().get(w, []))


def _primary_spelled(w: str) -> bool:
    """True when CMUdict's first pronunciation of ``w`` is its letters (``abc``, ``api``):
    inside a URL or e-mail address such a name is spelled in ``spoken`` too."""
    prons = cmudict().get(w, [])
    if not prons or any(c not in _LETTER_NAMES for c in w):
        return False
    spelled = [p for c in w for p in _LETTER_NAMES[c]]
    return [p.rstrip("012") for p in prons[0]] == spelled


_LETTER_NAMES = {
    c: p.split()
    for c, p in zip(
        "abcdefghijklmnopqrstuvwxyz",
        "EY|B IY|S IY|D IY|IY|EH F|JH IY|EY CH|AY|JH EY|K EY|EH L|EH M|EH N|OW|P IY|K Y UW|AA R|"
        "EH S|T IY|Y UW|V IY|D AH B AH L Y UW|EH K S|W AY|Z IY".split("|"),
        strict=True,
    )
}


def _is_mark(c: str) -> bool:
    """Any combining mark, enclosing ones (U+20DD) included (``combining()`` is 0 for those)."""
    return unicodedata.category(c)[0] == "M"


def _stray_marks(s: str, toks: list[Tok]) -> list[tuple[str, int, int]]:
    """Combining marks that no letter carries (on a digit, a symbol, or at the start): they
    are not spoken, so each is reported (code ``combining-mark``, its offset) instead of
    vanishing. Marks composed into a symbol that is read (``=`` + U+0338 -> ≠) are not."""
    out: list[tuple[str, int, int]] = []
    if s.isascii():
        return out
    for t in toks:
        if t.kind != "word" or t.reason == "composed":
            continue
        for i in range(t.start, t.end):
            if not _is_mark(s[i]):
                continue
            j = i
            while j > t.start and _is_mark(s[j - 1]):
                j -= 1
            if j == t.start or not s[j - 1].isalpha():
                out.append(("combining-mark", i, i + 1))
    return out


def _dict_split(word: str, max_parts: int = 3, min_len: int = 4) -> list[str] | None:
    """Cut a run-together lower-case name into CMUdict words (``stackoverflow`` -> stack
    overflow): the fewest parts of at least ``min_len`` letters, ``None`` if there is none.
    Linear in practice: ``word`` is at most a URL label and parts are tried longest first."""
    if len(word) > 40:
        return None
    cmu = cmudict()
    best: dict[int, list[str] | None] = {len(word): []}
    for i in range(len(word) - min_len, -1, -1):
        found: list[str] | None = None
        for j in range(len(word), i + min_len - 1, -1):
            rest = best.get(j)
            if rest is None or word[i:j] not in cmu:
                continue
            cand = [word[i:j], *rest]
            if len(cand) <= max_parts and (found is None or len(cand) < len(found)):
                found = cand
        best[i] = found
    out = best.get(0)
    return out if out and len(out) > 1 else None


def _compound_split(word: str) -> list[str] | None:
    """Two CMUdict words of four or more letters written as one (``elasticsearch``,
    ``dataloader``), or ``None``. Of several cuts the first part is rather no plural
    (``timestamp`` is time stamp, not times tamp; ``namespace`` name space), then the shorter
    part is as long as possible."""
    cmu = cmudict()
    best: tuple[tuple[bool, int, int], list[str]] | None = None
    for i in range(4, len(word) - 3):
        a, b = word[:i], word[i:]
        if a not in cmu or b not in cmu or _spelled_in_cmudict(a) or _spelled_in_cmudict(b):
            continue
        plural_first = a.endswith("s") and a[:-1] in cmu
        key = (not plural_first, min(len(a), len(b)), len(b))
        if best is None or key > best[0]:
            best = (key, [a, b])
    return best[1] if best else None


def _plain_number(s: str) -> str:
    """``3`` -> three, ``2.5`` -> two point five, ``.5`` -> point five."""
    ip, _, frac = s.partition(".")
    return num.decimal(ip, frac) if frac else num.cardinal(ip or "0")


def _is_digits(s: str, a: int, b: int) -> bool:
    return s[a:b].isascii() and s[a:b].isdigit()


def _slices(s: str, a: int, b: int) -> list[tuple[int, int]]:
    """Cut ``s[a:b]`` into slices of at most :data:`SLICE_CHARS`: after a separator
    (``/``, ``.``, ``-`` ...) in the second half of the window, else at a change between
    letters and digits, else evenly; never in front of a combining mark."""
    out: list[tuple[int, int]] = []
    i = a
    while b - i > SLICE_CHARS:
        lim = i + SLICE_CHARS
        half = i + SLICE_CHARS // 2
        cut = next((c for c in range(lim, half, -1) if not s[c - 1].isalnum()), 0)
        if not cut:
            cut = next((c for c in range(lim, half, -1) if s[c - 1].isdigit() != s[c].isdigit()), 0)
        if not cut:  # evenly, so that a long run does not end in a one-character slice
            parts = -(-(b - i) // SLICE_CHARS)
            cut = i + -(-(b - i) // parts)
        while cut < b and unicodedata.combining(s[cut]):  # marks stay with their letter
            cut += 1
        out.append((i, cut))
        i = cut
    if i < b:
        out.append((i, b))
    return out


def _is_hard_break(s: str, i: int) -> bool:
    """Punctuation that ends a chunk even without a space after it: CJK punctuation always
    (``PM，RTX`` from a Chinese sentence), and ``, ; ! ?`` unless between two digits
    (``1,000`` stays one number)."""
    c = s[i]
    o = ord(c)
    if 0x3000 <= o <= 0x303F or c in "、。「」『』【】《》〈〉…":
        return True
    if c in ",;!?":
        before = s[i - 1] if i > 0 else " "
        after = s[i + 1] if i + 1 < len(s) else " "
        if before.isdecimal() and after.isdecimal():
            return False
        if after.isdecimal() and before.isalpha():
            return True  # "5pm,4am", "july,1998", "NO?17"
        if c in "?!" and after in "-+" and s[i + 2 : i + 3].isdecimal():
            return True  # "?-34": a sign starts the next number
        return not after.isspace() and (after.isalpha() or ord(after) > 0x2E7F)
    return False


def _is_wordlike(w: str) -> bool:
    """Letters with inner apostrophes or hyphens only (don't, state-of-the-art, café)."""
    if not w or not (w[0].isalpha()):
        return False
    for c in w:
        if not (c.isalpha() or c in "'-" or unicodedata.combining(c)):
            return False
    return not w.endswith("-") and "--" not in w


def _camel_split(w: str) -> list[str]:
    """``TensorRT`` -> Tensor RT; ``XMLHttp`` -> XML Http; ``iPhone`` -> i Phone."""
    parts: list[str] = []
    cur = w[0]
    for i in range(1, len(w)):
        c, p = w[i], w[i - 1]
        nxt = w[i + 1] if i + 1 < len(w) else ""
        if i == 2 and w[:2] == "Mc":
            cur += c  # McFlurry, McLaren: the Mc of a name stays in its word (not "M C")
        elif (c.isupper() and p.islower()) or (c.isupper() and p.isupper() and nxt.islower()):
            parts.append(cur)
            cur = c
        else:
            cur += c
    parts.append(cur)
    out: list[str] = []
    for k, part in enumerate(parts):
        # VMware: "VM" "ware", not "V" "Mware" (a capital and a lower-case tail that is no word,
        # where the tail alone is one, belongs to the capitals before it)
        if (
            k > 0
            and len(part) >= 4
            and part[0].isupper()
            and part[1:].islower()
            and out[-1].isupper()
            and part.lower() not in cmudict()
            and part[1:] in cmudict()
        ):
            out[-1] += part[0]
            out.append(part[1:])
        else:
            out.append(part)
    return out


def _is_day(core: str) -> bool:
    c = core.rstrip(",")
    m = _RE_ORDINAL.fullmatch(c)
    if m:
        c = m.group(1)
    return c.isdecimal() and len(c) <= 2 and 1 <= int(c) <= 31


def _looks_year(core: str) -> bool:
    c = core.rstrip(",.")
    return c.isdecimal() and len(c) == 4


def _is_one(core: str) -> bool:
    return core.lstrip("+-") in ("1",)


def _is_number(core: str) -> bool:
    return (
        bool(core)
        and bool(_RE_NUMBER.fullmatch(core.rstrip(",.")))
        and any(c.isdecimal() for c in core)
    )


def _is_capitalized(core: str) -> bool:
    return (
        len(core) > 1
        and core[0].isupper()
        and core[1:].isalpha()
        and not core.isupper()
        or (core.isalpha() and core.isupper() and len(core) > 3)
    )


def _ordinal_suffix(digits: str) -> str:
    n = int(digits[-2:]) if digits else 0
    if 11 <= n % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _model_digits(d: str, *, code: bool = True) -> str:
    """Digits inside a model number: H200 -> two hundred, 4070 -> forty seventy, A321 ->
    three twenty one, i9-14900K -> fourteen nine hundred. ``code=False`` (digits with no
    letters around) keeps 3 and 5 digits whole."""
    if len(d) > 1 and d[0] == "0":
        return num.digits_words(d)
    if code and len(d) == 3 and d[1:] != "00":
        return _three_digit_year(d)  # A321 -> three twenty one, B550 -> five fifty
    if len(d) <= 3:
        return num.cardinal(d)
    if len(d) == 4:
        return num.pair_reading(d)
    if code and len(d) == 5:
        return _five_digit_code(d)  # 14900K, 10750H: generation + model, as Intel's are said
    if len(d) <= 6:
        return num.cardinal(d)
    return num.digits_words(d)


def _five_digit_code(d: str) -> str:
    """Five digits of a code or standard, said as two parts: the first two digits, then
    three: ``14900`` -> "fourteen nine hundred", ``10750`` -> "ten seven fifty", ``27001`` ->
    "twenty seven oh oh one", ``17025`` -> "seventeen oh twenty five"; ``22000`` -> "twenty
    two thousand"."""
    if d[0] == "0":
        return num.digits_words(d)
    head, tail = num.cardinal(d[:2]), d[2:]
    if tail == "000":
        return f"{head} thousand"
    if tail[:2] == "00":
        return f"{head} oh oh {num.ONES[int(tail[2])]}"
    if tail[0] == "0":
        return f"{head} oh {num.cardinal(tail[1:])}"
    return f"{head} {_three_digit_year(tail)}"


def _standard_digits(d: str) -> str:
    """The number of a standard or specification after its body's name (``ISO 9001``,
    ``IEEE 754``, ``RFC 7231``, ``ISO 27001``), as engineers say it: up to three digits as a
    model number (seven fifty four, eight oh two), four digits in pairs (eighty six oh one)
    except a round thousand plus a unit digit (nine thousand one), five digits as two parts
    (twenty seven oh oh one), never with "and"."""
    if len(d) > 1 and d[0] == "0":
        return num.digits_words(d)
    if len(d) == 4 and d[1:3] == "00":
        return num.cardinal(d, and_=False)  # 9001 -> nine thousand one, 9000 -> nine thousand
    return _model_digits(d)


_SUPERSCRIPT_WORDS = {"²": "squared", "³": "cubed"}


def _numeric_char(c: str) -> str:
    """Reading of a one-character number: ½ -> one half, ² -> squared, ⑫ / Ⅻ -> twelve."""
    if c in _SUPERSCRIPT_WORDS:
        return _SUPERSCRIPT_WORDS[c]
    try:
        name = unicodedata.name(c)
    except ValueError:
        return ""
    if name.startswith("VULGAR FRACTION "):
        return name[len("VULGAR FRACTION ") :].lower()
    try:
        value = unicodedata.numeric(c)
    except (TypeError, ValueError):
        return ""
    if value == int(value) and 0 <= value < 10**6:
        return num.cardinal(str(int(value)))
    return ""


#: Words that may follow a dialled number ("dial 999 in the UK"); other lower-case words after
#: a number are what it counts ("call 100 people").
_AFTER_DIALLING = frozenset("in for now or and to immediately first right from".split())
#: Words after which a lone capital letter is a letter, not the article ("Type A blood").
_LETTER_LABELS = frozenset(
    "type plan class option vitamin group tier category grade section part model series "
    "exhibit appendix block row seat gate zone wing level".split()
)
#: Words no article stands before: a capital ``A`` before one is the letter ("from A to B",
#: "A and B", "A is the answer"; it was read "a to B").
_NO_ARTICLE_BEFORE = frozenset(
    "to and or is are was were vs versus through thru nor then than has had will would can "
    "could should must may does did with from into onto via minus plus times equals".split()
)
#: Function words that may start a sentence before a number ("About 101 people").
_SMALL_WORDS = frozenset(
    "about over under only all with for of in on at to by from and or but nearly almost some "
    "exactly just around roughly page room".split()
)
#: Words before a number and a capital letter that name a place (``seat 23A``).
_SEAT_CUES = frozenset("seat seats gate row apt apartment unit suite room flat bay dock".split())
#: Nouns after ``1:1`` that make it a meeting of two people ("a 1:1 meeting").
_ONE_ON_ONE_NOUNS = frozenset("meeting chat call session interview coaching sync talk".split())
#: Words before ``2/5`` that count through a sequence: "step two of five".
_PROGRESS_CUES = frozenset(
    "step steps part page slide question episode round game level stage day week lap "
    # training and job logs: "Epoch 3/10", "Fold 2/5", "Shard 4/16", "Retry 1/3"
    "epoch iteration iter batch shard fold trial attempt retry chapter lesson module task job "
    "item track phase problem exercise sample image file downloading processing".split()
)
#: Verbs that start a command; a capital word after one is a name, not a roman numeral.
_COMMAND_VERBS = frozenset(
    "use run open try see press install set get put call read edit view enter select choose "
    "click tap hit start launch load save copy paste print show close exit quit".split()
)
#: Words after a number and its unit that are no noun the measure could describe.
_NOT_NOUNS = frozenset(
    "and or of to in on at for per is are was were be been has have had will would can could "
    "may might must should do does did that which who than as with from by into over under vs "
    "x each apiece total".split()
)


_RE_ACRONYM_NOUN = re.compile(r"[A-Z]{2,6}(?:-[A-Z0-9]{1,4})?")
_TIME_ZONE_CAPS = frozenset(z.upper() for z in ("am", "pm", "utc", "gmt", "est", "pst", "cet"))


def _unit_adjective(before: str, nxt: str) -> bool:
    """A measure between a determiner and a noun is an adjective, said in the singular
    (``a 65W charger`` -> sixty five watt, ``the 3.5mm jack``, ``a 7nm process``)."""
    if before.lower() not in _DETERMINERS:
        return False
    if nxt.isalpha() and nxt.islower():
        return nxt not in _NOT_NOUNS
    # a 65W USB-C charger, a 500GB SSD, a 10 MB PDF: an acronym is a noun too
    return bool(_RE_ACRONYM_NOUN.fullmatch(nxt)) and nxt not in _TIME_ZONE_CAPS


def _proper_fraction(core: str, before: str) -> bool:
    """``1/2``, ``3/4`` alone (not ``4 1/2``): a fraction below one with a small denominator,
    so a unit after it is singular."""
    m = _RE_FRACTION.fullmatch(core)
    return (
        m is not None
        and int(m.group(1)) < int(m.group(2)) <= 16  # 1/2, 3/4, 1/8 (not 110/220 V: choices)
        and not before.isdecimal()
    )


def _clock_before(prev: str) -> bool:
    """``prev`` is a clock time a time zone may follow: ``10:30``, ``2pm``, ``9:00am``."""
    return bool(_RE_TIME.fullmatch(prev) or _RE_HOUR_AMPM.fullmatch(prev))


def _three_digit_year(d: str, zero: str = "oh") -> str:
    """``340`` (AD) -> "three forty"; ``305`` -> "three oh five"; ``300`` -> "three hundred"."""
    if d[1:] == "00":
        return num.cardinal(d)
    if d[1] == "0":
        return f"{num.ONES[int(d[0])]} {zero} {num.ONES[int(d[2])]}"
    return f"{num.ONES[int(d[0])]} {num.cardinal(d[1:])}"


def _time(hh: str, mm: str, ss: str | None, ampm: str | None, nxt: str) -> str | None:
    h, m = int(hh), int(mm)
    if h > 24 or m > 59 or (ss is not None and int(ss) > 59):
        return None
    if ss is not None:
        sec = int(ss)
        words = f"{num.cardinal(hh)} {'hour' if h == 1 else 'hours'} {num.cardinal(mm)} {'minute' if m == 1 else 'minutes'} and {num.cardinal(ss)} {'second' if sec == 1 else 'seconds'}"
        return words + (f" {letters_spoken(ampm)}" if ampm else "")
    hour = num.cardinal(str(h))
    follows_ampm = nxt.lower().rstrip(".") in ("am", "pm", "a.m", "p.m")
    if m == 0:
        words = hour if ampm or follows_ampm else f"{hour} o'clock"
    else:
        words = f"{hour} {num.clock_minutes(mm)}"
    if ampm:
        words += " " + letters_spoken(ampm)
    return words


def _date(y: str, mo: str, d: str, *, dmy: bool) -> str | None:
    mi, di = int(mo), int(d)
    if not (1 <= mi <= 12 and 1 <= di <= 31):
        return None
    yr = num.year(y) if len(y) == 4 else num.digits_words(y) if y[0] == "0" else num.cardinal(y)
    if dmy:
        return f"the {num.ordinal(str(di))} of {MONTHS[mi - 1]} {yr}"
    return f"{MONTHS[mi - 1]} {num.ordinal(str(di))} {yr}"


def _version_parts(parts: list[str]) -> str:
    """``["2", "0", "1"]`` -> "two point oh point one" (a lone 0 component reads "oh")."""
    return " point ".join(
        "oh"
        if p == "0"
        else num.cardinal(p, and_=False)  # a part is a name: no "and" (build 22631)
        if p[0] != "0"
        else num.digits_words(p, zero="oh")
        for p in parts
    )


def read_version(v: str) -> str:
    """``v2.0`` / ``2.0.1`` -> "version two point oh" / "two point oh point one"; a wildcard
    part and a pre-release tag: ``3.x`` -> "three point X", ``v1.0.0-beta.2`` -> "version one
    point oh point oh beta two", ``2.0-rc1`` -> "… R C one"."""
    m = _RE_PRERELEASE.fullmatch(v)
    if m:
        tag, n = m.group(2).lower(), m.group(3)
        said = letters_spoken(tag.upper()) if tag == "rc" else tag
        return f"{read_version(m.group(1))} {said}" + (f" {num.cardinal(n)}" if n else "")
    if v.lower().endswith(".x") and v[:-2]:
        return f"{read_version(v[:-2])} point X"
    body = v[1:] if v[:1] in "vV" else v
    return (
        "version " + _version_parts(body.split("."))
        if v[:1] in "vV"
        else _version_parts(body.split("."))
    )


def _zone(z: str | None) -> str:
    """`` Z`` -> " U T C", ``+08:00`` -> " U T C plus eight", ``-0530`` -> "… minus five thirty"."""
    if not z:
        return ""
    if z == "Z":
        return " U T C"
    sign = "plus" if z[0] == "+" else "minus"
    hh, mm = z[1:3], z[-2:]
    return f" U T C {sign} {num.cardinal(hh)}" + (f" {num.cardinal(mm)}" if mm != "00" else "")


def _valid_month_day(mo: str, d: str) -> bool:
    return len(mo) <= 2 and len(d) <= 2 and 1 <= int(mo) <= 12 and 1 <= int(d) <= 31


def _is_weekday(w: str) -> bool:
    low = w.lower().rstrip(".,")
    return low in _WEEKDAYS or low in {d.lower() for d in _WEEKDAYS.values()}


_OPENERS = frozenset("([{<«“‘")


def _close_function_parens(s: str, toks: list[Tok]) -> None:
    """The ``)`` that closes a ``(`` read "of" (``f(x)``, ``sqrt(2)``) is silent: "F of X
    equals two", not a pause after X (``F of X) equals``)."""
    closers = {t.start: t for t in toks if t.kind == "punct" and t.spoken == ")"}
    for t in toks:
        if t.spoken != "of" or t.end - t.start != 1 or s[t.start] != "(":
            continue
        depth = 0
        for j in range(t.start, min(len(s), t.start + 200)):
            depth += (s[j] == "(") - (s[j] == ")")
            if depth == 0:
                if j in closers:
                    closers[j].spoken = ""
                break


def _curl_quotes(s: str, toks: list[Tok]) -> None:
    """Straight quotation marks left as punctuation become typographic ones in ``spoken``.

    A joiner of spoken pieces cannot tell an opening ``"`` from a closing one (``said "hi"``
    came out ``said" hi"``); the source can: a mark after a space (or an opening bracket) and
    before a word opens, one after a word closes, one standing alone between spaces opens when
    the quotation marks before it are paired. ``'`` is only curled where it is clearly a
    quotation mark (``'hi'``), never inside a word (``don't`` is no punctuation here anyway).
    """
    n = len(s)
    for t in toks:
        if t.kind != "punct" or t.end - t.start != 1 or t.spoken not in ('"', "'"):
            continue
        before = s[t.start - 1] if t.start else " "
        after = s[t.end] if t.end < n else " "
        starts = before.isspace() or before in _OPENERS
        ends = after.isspace() or _is_punct_char(after)
        if t.spoken == '"':
            if starts and not ends:
                t.spoken = "“"
            elif ends and not starts:
                t.spoken = "”"
            elif starts and ends:
                t.spoken = "“" if _open_quotes(s, t.start) % 2 == 0 else "”"
        elif starts and after.isalpha():
            t.spoken = "‘"
        elif (
            starts and s[t.end : t.end + 2].isdecimal() and not s[t.end + 2 : t.end + 3].isdecimal()
        ):
            t.spoken = ""  # in '69: the elided century, no quotation mark
        elif ends and before.isalnum():
            t.spoken = "’"


def _open_quotes(s: str, end: int) -> int:
    """Double quotes before ``end`` that are quotation marks (not inch marks after a digit)."""
    return sum(1 for i in range(end) if s[i] == '"' and not (i and s[i - 1].isdecimal()))


def _operand(core: str) -> bool:
    """A term of a formula: a number, a single letter, or a power (``b^3``, ``2^n``)."""
    return _is_number(core) or (len(core) == 1 and core.isalpha()) or "^" in core


def _descending(a: str, b: str) -> bool:
    """``a > b`` for two plain decimal numbers (``1960-80`` compares 60 with 80: an
    abbreviated end is compared with the same number of last digits)."""
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if "." not in a + b and len(b) < len(a):
        x = float(a[-len(b) :])
    return x > y


#: Dot files: ``.env``, ``.gitignore``, ``.eslintrc.json`` (a leading dot and a lower-case name).
#: Laughter written out: ``haha``, ``HAHAHA``, ``hehehe``, ``hihi`` (two or more syllables).
_RE_LAUGH = re.compile(r"(?:[hH][aA]){2,}[hH]?|(?:[hH][eE]){2,}[hH]?|(?:[hH][iI]){2,}", re.I)
#: A local phone number of three and four digits (``555-1234``), a phone number only after a
#: cue of :data:`_PHONE_CUES` (or 555-, or a last group starting with 0): else a range.
_RE_LOCAL_PHONE = re.compile(r"\d{3}-\d{4}")
_PHONE_CUES = frozenset(
    "call dial phone tel telephone fax text reach contact mobile cell ring number line "
    "hotline extension".split()
)
#: Parts of Unix paths said as words by the people who type them (``/usr`` "user").
_PATH_WORDS = {
    "usr": "user", "tmp": "temp", "var": "var", "lib": "lib", "mnt": "mount", "pkg": "package",
    "cfg": "config", "src": "S R C", "dir": "dir",
}  # fmt: skip
#: Plural of a model code: a capital, up to five letters and three to five digits, then ``s``
#: (``W26s`` is a serial number).
_RE_CODE_PLURAL = re.compile(r"([A-Z][A-Za-z]{0,5}\d{3,5})s")
#: A handle: ``@`` and a name of letters, digits, ``_`` and inner dots (not an e-mail).
_RE_HANDLE = re.compile(r"@([A-Za-z0-9_](?:[A-Za-z0-9_.]{0,48}[A-Za-z0-9_])?)")
_RE_DOTFILE = re.compile(r"\.[A-Za-z][A-Za-z0-9_-]{1,30}(?:\.[a-z0-9]{1,8})?")
#: A spreadsheet cell before and after the colon of a range (``A1:A10``, ``$B$2:$C$20``).
_RE_CELL_END = re.compile(r"(?<![A-Za-z])\$?[A-Z]{1,3}\$?[0-9]{1,7}$")
_RE_CELL = re.compile(r"\$?[A-Z]{1,3}\$?[0-9]{1,7}(?![0-9A-Za-z])")
#: A glob of files by extension (``*.log``, ``*.py``): "star dot log".
_RE_GLOB = re.compile(r"\*\.([A-Za-z0-9]{1,10})")
#: Hex literals, colours and UUIDs, read character by character.
_RE_HEX = re.compile(r"0[xX]([0-9a-fA-F]{1,32})")
_RE_HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
_RE_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
#: ``1-Mar`` in ``Jan 1-Mar 31``: a day, a dash, a month.
_RE_DAY_MONTH = re.compile(r"(\d{1,2})[-–]([A-Za-z]{3,9})\.?")
#: ``Q1-Q3``, ``W1-W4``: a letter prefix and numbers on both ends of a range.
_RE_PREFIXED_RANGE = re.compile(r"([A-Z]{1,2})(\d{1,2})[-–]([A-Z]{1,2})(\d{1,2})")
#: Words around ``3/5`` that make it a score ("three out of five"), not a fraction.
_SCORE_FRACTION_CUES = frozenset("rated rating scored score scores got".split())
_SCORE_FRACTION_UNITS = frozenset("stars star points pts".split())
#: Two-letter function words that a shouted phrase writes in capitals (``DO NOT``, ``GO TO``):
#: words next to a capital word that is read as a word; alone they are letters (``IT``, ``US``).
_CAPS_FUNCTION_WORDS = frozenset(
    "DO NO GO TO IN ON OF AT BY UP IF OR SO BE WE ME MY IS AS AN".split()
)
#: Function words that make a run of capital words a phrase (:meth:`Normalizer._caps_phrases`).
_CAPS_PHRASE_FUNCTION = _CAPS_FUNCTION_WORDS | frozenset(
    "THE AND FOR NOT YOU ARE BUT ALL OUT NOW HOW WHY WHO OUR HIS HER HAS HAD WAS ANY YES ITS "
    "OFF GET CAN DON'T CAN'T WON'T IT'S I'M YOU'RE WHAT THIS THAT WITH FROM YOUR HERE THERE "
    "AM".split()
)
#: ``#`` before these is the hash of code, not a hashtag (``#include``, ``#define``).
_DIRECTIVES = frozenset(
    "include define undef if ifdef ifndef elif else endif pragma error warning line import "
    "region endregion".split()
)
_DETERMINERS = frozenset("the a an this that these those our your his her their its my".split())
#: Apertures: ``f/1.8``, ``f/11``.
_RE_F_STOP = re.compile(r"[fF]/(\d{1,2}(?:\.\d)?)")
#: Video codecs and standards written letter-dot-number: ``H.264``, ``H.265``, ``V.92``.
_RE_CODEC = re.compile(r"([A-Z])\.(\d{3})")
#: Cloud region names: ``us-east-1``, ``eu-west-2``, ``ap-southeast-1`` spell their code.
_REGION_CODES = frozenset("us eu ap sa ca me af cn il mx".split())
_REGION_DIRECTIONS = frozenset(
    "east west north south central northeast northwest southeast southwest gov".split()
)
#: ``TCP/IP``, ``I/O``, ``CI/CD``: capital acronyms joined by slashes.
_RE_ACRONYM_PAIR = re.compile(r"[A-Z]{1,5}(?:/[A-Z]{1,5}){1,3}")
#: ``10/11``, ``4.0/5.0``, ``13/14/15``: numbers joined by slashes.
#: Lines added and removed, as git prints them: ``+512/-128``.
_RE_DIFF_STAT = re.compile(r"\+(\d{1,7})/[-−](\d{1,7})")
_RE_NUMBER_ALTERNATIVES = re.compile(
    r"\d{1,5}(?:\.\d{1,5}){0,3}(?:/\d{1,5}(?:\.\d{1,5}){0,3}){1,3}"
)
#: Product words after which ``10/11`` are versions or generations to choose from.
_ALTERNATIVE_CUES = frozenset(
    "win gen generation ddr lpddr gddr usb pcie wifi wi-fi hdmi sata lte bluetooth iphone "
    "galaxy pixel ipad series model edition".split()
)
#: One-letter units that may stand after a spaced number (see
#: :meth:`Normalizer._spaced_letter_unit`); ``t`` (tonne), ``l`` and ``K`` stay attached only.
_SPACED_LETTER_UNITS = frozenset("W V A m s g h L".split())
#: Words that number things, after which ``5 A`` is a label, not five amps.
_LABEL_WORDS = frozenset(
    "figure fig table step row column col grade plan option item exhibit room unit box line "
    "lane seat page p pp question q problem exercise lot block platform gate exit bay aisle "
    "slot group team floor track".split()
)
#: Words before a spaced ``3 - 1`` that make it a score, not a subtraction.
_SCORE_CUES = frozenset(
    "won win wins beat beats lost lose loses drew draw tied tie score scored scores final "
    "led leads leading trailed trailing victory defeat record up down".split()
)
#: Words after ``5 - 3`` that make it a sum to be worked out ("5 - 3 is 2").
_RESULT_WORDS = frozenset("is equals = gives makes was yields".split())


def _spaced_dash(
    chunk: str, cores: list[str], k: int, equation: bool, trails: list[str]
) -> str | None:
    """The reading of a dash standing alone between two terms, or ``None`` (a pause).

    ``4:00 am - 8:12 pm`` and ``10 - 20 people`` are ranges ("to": a range goes up);
    ``5 - 3``, ``n - 1``, ``x - y`` are subtractions ("minus"), also outside a formula: spaces
    around a hyphen between terms are how a subtraction is typed. Descending numbers after a
    score word (``won 3 - 1``) and dashes between words stay a pause; an en or em dash is never
    minus (``1990 – 1985`` is no sum). Equations (an ``=`` in the span) are read by
    :meth:`Normalizer._read_trail`.
    """
    if chunk not in ("-", "–", "—", "−") or k == 0 or k + 1 >= len(cores):
        return None
    prev, nxt = cores[k - 1], cores[k + 1]
    prev_time = prev.lower().rstrip(".") in ("am", "pm", "a.m", "p.m") or bool(
        _RE_TIME.fullmatch(prev) or _RE_HOUR_AMPM.fullmatch(prev)
    )
    after_ampm = k + 2 < len(cores) and cores[k + 2].lower().rstrip(".") in (
        "am", "pm", "a.m", "p.m"
    )  # fmt: skip
    if prev_time and bool(
        _RE_TIME.fullmatch(nxt) or _RE_HOUR_AMPM.fullmatch(nxt) or (nxt.isdecimal() and after_ampm)
    ):
        return "to"  # 4:00 am - 8:12 pm, 9 AM - 5 PM
    if equation:
        return None
    ends = k + 1 < len(trails) and trails[k + 1] != ""
    after = "" if ends else cores[k + 2].lower() if k + 2 < len(cores) else ""
    before = {c.lower() for c in cores[max(0, k - 4) : k - 1]}
    numbers = _RE_PLAIN_NUM.fullmatch(prev) and _RE_PLAIN_NUM.fullmatch(nxt)
    letter = _formula_letter(prev) or _formula_letter(nxt)
    if not numbers and not (
        letter
        and (_formula_letter(prev) or _RE_PLAIN_NUM.fullmatch(prev))
        and (_formula_letter(nxt) or _RE_PLAIN_NUM.fullmatch(nxt))
    ):
        return None
    minus_ok = chunk in ("-", "−")
    if minus_ok and (letter or after in _RESULT_WORDS):
        return "minus"  # n - 1, x - y, 5 - 3 is 2
    if numbers and not _descending(prev, nxt):
        return "to"  # 10 - 20 people, 2019 - 2023
    if minus_ok and not before & _SCORE_CUES and (not after or after in _OPERATORS):
        return "minus"  # 5 - 3 (but "won 3 - 1", "a 9 - 5 job")
    if numbers and Normalizer._hours_range(prev, nxt, cores[k - 2] if k >= 2 else "", after):
        return "to"  # a 9 - 5 shift: clock hours
    if numbers and _is_score(prev, nxt, sorted(before), after):
        return "to"  # won 4 - 1: a score
    return None


#: Words after ``108-102`` that make it a score or a vote (``a 108-102 win``).
_SCORE_NOUNS = frozenset(
    "win wins victory loss losses defeat lead decision vote votes margin final thriller "
    "result scoreline".split()
)


def _is_score(a: str, b: str, before: list[str], nxt: str) -> bool:
    """``108-102``, ``4-2``, ``52-48`` as a score or a vote: two whole numbers going down, no
    larger than scores get (``978-0`` is a code), after a score word (``won beat lost final
    score voted …`` up to three words back) or before one (``a 108-102 win``), or both of
    two or three digits (``Lakers 108-102 Celtics``; ``3-1`` alone may be a code)."""
    if not (a.isdecimal() and b.isdecimal()) or (len(b) > 1 and b[0] == "0") or a[0] == "0":
        return False
    if int(a) > 200 or int(a) <= int(b):
        return False
    cue = any(w.rstrip(".,:") in _SCORE_CUES or w in ("voted", "vote", "passed") for w in before)
    noun = nxt.lower().rstrip(".,;:!?") in _SCORE_NOUNS
    return cue or noun or (len(a) >= 2 and len(b) >= 2)


_OPERATORS = frozenset("+ - * / × ÷ ( ) =".split())
_RE_PLAIN_NUM = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


#: ``737-800``, ``747-400``: a three-digit model (not a round number) and a round variant.
_RE_MODEL_VARIANT = re.compile(r"[1-9]\d[1-9]-[1-9]00")
#: Words before ``737-800`` that make it a range after all ("from 125-300").
_RANGE_CUES = frozenset(
    "from between of about around approximately roughly some range ranges costs cost pages "
    "page pp ages aged".split()
)


def _model_cue(prev: str) -> bool:
    """Whether ``prev`` may stand before a model number such as ``737-800``: a capitalised
    maker's name, an article, or nothing; not a word that introduces a range."""
    low = prev.lower()
    if low in _RANGE_CUES or _is_number(prev):
        return False
    return not prev or low in ("a", "an", "the") or (prev[:1].isupper() and prev.isalpha())


#: Dollar signs with a country prefix (``US$``, ``HK$``, ``S$``), longest first.
_PREFIXED_CURRENCIES = tuple(sorted((c for c in CURRENCIES if len(c) > 1), key=len, reverse=True))


def _currency_prefix(core: str) -> str:
    """The prefixed currency sign ``core`` starts with (``HK$100`` -> ``HK$``), or ``""``."""
    if "$" not in core[:4]:
        return ""
    return next((c for c in _PREFIXED_CURRENCIES if core.startswith(c)), "")


#: Functions of formulas and code whose ``(`` reads "of": ``sqrt(2)``, ``log(n)``.
_MATH_FUNCTIONS = frozenset("sqrt log ln lg exp sin cos tan abs det max min".split())


def _function_before(s: str, i: int) -> bool:
    """Whether the ``(`` at ``i`` follows a one-letter function (``f(x)``, ``O(n)``) or a math
    function name (``sqrt(2)``): then it is read "of"."""
    j = i
    while j > 0 and s[j - 1].isalpha():
        j -= 1
    name = s[j:i]
    if j > 0 and (s[j - 1].isalnum() or s[j - 1] in "._"):
        return False  # obj.f(x), my_f(x): code, not a formula
    return (len(name) == 1 and name not in "aAI") or name.lower() in _MATH_FUNCTIONS


def _is_day_range(core: str) -> bool:
    """``24-26``, ``1-Mar``: days of a month written as a range (after a month name)."""
    a, sep, b = core.rstrip(",").partition("-")
    return bool(sep) and _is_day(a) and (_is_day(b) or bool(_RE_DAY_MONTH.fullmatch(core)))


def _suspends(k: int, cores: list[str]) -> bool:
    """Whether a word ending in a hyphen at ``k`` shares the second part of a compound
    that follows after ``and``/``or``/``to`` (``A- and B-rich``, ``A-, B- or C-grade``)."""
    for c in cores[k + 1 : k + 6]:
        if c.lower() in ("and", "or", "to", "nor", "&") or (len(c) > 1 and c.endswith("-")):
            continue
        head, dash, tail = c.partition("-")
        return bool(dash) and head.isalnum() and tail[:2].isalpha() and tail.islower()
    return False


def _is_plural_noun(core: str) -> bool:
    """A lower-case word ending in ``s`` (``users``, ``downloads``): what a count is of."""
    return len(core) >= 3 and core.isalpha() and core.islower() and core.endswith("s")


def _formula_letter(core: str) -> bool:
    """A one-letter term of a formula (``n``, ``x``, ``N``); not the words ``a``, ``A``, ``I``."""
    return len(core) == 1 and core.isascii() and core.isalpha() and core not in "aAI"


def _hex_chars(h: str) -> str:
    """Hex digits one by one: ``7f0a`` -> "seven F zero A"."""
    return " ".join(num.digits_words(c) if c.isdecimal() else c.upper() for c in h)


def _code_chars(core: str) -> str:
    """An identifier read character by character: digits one by one, letters spelled."""
    out: list[str] = []
    for part in re.findall(r"[0-9]+|[A-Za-z]+", core):
        out.append(num.digits_words(part) if part[0].isdecimal() else letters_spoken(part.upper()))
    return " ".join(out)


def _phone(core: str) -> str:
    groups: list[str] = []
    cur = ""
    for c in core:
        if c.isdecimal():
            cur += c
        elif cur:
            groups.append(cur)
            cur = ""
    if cur:
        groups.append(cur)
    return ", ".join(num.digits_words(g) for g in groups)


def normalize_en(text: str) -> str:
    """Spoken English for ``text`` (no lexicon): ``"$5.99"`` -> "five dollars ninety nine cents".

    Punctuation is kept where it was; pieces are joined with :func:`mixvox.ir.join_spoken`.
    """
    from mixvox.ir import join_spoken

    return join_spoken(
        t.respelling or t.spoken for t in Normalizer().tokenize(text) if t.kind != "unread"
    )
