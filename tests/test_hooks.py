"""The ``mixvox_normalize`` hook: a plugin may analyse a span instead of the frontend."""

from __future__ import annotations

from typing import Any

from mixvox.interfaces import FrontendContext
from mixvox.ir import Span, Word
from mixvox.pipeline import Router
from mixvox.plugins.hookspecs import hookimpl
from mixvox.registry import build_registry


class SpellsAcronyms:
    """Claims English spans that are one all-caps word and reads them letter by letter."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def mixvox_normalize(self, span: Span, ctx: FrontendContext) -> list[Word] | None:
        self.seen.append(span.text)
        if span.lang != "en" or not span.text.strip().isupper():
            return None  # pass: the built-in frontend analyses it
        text = span.text.strip()
        start = span.start + span.text.index(text)
        return [Word(text, " ".join(text), [], start, start + len(text), "en")]


def test_normalize_hook_replaces_the_frontend_only_when_it_answers() -> None:
    plugin = SpellsAcronyms()
    router = Router(registry=build_registry(extra_plugins=[("spell", plugin)]))
    utt = router.route("我们用 NASA 的数据")
    words = [w for w in utt.words if w.kind == "word"]
    assert "N A S A" in [w.spoken for w in words]
    assert any(w.lang == "zh" and w.phonemes for w in words)  # zh went to the frontend
    assert "NASA" in " ".join(plugin.seen) and any("我们" in s for s in plugin.seen)


def test_normalize_hook_none_keeps_the_builtin_analysis() -> None:
    plain = Router(registry=build_registry()).route("hello world")
    hooked: Any = Router(registry=build_registry(extra_plugins=[("spell", SpellsAcronyms())]))
    assert [w.spoken for w in hooked.route("hello world").words] == [w.spoken for w in plain.words]
