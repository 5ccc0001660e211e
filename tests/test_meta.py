"""Checks on the project itself: every hook is implemented somewhere and documented.

As datasette does for its plugin hooks: a hookspec nobody implements is untested surface,
and one the README does not name is invisible to plugin authors.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from mixvox.plugins import hookspecs
from mixvox.registry import build_registry

ROOT = Path(__file__).resolve().parents[1]


def hookspec_names() -> list[str]:
    return sorted(
        name
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(fn, f"{hookspecs.PROJECT}_spec")
    )


def test_there_are_hookspecs() -> None:
    names = hookspec_names()
    assert "mixvox_register_engines" in names and len(names) >= 6, names


@pytest.mark.parametrize("name", hookspec_names())
def test_hookspec_has_a_builtin_or_test_implementation(name: str) -> None:
    reg = build_registry()
    builtin = [reg.pm.get_name(i.plugin) for i in getattr(reg.pm.hook, name).get_hookimpls()]
    in_tests = [
        p.name
        for p in (ROOT / "tests").glob("test_*.py")
        if re.search(rf"def {name}\(", p.read_text("utf-8"))
    ]
    assert builtin or in_tests, f"{name}: no built-in plugin and no test implements it"


@pytest.mark.parametrize("name", hookspec_names())
def test_hookspec_is_documented_in_the_readme(name: str) -> None:
    assert f"`{name}" in (ROOT / "README.md").read_text("utf-8"), name


def test_readme_paths_exist() -> None:
    """Every repository path the README cites in backticks exists (no stale ``mixvox/...``)."""
    text = (ROOT / "README.md").read_text("utf-8")
    cited = set(
        re.findall(
            r"`((?:router|plugins|frontends|engines|examples|bench|tests|\.ci)/[^`\s]*)`", text
        )
    )
    assert cited, "the README cites no paths?"
    missing = sorted(p for p in cited if not (ROOT / p.rstrip("/")).exists())
    assert missing == []
    assert "mixvox/plugins/hookspecs.py" not in text


def test_builtin_plugin_list_is_kept_once_in_pyproject(monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed metadata and a never-installed source tree give the same built-ins."""
    from importlib import metadata

    import tomllib

    from mixvox import registry

    table = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    declared = table["entry-points"]["mixvox"]
    assert registry._builtin_plugins() == declared == registry.BUILTIN_PLUGINS

    def not_installed(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(registry.metadata, "distribution", not_installed)
    assert registry._builtin_plugins() == declared


def test_tests_never_touch_the_real_home(sealed_home: Path) -> None:
    """conftest's session home: every user dir mixvox writes to lies inside it."""
    import os

    import platformdirs

    from mixvox.engines.chattts import assets

    for where in (
        platformdirs.user_cache_dir("mixvox"),
        platformdirs.user_config_dir("mixvox"),
        platformdirs.user_data_dir("mixvox"),
        assets.default_model_dir(),
        Path.home(),
    ):
        assert Path(where).is_relative_to(sealed_home), where
    assert not {"MIXVOX_CONFIG", "MIXVOX_CHATTTS_DIR"} & set(os.environ)
