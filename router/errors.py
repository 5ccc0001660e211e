"""The errors mixvox raises on purpose, all subclasses of :class:`MixvoxError`.

Catch :class:`MixvoxError` for "a user mistake or a bad environment, with a message meant
for people"; anything else escaping mixvox is a bug. The CLI turns these into one line on
stderr; an ``exit_code`` attribute (2 for key and encryption problems) picks the exit status.
"""

from __future__ import annotations

from .interfaces import EngineUnavailable, MixvoxError


class NothingToSay(MixvoxError):
    """The text has nothing speakable (empty, whitespace, punctuation only, all skipped)."""


class UnknownOption(MixvoxError):
    """A synthesis option the engine does not know (a typo such as ``spead=``)."""


class InputFileError(MixvoxError):
    """An input file that is not a regular file, is too large, or cannot be read."""


__all__ = ["EngineUnavailable", "InputFileError", "MixvoxError", "NothingToSay", "UnknownOption"]
