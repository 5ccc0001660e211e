"""Issue 11, bad input: special files, control characters, warning floods, API errors."""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

import mixvox
from mixvox.cli import main
from mixvox.errors import MixvoxError, NothingToSay, UnknownOption
from mixvox.pipeline import Router
from mixvox.stages import Failed


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("MIXVOX_CONFIG", raising=False)


@pytest.fixture(scope="module")
def tts():
    with mixvox.Synthesizer("espeak") as synth:
        yield synth


def invoke(*args: str, env: dict | None = None, input: bytes | None = None):
    return CliRunner().invoke(main, list(args), env=env, input=input)


def fifo(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    os.mkfifo(p)
    return p


def within(seconds: float, fn):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it does not return."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        # unblock a reader stuck on a FIFO so the thread can end
        raise AssertionError(f"did not return within {seconds} s (hung on a special file)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- special files ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "devzero"])
def test_config_lexicon_and_script_must_be_regular_files(tmp_path: Path, kind: str) -> None:
    src = fifo(tmp_path, "x") if kind == "fifo" else Path("/dev/zero")
    out = tmp_path / "o.wav"
    cases = [
        (["say", "hi", "-e", "espeak", "-o", str(out)], {"MIXVOX_CONFIG": str(src)}),
        (["say", "hi", "-e", "espeak", "-o", str(out), "--lexicon", str(src)], None),
        (["route", "hi", "--lexicon", str(src)], None),
        (["batch", str(src), "-o", str(tmp_path / "b"), "-e", "espeak"], None),
    ]
    for args, env in cases:
        r = within(30, lambda a=args, e=env: invoke(*a, env=e))
        assert r.exit_code == 1, (args, r.output)
        assert "not a regular file" in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.output


def test_speaker_file_special_or_huge_is_refused_fast(tmp_path: Path) -> None:
    from mixvox.engines.chattts.speaker import Speaker

    with pytest.raises(MixvoxError, match="not a regular file"):
        within(30, lambda: Speaker.parse("@" + str(fifo(tmp_path, "spk.npy")), dim=8))
    big = tmp_path / "big.npy"
    with open(big, "wb") as fh:  # a sparse 4 GB file: reading it whole would take long
        np.lib.format.write_array_header_1_0(
            fh, {"descr": "<f4", "fortran_order": False, "shape": (1 << 30,)}
        )
        fh.truncate(4 * 1024**3 + 128)
    t = time.monotonic()
    with pytest.raises(MixvoxError, match="too large"):
        Speaker.parse("@" + str(big), dim=8)
    assert time.monotonic() - t < 5  # refused from its size, not after reading 4 GB


def test_a_manifest_that_is_a_fifo_does_not_hang(tmp_path: Path) -> None:
    from test_batch import Factory, script

    from mixvox.batch import MANIFEST

    out = tmp_path / "out"
    out.mkdir()
    fifo(out, MANIFEST)
    with pytest.raises(MixvoxError, match="not a regular file"):
        within(30, lambda: mixvox.batch.run_batch(script("a\n"), out, Factory(), progress=False))


def test_stdin_text_has_a_size_cap(monkeypatch, tmp_path: Path) -> None:
    import mixvox.cli as cli

    monkeypatch.setattr(cli, "MAX_TEXT_BYTES", 1000)
    r = invoke("say", "-", "-e", "espeak", "-o", str(tmp_path / "a.wav"), input=b"a" * 5000)
    assert r.exit_code == 1 and "too large" in r.stderr


# -- control characters -----------------------------------------------------------------------


def duration(path: Path) -> float:
    info = sf.info(str(path))
    return info.frames / info.samplerate


def test_nul_with_raw_warns_and_never_cuts_the_espeak_audio(tmp_path: Path) -> None:
    text = "hello\x00 world, this sentence goes on for quite a few more words after the NUL"
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    r = invoke("say", text, "--raw", "-e", "espeak", "-o", str(a))
    assert r.exit_code == 0, r.output
    assert "control-char" in r.stderr
    r = invoke("say", text.replace("\x00", " "), "--raw", "-e", "espeak", "-o", str(b))
    assert r.exit_code == 0
    assert duration(a) == pytest.approx(duration(b), rel=0.1)


def test_nul_inside_an_override_does_not_cut_the_audio(tts) -> None:
    from mixvox.engines.espeak import binding

    lib = tts.engine._lib
    full = lib.synth("hello world and several more words", "en-us")
    cut = lib.synth("hello\x00 world and several more words", "en-us")
    assert len(cut) == pytest.approx(len(full), rel=0.1)
    assert binding  # the espeak binding strips control characters itself


def test_raw_route_reports_control_characters() -> None:
    utt = Router().raw("a\x00b\x07c")
    assert [w.code for w in utt.warnings] == ["control-char", "control-char"]
    assert utt.input == "a\x00b\x07c"  # nothing cut


# -- warning floods ---------------------------------------------------------------------------


def test_a_run_of_identical_problems_is_one_warning() -> None:
    utt = Router().route("\ufffd" * 5000 + " ok " + "\ufffd" * 3)
    assert len(utt.warnings) == 2
    first = utt.warnings[0]
    assert (first.start, first.end) == (0, 5000) and "5000" in first.message


def test_route_json_output_is_proportional_to_the_problems() -> None:
    r = invoke("route", "-", "--json", input=("\ufffd" * 20000 + "\n").encode())
    assert r.exit_code == 0
    import json

    obj = json.loads(r.stdout)
    assert len(obj["warnings"]) == 1 and len(r.stdout) < 2_000_000


# -- the Python API ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "。。。", "!!!"])
def test_nothing_to_say_is_an_error(tts, text: str, tmp_path: Path) -> None:
    with pytest.raises(NothingToSay):
        tts.synthesize(text)
    assert not (tmp_path / "x.wav").exists()


def test_unknown_option_is_an_error_with_a_suggestion(tts) -> None:
    with pytest.raises(UnknownOption, match="spead.*speed"):
        tts.synthesize("hello", spead=1.2)
    assert len(tts.synthesize("hello", speed=1.2)) > 0


def test_synthesize_many_yields_failed_for_them(tts) -> None:
    out = list(tts.synthesize_many(["hello", "。。。", "world"]))
    assert len(out[0]) > 0 and len(out[2]) > 0
    assert isinstance(out[1], Failed) and isinstance(out[1].error, NothingToSay)
    bad = list(tts.synthesize_many(["hello"], spead=2))
    assert isinstance(bad[0], Failed) and isinstance(bad[0].error, UnknownOption)


def test_synthesizer_logs_once_which_engine_and_why(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="mixvox"):
        with mixvox.Synthesizer() as s:
            s.synthesize("hello")
            s.synthesize("world")
    chosen = [r.getMessage() for r in caplog.records if "engine" in r.getMessage()]
    assert len([m for m in chosen if "using the" in m]) == 1
    msg = next(m for m in chosen if "using the" in m)
    assert s.engine_name in msg and "because" in msg


def test_nan_from_an_engine_names_the_engine(tts, monkeypatch) -> None:
    real = tts.engine.render_chunk
    monkeypatch.setattr(tts.engine, "render_chunk", lambda w, o: real(w, o) * np.float32(np.nan))
    with pytest.raises(mixvox.audio.BadAudioError, match="espeak engine"):
        tts.synthesize("hello")


def test_a_fallback_is_a_visible_warning(caplog, monkeypatch) -> None:
    import mixvox.registry
    from mixvox.interfaces import EngineInfo
    from mixvox.plugins.hookspecs import hookimpl

    class Unavailable:
        @hookimpl
        def mixvox_register_engines(self, register) -> None:
            register(EngineInfo("best", lambda **kw: None, lambda: "no weights here", 10**6))

    reg = mixvox.registry.build_registry(extra_plugins=[("best", Unavailable())])
    monkeypatch.setattr(mixvox.registry, "_registry", reg)
    with caplog.at_level(logging.INFO, logger="mixvox"):
        mixvox.Synthesizer().close()
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "no weights here" in warned[0].getMessage()
