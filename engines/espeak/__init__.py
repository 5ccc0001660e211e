"""espeak-ng engine: the always-available fallback (library and voices come from a wheel).

Public surface: :class:`EspeakEngine` (via :func:`create_engine`) and :func:`check`.
"""

from mixvox.engines.espeak.binding import check
from mixvox.engines.espeak.plugin import create_engine

__all__ = ["check", "create_engine"]
