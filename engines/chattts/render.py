"""Render IR chunks as the text ChatTTS reads, build its prompts, and bound generation length.

ChatTTS reads characters, not phonemes, and was trained on text that its own normalizer had
reduced to Han characters, Latin letters, spaces and ``，。、,.`` (reference ``norm.py``: ``：；！
（）【】《》-`` become a comma or full stop, everything else is stripped). So a chunk is written
in that alphabet:

* ``kind="control"`` words (``[uv_break]``, ``[laugh]``) pass as they are,
* words use ``Word.respelling`` when the frontend or a lexicon set one (``nginx`` -> ``engine
  x``), else ``Word.spoken``,
* Chinese polyphones whose pinyin is not the character's most common reading are written with a
  single-reading homophone (``行长`` hang2 zhang3 -> ``航掌``) from ``data/homophones.tsv``,
* punctuation becomes ``，``/``。`` (``,``/``.`` in mostly-English chunks) or is dropped,
* digits never reach the model: frontends spell numbers out, and a digit that still arrives is
  read digit by digit with a warning (a model fed ``4070`` makes up a reading),
* any other character the model's alphabet lacks is dropped with a warning.

Notes about what was changed or dropped are returned with the text, so the engine can put them
on the utterance as warnings: nothing is dropped silently.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mixvox.engines.chattts.respell import respell_override
from mixvox.interfaces import MixvoxError
from mixvox.ir import BREAK_CLAUSE, Chunk, Word, join_spoken

#: Audio frames per second of GPT output (one frame = 4 codes = 512 samples at 24 kHz).
FRAMES_PER_SECOND = 46.875
#: The reference's hard limit on generated frames (``max_new_token``).
MAX_FRAMES = 2048

DEFAULT_PROMPT = "[speed_5]"

_CONTROL = re.compile(r"\[[A-Za-z][A-Za-z0-9_]{0,31}\]")
_ZH_DIGITS = "零一二三四五六七八九"
_EN_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

# Punctuation -> the class the model knows: "," (pause), "." (sentence end), "、" (list pause).
_COMMA = set("，,：:；;（）()【】[]『』「」《》<>〈〉－-—–~～/|·")
_STOP = set("。.！!？?…")
_ENUM = set("、")
#: Dropped without a note: quotes carry no sound.
_QUOTES = set("\"'“”‘’«»‹›「」『』〝〞")


@dataclass
class Note:
    """Something the renderer changed or dropped, for a warning on the utterance."""

    code: str
    message: str
    start: int
    end: int


@dataclass
class Rendered:
    text: str
    notes: list[Note] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------
# Homophones
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HomophoneTable:
    subs: dict[tuple[str, str], str]
    keep: frozenset[str]

    def respell(self, word: str, pinyin: list[str], *, override: bool = False) -> str:
        """``word`` with characters whose reading is not their usual one replaced.

        ``pinyin``: one tone-numbered syllable per Han character. Words in the ``keep`` list are
        trusted to the model's context unless the reading is a user override.
        """
        if (word in self.keep and not override) or not pinyin:
            return word
        out: list[str] = []
        i = 0
        for ch in word:
            if _is_han(ch):
                py = pinyin[i].lower() if i < len(pinyin) else ""
                i += 1
                out.append(self.subs.get((ch, py)) or self.subs.get((ch, _lexical(ch, py)), ch))
            else:
                out.append(ch)
        return "".join(out)


def _lexical(ch: str, py: str) -> str:
    """Undo third-tone sandhi where it is unambiguous: 行长很好 says zhang2, the word is zhang3.

    Only when the tone-2 syllable is not itself a reading of ``ch`` (强 qiang2 stays qiang2).
    """
    if not py.endswith("2"):
        return py
    from pypinyin.constants import PINYIN_DICT
    from pypinyin.contrib.tone_convert import to_tone3

    readings = {to_tone3(r) for r in PINYIN_DICT.get(ord(ch), "").split(",") if r}
    return py if py in readings else py[:-1] + "3"


def load_homophones(path: Path | None = None) -> HomophoneTable:
    """Read the table (see the file's header for the format); bad lines are an error."""
    path = path or Path(__file__).with_name("data") / "homophones.tsv"
    subs: dict[tuple[str, str], str] = {}
    keep: set[str] = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if cols[0] == "keep" and len(cols) == 2:
            keep.add(cols[1].strip())
        elif len(cols) == 3 and len(cols[0]) == 1 and len(cols[2]) == 1:
            subs[(cols[0], cols[1].strip().lower())] = cols[2]
        else:
            raise MixvoxError(f"{path}:{n}: bad homophone line {line!r}")
    return HomophoneTable(subs, frozenset(keep))


@functools.lru_cache(maxsize=1)
def default_homophones() -> HomophoneTable:
    return load_homophones()


# ---------------------------------------------------------------------------------------------
# Characters
# ---------------------------------------------------------------------------------------------


def _is_han(ch: str) -> bool:
    # The model's vocabulary covers the basic CJK block only (as the reference normalizer).
    return "\u4e00" <= ch <= "\u9fff"


def _fold_latin(ch: str) -> str:
    """``é`` -> ``e``: the tokenizer lower-cases and strips accents; other scripts give ``""``."""
    if ch.isascii():
        return ch if ch.isalpha() else ""
    base = unicodedata.normalize("NFKD", ch)
    base = "".join(c for c in base if not unicodedata.combining(c))
    return base if base.isascii() and base.isalpha() else ""


def _spell_digits(digits: str, lang: str) -> str:
    if lang == "zh":
        return "".join(_ZH_DIGITS[int(d)] for d in digits)
    return " ".join(_EN_DIGITS[int(d)] for d in digits)


def clean_text(text: str, lang: str, notes: list[Note], start: int, end: int) -> str:
    """Reduce ``text`` to the model's alphabet (see the module notes); record what changed."""
    out: list[str] = []
    dropped: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if _is_han(ch) or ch.isspace():
            out.append(" " if ch.isspace() else ch)
        elif "0" <= ch <= "9":
            j = i
            while j < n and "0" <= text[j] <= "9":
                j += 1
            run = text[i:j]
            notes.append(
                Note(
                    "digits-in-spoken",
                    f"digits {run!r} reached the engine; read one by one",
                    start,
                    end,
                )
            )
            spelled = _spell_digits(run, lang)
            out.append(spelled if lang == "zh" else f" {spelled} ")
            i = j
            continue
        elif ch == "'" or ch == "’":
            pass  # don't -> dont, as the reference normalizer does
        elif ch in _COMMA or ch in _STOP or ch in _ENUM:
            out.append(" " if ch in "-–—" else _punct(ch, lang))
        else:
            folded = _fold_latin(ch)
            if folded:
                out.append(folded)
            elif ch not in _QUOTES and not unicodedata.category(ch).startswith("Z"):
                dropped.append(ch)
        i += 1
    if dropped:
        shown = "".join(dict.fromkeys(dropped))[:20]
        notes.append(
            Note("engine-unsupported-char", f"ChatTTS cannot read {shown!r}; left out", start, end)
        )
    return re.sub(r" {2,}", " ", "".join(out)).strip()


def _punct(ch: str, lang: str) -> str:
    if ch in _ENUM:
        return "、" if lang == "zh" else ","
    if ch in _STOP:
        return "。" if lang == "zh" else "."
    if ch in _COMMA:
        return "，" if lang == "zh" else ","
    return ""


# ---------------------------------------------------------------------------------------------
# Chunks
# ---------------------------------------------------------------------------------------------


def dominant_lang(words: Iterable[Word]) -> str:
    """``zh`` when Han characters outnumber English words (the reference's rule), else ``en``."""
    han = 0
    en = 0
    for w in words:
        if w.kind != "word":
            continue
        if w.lang == "zh":
            han += sum(1 for c in w.spoken if _is_han(c))
        elif w.lang == "en":
            en += len(re.findall(r"[A-Za-z]+", w.spoken))
        else:
            han += sum(1 for c in w.spoken if _is_han(c))
            en += len(re.findall(r"[A-Za-z]+", w.spoken))
    return "zh" if han > en else "en"


def render_words(words: list[Word], homophones: HomophoneTable | None = None) -> Rendered:
    """The ChatTTS text of ``words`` (one chunk)."""
    table = homophones or default_homophones()
    punct_lang = dominant_lang(words)
    notes: list[Note] = []
    parts: list[str] = []
    for k, w in enumerate(words):
        if w.kind == "control":
            tok = w.spoken.strip()
            if _CONTROL.fullmatch(tok):
                parts.append(tok)
            else:
                notes.append(
                    Note("bad-control", f"not a control token: {tok!r}; left out", w.start, w.end)
                )
            continue
        if w.kind == "punct":
            marks = [_punct(c, punct_lang) for c in w.spoken if not c.isspace()]
            _add_pause(parts, max(marks, key=_strength, default=""))
            continue
        if w.lang == "raw":  # --raw: the user's text exactly
            parts.append(w.spoken)
            continue
        source = w.respelling if w.respelling else w.spoken
        said = respell_override(w)  # an English ARPAbet override: words that say it
        if said is not None:
            source = said.text
            if not said.faithful:
                notes.append(Note("override-approximate", said.message, w.start, w.end))
        lang = "zh" if w.lang == "zh" else "en"
        if lang == "zh" and not w.respelling and w.phonemes:
            source = table.respell(source, w.phonemes, override=w.override)
        text = clean_text(source, lang, notes, w.start, w.end)
        if not text:
            continue
        parts.append(text)
        nxt = words[k + 1] if k + 1 < len(words) else None
        if w.break_after >= BREAK_CLAUSE and nxt is not None and nxt.kind == "word":
            parts.append("[uv_break]")  # a clause break with no punctuation to show it
    while parts and _strength(parts[0]):  # a pause before anything is said is no pause
        parts.pop(0)
    text = join_spoken(parts)
    return Rendered(text, notes)


def _strength(mark: str) -> int:
    return {"。": 3, ".": 3, "，": 2, ",": 2, "、": 1}.get(mark, 0)


def _add_pause(parts: list[str], mark: str) -> None:
    """Append a pause mark; a run of marks (``」，``, ``?!``, ``……``) becomes its strongest."""
    if not mark:
        return
    if parts and _strength(parts[-1]):
        if _strength(mark) > _strength(parts[-1]):
            parts[-1] = mark
        return
    parts.append(mark)


def render_chunk(chunk: Chunk, homophones: HomophoneTable | None = None) -> Rendered:
    return render_words(chunk.words, homophones)


# ---------------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------------


def speed_prompt(speed: float) -> str:
    """``[speed_N]`` for a speed factor: 1.0 -> ``[speed_5]`` (the default), clamped to 0..9."""
    n = int(round(5 * float(speed)))
    return f"[speed_{min(9, max(0, n))}]"


def code_prompt(text: str, *, speaker: bool, prompt: str = DEFAULT_PROMPT) -> str:
    """``[Stts][spk_emb]{prompt}{text}[Ptts]`` (``[empty_spk]`` without a speaker).

    Stray ``[Stts]``/``[spk_emb]``/``[empty_spk]`` in ``text`` are removed first: a second
    ``[spk_emb]`` would receive the speaker vector too.
    """
    for tok in ("[Stts]", "[spk_emb]", "[empty_spk]"):
        text = text.replace(tok, "")
    spk = "[spk_emb]" if speaker else "[empty_spk]"
    return f"[Stts]{spk}{prompt}{text.strip()}[Ptts]"


def refine_params(oral: int | None = None, laugh: int | None = None, brk: int | None = None) -> str:
    """The refine prompt ``[oral_N][laugh_N][break_N]`` (each optional; ranges as the vocab)."""
    out = ""
    for name, val, top in (("oral", oral, 9), ("laugh", laugh, 2), ("break", brk, 7)):
        if val is None:
            continue
        if not 0 <= int(val) <= top:
            raise MixvoxError(f"{name} must be between 0 and {top}, got {val}")
        out += f"[{name}_{int(val)}]"
    return out


def refine_prompt(text: str, prompt: str = "") -> str:
    """``[Sbreak]{text}[Pbreak]{prompt}``; the model answers until ``[Ebreak]``."""
    return f"[Sbreak]{text}[Pbreak]{prompt}"


def filter_refined(ids: Iterable[int], break_0_id: int) -> list[int]:
    """Refined ids to keep for the code stage: those below ``[break_0]``.

    The refine model writes prosody tokens (``[break_N]``, ``[laugh_N]``, ``[oral_N]``,
    ``[speed_N]``: every id from ``[break_0]`` up) that the code stage was not trained on;
    ``[uv_break]``, ``[laugh]`` and ``[lbreak]`` sit below and stay.
    """
    return [int(i) for i in ids if int(i) < break_0_id]


# ---------------------------------------------------------------------------------------------
# Length guard
# ---------------------------------------------------------------------------------------------

# Seconds per unit at normal speed, on the slow side (a bound, not a prediction).
_SEC_PER_HAN = 0.22  # Mandarin runs at 4-6 syllables/s
_SEC_PER_PHONE = 0.085  # English runs at 11-15 phones/s
_SEC_PER_LETTER = 0.07  # English words without phonemes (raw text, OOV)
_SEC_PER_PAUSE = {"，": 0.25, ",": 0.25, "、": 0.2, "。": 0.4, ".": 0.4}
_SEC_PER_CONTROL = {"[uv_break]": 0.25, "[v_break]": 0.25, "[lbreak]": 0.5, "[laugh]": 0.8}


def expected_seconds(words: Iterable[Word] | None = None, text: str | None = None) -> float:
    """A generous estimate of how long ``words`` (or plain ``text``) take to say."""
    total = 0.0
    if words is not None:
        for w in words:
            if w.kind == "control":
                total += _SEC_PER_CONTROL.get(w.spoken.strip(), 0.3)
            elif w.kind == "punct":
                total += 0.3
            elif w.lang == "en" and w.phonemes and not w.respelling:
                total += _SEC_PER_PHONE * len(w.phonemes)
            else:
                total += expected_seconds(text=w.respelling or w.spoken)
    if text is not None:
        rest = _CONTROL.sub(lambda m: " ", text)
        total += sum(
            _SEC_PER_CONTROL.get(m, 0.3) for m in _CONTROL.findall(text) if m in _SEC_PER_CONTROL
        )
        for ch in rest:
            if _is_han(ch):
                total += _SEC_PER_HAN
            elif ch.isalpha():
                total += _SEC_PER_LETTER
            elif ch.isdigit():
                total += 0.3
            else:
                total += _SEC_PER_PAUSE.get(ch, 0.0)
    return total


@dataclass(frozen=True)
class FrameBounds:
    min_frames: int
    max_frames: int


def frame_bounds(
    seconds: float,
    *,
    speed: float = 1.0,
    slack: float = 2.5,
    margin_s: float = 1.5,
    min_ratio: float = 0.25,
    cap: int = MAX_FRAMES,
) -> FrameBounds:
    """Generation limits for text expected to last ``seconds``.

    ``max``: ``slack`` x the expected duration + ``margin_s``, so a sample that loops or never
    emits the end code stops long before the 2048-frame limit. ``min``: ``min_ratio`` x the
    expected duration, so a sample cannot end (emit the end code) right at the start.
    """
    sec = max(0.0, seconds) / max(0.1, speed)
    hi = int(min(cap, max(8, round((slack * sec + margin_s) * FRAMES_PER_SECOND))))
    lo = int(min(hi // 2, round(min_ratio * sec * FRAMES_PER_SECOND)))
    return FrameBounds(min_frames=max(0, lo), max_frames=hi)
