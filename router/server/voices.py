"""Voice names of ``mixvox serve``: what a request's ``voice`` may be, and what it means.

A voice is a *name*, never a path or a speaker string: requests cannot make the server read
files (the CLI's ``--speaker @file``) or smuggle megabytes of speaker data. Names are:

* names from the config's ``[voices]`` table (``narrator = "<speaker string>"`` or
  ``"seed:42"``), which the operator controls;
* ``default`` and OpenAI's voice names (``alloy``, ``echo``...), so that apps written for
  OpenAI work unchanged: they mean the engine's default voice unless ``[voices]`` names them;
* the engine's own voices when it lists them (espeak's variants ``f1``, ``m3``...);
* ``seed:N`` (a seeded random voice) for engines that do not list voices (sampling engines).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mixvox.interfaces import MixvoxError

#: OpenAI's built-in voice names.
OPENAI_VOICES = (
    "alloy",
    "ash",
    "ballad",
    "coral",
    "echo",
    "fable",
    "nova",
    "onyx",
    "sage",
    "shimmer",
    "verse",
)
_SEED = re.compile(r"seed:(\d{1,10})")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.+-]{0,63}")


class UnknownVoice(MixvoxError):
    """The request named a voice this server does not have."""


class Voices:
    """Resolves voice names for one engine (``engine_voices``: its list, or ``None``)."""

    def __init__(self, named: Mapping[str, str], engine_voices: list[str] | None) -> None:
        for name in named:
            if not _NAME.fullmatch(name):
                raise MixvoxError(
                    f"config [voices]: {name!r} is not a valid voice name (letters, digits, "
                    "space, _ . + -; at most 64 characters)"
                )
        self.named = dict(named)
        self.engine_voices = list(engine_voices) if engine_voices is not None else None

    def resolve(self, voice: str | None) -> str | None:
        """The speaker to synthesize with (``None``: the engine's default)."""
        if voice is None or voice == "":
            return None
        if voice in self.named:
            return self.named[voice]
        if voice == "default" or voice in OPENAI_VOICES:
            return None
        if self.engine_voices is not None:
            if voice in self.engine_voices:
                return voice
        else:
            m = _SEED.fullmatch(voice)
            if m and int(m.group(1)) < 2**31:
                return voice
        shown = voice if len(voice) <= 40 else voice[:37] + "..."
        raise UnknownVoice(f"unknown voice {shown!r}; GET /v1/audio/voices lists the voices")

    def listing(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"id": "default", "kind": "default"}]
        out += [{"id": n, "kind": "named"} for n in sorted(self.named)]
        out += [
            {"id": n, "kind": "openai-alias", "means": "default"}
            for n in OPENAI_VOICES
            if n not in self.named
        ]
        if self.engine_voices is not None:
            out += [{"id": v, "kind": "engine"} for v in self.engine_voices]
        else:
            out.append({"id": "seed:N", "kind": "pattern", "means": "seeded random voice"})
        return out
