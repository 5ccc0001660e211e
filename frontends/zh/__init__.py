"""Mandarin frontend of mixvox.

Public surface (imported lazily, so that importing the package stays cheap):

* :class:`ZhFrontend` — ``analyze(span, ctx) -> list[Word]`` (registered as the ``zh`` frontend
  by :mod:`mixvox.frontends.zh.plugin`);
* :func:`normalize_zh` — written -> spoken Chinese text;
* :func:`g2p_zh` — tone-numbered pinyin after sandhi, one syllable per Han character.

Reading conventions: ``CONVENTIONS.md`` in this folder.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ZhFrontend", "g2p_zh", "normalize_zh"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mixvox.frontends.zh import plugin

        return getattr(plugin, name)
    raise AttributeError(name)
