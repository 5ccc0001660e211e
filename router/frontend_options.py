"""Frontend options: settings of a language's frontend, from Python, the config and the CLI.

Why: some readings are a matter of taste, not of correctness (British "one hundred and five"
or American "one hundred five"), so the user must be able to choose them where they choose
everything else. A frontend declares its options the way an engine does (a dataclass of
:func:`mixvox.options.option` fields, registered as :attr:`FrontendInfo.options`); this module
turns the config's ``[frontend.<lang>]`` tables, ``-F LANG.KEY=VALUE`` pairs and the flags the
options declare (``--number-and/--no-number-and``) into one validated object per language,
*before* anything loads. :class:`mixvox.Router` hands that object to the frontend's factory.

::

    # config.toml
    [frontend.en]
    number_and = false        # American numbers: "one hundred five"

    mixvox say "It costs $105" -o out.wav --no-number-and
    mixvox route "245 km" -F en.number_and=false
    mixvox.Router(frontend_options={"en": {"number_and": False}})

Sources win in the order config < ``-F`` < flags. A wrong key or value is an
:class:`~mixvox.errors.OptionError` that names the source, the language and the valid keys.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mixvox.errors import OptionError
from mixvox.options import EngineOptions, build_options, key_of, option_fields, spec_of

if TYPE_CHECKING:  # click is needed by the CLI only; the Python API does not import it
    import click

    from mixvox.registry import Registry

__all__ = [
    "FrontendOptionsArg",
    "add_frontend_flags",
    "build_frontend_options",
    "frontend_option_pairs",
    "frontend_pairs_param",
    "from_cli",
]

#: Something that describes one frontend's options: a mapping of raw values, or a built object.
FrontendOptionsArg = Mapping[str, "Mapping[str, Any] | EngineOptions"]

#: Flags added so far, by command name then option key: ``(lang, options class)``.
_FLAGS: dict[str, dict[str, tuple[str, type[EngineOptions]]]] = {}


def build_frontend_options(
    registry: Registry,
    tables: FrontendOptionsArg | None,
    *,
    source: str = "",
    base_dir: Path | None = None,
) -> dict[str, EngineOptions]:
    """One validated options object per language named in ``tables``.

    A language without a registered frontend, or whose frontend takes no options, is an
    :class:`OptionError` (a setting that would silently do nothing is a user mistake).
    Objects that are already built pass through unchanged.
    """
    out: dict[str, EngineOptions] = {}
    for lang, values in (tables or {}).items():
        where = f"{source} [frontend.{lang}]: " if source else ""
        info = registry.frontend(lang)
        if info is None:
            known = ", ".join(sorted(registry.frontends)) or "none"
            raise OptionError(f"{where}no frontend for language {lang!r} (known: {known})")
        cls = info.options
        if isinstance(values, EngineOptions):
            if cls is None or not isinstance(values, cls):
                raise OptionError(f"{where}{lang} frontend does not take {type(values).__name__}")
            out[lang] = values
            continue
        if not isinstance(values, Mapping):
            raise OptionError(f"{where}frontend.{lang} must be a table of options")
        if cls is None:
            if values:
                raise OptionError(f"{where}the {lang} frontend takes no options")
            continue
        out[lang] = build_options(
            cls, values, engine=lang, source=where, base_dir=base_dir, kind="frontend"
        )
    return out


def frontend_pairs_param() -> click.Option:
    """``-F/--frontend-option LANG.KEY=VALUE`` (repeatable)."""
    import click

    return click.Option(
        ["-F", "--frontend-option", "frontend_option_pairs"],
        multiple=True,
        metavar="LANG.KEY=VALUE",
        help="Frontend option (repeatable), e.g. -F en.number_and=false.",
    )


def frontend_option_pairs(pairs: Iterable[str]) -> dict[str, dict[str, str]]:
    """``["en.number_and=false"]`` -> ``{"en": {"number_and": "false"}}`` (later pairs win)."""
    out: dict[str, dict[str, str]] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        lang, dot, key = name.strip().partition(".")
        if not sep or not dot or not lang or not key:
            raise OptionError(
                f"frontend option {pair!r} is not LANG.KEY=VALUE (en.number_and=false)"
            )
        out.setdefault(lang, {})[key.strip().replace("-", "_")] = value.strip()
    return out


def add_frontend_flags(command: click.Command, registry: Registry) -> list[str]:
    """Add ``-F`` and the flags that frontends' options declare to ``command``.

    A flag whose spelling is already taken (a core or engine flag) is skipped: the first one
    keeps it. Returns the option keys added as flags.
    """
    import click

    name = command.name or ""
    table = _FLAGS.setdefault(name, {})
    if not any(p.name == "frontend_option_pairs" for p in command.params):
        command.params.append(frontend_pairs_param())
    taken_keys = {p.name for p in command.params}
    taken = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
    added: list[str] = []
    for lang, info in sorted(registry.frontends.items()):
        cls = info.options
        if cls is None:
            continue
        hints = typing.get_type_hints(cls)
        for f in option_fields(cls):
            spec = spec_of(f)
            key = key_of(f)
            if spec.flag is None or key in table:
                continue
            param_name = f"frontend_{lang}_{key}"
            if hints[f.name] is bool and "/" in spec.flag:
                param = click.Option([spec.flag, param_name], default=None, help=spec.help)
            elif hints[f.name] is bool:
                param = click.Option(
                    [spec.flag, param_name], is_flag=True, default=None, help=spec.help
                )
            else:
                param = click.Option([spec.flag, param_name], default=None, help=spec.help)
            spellings = {*param.opts, *param.secondary_opts}
            if param_name in taken_keys or spellings & taken:
                continue
            command.params.append(param)
            taken |= spellings
            table[key] = (lang, cls)
            added.append(key)
    return added


def from_cli(
    command: str,
    opts: Mapping[str, Any],
    config_tables: Mapping[str, Mapping[str, Any]] | None,
    registry: Registry,
    *,
    source: str = "",
    base_dir: Path | None = None,
) -> dict[str, EngineOptions]:
    """The frontend options of one CLI call: config tables, then ``-F``, then flags.

    Mistakes in ``-F`` and flags are click usage errors (exit 2); mistakes in the config are
    :class:`OptionError` naming the file (exit 1), raised before anything loads.
    """
    import click

    merged: dict[str, dict[str, Any]] = {
        lang: dict(values) for lang, values in (config_tables or {}).items()
    }
    built = build_frontend_options(registry, merged, source=source, base_dir=base_dir)
    try:
        given = frontend_option_pairs(opts.get("frontend_option_pairs") or ())
        for key, (lang, _cls) in _FLAGS.get(command, {}).items():
            value = opts.get(f"frontend_{lang}_{key}")
            if value is not None:
                given.setdefault(lang, {})[key] = value
        if not given:
            return built
        for lang, values in given.items():
            merged.setdefault(lang, {}).update(values)
        return build_frontend_options(registry, merged, base_dir=base_dir)
    except OptionError as exc:
        raise click.BadParameter(str(exc), param_hint="'-F' / '--frontend-option'") from None
