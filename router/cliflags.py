"""CLI flags that engines contribute, and the generic ``-O KEY=VALUE``.

Why: the core must not know any engine's settings, yet ``mixvox say --help`` should list
them with the spellings users type (``--model-dir``, ``--top-p``). Every option field that an
engine's options class declares with a ``flag`` becomes a click option of ``say`` and
``batch`` (see :class:`mixvox.options.OptionSpec`), added when the CLI loads its plugins.
A flag's value reaches the chosen engine only when given; an engine that does not take it
ignores it with a notice, because one command line serves every engine.
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from mixvox.errors import OptionError
from mixvox.options import EngineOptions, base_type, build_options, key_of, option_fields, spec_of
from mixvox.registry import Registry

log = logging.getLogger("mixvox.cli")

__all__ = ["EngineFlag", "add_engine_flags", "option_pairs_param", "split_flag_values"]


@dataclass(frozen=True)
class EngineFlag:
    """One contributed flag: the option key, whether it is a load or per-call option, and
    the options class (and engine) that declared it."""

    key: str
    kind: str  # "load" or "call"
    engine: str
    cls: type[EngineOptions]


#: Flags added so far, by command name then option key.
FLAGS: dict[str, dict[str, EngineFlag]] = {}


def option_pairs_param() -> click.Option:
    """``-O/--option KEY=VALUE`` (repeatable): any option of the chosen engine."""
    return click.Option(
        ["-O", "--option", "engine_option_pairs"],
        multiple=True,
        metavar="KEY=VALUE",
        help="Engine option (repeatable), e.g. -O threads=2; see the engine's options.",
    )


def _click_type(tp: Any, spec: Any, key: str = "") -> Any:
    kind, _optional = base_type(tp)
    if spec.choices is not None:
        return click.Choice(list(spec.choices))
    if kind is int:
        return click.IntRange(min=spec.min, max=spec.max, min_open=spec.min_open)
    if kind is float:
        return click.FloatRange(min=spec.min, max=spec.max, min_open=spec.min_open)
    if kind is Path:  # a folder, except options named ``*_file``
        if key.endswith("_file"):
            return click.Path(dir_okay=False)
        return click.Path(file_okay=False)
    return str


def _param(f: Any, tp: Any, key: str) -> click.Option:
    spec = spec_of(f)
    flag = spec.flag
    assert flag is not None
    kind, _optional = base_type(tp)
    if kind is bool and "/" in flag:
        return click.Option([flag, key], default=None, help=spec.help)
    if kind is bool:
        return click.Option([flag, key], is_flag=True, default=None, help=spec.help)
    return click.Option([flag, key], type=_click_type(tp, spec, key), default=None, help=spec.help)


def add_engine_flags(command: click.Command, registry: Registry) -> list[str]:
    """Append every engine's flags to ``command``; returns the option keys added.

    A flag whose name or key is already taken (a core option, or another engine's flag of the
    same spelling) is skipped with a log line: the first engine by priority keeps it.
    """
    name = command.name or ""
    taken_keys = {p.name for p in command.params}
    taken_flags = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    added: list[str] = []
    table = FLAGS.setdefault(name, {})
    for info in registry.engines_by_priority():
        for kind, cls in (("load", info.options), ("call", info.call_options)):
            if cls is None:
                continue
            hints = typing.get_type_hints(cls)
            for f in option_fields(cls):
                spec = spec_of(f)
                if spec.flag is None or (spec.commands is not None and name not in spec.commands):
                    continue
                key = key_of(f)
                param = _param(f, hints[f.name], key)
                spellings = {*param.opts, *param.secondary_opts}
                if key in taken_keys or spellings & taken_flags:
                    if key not in table or table[key].cls is not cls:
                        log.info("engine %s: flag %s already taken; skipped", info.name, spec.flag)
                    continue
                command.params.append(param)
                taken_keys.add(key)
                taken_flags |= spellings
                table[key] = EngineFlag(key, kind, info.name, cls)
                added.append(key)
    return added


def split_flag_values(
    command: str, opts: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The given engine-flag values of ``opts`` as ``(load, per-call)`` dicts.

    Each class's values are validated together (``--min-frames`` above ``--max-frames`` is a
    usage error, exit 2) before any engine is chosen.
    """
    load: dict[str, Any] = {}
    call: dict[str, Any] = {}
    by_cls: dict[type[EngineOptions], tuple[str, dict[str, Any]]] = {}
    for key, flag in FLAGS.get(command, {}).items():
        value = opts.get(key)
        if value is None:
            continue
        (load if flag.kind == "load" else call)[key] = value
        by_cls.setdefault(flag.cls, (flag.engine, {}))[1][key] = value
    for cls, (engine, values) in by_cls.items():
        try:
            build_options(cls, values, engine=engine)
        except OptionError as exc:
            raise click.UsageError(str(exc)) from None
    return load, call


_ERROR_CLASSES: dict[int, type[click.ClickException]] = {1: click.ClickException}


def click_error(message: str, exit_code: int = 1) -> click.ClickException:
    """A :class:`click.ClickException` that exits with ``exit_code`` (2 for key and
    encryption problems): click declares the code on the class, so one subclass per code."""
    cls = _ERROR_CLASSES.get(exit_code)
    if cls is None:
        cls = type(f"ClickError{exit_code}", (click.ClickException,), {"exit_code": exit_code})
        _ERROR_CLASSES[exit_code] = cls
    return cls(message)
