"""Typed engine options: how an engine declares what it takes, and how user input becomes it.

Why: settings used to be split by hard-coded key lists in the core and validated only after
an engine had loaded its weights. Now each engine registers an options class (a dataclass
deriving from :class:`EngineOptions`, fields declared with :func:`option`) in its
:class:`~mixvox.interfaces.EngineInfo`; the core turns keyword arguments, ``-O KEY=VALUE``
pairs, CLI flags and ``[engine.<name>]`` config tables into one validated object *before*
anything loads, and hands that same object to the engine's ``check`` and ``factory``.

A field's type (``str``, ``int``, ``float``, ``bool``, :class:`~pathlib.Path`, optionally
``| None``) says how text is read (``-O threads=4``); its :class:`OptionSpec` gives choices,
a range, help and the CLI flag the engine contributes (``--model-dir``). Unknown keys are an
:class:`~mixvox.errors.OptionError` naming the valid ones.

::

    @dataclass
    class MyOptions(EngineOptions):
        voice_dir: Path | None = option(None, help="Voices folder.", flag="--voice-dir")
        quality: str = option("high", help="Quality.", choices=("low", "high"))
"""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, Union

from mixvox.errors import OptionError

__all__ = [
    "EngineOptions",
    "OptionSpec",
    "build_options",
    "option",
    "option_fields",
    "option_keys",
    "parse_pairs",
]

_META = "mixvox"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})

T = TypeVar("T", bound="EngineOptions")


@dataclass(frozen=True)
class OptionSpec:
    """What an option accepts and how the CLI offers it.

    ``flag``: the CLI flag(s) the engine contributes, e.g. ``"--model-dir"`` or
    ``"--refine/--no-refine"`` (``None``: only ``-O``, config and keyword arguments).
    ``commands``: the commands that get the flag (``None``: ``say`` and ``batch``).
    ``decisive``: naming this option means the user wants an engine that takes it, so the
    automatic choice does not fall back to one that does not (``--model-dir``).
    ``key``: the option's name when it cannot be a Python field name (``break``).
    """

    help: str = ""
    choices: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    flag: str | None = None
    commands: tuple[str, ...] | None = None
    decisive: bool = False
    key: str | None = None


def option(
    default: Any = None,
    *,
    help: str = "",
    choices: Iterable[str] | None = None,
    min: float | None = None,
    max: float | None = None,
    min_open: bool = False,
    flag: str | None = None,
    commands: Iterable[str] | None = None,
    decisive: bool = False,
    key: str | None = None,
) -> Any:
    """A dataclass field with an :class:`OptionSpec` (use as ``x: int = option(3, ...)``)."""
    spec = OptionSpec(
        help=help,
        choices=tuple(choices) if choices is not None else None,
        min=min,
        max=max,
        min_open=min_open,
        flag=flag,
        commands=tuple(commands) if commands is not None else None,
        decisive=decisive,
        key=key,
    )
    return field(default=default, metadata={_META: spec})


@dataclass
class EngineOptions:
    """Base class of engine options classes (subclass it with ``@dataclass``).

    Instances come from :func:`build_options`, which records which keys were given:
    :meth:`given` lets a factory pass only those, so the engine keeps its own defaults.
    Override :meth:`validate` for checks across fields (raise
    :class:`~mixvox.errors.OptionError`).
    """

    _given: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)

    def validate(self) -> None:
        """Checks that involve several fields; the default has none."""

    def values(self) -> dict[str, Any]:
        """Every option as ``{key: value}`` (defaults included)."""
        return {key_of(f): getattr(self, f.name) for f in option_fields(type(self))}

    def given(self) -> dict[str, Any]:
        """Only the options that were given (by a flag, ``-O``, the config or a keyword)."""
        return {k: v for k, v in self.values().items() if k in self._given}


def option_fields(cls: type[EngineOptions]) -> list[dataclasses.Field[Any]]:
    """The option fields of ``cls`` in declaration order (the private bookkeeping left out)."""
    return [f for f in dataclasses.fields(cls) if not f.name.startswith("_")]


def key_of(f: dataclasses.Field[Any]) -> str:
    """The option's public name (its field name unless the spec gives ``key``)."""
    return spec_of(f).key or f.name


def option_keys(cls: type[EngineOptions] | None) -> list[str]:
    """The public option names of ``cls`` (``[]`` for ``None``)."""
    return [key_of(f) for f in option_fields(cls)] if cls is not None else []


def spec_of(f: dataclasses.Field[Any]) -> OptionSpec:
    spec = f.metadata.get(_META)
    return spec if isinstance(spec, OptionSpec) else OptionSpec()


def _types(cls: type[EngineOptions]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def base_type(tp: Any) -> tuple[Any, bool]:
    """``(type, optional)`` for an annotation such as ``int | None``."""
    origin = typing.get_origin(tp)
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        return (args[0] if len(args) == 1 else str), optional
    return tp, False


def _kind(value: object) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
        type(value), type(value).__name__
    )


def _coerce(value: Any, tp: Any, where: str, base_dir: Path | None) -> Any:
    """``value`` as type ``tp``; strings are parsed (they come from ``-O`` or the config)."""
    kind, optional = base_type(tp)
    if value is None:
        if optional:
            return None
        raise OptionError(f"{where} must not be empty")
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise OptionError(f"{where} must be true or false (got {value!r})")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise OptionError(f"{where} must be an integer (got {_kind(value)} {value!r})")
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                pass
        raise OptionError(f"{where} must be a number (got {_kind(value)} {value!r})")
    if kind is Path:
        if isinstance(value, str | os.PathLike) and os.fspath(value).strip():
            p = Path(os.fspath(value)).expanduser()
            return base_dir / p if base_dir is not None and not p.is_absolute() else p
        raise OptionError(f"{where} must be a path (got {_kind(value)} {value!r})")
    if isinstance(value, str):
        return value
    raise OptionError(f"{where} must be a string (got {_kind(value)})")


def _check_spec(value: Any, spec: OptionSpec, where: str) -> None:
    if value is None:
        return
    if spec.choices is not None and value not in spec.choices:
        raise OptionError(f"{where}: {value!r} is not one of {', '.join(spec.choices)}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        low_bad = spec.min is not None and (
            value <= spec.min if spec.min_open else value < spec.min
        )
        high_bad = spec.max is not None and value > spec.max
        if low_bad or high_bad:
            lo = "-inf" if spec.min is None else f"{spec.min:g}"
            hi = "inf" if spec.max is None else f"{spec.max:g}"
            bracket = "(" if spec.min_open else "["
            raise OptionError(f"{where}={value} is out of range {bracket}{lo}, {hi}]")


def build_options(
    cls: type[T],
    values: Mapping[str, Any],
    *,
    engine: str,
    source: str = "",
    base_dir: Path | None = None,
    kind: str = "engine",
) -> T:
    """A validated ``cls`` from ``values``; unknown keys and bad values raise ``OptionError``.

    ``source`` prefixes messages (``config /x/config.toml [engine.espeak]: ``) and
    ``base_dir`` anchors relative paths (a config file's folder). ``kind`` names what takes
    the options in messages (``"frontend"`` for :mod:`mixvox.frontend_options`).
    """
    fields = {key_of(f): f for f in option_fields(cls)}
    hints = _types(cls)
    kwargs: dict[str, Any] = {}
    given: set[str] = set()
    for raw_key, value in values.items():
        key = raw_key.replace("-", "_")
        f = fields.get(key)
        if f is None:
            valid = ", ".join(fields) or "none"
            raise OptionError(f"{source}{engine} {kind} has no option {raw_key!r} (valid: {valid})")
        where = (
            f"{source}{engine} {kind} option {key}"
            if kind != "engine"
            else f"{source}{engine} option {key}"
        )
        val = _coerce(value, hints[f.name], where, base_dir)
        _check_spec(val, spec_of(f), where)
        kwargs[f.name] = val
        given.add(key)
    obj = cls(**kwargs)
    object.__setattr__(obj, "_given", frozenset(given))
    try:
        obj.validate()
    except OptionError as exc:
        raise OptionError(f"{source}{engine}: {exc}") from None
    return obj


def takes(cls: type[EngineOptions] | None, key: str) -> bool:
    """Whether ``cls`` declares option ``key``."""
    return key in option_keys(cls)


def parse_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """``["a=1", "model-dir=x"]`` -> ``{"a": "1", "model_dir": "x"}`` (later pairs win)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise OptionError(f"option {pair!r} is not KEY=VALUE")
        out[key] = value
    return out
