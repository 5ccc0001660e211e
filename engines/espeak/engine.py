"""The espeak-ng engine: reads the IR's spoken text with espeak's Mandarin and English voices.

It is the engine that always works (no model download), so it is the fallback when ChatTTS
weights are absent and the engine end-to-end tests rely on. It consumes text: each run of
consecutive words of one language becomes one espeak call (``cmn`` for ``zh``, ``en-us`` for
``en``), and the prosody plugin's break levels and ChatTTS-style pause tokens become silences
between runs, so the rhythm matches what ChatTTS would be asked to do.

Chinese words that carry pinyin are read through espeak's pinyin voice (``cmn-Latn-pinyin``)
from that pinyin rather than from their characters, so the zh frontend's polyphone choices,
tone sandhi and the user's lexicon entries and ``[银行](yin2 hang2)`` overrides are what is
heard. A word whose pinyin espeak cannot parse (erhua ``huar1``, interjections ``m2``) is read
from its characters with the ``cmn`` voice.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from mixvox.engines.espeak import binding
from mixvox.engines.espeak.arpabet import to_espeak
from mixvox.errors import notify
from mixvox.interfaces import AudioChunk, EngineUnavailable, SynthesisOptions
from mixvox.ir import BREAK_CLAUSE, BREAK_SENTENCE, EN, ZH, Chunk, Utterance, Word, join_spoken
from mixvox.phonetics import parse_pinyin_syllable
from mixvox.textutil import is_han

log = logging.getLogger("mixvox.espeak")

#: Plan-internal "language" of runs read from pinyin by espeak's pinyin voice.
PINYIN = "pinyin"

#: espeak voices per IR language (and for pinyin runs).
VOICES: dict[str, str] = {ZH: "cmn", EN: "en-us", PINYIN: binding.PINYIN_VOICE}

#: Silence after a word, by ``Word.break_after`` level (milliseconds).
BREAK_MS: dict[int, int] = {0: 0, 1: 0, BREAK_CLAUSE: 150, BREAK_SENTENCE: 300}

#: Silence for ChatTTS pause tokens (milliseconds); ``[break_N]`` is computed.
CONTROL_PAUSE_MS: dict[str, int] = {
    "[uv_break]": 100,
    "[v_break]": 100,
    "[lbreak]": 300,
    "[llbreak]": 500,
}
_BREAK_N = re.compile(r"\[break_(\d)\]")
_SPEED_N = re.compile(r"\[speed_(\d)\]")

#: Options espeak understands besides speaker/seed/speed; ``raw`` is handled by the pipeline.
KNOWN_EXTRA = frozenset({"raw", "speed"})

_QUESTION = {"?", "？"}


def pinyin_for(word: Word, readable: Callable[[str], bool] | None) -> str | None:
    """The word's pinyin as espeak's pinyin voice wants it, or ``None`` to read its characters.

    Used only when every visible character of ``spoken`` is Han and there is exactly one
    tone-numbered syllable per character (so the pinyin is known to cover the whole word), and
    when ``readable`` accepts each syllable.
    """
    if readable is None or not word.phonemes:
        return None
    chars = [ch for ch in word.spoken if not ch.isspace()]
    if not chars or len(chars) != len(word.phonemes) or not all(is_han(c) for c in chars):
        return None
    out: list[str] = []
    for syl in word.phonemes:
        try:  # canonical form: pinyin writes ju/qu/xu/yu, and espeak does not parse jv
            s = parse_pinyin_syllable(syl.strip())
        except ValueError:
            return None
        if not readable(s):
            return None
        out.append(s)
    return " ".join(out)


def pause_ms(token: str) -> int | None:
    """Silence length for a control token, or ``None`` when the token is not a pause."""
    token = token.strip()
    if token in CONTROL_PAUSE_MS:
        return CONTROL_PAUSE_MS[token]
    m = _BREAK_N.fullmatch(token)
    if m:
        return 60 + 40 * int(m.group(1))
    return None


def break_ms(level: int) -> int:
    """Silence for a break level; levels above the sentence level count as sentence breaks."""
    if level >= BREAK_SENTENCE:
        return BREAK_MS[BREAK_SENTENCE]
    return BREAK_MS.get(level, 0)


@dataclass
class _Speech:
    lang: str
    text: str
    #: The text holds ``[[...]]`` espeak phonemes (an English pronunciation override).
    phonemes: bool = False
    #: Speaking-rate factor from ``[speed_N]`` tokens (SSML ``<prosody rate>``): N / 5.
    speed: float = 1.0


def speed_of(token: str) -> float | None:
    """The rate factor a ``[speed_N]`` token asks for (``[speed_5]`` is 1.0), else ``None``."""
    m = _SPEED_N.fullmatch(token.strip())
    return max(1, int(m.group(1))) / 5 if m else None


def override_phonemes(word: Word) -> str | None:
    """``[[...]]`` espeak input for an English word whose ARPAbet came from an override."""
    if word.lang != EN or not word.override or not word.phonemes:
        return None
    mnemonics = to_espeak(word.phonemes)
    return f"[[{mnemonics}]]" if mnemonics else None


@dataclass
class _Pause:
    ms: int


def split_script(text: str) -> list[tuple[str, str]]:
    """Cut text of unknown language (``--raw``) into ``(zh|en, text)`` runs by script.

    Han characters go to the Mandarin voice, everything else to the English one; spaces and
    punctuation stay with the run they follow so nothing is lost.
    """
    runs: list[tuple[str, list[str]]] = []
    lang: str | None
    for ch in text:
        if is_han(ch):
            lang = ZH
        elif ch.isalnum():
            lang = EN
        else:
            lang = runs[-1][0] if runs else None  # neutral: stays with the current run
        if lang is None:
            runs.append((EN, [ch]))
        elif runs and runs[-1][0] == lang:
            runs[-1][1].append(ch)
        else:
            runs.append((lang, [ch]))
    return [(lang, "".join(chars)) for lang, chars in runs if "".join(chars).strip()]


def plan(
    words: list[Word], readable: Callable[[str], bool] | None = None, speed: float = 1.0
) -> list[_Speech | _Pause]:
    """Turn a chunk's words into espeak calls and silences, in order.

    Consecutive words of one language share one call (espeak's intonation then spans the
    phrase); a break level of clause or more, or a pause token, ends the call and inserts a
    silence. Consecutive silences merge into the longest one, so a comma followed by
    ``[uv_break]`` is one pause, not two. Non-pause control tokens (``[laugh]``) are dropped
    on purpose: espeak cannot laugh. ``readable`` (a pinyin syllable -> bool test) enables
    reading zh words from their pinyin (see :func:`pinyin_for`); ``None`` reads characters.
    English words whose ARPAbet is an override are spoken from it through espeak's phoneme
    input (see :func:`override_phonemes`); ``[speed_N]`` tokens change the rate from there on,
    starting at ``speed``.
    """
    out: list[_Speech | _Pause] = []
    lang: str | None = None
    texts: list[str] = []
    phon_run = False
    pending = 0

    def flush() -> None:
        nonlocal lang, texts, phon_run
        if lang is not None and texts:
            if phon_run:  # typed brackets must not become phoneme input
                plain = [
                    t if t.startswith("[[") else t.replace("[", "(").replace("]", ")")
                    for t in texts
                ]
                out.append(_Speech(lang, " ".join(plain), phonemes=True, speed=speed))
            else:
                out.append(_Speech(lang, join_spoken(texts), speed=speed))
        lang, texts, phon_run = None, [], False

    def add_pause(ms: int) -> None:
        nonlocal pending
        if ms > 0:
            flush()
            pending = max(pending, ms)

    def add_speech(run_lang: str, text: str) -> None:
        nonlocal lang, pending
        if not text.strip():
            return
        if pending:
            out.append(_Pause(pending))
            pending = 0
        if run_lang != lang:
            flush()
            lang = run_lang
        texts.append(text)

    for w in words:
        if w.kind == "control":
            ms = pause_ms(w.spoken)
            factor = speed_of(w.spoken)
            if factor is not None:
                if factor != speed:
                    flush()
                    speed = factor
                continue
            if ms is None:
                log.debug("espeak: control token %r ignored", w.spoken)
            else:
                add_pause(ms)
            continue
        if w.kind == "punct":
            if lang is not None and w.spoken.strip() in _QUESTION:
                texts.append("？" if lang == ZH else "?")  # question intonation
            add_pause(break_ms(w.break_after))
            continue
        text = w.spoken
        if w.lang == EN and w.respelling:
            text = w.respelling
        pinyin = pinyin_for(w, readable) if w.lang == ZH else None
        phon = override_phonemes(w)
        if phon is not None:
            add_speech(EN, phon)
            phon_run = True
        elif pinyin is not None:
            add_speech(PINYIN, pinyin)
        elif w.lang in (ZH, EN):
            add_speech(w.lang, text)
        else:  # raw mode or an unknown language: choose the voice by script
            for run_lang, run_text in split_script(text):
                add_speech(run_lang, run_text)
        add_pause(break_ms(w.break_after))
    flush()
    if pending:
        out.append(_Pause(pending))
    return out


class EspeakEngine:
    """:class:`mixvox.interfaces.Engine` on libespeak-ng (22050 Hz, mono)."""

    name = "espeak"
    consumes = "text"
    #: Per-call options this engine reads (the router refuses others as typos).
    known_options = KNOWN_EXTRA

    def __init__(self, **options: object) -> None:
        # The core validates options against EspeakOptions (it has none) before building the
        # engine; code that constructs the engine directly still hears about a stray keyword.
        if options:
            notify("espeak engine ignores option(s): " + ", ".join(sorted(options)))
        try:
            self._lib = binding.get()
        except binding.EspeakError as exc:
            raise EngineUnavailable(f"espeak-ng cannot start: {exc}") from exc
        self.sample_rate: int = self._lib.sample_rate
        self._variants = set(binding.voice_variants())
        self._warned: set[str] = set()

    @property
    def voices(self) -> list[str]:
        """The speaker names this engine knows (espeak voice variants), for voice pickers."""
        return sorted(self._variants)

    # -- options ----------------------------------------------------------------------------

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            notify(message, stacklevel=3)

    def _variant(self, speaker: str | None) -> str:
        """``+f3`` style suffix for a speaker naming an espeak voice variant, else ``""``."""
        if not speaker:
            return ""
        if speaker in self._variants:
            return "+" + speaker
        folded = {v.casefold(): v for v in self._variants}
        if speaker.casefold() in folded:
            return "+" + folded[speaker.casefold()]
        shown = speaker if len(speaker) <= 24 else speaker[:21] + "..."
        self._warn_once(
            "speaker:" + speaker,
            f"espeak engine: speaker {shown!r} is not an espeak voice variant "
            "(try f1-f5, m1-m7, klatt); using the default voice",
        )
        return ""

    def _rate(self, options: SynthesisOptions, extra: Mapping[str, object]) -> int:
        speed = extra.get("speed", options.speed)
        try:
            factor = float(speed)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self._warn_once("speed", f"espeak engine: speed {speed!r} is not a number; using 1")
            factor = 1.0
        if not (math.isfinite(factor) and factor > 0):
            self._warn_once("speed", f"espeak engine: speed {speed!r} must be > 0; using 1")
            factor = 1.0
        return round(binding.DEFAULT_RATE * factor)

    def _check_extra(self, extra: Mapping[str, object]) -> None:
        unknown = sorted(k for k in extra if k not in KNOWN_EXTRA)
        if unknown:
            key = "extra:" + ",".join(unknown)
            self._warn_once(key, "espeak engine ignores option(s): " + ", ".join(unknown))

    # -- synthesis ---------------------------------------------------------------------------

    def render_chunk(
        self, words: list[Word], options: SynthesisOptions, speed: float = 1.0
    ) -> np.ndarray:
        """Float32 samples for one chunk's words (``speed``: the ``[speed_N]`` rate in force)."""
        extra = options.extra or {}
        variant = self._variant(options.speaker)
        rate = self._rate(options, extra)
        pieces: list[np.ndarray] = []
        for step in plan(words, self._lib.pinyin_readable, speed):
            if isinstance(step, _Pause):
                pieces.append(np.zeros(int(self.sample_rate * step.ms / 1000), np.float32))
            else:
                voice, speed_rate = VOICES[step.lang] + variant, round(rate * step.speed)
                if step.phonemes:
                    pcm = self._lib.synth(step.text, voice, speed_rate, phonemes=True)
                else:
                    pcm = self._lib.synth(step.text, voice, speed_rate)
                pieces.append(pcm.astype(np.float32) / 32768.0)
        if not pieces:
            return np.zeros(0, np.float32)
        return np.concatenate(pieces)

    def stream(
        self, utterance: Utterance, chunks: list[Chunk], options: SynthesisOptions
    ) -> Iterator[AudioChunk]:
        """One :class:`AudioChunk` (``final=True``) per IR chunk, in order."""
        self._check_extra(options.extra or {})
        speed = 1.0  # [speed_N] tokens hold across chunks, as a <prosody> element does
        for chunk in chunks:
            if speed == 1.0:
                samples = self.render_chunk(chunk.words, options)
            else:
                samples = self.render_chunk(chunk.words, options, speed)
            for w in chunk.words:
                factor = speed_of(w.spoken) if w.kind == "control" else None
                speed = factor if factor is not None else speed
            yield AudioChunk(samples, self.sample_rate, chunk=chunk.index, final=True)

    def close(self) -> None:
        """Nothing to free: the library stays loaded for the life of the process."""
