"""The user's configuration file (TOML).

Lookup order: the ``path`` argument, else the ``MIXVOX_CONFIG`` environment variable, else
``platformdirs.user_config_dir("mixvox")/config.toml``. Only the default location may be
missing (then every setting keeps its default); a file the user named explicitly must exist,
because a typo there would otherwise silently ignore their settings.

::

    engine = "chattts"            # or "espeak", "auto"
    speaker = "蘁淰敥欀..."        # a ChatTTS speaker string (what --speaker takes)
    lexicons = ["my-words.toml"]  # relative paths are relative to this file
    max_chunk_chars = 120

    [chattts]
    model_dir = "~/models/chattts"
    backend = "onnx"              # onnx | torch | tensorrt | auto
    precision = "fp16"

Unknown keys only log a warning naming the key (a newer mixvox may know them); a value of the
wrong type is a :class:`~mixvox.MixvoxError` naming the key and the file.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mixvox.interfaces import MixvoxError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["ENV_VAR", "ChatTTSConfig", "Config", "default_config_path", "load_config"]

log = logging.getLogger("mixvox.config")

#: Environment variable naming the config file.
ENV_VAR = "MIXVOX_CONFIG"


@dataclass
class ChatTTSConfig:
    """The ``[chattts]`` table; ``None`` means "let the engine decide"."""

    model_dir: Path | None = None
    backend: str | None = None
    precision: str | None = None


@dataclass
class Config:
    """Settings from the config file; ``path`` is the file they came from (``None``: defaults)."""

    engine: str | None = None
    speaker: str | None = None
    lexicons: list[Path] = field(default_factory=list)
    max_chunk_chars: int | None = None
    chattts: ChatTTSConfig = field(default_factory=ChatTTSConfig)
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
        raise MixvoxError(f"config {path}: {key} must be a string (got {_type_name(value)})")
    if not value.strip():
        raise MixvoxError(f"config {path}: {key} must not be empty")
    return value


def _rel_path(value: Any, key: str, path: Path) -> Path:
    p = Path(_string(value, key, path)).expanduser()
    return p if p.is_absolute() else (path.parent / p)


def _parse(doc: dict[str, Any], path: Path) -> Config:
    cfg = Config(path=path)
    for key, value in doc.items():
        if key == "engine":
            cfg.engine = _string(value, key, path)
        elif key == "speaker":
            cfg.speaker = _string(value, key, path)
        elif key == "lexicons":
            if isinstance(value, str):  # a single path is a common slip; accept it
                value = [value]
            if not isinstance(value, list):
                raise MixvoxError(
                    f"config {path}: lexicons must be an array of paths (got {_type_name(value)})"
                )
            cfg.lexicons = [_rel_path(v, f"lexicons[{i}]", path) for i, v in enumerate(value)]
        elif key == "max_chunk_chars":
            if isinstance(value, bool) or not isinstance(value, int):
                raise MixvoxError(
                    f"config {path}: max_chunk_chars must be an integer (got {_type_name(value)})"
                )
            if value < 1:
                raise MixvoxError(f"config {path}: max_chunk_chars must be at least 1")
            cfg.max_chunk_chars = value
        elif key == "chattts":
            if not isinstance(value, dict):
                raise MixvoxError(
                    f"config {path}: chattts must be a table ([chattts]) (got {_type_name(value)})"
                )
            for sub, v in value.items():
                name = f"chattts.{sub}"
                if sub == "model_dir":
                    cfg.chattts.model_dir = _rel_path(v, name, path)
                elif sub == "backend":
                    cfg.chattts.backend = _string(v, name, path)
                elif sub == "precision":
                    cfg.chattts.precision = _string(v, name, path)
                else:
                    log.warning("config %s: unknown key %r ignored", path, name)
        elif key == "voices":
            if not isinstance(value, dict):
                raise MixvoxError(f"config {path}: voices must be a table ([voices])")
            cfg.voices = {str(k): _string(v, f"voices.{k}", path) for k, v in value.items()}
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
        raise MixvoxError(f"config file not found: {p}{origin}")
    # a regular file under a size cap, read with a bound (a FIFO or /dev/zero never hangs)
    data = read_bounded(p, "config")
    try:
        doc = tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise MixvoxError(f"config {p} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise MixvoxError(f"config {p} is not valid TOML: {exc}") from None
    return _parse(doc, p.resolve())
