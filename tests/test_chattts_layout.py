"""The ChatTTS engine's rooms: no import cycles, package faces that name what they hand on.

The import graph is read from the source (every ``import`` of a ``mixvox.engines.chattts``
module, at module level, inside functions and under ``TYPE_CHECKING`` alike, relative ones
resolved), so a cycle that only a lazy import hides is still found.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "engines" / "chattts"
PKG = "mixvox.engines.chattts"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        out[".".join([PKG, *parts])] = path
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against this module's package
                    here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
                    up = here[: len(here) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    target = sub if sub in mods else base
                    if target in mods and target != mod:
                        graph[mod].add(target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in mods and alias.name != mod:
                        graph[mod].add(alias.name)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*stack[stack.index(n) :], n]
            if n not in state and (found := visit(n)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_no_import_cycles() -> None:
    graph = _graph()
    assert f"{PKG}.gpt.cuda_graph" in graph and f"{PKG}.audio.streaming" in graph
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_runtime_decision_is_the_bottom_floor() -> None:
    """runtime.py decides from what is installed; it imports no model code."""
    assert _graph()[f"{PKG}.runtime"] == set()


def test_gpt_and_audio_do_not_know_each_other_or_the_engine() -> None:
    graph = _graph()
    for mod, deps in graph.items():
        for wing, other in (("gpt", "audio"), ("audio", "gpt")):
            if mod.startswith(f"{PKG}.{wing}"):
                bad = {d for d in deps if d.startswith(f"{PKG}.{other}") or d.endswith(".engine")}
                assert not bad, f"{mod} imports {bad}"


@pytest.mark.parametrize("package", [f"{PKG}.gpt", f"{PKG}.audio"])
def test_package_faces_name_their_surface(package: str) -> None:
    mod = importlib.import_module(package)
    assert mod.__all__ and sorted(mod.__all__) == sorted(set(mod.__all__))
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
