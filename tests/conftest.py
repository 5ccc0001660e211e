"""Shared fixtures: where the shared test data is, a fake engine, and a sealed-off home.

Why the sealed home: a test must never read the user's config or write into their cache or
data dirs (converted ONNX graphs, downloaded weights, hash verdicts). Every test session gets
a temporary HOME and XDG folders, and the mixvox variables that point elsewhere are unset;
tests that need one set it themselves. The folders live for the whole session so that
converted graphs are built once, not once per test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mixvox.registry
from mixvox.interfaces import AudioChunk, EngineInfo, SynthesisOptions
from mixvox.ir import Chunk, Utterance
from mixvox.plugins.hookspecs import hookimpl

#: ``../shared`` beside the checkout: the tiny ChatTTS checkpoint and public test sets.
SHARED = Path(__file__).resolve().parents[2] / "shared"
TINY = SHARED / "chattts" / "tiny"

#: Variables that would send a test to the user's own files.
_USER_VARS = (
    "MIXVOX_CONFIG",
    "MIXVOX_CHATTTS_DIR",
    "MIXVOX_CACHE_DIR",
    "MIXVOX_DATA_DIR",
    "MIXVOX_PLUGINS",
    "MIXVOX_DISABLE_PLUGINS",
)


@pytest.fixture(scope="session", autouse=True)
def sealed_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A temporary HOME with XDG cache/config/data dirs for the whole session."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        for var, sub in (
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_DATA_HOME", ".local/share"),
        ):
            (home / sub).mkdir(parents=True, exist_ok=True)
            mp.setenv(var, str(home / sub))
        for var in _USER_VARS:
            mp.delenv(var, raising=False)
        yield home


@pytest.fixture
def shared_dir() -> Path:
    """``../shared``; tests that need it fail loudly when it is missing (CI refuses too)."""
    assert SHARED.is_dir(), f"shared fixtures missing: {SHARED}"
    return SHARED


@pytest.fixture
def tiny_dir(shared_dir: Path) -> Path:
    """The tiny random ChatTTS checkpoint (audio is noise; shapes and parity are real)."""
    assert (TINY / "asset").is_dir(), f"tiny checkpoint missing: {TINY}"
    return TINY


class FakeEngine:
    """An engine plugin that records what it was given and speaks a constant tone.

    ``options`` / ``call_options``: options classes to register (``None``: the older form,
    factory gets keyword arguments). ``why``: what ``check`` answers.
    """

    def __init__(
        self,
        name: str = "fake",
        priority: int = 10**6,
        why: str | None = None,
        *,
        options: type | None = None,
        call_options: type | None = None,
        hint: str = "",
    ) -> None:
        self.name, self.priority, self.why, self.hint = name, priority, why, hint
        self.options_cls, self.call_options_cls = options, call_options
        self.built: list[Any] = []  # what each factory call got
        self.checked: list[Any] = []  # what each check call got
        self.calls: list[SynthesisOptions] = []

    def check(self, options: Any = None) -> str | None:
        self.checked.append(options)
        return self.why

    def factory(self, *args: Any, **kw: Any) -> Any:
        self.built.append(args[0] if args else kw)
        rec = self

        class Eng:
            name = rec.name
            sample_rate = 8000
            consumes = "text"

            def stream(
                self, utt: Utterance, chunks: list[Chunk], options: SynthesisOptions
            ) -> Iterator[AudioChunk]:
                rec.calls.append(options)
                for c in chunks:
                    # a short varying tone: constant audio is refused as a broken model
                    tone = 0.25 * np.sin(np.arange(80, dtype=np.float32) * 0.3)
                    yield AudioChunk(tone.astype(np.float32), 8000, c.index)

            def close(self) -> None:
                pass

        return Eng()

    @hookimpl
    def mixvox_register_engines(self, register: Callable[[EngineInfo], None]) -> None:
        register(
            EngineInfo(
                self.name,
                self.factory,
                self.check,
                self.priority,
                "fake engine for tests",
                options=self.options_cls,
                call_options=self.call_options_cls,
                hint=self.hint,
            )
        )


@pytest.fixture
def fake_engine() -> type[FakeEngine]:
    """The :class:`FakeEngine` class (build one per test with the settings it needs)."""
    return FakeEngine


@pytest.fixture
def use_plugins(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., mixvox.registry.Registry]:
    """Swap the process registry for one with extra plugins (restored after the test)."""

    def install(*plugins: tuple[str, object]) -> mixvox.registry.Registry:
        reg = mixvox.registry.build_registry(extra_plugins=list(plugins))
        monkeypatch.setattr(mixvox.registry, "_registry", reg)
        return reg

    return install


def pytest_report_header() -> str:
    return f"mixvox shared fixtures: {SHARED} ({'found' if SHARED.is_dir() else 'MISSING'})"
