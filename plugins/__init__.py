"""Plugin support: the hook specifications and the built-in lexicon and prosody plugins."""

from mixvox.plugins.hookspecs import PROJECT, hookimpl, hookspec

__all__ = ["PROJECT", "hookimpl", "hookspec"]
