"""Every error mixvox raises on purpose, and the one way it tells the user something.

Why one module: a caller (the CLI, a server, a plugin) catches :class:`MixvoxError` and knows
that the message is a sentence meant for a person, while anything else is a bug. Each error
also derives from the built-in exception it refines (``ValueError`` for bad options,
``RuntimeError`` for a missing runtime), so code written against the old types keeps working.

Notices (an ignored option, a deprecated config table, a fallback) go through
:func:`notify`: a :class:`MixvoxWarning` through :mod:`warnings`, which the CLI prints as one
``mixvox: warning: ...`` line and a library user can filter or turn into errors. The CLI
turns errors into one line on stderr; an ``exit_code`` attribute (2 for key and encryption
problems) picks the exit status.
"""

from __future__ import annotations

import warnings

__all__ = [
    "ConfigError",
    "EngineUnavailable",
    "InputFileError",
    "MixvoxError",
    "MixvoxWarning",
    "ModelUnavailable",
    "NothingToSay",
    "OptionError",
    "UnknownOption",
    "notify",
]


class MixvoxError(Exception):
    """Base class of errors mixvox raises on purpose (bad input, missing model, bad config)."""


class EngineUnavailable(MixvoxError):
    """An engine cannot run here (missing weights, missing optional dependency, no GPU)."""


class OptionError(MixvoxError, ValueError):
    """An engine option is unknown, of the wrong type or out of range (names the valid ones)."""


class ConfigError(MixvoxError, ValueError):
    """The config file is missing, unreadable, not TOML, or holds a value of the wrong type."""


class ModelUnavailable(MixvoxError, RuntimeError):
    """A model file a frontend needs (e.g. the g2p-en checkpoint) cannot be found or read."""


class UnknownOption(OptionError):
    """A synthesis option the engine does not know (a typo such as ``spead=``)."""


class NothingToSay(MixvoxError):
    """The text has nothing speakable (empty, whitespace, punctuation only, all skipped)."""


class InputFileError(MixvoxError):
    """An input file that is not a regular file, is too large, or cannot be read."""


class MixvoxWarning(UserWarning):
    """Category of every notice mixvox gives the user (see :func:`notify`)."""


def notify(message: str, *, stacklevel: int = 2) -> None:
    """Tell the user ``message`` once, as a :class:`MixvoxWarning` (the CLI prints one line)."""
    warnings.warn(message, MixvoxWarning, stacklevel=stacklevel + 1)
