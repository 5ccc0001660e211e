"""The user's configuration file (TOML).

Lookup order: the ``path`` argument, else the ``MIXVOX_CONFIG`` environment variable, else
``platformdirs.user_config_dir("mixvox")/config.toml``. Only the default location may be
missing (then every setting keeps its default); a file the user named explicitly must exist,
because a typo there would otherwise silently ignore their settings.

::

    engine = "espeak"             # the default engine ("auto": the best available)
    speaker = "f3"                # what --speaker takes (the engine says what it means)
    lexicons = ["my-words.toml"]  # relative paths are relative to this file
    max_chunk_chars = 120

    [engine.<name>]               # one table per engine: that engine's options
    some_dir = "~/models/x"       # validated by the engine's options class when used

    [frontend.en]                 # a language's frontend options, e.g. US numbers
    number_and = false            # ("one hundred five"; see mixvox.frontend_options)

With engine tables the default engine moves into the table too (TOML cannot have both
``engine = "x"`` and ``[engine.x]``): ``[engine]`` then ``default = "espeak"``.

Unknown top-level keys only log a warning naming the key (a newer mixvox may know them);
unknown top-level *tables* are kept in :attr:`Config.tables`, because a table named after an
engine is the older spelling of ``[engine.<name>]`` (the CLI reads it with a deprecation
notice). A value of the wrong type is a :class:`~mixvox.errors.ConfigError` naming the key and
the file; the values inside engine tables are checked by the engine's options.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mixvox.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["ENV_VAR", "Config", "default_config_path", "load_config"]

log = logging.getLogger("mixvox.config")

#: Environment variable naming the config file.
ENV_VAR = "MIXVOX_CONFIG"


@dataclass
class Config:
    """Settings from the config file; ``path`` is the file they came from (``None``: defaults)."""

    engine: str | None = None
    speaker: str | None = None
    lexicons: list[Path] = field(default_factory=list)
    max_chunk_chars: int | None = None
    #: ``[engine.<name>]`` tables, raw (the engine's options validate them when used).
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Other top-level tables, raw: ``[<engine name>]`` is the older ``[engine.<name>]``.
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``[frontend.<lang>]`` tables, raw (the frontend's options validate them when used).
    frontends: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``[voices]``: named voices for ``mixvox serve`` (name -> speaker string or ``seed:N``).
    voices: dict[str, str] = field(default_factory=dict)
    path: Path | None = None


def default_config_path() -> Path:
    """``<user config dir>/mixvox/config.toml`` as platformdirs defines it for this OS."""
    import platformdirs

    return Path(platformdirs.user_config_dir("mixvox")) / "config.toml"


def _type_name(value: object) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}.get(
        type(value), "table" if isinstance(value, dict) else type(value).__name__
    )


def _string(value: Any, key: str, path: Path) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"config {path}: {key} must be a string (got {_type_name(value)})")
    if not value.strip():
        raise ConfigError(f"config {path}: {key} must not be empty")
    return value


def _rel_path(value: Any, key: str, path: Path) -> Path:
    p = Path(_string(value, key, path)).expanduser()
    return p if p.is_absolute() else (path.parent / p)


def _parse(doc: dict[str, Any], path: Path) -> Config:
    cfg = Config(path=path)
    for key, value in doc.items():
        if key == "engine":
            if isinstance(value, dict):
                for sub, v in value.items():
                    if sub == "default":
                        cfg.engine = _string(v, "engine.default", path)
                    elif isinstance(v, dict):
                        cfg.engines[sub] = dict(v)
                    else:
                        raise ConfigError(
                            f"config {path}: engine.{sub} must be a table ([engine.{sub}]) "
                            f"or engine.default a string (got {_type_name(v)})"
                        )
            else:
                cfg.engine = _string(value, key, path)
        elif key == "speaker":
            cfg.speaker = _string(value, key, path)
        elif key == "lexicons":
            if isinstance(value, str):  # a single path is a common slip; accept it
                value = [value]
            if not isinstance(value, list):
                raise ConfigError(
                    f"config {path}: lexicons must be an array of paths (got {_type_name(value)})"
                )
            cfg.lexicons = [_rel_path(v, f"lexicons[{i}]", path) for i, v in enumerate(value)]
        elif key == "max_chunk_chars":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(
                    f"config {path}: max_chunk_chars must be an integer (got {_type_name(value)})"
                )
            if value < 1:
                raise ConfigError(f"config {path}: max_chunk_chars must be at least 1")
            cfg.max_chunk_chars = value
        elif key == "frontend":
            if not isinstance(value, dict):
                raise ConfigError(
                    f"config {path}: frontend must be a table of [frontend.<lang>] tables "
                    f"(got {_type_name(value)})"
                )
            for lang, table in value.items():
                if not isinstance(table, dict):
                    raise ConfigError(
                        f"config {path}: frontend.{lang} must be a table ([frontend.{lang}]), "
                        f"got {_type_name(table)}"
                    )
                cfg.frontends[lang] = dict(table)
        elif key == "voices":
            if not isinstance(value, dict):
                raise ConfigError(f"config {path}: voices must be a table ([voices])")
            cfg.voices = {str(k): _string(v, f"voices.{k}", path) for k, v in value.items()}
        elif isinstance(value, dict):
            cfg.tables[key] = dict(value)
        else:
            log.warning("config %s: unknown key %r ignored", path, key)
    return cfg


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read the config file (see the module docstring for where it is looked for).

    Returns defaults when no path was given, ``MIXVOX_CONFIG`` is unset and the default file
    does not exist. Raises :class:`~mixvox.MixvoxError` for a missing explicit file, invalid
    TOML or a value of the wrong type.
    """
    explicit = path if path is not None else (os.environ.get(ENV_VAR) or None)
    p = Path(os.fspath(explicit)).expanduser() if explicit is not None else default_config_path()
    from mixvox.safeio import read_bounded

    if explicit is None and not os.path.lexists(p):
        return Config()
    if not os.path.lexists(p):
        origin = "" if path is not None else f" (from ${ENV_VAR})"
        raise ConfigError(f"config file not found: {p}{origin}")
    # a regular file under a size cap, read with a bound (a FIFO or /dev/zero never hangs)
    data = read_bounded(p, "config")
    try:
        doc = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config {p} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {p} is not valid TOML: {exc}") from None
    return _parse(doc, p.resolve())
