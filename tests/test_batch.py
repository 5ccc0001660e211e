"""``mixvox batch``: numbering, manifest, resume, failures, JSONL scripts, interruption."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

import mixvox.audio
import mixvox.registry
from mixvox.audio import Audio
from mixvox.batch import (
    LOCK_NAME,
    MANIFEST,
    BatchItem,
    number_width,
    read_manifest,
    read_script,
    run_batch,
    summary_lines,
)
from mixvox.cli import main
from mixvox.interfaces import AudioChunk, EngineInfo, EngineUnavailable, MixvoxError
from mixvox.ir import Utterance
from mixvox.plugins.hookspecs import hookimpl

SR = 16000


# ---------------------------------------------------------------------------------------------
# A fake Synthesizer for run_batch (no router, no engine)
# ---------------------------------------------------------------------------------------------


class FakeTTS:
    """Duck-typed Synthesizer: 10 ms of tone per character; special words misbehave."""

    def __init__(self, name: str | None) -> None:
        self.engine_name = name or "fake"
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False

    def route(self, text: str) -> Utterance:
        utt = Utterance(text)
        if "😀" in text:
            i = text.index("😀")
            utt.warn("emoji", "emoji skipped", i, i + 1)
        return utt

    def synthesize(self, target: str | Utterance, **kw: Any) -> Audio:
        text = target.input if isinstance(target, Utterance) else target
        self.calls.append((text, kw))
        if "FAIL" in text:
            raise MixvoxError("engine said no")
        if "CRASH" in text:
            raise RuntimeError("a bug")
        if "STOP" in text:
            raise KeyboardInterrupt
        if "EMPTY" in text:
            return Audio(np.zeros(0, np.float32), SR)
        n = SR // 100 * len(text)
        return Audio(0.3 * np.sin(np.arange(n) * 0.2), SR)

    def close(self) -> None:
        self.closed = True


class Factory:
    def __init__(self) -> None:
        self.made: dict[str | None, FakeTTS] = {}

    def __call__(self, name: str | None) -> FakeTTS:
        assert name not in self.made, "one synthesizer per engine name"
        if name == "broken":
            raise EngineUnavailable("engine 'broken' is not available: no weights")
        self.made[name] = FakeTTS(name)
        return self.made[name]

    @property
    def calls(self) -> list[str]:
        return [c[0] for t in self.made.values() for c in t.calls]


def script(text: str, jsonl: bool = False, fmt: str = "wav") -> list[BatchItem]:
    return read_script(text.encode("utf-8"), jsonl=jsonl, fmt=fmt)[0]


def manifest(out: Path) -> list[dict[str, Any]]:
    """The line records (settings records and the integrity fields left out)."""
    lines = (out / MANIFEST).read_text("utf-8").splitlines()
    recs = [json.loads(x) for x in lines]
    drop = ("crc", "fp", "bytes")
    return [{k: v for k, v in r.items() if k not in drop} for r in recs if "kind" not in r]


def names(out: Path) -> list[str]:
    """The files of an output folder, without the batch lock file."""
    return sorted(p.name for p in out.iterdir() if p.name != LOCK_NAME)


def leftovers(out: Path) -> list[str]:
    return sorted(
        p.name
        for p in out.iterdir()
        if (p.name.endswith(".part") or p.name.startswith(".")) and p.name != LOCK_NAME
    )


def run(items: list[BatchItem], out: Path, factory: Factory | None = None, **kw: Any):
    factory = factory or Factory()
    return run_batch(items, out, factory, progress=False, **kw), factory


# ---------------------------------------------------------------------------------------------
# Script reading and numbering
# ---------------------------------------------------------------------------------------------


def test_numbering_skips_blank_and_comments() -> None:
    items = script("# title\nfirst\n\n   \n  # indented comment\nsecond\r\nthird")
    assert [(i.line, i.text, i.file) for i in items] == [
        (2, "first", "0002.wav"),
        (6, "second", "0006.wav"),
        (7, "third", "0007.wav"),
    ]
    assert all(i.error is None for i in items)


def test_width_grows_past_9999_lines() -> None:
    assert number_width(9) == 4 and number_width(9999) == 4 and number_width(10000) == 5
    items, n = read_script(b"x\n" * 10000, jsonl=False, fmt="flac")
    assert n == 10000
    assert items[0].file == "00001.flac" and items[-1].file == "10000.flac"
    items, n = read_script(b"x\n" * 9999, jsonl=False)
    assert items[-1].file == "9999.wav"


def test_invalid_utf8_line_is_an_error_item() -> None:
    items, _ = read_script(b"\xef\xbb\xbfgood\nbad \xff\xfe here\nfine\n", jsonl=False)
    assert [i.line for i in items] == [1, 2, 3]
    assert items[0].text == "good" and items[0].error is None  # BOM dropped
    assert items[1].error is not None and "UTF-8" in items[1].error and "ff" in items[1].error
    assert items[2].error is None


def test_jsonl_script_fields_and_errors() -> None:
    text = "\n".join(
        [
            json.dumps({"text": "hello", "speaker": "f3", "seed": 7, "engine": "e1"}),
            json.dumps({"text": "named", "file": "intro"}),
            json.dumps({"text": "typo", "speeker": "x"}),
            "[1, 2]",
            "{not json",
            json.dumps({"text": "esc", "file": "../evil"}),
            json.dumps({"text": "dup", "file": "intro.wav"}),
            json.dumps({"text": "bad seed", "seed": "7"}),
            json.dumps({"speaker": "no text"}),
            "# a comment",
            json.dumps({"text": "flac name", "file": "x.flac"}),
        ]
    )
    items = script(text, jsonl=True)
    by_line = {i.line: i for i in items}
    assert 10 not in by_line
    ok = by_line[1]
    assert (ok.text, ok.speaker, ok.seed, ok.engine, ok.file) == (
        "hello",
        "f3",
        7,
        "e1",
        "0001.wav",
    )
    assert by_line[2].file == "intro.wav" and by_line[2].error is None
    assert "speeker" in (by_line[3].error or "")
    assert "object" in (by_line[4].error or "")
    assert "invalid JSON" in (by_line[5].error or "")
    assert "plain file name" in (by_line[6].error or "")
    assert "line 2" in (by_line[7].error or "")
    assert "seed" in (by_line[8].error or "")
    assert "text" in (by_line[9].error or "")
    assert by_line[11].file == "x.flac" and by_line[11].error is None
    # a failed JSON line keeps its raw text so the manifest shows what was wrong
    assert by_line[5].text == "{not json"


# ---------------------------------------------------------------------------------------------
# run_batch with a fake synthesizer
# ---------------------------------------------------------------------------------------------


def test_manifest_and_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res, fac = run(script("one\n\ntwo words\n你好世界😀\n"), out)
    assert res.ok and (res.done, res.skipped, res.failed) == (3, 0, [])
    recs = manifest(out)
    assert [r["line"] for r in recs] == [1, 3, 4]
    assert [r["file"] for r in recs] == ["0001.wav", "0003.wav", "0004.wav"]
    for r in recs:
        data, sr = sf.read(out / r["file"])
        assert sr == SR
        assert len(data) == SR // 100 * len(r["text"])
        assert r["duration"] == pytest.approx(len(data) / SR, abs=1e-3)
        assert float(np.sqrt(np.mean(data**2))) > 0.1
        assert r["engine"] == "fake"
    assert recs[2]["warnings"] == ["emoji: emoji skipped"]
    assert fac.made[None].closed
    assert leftovers(out) == []


def test_resume_skips_completed_lines(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(script("a1\nb2\nc3\n"), out)
    res, fac = run(script("a1\nb2\nc3\n"), out)
    assert (res.done, res.skipped) == (0, 3) and fac.calls == []
    # an edited line and a deleted file are redone; the rest stay skipped
    (out / "0003.wav").unlink()
    res, fac = run(script("a1\nCHANGED\nc3\n"), out)
    assert sorted(fac.calls) == ["CHANGED", "c3"] and res.skipped == 1
    assert [r["text"] for r in manifest(out)] == ["a1", "CHANGED", "c3"]
    # --force redoes everything
    res, fac = run(script("a1\nCHANGED\nc3\n"), out, force=True)
    assert res.done == 3 and res.skipped == 0
    # a different engine asked for explicitly is not the same work
    res, fac = run(script("a1\nCHANGED\nc3\n"), out, default_engine="other")
    assert res.done == 3


def test_failures_are_reported_and_others_go_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    items, _ = read_script(b"ok one\nFAIL here\nbad \xff\nCRASH now\nEMPTY\nok two\n", jsonl=False)
    res, _fac = run(items, out)
    assert not res.ok and res.done == 2
    failed = dict(res.failed)
    assert set(failed) == {2, 3, 4, 5}
    assert failed[2] == "engine said no"
    assert "UTF-8" in failed[3]
    assert "internal error: RuntimeError: a bug" == failed[4]
    assert "nothing to say" in failed[5]
    summary = list(summary_lines(res))
    assert summary[0].startswith("2 done, 0 skipped") and "4 failed" in summary[0]
    assert "  line 2: engine said no" in summary
    recs = {r["line"]: r for r in manifest(out)}
    assert recs[2]["error"] == "engine said no" and "file" not in recs[2]
    assert sorted(p.name for p in out.glob("*.wav")) == ["0001.wav", "0006.wav"]
    # a rerun retries only the failed lines
    res, fac = run(items, out)
    assert res.skipped == 2 and sorted(fac.calls) == ["CRASH now", "EMPTY", "FAIL here"]


def test_jsonl_options_reach_the_synthesizer(tmp_path: Path) -> None:
    out = tmp_path / "out"
    lines = [
        {"text": "plain"},
        {"text": "spk", "speaker": "f3", "seed": 5},
        {"text": "other engine", "engine": "e2", "file": "named"},
        {"text": "broken engine", "engine": "broken"},
        {"text": "broken again", "engine": "broken"},
        {"text": "e2 again", "engine": "e2"},
    ]
    text = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines)
    res, fac = run(script(text, jsonl=True), out, overrides={"temperature": 0.3})
    assert set(fac.made) == {None, "e2"}  # one synthesizer per engine name, broken tried once
    assert fac.made[None].calls == [
        ("plain", {"temperature": 0.3}),
        ("spk", {"temperature": 0.3, "speaker": "f3", "seed": 5}),
    ]
    assert [c[0] for c in fac.made["e2"].calls] == ["other engine", "e2 again"]
    assert [line for line, _ in res.failed] == [4, 5]
    assert all("no weights" in msg for _, msg in res.failed)
    recs = {r["line"]: r for r in manifest(out)}
    assert recs[2]["speaker"] == "f3" and recs[2]["seed"] == 5
    assert recs[3]["file"] == "named.wav" and recs[3]["engine"] == "e2"
    assert (out / "named.wav").is_file()


def test_interrupt_leaves_consistent_manifest(tmp_path: Path) -> None:
    out = tmp_path / "out"
    items = script("first\nsecond\nSTOP now\nfourth\n")
    res, fac = run(items, out)
    assert res.interrupted and res.done == 2 and not res.ok
    assert [r["line"] for r in manifest(out)] == [1, 2]
    assert names(out) == ["0001.wav", "0002.wav", MANIFEST]
    assert fac.made[None].closed
    # resume: the finished lines are skipped
    res, fac = run(script("first\nsecond\nthird\nfourth\n"), out)
    assert res.skipped == 2 and fac.calls == ["third", "fourth"]


def test_interrupt_during_file_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    real_replace = os.replace
    calls = {"n": 0}

    def flaky_replace(src: Any, dst: Any) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the second audio file: Ctrl-C right before the rename
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(mixvox.audio.os, "replace", flaky_replace)
    res, _ = run(script("one\ntwo\nthree\n"), out)
    assert res.interrupted
    assert names(out) == ["0001.wav", MANIFEST]
    assert [r["line"] for r in manifest(out)] == [1]


def test_manifest_dedup_and_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(script("x1\nFAIL\n"), out)
    with open(out / MANIFEST, "ab") as fh:
        fh.write(b'{"line": 9, "text": "tor')  # a record cut off by a power failure
    records, bad = read_manifest(out / MANIFEST)
    assert bad == 1 and set(records) == {1, 2}
    run(script("x1\nnow fine\n"), out)
    recs = manifest(out)
    assert [r["line"] for r in recs] == [1, 2]  # one record per line, torn line gone
    assert recs[1]["text"] == "now fine" and "error" not in recs[1]


# ---------------------------------------------------------------------------------------------
# The CLI: real espeak engine, and a fake engine registered as a plugin
# ---------------------------------------------------------------------------------------------


class FakeEnginePlugin:
    """Registers ``fake``: 20 ms of tone per character; ``FAIL``/``STOP`` misbehave."""

    class Engine:
        name = "fake"
        sample_rate = SR
        consumes = "text"

        def stream(self, utterance: Utterance, chunks: list, options: Any) -> Iterator[AudioChunk]:
            for c in chunks:
                if "FAIL" in c.spoken:
                    raise MixvoxError("fake engine failed")
                if "STOP" in c.spoken:
                    raise KeyboardInterrupt
                n = SR // 50 * len(c.spoken)
                yield AudioChunk(0.3 * np.sin(np.arange(n, dtype=np.float32) * 0.3), SR, c.index)

        def close(self) -> None:
            pass

    @hookimpl
    def mixvox_register_engines(self, register: Any) -> None:
        register(EngineInfo("fake", lambda **kw: self.Engine(), lambda: None, 10**6, "test"))


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    reg = mixvox.registry.build_registry(extra_plugins=[("fake", FakeEnginePlugin())])
    monkeypatch.setattr(mixvox.registry, "_registry", reg)


def test_cli_batch_with_espeak(tmp_path: Path) -> None:
    src = tmp_path / "script.txt"
    src.write_bytes("# demo\n你好\nhello world\n".encode())
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--engine", "espeak", "--raw"])
    assert r.exit_code == 0, r.output
    assert "2 done, 0 skipped" in r.stderr
    for name in ("0002.wav", "0003.wav"):
        data, sr = sf.read(out / name)
        assert sr == 22050 and len(data) > 0.3 * sr and float(np.sqrt(np.mean(data**2))) > 0.01
    assert [x["engine"] for x in manifest(out)] == ["espeak", "espeak"]
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--engine", "espeak", "--raw"])
    assert r.exit_code == 0 and "0 done, 2 skipped" in r.stderr


def test_cli_batch_failures_exit_1_and_flac(tmp_path: Path, fake_engine: None) -> None:
    src = tmp_path / "lines.txt"
    src.write_bytes(b"good\nFAIL this\n\xff\xfe\nalso good\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--raw", "-f", "flac"])
    assert r.exit_code == 1
    assert "2 done" in r.stderr and "2 failed" in r.stderr
    assert "line 2: fake engine failed" in r.stderr and "line 3: not valid UTF-8" in r.stderr
    assert "Traceback" not in r.output
    info = sf.info(str(out / "0001.flac"))
    assert info.format == "FLAC" and info.samplerate == SR and info.frames == SR // 50 * 4
    assert names(out) == ["0001.flac", "0004.flac", MANIFEST]


def test_cli_batch_jsonl_and_interrupt(tmp_path: Path, fake_engine: None) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(
        '{"text": "hi", "file": "greeting"}\n{"text": "STOP"}\n{"text": "never"}\n', "utf-8"
    )
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--raw"])
    assert r.exit_code == 130
    assert "interrupted" in r.stderr
    assert names(out) == ["greeting.wav", MANIFEST]
    assert manifest(out) == [
        {"line": 1, "text": "hi", "file": "greeting.wav", "duration": 0.04, "engine": "fake"}
    ]


def test_cli_batch_empty_script(tmp_path: Path) -> None:
    src = tmp_path / "empty.txt"
    src.write_text("# only a comment\n\n", "utf-8")
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(tmp_path / "o")])
    assert r.exit_code == 1 and "no lines to speak" in r.stderr
    r = CliRunner().invoke(main, ["batch", str(tmp_path / "missing.txt"), "-o", str(tmp_path)])
    assert r.exit_code == 1 and "Traceback" not in r.output


def test_runs_by_groups_consecutive_lines_for_one_engine_with_equal_options() -> None:
    from mixvox.batch import runs_by

    a, b = object(), object()
    jobs = [(a, {"x": 1}), (a, {"x": 1}), (b, {"x": 1}), (a, {"x": 1}), (a, {"x": 2})]
    runs = list(runs_by(jobs, lambda j: (j[0], j[1])))
    assert [len(r) for r in runs] == [2, 1, 1, 1]
    assert list(runs_by([], lambda j: (j,))) == []


def test_batch_lines_reaches_the_ray_actors_as_lines_per_task(tmp_path: Path, monkeypatch) -> None:
    """`mixvox batch --ray --batch-lines N` gives each engine actor N lines at once (it decodes
    them together where its engine can), instead of ignoring the flag."""
    from mixvox import distributed
    from mixvox.batch import BatchResult
    from mixvox.cli import main

    seen: dict = {}

    def fake_run_on_ray(path, out, build, **kw):
        seen.update(kw)
        return BatchResult(total=1, done=1)

    monkeypatch.setattr(distributed, "run_on_ray", fake_run_on_ray)
    src = tmp_path / "s.txt"
    src.write_text("hello\n")
    for extra, want in (([], 8), (["--batch-lines", "3"], 3)):
        r = CliRunner().invoke(
            main,
            ["batch", str(src), "-o", str(tmp_path / "o"), "--ray", "-e", "espeak", "-q", *extra],
        )
        assert r.exit_code == 0, r.output
        assert seen["lines_per_task"] == want
