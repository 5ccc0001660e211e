"""English frontend: normalization (numbers, money, dates, units, URLs, acronyms ...), CMUdict
G2P with a numpy port of g2p-en's neural model for unknown words, lexicon overrides.

Public surface: :class:`EnFrontend` (registered through the ``en`` entry point),
:func:`normalize_en` and :func:`g2p_en_word`. Conventions: ``CONVENTIONS.md`` in this folder.
"""

from mixvox.frontends.en.g2p import g2p_en_word
from mixvox.frontends.en.normalize import normalize_en
from mixvox.frontends.en.plugin import EnFrontend

__all__ = ["EnFrontend", "g2p_en_word", "normalize_en"]
