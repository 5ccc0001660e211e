"""A minimal ctypes binding to the libespeak-ng shipped by the ``espeakng-loader`` wheel.

Why ctypes and not a system ``espeak-ng``: the wheel carries the library and its data (the
Mandarin and English voices), so a fresh ``pip install`` speaks without root, apt or network.

libespeak-ng keeps global state (one current voice, one callback, one set of parameters), so
this module initialises it once per process and serialises every synthesis behind one lock.
Audio is retrieved in ``AUDIO_OUTPUT_SYNCHRONOUS`` mode: ``espeak_Synth`` returns only after
the callback has received every sample, so the collected buffer is complete on return.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

import numpy as np

from mixvox.errors import MixvoxError
from mixvox.textutil import strip_controls

# espeak_AUDIO_OUTPUT
AUDIO_OUTPUT_SYNCHRONOUS = 2
# espeak_POSITION_TYPE
POS_CHARACTER = 1
# espeak_Synth flags
CHARS_UTF8 = 1
#: espeak_Synth flag: read ``[[...]]`` in the text as espeak phoneme mnemonics.
PHONEME_INPUT = 0x100
# espeak_PARAMETER
PARAM_RATE = 1
PARAM_VOLUME = 2
PARAM_PITCH = 3
# espeak_ERROR
EE_OK = 0

#: espeak's Mandarin voice that reads tone-numbered pinyin (``yin2 hang2``) as Mandarin.
PINYIN_VOICE = "cmn-Latn-pinyin"

DEFAULT_RATE = 175  # words per minute, espeak's own default
MIN_RATE, MAX_RATE = 80, 450

_SynthCallback = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p
)


class EspeakError(MixvoxError, RuntimeError):
    """libespeak-ng could not be loaded, initialised, or refused a request."""


def library_paths() -> tuple[str, str]:
    """``(library file, espeak-ng-data folder)`` from the ``espeakng-loader`` wheel.

    Raises :class:`EspeakError` with a sentence a user can act on when either is missing.
    """
    try:
        import espeakng_loader
    except ImportError as exc:
        raise EspeakError(
            "the espeakng-loader package is not installed (pip install espeakng-loader)"
        ) from exc
    lib = espeakng_loader.get_library_path()
    if not os.path.isfile(lib):
        raise EspeakError(f"libespeak-ng not found at {lib} (reinstall espeakng-loader)")
    try:
        data = espeakng_loader.get_data_path()
    except RuntimeError as exc:
        raise EspeakError(f"espeak-ng data missing: {exc}") from exc
    return lib, data


def check() -> str | None:
    """``None`` when the library and its data are present, else the reason (cheap: no load)."""
    try:
        _lib, data = library_paths()
    except EspeakError as exc:
        return str(exc)
    for needed in ("phontab", "cmn_dict", "en_dict"):
        if not os.path.exists(os.path.join(data, needed)):
            return f"espeak-ng data at {data} lacks {needed!r}"
    return None


class _Espeak:
    """The process-wide library handle; use :func:`get` rather than building one."""

    def __init__(self) -> None:
        lib_path, data_path = library_paths()
        try:
            self.lib = ctypes.CDLL(lib_path)
        except OSError as exc:
            raise EspeakError(f"cannot load {lib_path}: {exc}") from exc
        self.lock = threading.Lock()
        self._buffers: list[np.ndarray] = []
        self._voice: str | None = None
        self._rate: int | None = None
        lib = self.lib
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_Initialize.restype = ctypes.c_int
        lib.espeak_SetSynthCallback.argtypes = [_SynthCallback]
        lib.espeak_SetSynthCallback.restype = None
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_SetVoiceByName.restype = ctypes.c_int
        lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.espeak_SetParameter.restype = ctypes.c_int
        lib.espeak_Synth.argtypes = [
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.c_void_p,
        ]
        lib.espeak_Synth.restype = ctypes.c_int
        lib.espeak_TextToPhonemes.argtypes = [
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
        ]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        self._readable: dict[str, bool] = {}

        # espeak looks for "<path>/espeak-ng-data"; give it the parent folder, which every
        # version understands (newer ones also accept the data folder itself).
        data = Path(data_path)
        root = data.parent if data.name == "espeak-ng-data" else data
        rate = lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, os.fsencode(root), 0)
        if rate <= 0:
            raise EspeakError(f"espeak_Initialize failed (data path {data_path})")
        self.sample_rate = int(rate)
        # Keep a reference to the C callback: if it were garbage-collected, libespeak-ng would
        # call freed memory.
        self._callback = _SynthCallback(self._on_audio)
        lib.espeak_SetSynthCallback(self._callback)

    def _on_audio(self, wav: ctypes._Pointer, numsamples: int, _events: int) -> int:
        if wav and numsamples > 0:
            self._buffers.append(np.ctypeslib.as_array(wav, shape=(numsamples,)).copy())
        return 0  # 0 = go on

    def _set_voice(self, voice: str) -> None:
        if voice == self._voice:
            return
        err = self.lib.espeak_SetVoiceByName(voice.encode("utf-8"))
        if err != EE_OK:
            raise EspeakError(f"espeak-ng has no voice {voice!r} (error {err})")
        self._voice = voice
        self._rate = None  # a voice change resets the rate

    def _set_rate(self, rate: int) -> None:
        if rate != self._rate:
            self.lib.espeak_SetParameter(PARAM_RATE, rate, 0)
            self._rate = rate

    def synth(
        self, text: str, voice: str, rate: int = DEFAULT_RATE, *, phonemes: bool = False
    ) -> np.ndarray:
        """Speak ``text`` with ``voice`` (``cmn``, ``en-us``, ``en-us+f3`` ...) -> int16 samples.

        With ``phonemes=True``, ``[[...]]`` in ``text`` holds espeak phoneme mnemonics (how
        pronunciation overrides are spoken exactly); off by default so that typed brackets
        stay text. The returned array is a fresh copy; an empty text gives an empty array.
        """
        # A NUL would end the C string and cut the rest; other controls are never speech.
        text = strip_controls(text)
        if not text.strip():
            return np.zeros(0, np.int16)
        raw = text.encode("utf-8", errors="replace") + b"\0"
        buf = ctypes.create_string_buffer(raw, len(raw))
        with self.lock:
            self._set_voice(voice)
            self._set_rate(max(MIN_RATE, min(MAX_RATE, int(rate))))
            self._buffers = []
            try:
                err = self.lib.espeak_Synth(
                    buf,
                    len(raw),
                    0,
                    POS_CHARACTER,
                    0,
                    CHARS_UTF8 | (PHONEME_INPUT if phonemes else 0),
                    None,
                    None,
                )
                pieces, self._buffers = self._buffers, []
            finally:
                self._buffers = []
        if err != EE_OK:
            raise EspeakError(f"espeak_Synth failed (error {err}) for voice {voice!r}")
        if not pieces:
            return np.zeros(0, np.int16)
        return np.concatenate(pieces).astype(np.int16, copy=False)

    def phonemes(self, text: str, voice: str) -> str:
        """espeak's own phoneme mnemonics for ``text`` (language switches show as ``(en)``)."""
        out: list[str] = []
        buf = ctypes.c_char_p(text.encode("utf-8", errors="replace"))
        with self.lock:
            self._set_voice(voice)
            # Each call consumes one clause and advances the pointer; stop when it is used up
            # (bounded: every call eats at least one character).
            for _ in range(len(text) + 1):
                if not buf.value:
                    break
                res = self.lib.espeak_TextToPhonemes(ctypes.byref(buf), CHARS_UTF8, 0)
                out.append((res or b"").decode("utf-8", errors="replace"))
        return " ".join(out)

    def pinyin_readable(self, syllable: str) -> bool:
        """Whether the pinyin voice reads ``syllable`` (``hang2``) as Mandarin.

        espeak's pinyin voice spells what it cannot parse (erhua ``huar1``, ``m2``, ``r5``) as
        English letters; those words must be read from their characters instead. The answer
        per syllable is remembered (the inventory is ~1,500 syllables).
        """
        known = self._readable.get(syllable)
        if known is None:
            ph = self.phonemes(syllable, PINYIN_VOICE)
            known = bool(ph.strip()) and "(en)" not in ph
            self._readable[syllable] = known
        return known


_instance: _Espeak | None = None
_instance_lock = threading.Lock()


def get() -> _Espeak:
    """The process-wide initialised library (loaded and initialised on first call)."""
    global _instance
    with _instance_lock:
        if _instance is None:
            _instance = _Espeak()
        return _instance


def voice_variants() -> list[str]:
    """Names of espeak voice variants (``f3``, ``m1``, ``klatt`` ...) usable as ``voice+name``."""
    try:
        _lib, data = library_paths()
    except EspeakError:
        return []
    folder = Path(data) / "voices" / "!v"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_file())
