"""mixvox-techlex: an example third-party mixvox plugin adding a cloud/ops lexicon.

It implements one hook, ``mixvox_lexicon(lang)``, and returns entries read from
``cloud.toml`` (next to this file) with mixvox's own lexicon reader, so the entries get the
same validation as a user's ``--lexicon`` file. Because the hook is not marked ``trylast``,
these entries win over mixvox's built-in lexicon; a user's ``--lexicon`` files still win over
them.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources

from mixvox.interfaces import LexEntry
from mixvox.plugins import hookimpl
from mixvox.plugins.lexicons import load_lexicon_file

__version__ = "0.1.0"


@functools.cache
def _tables() -> dict[str, dict[str, LexEntry]]:
    """Read and validate the lexicon once per process (mixvox may ask for each language)."""
    with resources.as_file(resources.files(__name__).joinpath("cloud.toml")) as path:
        return load_lexicon_file(path)


@hookimpl
def mixvox_lexicon(lang: str) -> Mapping[str, LexEntry] | None:
    """Cloud/ops words for ``lang`` (``zh`` or ``en``); ``None`` for other languages."""
    return _tables().get(lang)
