"""English frontend: normalization (numbers, money, dates, units, URLs, acronyms ...), CMUdict
G2P with a numpy port of g2p-en's neural model for unknown words, lexicon overrides.

Public surface: :class:`EnFrontend` (registered through the ``en`` entry point),
:func:`normalize_en` and :func:`g2p_en_word`. Conventions: ``CONVENTIONS.md`` in this folder.
"""

from .g2p import g2p_en_word
from .normalize import normalize_en
from .plugin import EnFrontend

__all__ = ["EnFrontend", "g2p_en_word", "normalize_en"]
