"""The one plugin manager: loads the ``mixvox`` entry-point group and calls hooks safely.

Why not ``pm.hook.x()`` directly: pluggy stops at the first exception, so one broken plugin
would take all others down. Here every hook implementation is called on its own; a failure is
recorded under the plugin's name (``mixvox plugins`` shows it) and the rest go on.

Environment:

* ``MIXVOX_PLUGINS=a,b``: allow-list of entry-point names to load (built-ins included; the
  built-in names are the ``[project.entry-points.mixvox]`` table of ``pyproject.toml``).
* ``MIXVOX_DISABLE_PLUGINS=a,b``: entry-point names not to load.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from mixvox.interfaces import EngineInfo, FrontendInfo, LexEntry
from mixvox.ir import Chunk
from mixvox.plugins import hookspecs

log = logging.getLogger("mixvox.plugins")

ENTRY_POINT_GROUP = "mixvox"

DISTRIBUTION = "mixvox"


def _builtin_plugins() -> dict[str, str]:
    """Built-in plugin modules: the ``mixvox`` entry points of mixvox's own distribution.

    Kept once, in ``pyproject.toml``: from the installed metadata when there is one, else
    (a source tree that was never installed) from the ``pyproject.toml`` beside this folder.
    """
    try:
        dist = metadata.distribution(DISTRIBUTION)
        eps = {ep.name: ep.value for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP}
    except Exception:  # not installed, or broken metadata
        eps = {}
    if eps:
        return eps
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10 only
            import tomli as tomllib
        doc = tomllib.loads(pyproject.read_text("utf-8"))
        table = doc["project"]["entry-points"][ENTRY_POINT_GROUP]
        return {str(k): str(v) for k, v in table.items()}
    except Exception:
        log.warning("cannot find the built-in plugin list (no metadata, no %s)", pyproject)
        return {}


#: Built-in plugin name -> module (derived from ``pyproject.toml``, see above).
BUILTIN_PLUGINS: dict[str, str] = _builtin_plugins()


def _check_lexicon(result: Any) -> str | None:
    if not isinstance(result, Mapping):
        return f"returned {type(result).__name__}, expected a mapping of word -> LexEntry"
    for word, entry in result.items():
        if not isinstance(word, str) or not isinstance(entry, LexEntry):
            return f"entry {word!r}: expected str -> LexEntry, got {type(entry).__name__}"
    return None


def _check_chunks(result: Any) -> str | None:
    if not isinstance(result, list) or not all(isinstance(c, Chunk) for c in result):
        return f"returned {type(result).__name__}, expected a list of Chunk"
    return None


#: Result checks per hook: a plugin returning the wrong shape is reported like one that raised,
#: instead of breaking the caller later with an error that does not name the plugin.
_RESULT_CHECKS: dict[str, Callable[[Any], str | None]] = {
    "mixvox_lexicon": _check_lexicon,
    "mixvox_prosody": _check_chunks,
}


@dataclass
class PluginRecord:
    name: str
    module: str
    builtin: bool
    loaded: bool = False
    error: str | None = None
    distribution: str | None = None


@dataclass
class Registry:
    pm: pluggy.PluginManager
    plugins: dict[str, PluginRecord] = field(default_factory=dict)
    frontends: dict[str, FrontendInfo] = field(default_factory=dict)
    engines: dict[str, EngineInfo] = field(default_factory=dict)

    # -- safe hook calls ----------------------------------------------------------------------

    def _impls(self, hook_name: str) -> list[Any]:
        hook = getattr(self.pm.hook, hook_name)
        # pluggy calls implementations in reverse registration order, tryfirst first and
        # trylast last; get_hookimpls() lists them the other way round.
        return list(reversed(hook.get_hookimpls()))

    def _record_error(self, impl: Any, hook_name: str, exc: BaseException | str) -> None:
        name = self.pm.get_name(impl.plugin) or repr(impl.plugin)
        if isinstance(exc, BaseException):
            msg = f"{hook_name} failed: {type(exc).__name__}: {exc}"
        else:
            msg = f"{hook_name} {exc}"
        rec = self.plugins.get(name)
        if rec is not None and rec.error is None:
            rec.error = msg
        log.warning("plugin %r: %s (skipped)", name, msg)

    def call_all(self, hook_name: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
        """Yield ``(plugin name, result)`` for every implementation, skipping failures."""
        check = _RESULT_CHECKS.get(hook_name)
        for impl in self._impls(hook_name):
            try:
                res = impl.function(**{k: kwargs[k] for k in impl.argnames})
                problem = check(res) if check is not None and res is not None else None
            except Exception as exc:  # a broken plugin must not break the others
                self._record_error(impl, hook_name, exc)
                continue
            if problem is not None:
                self._record_error(impl, hook_name, problem)
                continue
            if res is not None:
                yield self.pm.get_name(impl.plugin) or "", res

    def call_first(self, hook_name: str, **kwargs: Any) -> Any:
        for _name, res in self.call_all(hook_name, **kwargs):
            return res
        return None

    # -- lookups ------------------------------------------------------------------------------

    def frontend(self, lang: str) -> FrontendInfo | None:
        return self.frontends.get(lang)

    def engine(self, name: str) -> EngineInfo | None:
        return self.engines.get(name)

    def engines_by_priority(self) -> list[EngineInfo]:
        return sorted(self.engines.values(), key=lambda e: -e.priority)


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


def _entry_points() -> list[metadata.EntryPoint]:
    try:
        return list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # broken metadata of some unrelated distribution
        return []


def build_registry(extra_plugins: list[tuple[str, object]] | None = None) -> Registry:
    """Create a plugin manager, load plugins and collect frontends and engines."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    reg = Registry(pm)
    allow = _env_list("MIXVOX_PLUGINS")
    deny = _env_list("MIXVOX_DISABLE_PLUGINS") or set()

    candidates: dict[str, tuple[str, Callable[[], object], str | None]] = {}
    for ep in _entry_points():
        dist = getattr(getattr(ep, "dist", None), "name", None)
        candidates.setdefault(ep.name, (ep.value, ep.load, dist))
    for name, module in BUILTIN_PLUGINS.items():
        if name not in candidates:

            def _load(module: str = module) -> object:
                import importlib

                return importlib.import_module(module)

            candidates[name] = (module, _load, "mixvox")

    for name, (module, load, dist) in sorted(candidates.items()):
        builtin = BUILTIN_PLUGINS.get(name) == module
        rec = PluginRecord(name=name, module=module, builtin=builtin, distribution=dist)
        reg.plugins[name] = rec
        if (allow is not None and name not in allow) or name in deny:
            rec.error = "disabled by MIXVOX_PLUGINS / MIXVOX_DISABLE_PLUGINS"
            continue
        try:
            plugin = load()
            pm.register(plugin, name=name)
            rec.loaded = True
        except Exception as exc:
            rec.error = f"failed to load: {type(exc).__name__}: {exc}"
            log.warning("plugin %r %s (skipped)", name, rec.error)

    for name, plugin in extra_plugins or []:
        if pm.get_plugin(name) is not None:  # keep the record of the plugin that has the name
            log.warning("plugin name %r is already taken; extra plugin %r skipped", name, plugin)
            continue
        rec = PluginRecord(name=name, module=repr(plugin), builtin=False)
        reg.plugins[name] = rec
        try:
            pm.register(plugin, name=name)
            rec.loaded = True
        except Exception as exc:  # e.g. a hook implementation with wrong argument names
            rec.error = f"failed to load: {type(exc).__name__}: {exc}"
            log.warning("plugin %r %s (skipped)", name, rec.error)

    def add_frontend(info: FrontendInfo) -> None:
        reg.frontends.setdefault(info.lang, info)  # first registered (user plugin) wins

    def add_engine(info: EngineInfo) -> None:
        reg.engines.setdefault(info.name, info)

    for _ in reg.call_all("mixvox_register_frontends", register=add_frontend):
        pass
    for _ in reg.call_all("mixvox_register_engines", register=add_engine):
        pass
    return reg


_lock = threading.Lock()
_registry: Registry | None = None


def get_registry(*, reload: bool = False) -> Registry:
    """The process-wide registry (built on first use; ``reload=True`` rebuilds it)."""
    global _registry
    with _lock:
        if _registry is None or reload:
            _registry = build_registry()
        return _registry
