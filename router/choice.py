"""Choosing the engine, once, from what the user asked for.

Why in one place: the choice and the options are one decision. An engine's options class
says which settings it takes; the automatic choice asks each engine, best first, whether it
can run *with the options given* (so ``Synthesizer(model_dir=...)`` finds the engine that
has a ``model_dir``), and the winner's ``check`` and ``factory`` get the same validated
object. Nothing is loaded before every value has been checked.

Where settings come from, later ones winning: the config's ``[engine.<name>]`` table, then
flags an engine contributed to the CLI, then ``-O KEY=VALUE`` and keyword arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mixvox.errors import EngineUnavailable, MixvoxError, OptionError
from mixvox.interfaces import Engine, EngineInfo
from mixvox.options import build_options, key_of, option_fields, option_keys, spec_of, takes
from mixvox.registry import Registry

__all__ = ["GENERIC_CALL_KEYS", "EngineChoice", "EngineRequest", "choose_engine", "split_call"]

#: Per-call keys every engine gets, whatever its options class says: the pipeline itself
#: reads ``raw`` and every engine is asked to honour ``speed``.
GENERIC_CALL_KEYS = frozenset({"raw", "speed"})


@dataclass
class EngineRequest:
    """What the user asked of the engine before one is chosen.

    ``options``: keyword arguments and ``-O`` pairs: the chosen engine must take every key
    (load or per-call option), else it is an :class:`~mixvox.errors.OptionError`.
    ``flags`` / ``call_flags``: values of flags engines contributed to the CLI (load and
    per-call, by the class that declared them): an engine that does not take one ignores it
    with a notice, since one command line serves every engine. ``tables``: the config's
    ``[engine.<name>]`` tables, relative paths anchored at ``base_dir``.
    """

    options: Mapping[str, Any] = field(default_factory=dict)
    flags: Mapping[str, Any] = field(default_factory=dict)
    call_flags: Mapping[str, Any] = field(default_factory=dict)
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: str = ""  # e.g. "config /home/me/.config/mixvox/config.toml"
    base_dir: Path | None = None

    def decisive_keys(self, registry: Registry) -> set[str]:
        """Given keys that some engine marked ``decisive`` (naming them picks that engine)."""
        given = set(self.options) | set(self.flags) | set(self.call_flags)
        out: set[str] = set()
        for info in registry.engines.values():
            for cls in (info.options, info.call_options):
                if cls is None:
                    continue
                out |= {key_of(f) for f in option_fields(cls) if spec_of(f).decisive} & given
        return out


@dataclass
class EngineChoice:
    """The chosen engine, its validated options, and what the user should hear about it."""

    info: EngineInfo
    options: Any  # the engine's options object ({} of kwargs for an engine without a class)
    call: dict[str, Any]  # validated per-call settings from the request (config, flags, -O)
    reason: str | None = None  # why better engines were passed over (automatic choice)
    ignored: list[str] = field(default_factory=list)  # flags this engine does not take

    def build(self) -> Engine:
        return self.info.build(self.options)


def _table(request: EngineRequest, name: str) -> tuple[dict[str, Any], str]:
    table = dict(request.tables.get(name) or {})
    where = f"{request.source} [engine.{name}]: " if request.source else f"[engine.{name}]: "
    return table, where


def _table_values(
    info: EngineInfo, request: EngineRequest
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine's config table as validated ``(load, per-call)`` values (paths resolved)."""
    table, where = _table(request, info.name)
    if info.options is None or not table:
        return dict(table), {}
    call_cls = info.call_options
    t_call = {k: v for k, v in table.items() if takes(call_cls, k.replace("-", "_"))}
    t_load = {k: v for k, v in table.items() if k not in t_call}
    base = request.base_dir
    load = build_options(info.options, t_load, engine=info.name, source=where, base_dir=base)
    call: dict[str, Any] = {}
    if call_cls is not None and t_call:
        call = build_options(
            call_cls, t_call, engine=info.name, source=where, base_dir=base
        ).given()
    return load.given(), call


def _valid_keys(info: EngineInfo) -> list[str]:
    return [*option_keys(info.options), *option_keys(info.call_options)]


def prepare(info: EngineInfo, request: EngineRequest) -> EngineChoice:
    """Validate the request for ``info``; raises :class:`OptionError` for a bad value."""
    load_vals, call_vals = _table_values(info, request)
    if info.options is None:  # the older form: pass everything through, as given
        load = {**load_vals, **request.flags, **request.options}
        return EngineChoice(info, load, dict(request.call_flags))
    load_cls, call_cls = info.options, info.call_options
    ignored: list[str] = []
    # a key both classes declare (``refine``: engine default and per call) goes where the
    # class that contributed the flag put it
    for flags, first in ((request.flags, "load"), (request.call_flags, "call")):
        for key, value in flags.items():
            in_load, in_call = (
                takes(load_cls, key),
                takes(call_cls, key) or key in GENERIC_CALL_KEYS,
            )
            if in_load and (first == "load" or not in_call):
                load_vals[key] = value
            elif in_call:
                call_vals[key] = value
            else:
                ignored.append(key)
    for raw, value in request.options.items():
        key = raw.replace("-", "_")
        if takes(load_cls, key):
            load_vals[key] = value
        elif takes(call_cls, key) or key in GENERIC_CALL_KEYS:
            call_vals[key] = value
        else:
            valid = ", ".join(_valid_keys(info)) or "none"
            raise OptionError(f"{info.name} engine has no option {raw!r} (valid: {valid})")
    options = build_options(load_cls, load_vals, engine=info.name)
    call = _validate_call(info, call_vals)
    return EngineChoice(info, options, call, ignored=sorted(ignored))


def _validate_call(info: EngineInfo, values: Mapping[str, Any]) -> dict[str, Any]:
    """The per-call values the engine takes, validated (the generic keys pass as they are)."""
    generic = {k: v for k, v in values.items() if k in GENERIC_CALL_KEYS}
    rest = {k: v for k, v in values.items() if k not in GENERIC_CALL_KEYS}
    if info.call_options is None or not rest:
        return {**rest, **generic}
    obj = build_options(info.call_options, rest, engine=info.name)
    return {**obj.given(), **generic}


def split_call(info: EngineInfo, overrides: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Per-call ``overrides`` the engine takes (validated) and the keys it does not take.

    An engine without a per-call class gets everything; the generic keys always pass.
    """
    if info.options is None and info.call_options is None:
        return dict(overrides), []
    cls = info.call_options
    taken = {k: v for k, v in overrides.items() if k in GENERIC_CALL_KEYS or takes(cls, k)}
    dropped = sorted(k for k in overrides if k not in taken)
    return _validate_call(info, taken), dropped


def _validate_tables(registry: Registry, request: EngineRequest) -> None:
    """Every ``[engine.<name>]`` table of a registered engine, checked even if not chosen."""
    for name in request.tables:
        info = registry.engine(name)
        if info is not None:
            _table_values(info, request)


def _refuses(info: EngineInfo, request: EngineRequest, decisive: set[str]) -> str | None:
    """Why ``info`` cannot take the request's strict keys (``None``: it can)."""
    if info.options is None:
        return None
    missing = [
        k
        for k in (*request.options, *sorted(decisive))
        if not (
            takes(info.options, k.replace("-", "_"))
            or takes(info.call_options, k.replace("-", "_"))
            or k in GENERIC_CALL_KEYS
        )
    ]
    if missing:
        return "does not take option(s) " + ", ".join(dict.fromkeys(missing))
    return None


def _only(key: str) -> EngineRequest:
    return EngineRequest(options={key: None})


def choose_engine(
    name: str | None, registry: Registry, request: EngineRequest | None = None
) -> EngineChoice:
    """The engine named (``None``/``"auto"``: the best one that can run with the request).

    Raises :class:`~mixvox.errors.OptionError` for a bad option value or a key the named
    engine does not take, :class:`~mixvox.errors.EngineUnavailable` when no engine can run.
    Nothing is loaded here: only option objects are built and ``check`` is asked.
    """
    request = request or EngineRequest()
    _validate_tables(registry, request)
    if name and name != "auto":
        info = registry.engine(name)
        if info is None:
            known = ", ".join(sorted(registry.engines)) or "none"
            raise MixvoxError(f"unknown engine {name!r} (installed: {known})")
        choice = prepare(info, request)
        why = info.can_run(choice.options)
        if why:
            raise EngineUnavailable(f"engine {name!r} is not available: {why}")
        return choice
    decisive = request.decisive_keys(registry)
    engines = registry.engines_by_priority()
    takers = [
        i for i in engines if i.options is not None and _refuses(i, request, decisive) is None
    ]
    if decisive and len(takers) == 1:  # e.g. a weights folder: only one engine can mean it
        return choose_engine(takers[0].name, registry, request)
    if request.options and engines and all(_refuses(i, request, set()) for i in engines):
        # nobody takes these keys: name the valid ones rather than "no engine is available"
        unknown = [k for k in request.options if all(_refuses(i, _only(k), set()) for i in engines)]
        if unknown:
            valid = "; ".join(f"{i.name}: {', '.join(_valid_keys(i)) or 'none'}" for i in engines)
            raise OptionError(f"no engine has option(s) {', '.join(unknown)} (valid: {valid})")
    skipped: list[str] = []
    for info in engines:
        refusal = _refuses(info, request, decisive)
        if refusal is not None:
            skipped.append(f"{info.name}: {refusal}")
            continue
        choice = prepare(info, request)
        why = info.can_run(choice.options)
        if why is None:
            choice.reason = "; ".join(skipped) or None
            return choice
        skipped.append(f"{info.name}: {why}")
    raise EngineUnavailable("no engine is available: " + "; ".join(skipped))
