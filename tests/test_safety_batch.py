"""Issue 11: batches that never lie (lock, settings fingerprint, checksums, leftovers,
signals, punctuation-only lines)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_batch import SR, Factory, FakeTTS, fake_engine, manifest, names, script  # noqa: F401

from mixvox.audio import Audio
from mixvox.batch import (
    MANIFEST,
    BatchLock,
    BatchLocked,
    SettingsChanged,
    read_manifest,
    run_batch,
    summary_lines,
)
from mixvox.cli import main


def run(text: str, out: Path, factory: Factory | None = None, **kw: Any):
    factory = factory or Factory()
    return run_batch(script(text), out, factory, progress=False, **kw), factory


def test_a_second_run_on_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with BatchLock(out):
        with pytest.raises(BatchLocked, match="another mixvox batch"):
            run("a1\nb2\n", out)
    assert names(out) == []  # nothing written by the refused run
    res, _ = run("a1\nb2\n", out)  # the lock is free again
    assert res.done == 2


@pytest.mark.usefixtures("fake_engine")
def test_cli_second_run_exits_with_a_clear_message(tmp_path: Path) -> None:
    src = tmp_path / "s.txt"
    src.write_text("hello\n")
    out = tmp_path / "out"
    out.mkdir()
    with BatchLock(out):
        r = CliRunner().invoke(main, ["batch", str(src), "-o", str(out), "--raw", "-q"])
    assert r.exit_code == 1 and "another mixvox batch is writing" in r.stderr
    assert "Traceback" not in r.output


def test_resume_with_other_settings_stops_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run("a1\nb2\nc3\n", out, settings={"speed": 1.0, "voice": "seed:1"})
    before = {n: (out / n).read_bytes() for n in names(out)}
    with pytest.raises(SettingsChanged) as err:
        run("a1\nb2\nc3\nd4\n", out, settings={"speed": 1.5, "voice": "seed:1"})
    assert err.value.changed == ["speed: 1.0 -> 1.5"]
    assert "--force" in str(err.value) and "--resume-changed" in str(err.value)
    assert {n: (out / n).read_bytes() for n in names(out)} == before
    # --resume-changed redoes exactly the lines made with other settings (and the new one)
    res, fac = run(
        "a1\nb2\nc3\nd4\n", out, settings={"speed": 1.5, "voice": "seed:1"}, resume_changed=True
    )
    assert sorted(fac.calls) == ["a1", "b2", "c3", "d4"] and res.done == 4
    # and now the same settings resume normally
    res, fac = run("a1\nb2\nc3\nd4\n", out, settings={"speed": 1.5, "voice": "seed:1"})
    assert res.skipped == 4 and fac.calls == []
    # --force redoes all without asking
    res, fac = run("a1\nb2\n", out, settings={"speed": 2.0}, force=True)
    assert res.done == 2


@pytest.mark.usefixtures("fake_engine")
def test_cli_resume_with_other_speed_or_lexicon_exits_2(tmp_path: Path) -> None:
    src = tmp_path / "s.txt"
    src.write_text("hello there\nsecond line\n")
    lex = tmp_path / "lex.txt"
    lex.write_text("hello\thəˈloʊ\n")
    out = tmp_path / "out"
    base = ["batch", str(src), "-o", str(out), "-q", "--lexicon", str(lex)]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, [*base, "--speed", "1.5"])
    assert r.exit_code == 2 and "speed" in r.stderr and "--force" in r.stderr
    lex.write_text("hello\thɛˈloʊ\n")
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 2 and "lexicons" in r.stderr
    r = CliRunner().invoke(main, [*base, "--resume-changed"])
    assert r.exit_code == 0 and "2 done" in r.stderr


def test_each_record_has_a_checksum_and_a_bad_one_is_dropped(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run("a1\nb2\n", out)
    lines = (out / MANIFEST).read_text().splitlines()
    assert all("crc" in json.loads(x) for x in lines)
    rec = json.loads(lines[-1])
    rec["file"] = "0001.wav"  # a record altered (or half-rewritten): its checksum no longer fits
    with open(out / MANIFEST, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
        fh.write('{"line": 2, "text": "b2", "fi')  # and a torn last line
    records, bad = read_manifest(out / MANIFEST)
    assert bad == 2 and records[2]["file"] == "0002.wav"


def test_resume_checks_the_recorded_length(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run("a1\nb2\n", out)
    data = (out / "0002.wav").read_bytes()
    (out / "0002.wav").write_bytes(data[: len(data) // 2])  # truncated by someone else
    res, fac = run("a1\nb2\n", out)
    assert fac.calls == ["b2"] and res.skipped == 1
    assert (out / "0002.wav").read_bytes() == data


def test_leftover_part_files_are_removed_at_start(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / ".0001.wav.k3j2x9.part").write_bytes(b"\0" * 1000)  # SIGKILL mid-write
    (out / "keep.part.txt").write_text("not ours")
    run("a1\n", out)
    assert names(out) == sorted(["0001.wav", MANIFEST, "keep.part.txt"])


class TermTTS(FakeTTS):
    def synthesize(self, target: Any, **kw: Any) -> Audio:
        text = target.input if hasattr(target, "input") else target
        if "TERM" in text:
            os.kill(os.getpid(), signal.SIGTERM)
        return super().synthesize(target, **kw)


def test_sigterm_stops_like_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "out"
    made: dict = {}

    def factory(name: str | None) -> TermTTS:
        made[name] = TermTTS(name)
        return made[name]

    res = run_batch(script("a1\nTERM\n" + "x\n" * 50), out, factory, progress=False)
    assert res.interrupted and res.signal == signal.SIGTERM
    assert any("stopped by SIGTERM" in line for line in summary_lines(res))
    recs = manifest(out)  # the lines finished before the signal, and nothing after it
    assert [r["line"] for r in recs] in ([], [1])
    assert all((out / r["file"]).is_file() for r in recs)
    # the run waited for the file being written (WRITE_STOP_WAIT): no .part is left
    assert not [n for n in os.listdir(out) if n.endswith(".part")]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handler restored


def test_a_stop_waits_for_a_slow_fsync_and_nothing_is_written_after_it(
    tmp_path: Path, monkeypatch
) -> None:
    """A SIGTERM while the writer is in a slow fsync (a busy disk): the run returns after that
    file has landed whole, and no stage goes on with later lines once the run has returned.

    This was a rare CI failure: the pipeline's 5 s join timed out during the fsync, a
    ``.part`` was still there when the run returned, and the reset cancel flag let the late
    thread carry on."""
    import threading
    import time

    import mixvox.stages

    monkeypatch.setattr(mixvox.stages, "DEFAULT_STOP_WAIT", 0.05)  # the other stages' wait
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:
        if threading.current_thread().name == "mixvox-write":
            time.sleep(0.6)  # far beyond the other stages' wait
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    out = tmp_path / "out"
    res = run_batch(script("a1\nTERM\n" + "x\n" * 50), out, TermTTS, progress=False)
    assert res.interrupted and res.signal == signal.SIGTERM
    assert not [n for n in os.listdir(out) if n.endswith(".part")]
    assert [r["line"] for r in manifest(out)] in ([], [1])
    wavs = sorted(n for n in os.listdir(out) if n.endswith(".wav"))
    time.sleep(1.5)  # a late stage thread would write line 3, 4 ... now
    assert sorted(n for n in os.listdir(out) if n.endswith(".wav")) == wavs
    assert set(wavs) <= {"0001.wav", "0002.wav"}


def test_cli_sigterm_exits_143_with_a_message(tmp_path: Path, monkeypatch) -> None:
    from test_batch import FakeEnginePlugin

    import mixvox.registry

    class Eng(FakeEnginePlugin.Engine):
        def stream(self, utterance, chunks, options):
            for c in chunks:
                if "TERM" in c.spoken:
                    os.kill(os.getpid(), signal.SIGTERM)
            yield from super().stream(utterance, chunks, options)

    class Plugin(FakeEnginePlugin):
        Engine = Eng

    reg = mixvox.registry.build_registry(extra_plugins=[("fake", Plugin())])
    monkeypatch.setattr(mixvox.registry, "_registry", reg)
    src = tmp_path / "s.txt"
    src.write_text("one\nTERM\n" + "more\n" * 30)
    r = CliRunner().invoke(main, ["batch", str(src), "-o", str(tmp_path / "o"), "--raw", "-q"])
    assert r.exit_code == 143 and "stopped by SIGTERM" in r.stderr


def test_punctuation_only_lines_are_skipped_and_comments_counted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    res, fac = run('# title\n"..."\n——\nreal words\n「」\n# end\n', out)
    assert res.ok and res.done == 1 and res.unspeakable == 3 and not res.failed
    assert res.comments == 2 and fac.calls == ["real words"]
    first = next(summary_lines(res))
    assert "3 skipped (only punctuation)" in first and "2 comment line(s)" in first


def test_ray_resume_with_other_settings_stops_before_touching_the_cluster(
    tmp_path: Path, monkeypatch
) -> None:
    pytest.importorskip("ray")
    from mixvox import distributed

    out = tmp_path / "out"
    src = tmp_path / "s.txt"
    src.write_text("a1\nb2\n")
    run("a1\nb2\n", out, settings={"speed": 1.0})
    monkeypatch.setattr(distributed, "connect", lambda address: pytest.fail("reached Ray"))
    with pytest.raises(SettingsChanged, match="speed: 1.0 -> 2.0"):
        distributed.run_on_ray(src, out, Factory(), settings={"speed": 2.0}, progress=False)
    res, _ = run("a1\nb2\n", out, settings={"speed": 1.0})  # the lock was released
    assert res.skipped == 2


def test_say_stops_cleanly_on_sigterm(tmp_path: Path, monkeypatch) -> None:
    from test_batch import FakeEnginePlugin

    import mixvox.registry

    class Eng(FakeEnginePlugin.Engine):
        def stream(self, utterance, chunks, options):
            yield from super().stream(utterance, chunks[:1], options)
            os.kill(os.getpid(), signal.SIGTERM)
            yield from super().stream(utterance, chunks[1:], options)

    class Plugin(FakeEnginePlugin):
        Engine = Eng

    reg = mixvox.registry.build_registry(extra_plugins=[("fake", Plugin())])
    monkeypatch.setattr(mixvox.registry, "_registry", reg)
    out = tmp_path / "o.wav"
    text = "第一句话。第二句话。第三句话。"
    r = CliRunner().invoke(main, ["say", text, "-e", "fake", "-o", str(out)])
    assert r.exit_code == 143 and "stopped by SIGTERM" in r.stderr
    assert os.listdir(tmp_path) == []  # neither the output nor a .part file
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
