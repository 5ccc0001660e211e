"""The ``mixvox`` CLI: say, route, engines, plugins, plugin commands, option pass-through."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from mixvox.cli import main, register_plugin_commands
from mixvox.interfaces import AudioChunk, EngineInfo, SynthesisOptions
from mixvox.ir import Sentence, Span, Utterance, Word
from mixvox.pipeline import Router
from mixvox.plugins.hookspecs import hookimpl


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def invoke(*args: str, input: bytes | str | None = None) -> Any:
    return CliRunner().invoke(main, list(args), input=input)


# ---------------------------------------------------------------------------------------------
# Fake plugins
# ---------------------------------------------------------------------------------------------


class Recorder:
    """A fake engine plugin that records factory kwargs and synthesis options."""

    def __init__(
        self,
        name: str = "rec",
        priority: int = 10**6,
        why: str | None = None,
        *,
        hint: str = "",
        options: type | None = None,
        call_options: type | None = None,
    ) -> None:
        self.name, self.priority, self.why, self.hint = name, priority, why, hint
        self.options_cls, self.call_options_cls = options, call_options
        self.factory_kwargs: list[dict[str, Any]] = []
        self.options: list[SynthesisOptions] = []
        self.checked: list[Any] = []  # the options object (or kwargs dict) each check got

    def check(self, options: Any = None) -> str | None:
        self.checked.append(options)
        return self.why

    def factory(self, *args: Any, **kw: Any) -> Any:
        # typed engines get the validated options object; older ones get keyword arguments
        self.factory_kwargs.append(args[0].given() if args else kw)
        rec = self

        class Eng:
            name = rec.name
            sample_rate = 8000
            consumes = "text"

            def stream(self, utt: Utterance, chunks: list, options: SynthesisOptions):
                rec.options.append(options)
                for c in chunks:
                    n = 80 * max(1, len(c.spoken))
                    yield AudioChunk(0.25 * np.sin(np.arange(n, dtype=np.float32)), 8000, c.index)

            def close(self) -> None:
                pass

        return Eng()

    @hookimpl
    def mixvox_register_engines(self, register: Any) -> None:
        register(
            EngineInfo(
                self.name,
                self.factory,
                self.check,
                self.priority,
                "recording fake",
                options=self.options_cls,
                call_options=self.call_options_cls,
                hint=self.hint,
            )
        )


# ---------------------------------------------------------------------------------------------
# say
# ---------------------------------------------------------------------------------------------


def test_say_wav_flac_and_stdout(tmp_path: Path) -> None:
    wav, flac = tmp_path / "a.wav", tmp_path / "b.flac"
    r = invoke("say", "你好 world", "--raw", "--engine", "espeak", "-o", str(wav))
    assert r.exit_code == 0, r.output
    assert "wrote" in r.stderr and "espeak" in r.stderr
    data, sr = sf.read(wav)
    assert sr == 22050 and len(data) > 0.4 * sr and rms(data) > 0.01
    r = invoke("say", "你好 world", "--raw", "--engine", "espeak", "-o", str(flac))
    assert r.exit_code == 0, r.output
    assert sf.info(str(flac)).format == "FLAC"
    r = invoke("say", "-", "--raw", "--engine", "espeak", "-o", "-", input="hello there\n")
    assert r.exit_code == 0
    assert r.stdout_bytes[:4] == b"RIFF"
    data, sr = sf.read(io.BytesIO(r.stdout_bytes))
    assert sr == 22050 and rms(data) > 0.01
    r = invoke("say", "hello", "--raw", "--engine", "espeak", "-o", "-", "-f", "flac")
    assert r.stdout_bytes[:4] == b"fLaC"


def test_say_routes_mixed_text(tmp_path: Path) -> None:
    """The full pipeline: router, frontends, prosody, espeak."""
    out = tmp_path / "mixed.wav"
    r = invoke("say", "今天的 meeting 改到 3:30 PM。", "--engine", "espeak", "-o", str(out))
    assert r.exit_code == 0, r.output
    data, sr = sf.read(out)
    assert sr == 22050 and len(data) / sr > 1.5 and rms(data) > 0.01
    short = tmp_path / "short.wav"
    assert invoke("say", "你好", "--engine", "espeak", "-o", str(short)).exit_code == 0
    assert len(sf.read(short)[0]) < len(data) / 2


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["say", "hi", "-o", "x.aac"], None, "cannot tell the audio format"),
        (["say", "hi", "--engine", "nope", "-o", "x.wav"], None, "unknown engine 'nope'"),
        (["say", "-", "-o", "x.wav"], b"ok \xff\xfe", "not valid UTF-8"),
        (["say", "   ", "-o", "x.wav"], None, "no text to speak"),
        (["say", "-", "-o", "x.wav"], b"", "no text to speak"),
    ],
)
def test_say_errors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    stdin: bytes | None,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    r = invoke(*args, input=stdin)
    assert r.exit_code == 1
    assert message in r.stderr
    assert "Traceback" not in r.output
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_say_usage_errors_exit_2() -> None:
    r = invoke("say", "hi", "-o", "x.wav", "--top-p", "1.5")
    assert r.exit_code == 2 and "--top-p" in r.stderr
    r = invoke("say", "hi", "-o", "x.wav", "--min-frames", "9", "--max-frames", "3")
    assert r.exit_code == 2 and "min-frames" in r.stderr
    r = invoke("say", "hi")
    assert r.exit_code == 2 and "--output" in r.stderr


def test_say_unavailable_named_engine(tmp_path: Path, use_plugins: Any) -> None:
    use_plugins(("rec", Recorder(why="weights not found in /nowhere")))
    r = invoke("say", "hi", "--raw", "--engine", "rec", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 1
    assert "engine 'rec' is not available: weights not found in /nowhere" in r.stderr
    assert "Traceback" not in r.output


def test_engine_options_pass_through_only_when_given(tmp_path: Path, use_plugins: Any) -> None:
    rec = Recorder()
    use_plugins(("rec", rec))
    out = str(tmp_path / "x.wav")
    r = invoke("say", "hello", "--raw", "-o", out)
    assert r.exit_code == 0, r.output
    assert rec.factory_kwargs == [{}]
    assert rec.options[-1].extra == {"raw": True}
    model = tmp_path / "model"
    r = invoke(
        "say", "hello", "--raw", "-o", out, "--engine", "rec",
        "--model-dir", str(model), "--backend", "onnx",
        "--temperature", "0.5", "--top-p", "0.9", "--top-k", "5", "--no-refine",
        "--min-frames", "2", "--max-frames", "40", "--save-codes", str(tmp_path / "c.npy"),
        "--speed", "1.5",
        "--speaker", "SPK", "--seed", "42",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert rec.factory_kwargs[-1] == {"model_dir": str(model), "backend": "onnx"}
    opts = rec.options[-1]
    assert (opts.speaker, opts.seed) == ("SPK", 42)
    assert opts.extra == {
        "temperature": 0.5,
        "top_p": 0.9,
        "top_k": 5,
        "refine": False,
        "raw": True,
        "min_frames": 2,
        "max_frames": 40,
        "save_codes": str(tmp_path / "c.npy"),
        "speed": 1.5,
    }
    r = invoke("say", "hello", "--raw", "-o", out, "--refine")
    assert r.exit_code == 0 and rec.options[-1].extra == {"raw": True, "refine": True}
    # --model-dir is visible to the availability check (it gets the options), and the core
    # no longer smuggles it through the environment
    assert {"model_dir": str(model), "backend": "onnx"} in rec.checked
    assert os.environ.get("MIXVOX_CHATTTS_DIR") != str(model)


def test_fallback_is_explained_once(tmp_path: Path, use_plugins: Any) -> None:
    from mixvox.engines.chattts.plugin import HINT

    use_plugins(("chattts-fake", Recorder("chattts", 100, why="weights not found", hint=HINT)))
    r = invoke("say", "hello", "--raw", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 0, r.output
    assert r.stderr.count("using the espeak engine because chattts: weights not found") == 1
    assert "mixvox download" in r.stderr and "MIXVOX_CHATTTS_DIR" in r.stderr
    r = invoke("say", "hello", "--raw", "--engine", "espeak", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 0 and "because" not in r.stderr
    # batch: one note for the whole run, not one per line
    script = tmp_path / "s.txt"
    script.write_text("one\ntwo\nthree\n", "utf-8")
    r = invoke("batch", str(script), "-o", str(tmp_path / "out"), "--raw")
    assert r.exit_code == 0, r.output
    assert r.stderr.count("using the espeak engine") == 1


def test_unknown_options_warn_in_one_line(tmp_path: Path) -> None:
    r = invoke(
        "say", "hi", "--raw", "--engine", "espeak", "--top-k", "3", "-o", str(tmp_path / "x.wav")
    )
    assert r.exit_code == 0
    lines = [x for x in r.stderr.splitlines() if "warning" in x]
    assert lines == ["mixvox: warning: espeak engine ignores option(s): top_k"]


# ---------------------------------------------------------------------------------------------
# route
# ---------------------------------------------------------------------------------------------


def fake_utterance(text: str) -> Utterance:
    if "BOOM" in text:
        raise RuntimeError("frontend exploded")
    utt = Utterance(text)
    if not text.strip():
        return utt
    words = [Word(text, text.upper(), ["P1", "P2"], 0, len(text), "en", break_after=3)]
    span = Span("en", text, 0, len(text), words)
    utt.sentences.append(Sentence(text, 0, len(text), "en", [span]))
    if "\x1b" in text:
        utt.warn(
            "control-char", "control character skipped", text.index("\x1b"), text.index("\x1b") + 1
        )
    return utt


@pytest.fixture
def fake_router(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Router, "route", lambda self, text: fake_utterance(text))


ODD_LINES = [
    "今天的 meeting 改到 3:30 PM",
    "",
    "   ",
    "emoji 👩‍👩‍👧 and flags 🇨🇳 e\u0301",
    "rtl \u202eevil\u202c and zero\u200bwidth",
    "nul \x00 bell \x07 esc \x1b[31m",
    "line\u2028separator\u2029inside",
    "\ufeffbom in the middle",
    "𠀀𪜀 rare han",
    "x" * 5000,
]


def _stdin_bytes(lines: list[str], extra_bad: bool = True) -> bytes:
    data = b"".join(x.encode("utf-8") + b"\n" for x in lines)
    if extra_bad:
        data += b"bad \xff\xfe utf8\r\n" + b"\n" + b"last line without newline"
    return data


def check_json_lines(stdout: bytes, n_expected: int, lines: list[str]) -> list[dict[str, Any]]:
    out = stdout.split(b"\n")
    assert out[-1] == b""  # every object ends with a newline
    objs = [json.loads(x.decode("utf-8")) for x in out[:-1]]
    assert len(objs) == n_expected
    for obj, line in zip(objs, lines, strict=False):
        assert set(obj) == {"input", "spoken", "warnings", "sentences"}
        assert obj["input"] == line
    return objs


def test_route_json_stdin_contract_fake(fake_router: None) -> None:
    lines = [*ODD_LINES, "BOOM goes this line"]
    data = _stdin_bytes(lines)
    r = invoke("route", "--json", "-", input=data)
    assert r.exit_code == 0, r.output
    objs = check_json_lines(r.stdout_bytes, len(lines) + 3, lines)
    boom = objs[len(lines) - 1]
    assert boom["sentences"] == [] and "frontend exploded" in boom["warnings"][0]["message"]
    bad = objs[len(lines)]
    assert bad["warnings"][0]["code"] == "invalid-utf8" and "\ufffd" in bad["input"]
    assert bad["sentences"][0]["spans"][0]["words"][0]["phonemes"] == ["P1", "P2"]
    assert objs[len(lines) + 1]["input"] == ""
    assert objs[-1]["input"] == "last line without newline"
    assert "今天" in r.stdout  # ensure_ascii=False


def test_route_json_stdin_contract_real() -> None:
    """The same contract with the real router and frontends."""
    lines = ODD_LINES
    r = invoke("route", "--json", "-", input=_stdin_bytes(lines))
    assert r.exit_code == 0, r.output
    objs = check_json_lines(r.stdout_bytes, len(lines) + 3, lines)
    first = objs[0]
    assert "meeting" in first["spoken"] and "3:30" not in first["spoken"]
    langs = [s["lang"] for sent in first["sentences"] for s in sent["spans"]]
    assert "zh" in langs and "en" in langs
    words = [w for sent in first["sentences"] for s in sent["spans"] for w in s["words"]]
    assert any(w["phonemes"] for w in words)
    for obj in objs:
        for sent in obj["sentences"]:
            for span in sent["spans"]:
                assert obj["input"][span["start"] : span["end"]] == span["text"]


def test_route_json_text_and_empty_stdin(fake_router: None) -> None:
    r = invoke("route", "--json", "hello")
    assert r.exit_code == 0
    assert [json.loads(x) for x in r.stdout.splitlines()] == [fake_utterance("hello").to_dict()]
    r = invoke("route", "--json", "-", input=b"")
    assert r.exit_code == 0 and r.stdout == ""


def test_route_readable(fake_router: None) -> None:
    r = invoke("route", "nice \x1b[31m day")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "\x1b" not in out and "\\x1b" in out  # terminal escapes are shown, not obeyed
    assert "matrix=en" in out and "[0:14]" in out and "/P1 P2/" in out
    assert "NICE \\x1b[31M DAY" in out and "break=3" in out
    assert "control-char [5:6]" in out
    r = invoke("route", "-", input="from stdin\n")
    assert r.exit_code == 0 and "FROM STDIN" in r.stdout


def test_route_readable_real() -> None:
    r = invoke("route", "3个GPU，好吗？")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "matrix=zh" in out and "三" in out and "/san1/" in out
    assert "chunks (1):" in out and "break=2" in out and "break=3" in out
    assert out.rstrip().endswith("warnings: none")


def test_route_via_subprocess_pipe() -> None:
    """The installed console script, as a user pipes into it."""
    exe = Path(sys.executable).with_name("mixvox")
    data = _stdin_bytes(["你好 world", "", "second"], extra_bad=True)
    p = subprocess.run(
        [str(exe), "route", "--json", "-"], input=data, capture_output=True, timeout=120
    )
    assert p.returncode == 0, p.stderr.decode()
    lines = p.stdout.decode("utf-8").splitlines()
    assert len(lines) == 6
    assert json.loads(lines[0])["input"] == "你好 world"


# ---------------------------------------------------------------------------------------------
# engines / plugins / plugin commands
# ---------------------------------------------------------------------------------------------


class BrokenPlugin:
    @hookimpl
    def mixvox_register_engines(self, register: Any) -> None:
        raise RuntimeError("cannot register")


def _raise() -> str | None:
    raise OSError("disk on fire")


def test_engines_table(use_plugins: Any) -> None:
    class Odd:
        @hookimpl
        def mixvox_register_engines(self, register: Any) -> None:
            register(EngineInfo("crashy", lambda **kw: None, _raise, 5, "check raises"))

    use_plugins(("missing", Recorder("gone", 50, why="needs weights")), ("odd", Odd()))
    r = invoke("engines")
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:] if line.strip()}
    assert "available" in rows["espeak"] and "espeak-ng" in rows["espeak"]
    assert "unavailable: needs weights" in rows["gone"]
    assert "check failed: OSError: disk on fire" in rows["crashy"]
    assert "espeak *" in r.stdout  # the automatic choice is marked


def test_plugins_table(use_plugins: Any) -> None:
    use_plugins(("broken", BrokenPlugin()))
    r = invoke("plugins")
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:] if line.strip()}
    assert "mixvox.engines.espeak.plugin" in rows["espeak"] and rows["espeak"].endswith("loaded")
    assert "builtin" in rows["espeak"]
    assert "error: mixvox_register_engines failed: RuntimeError: cannot register" in rows["broken"]


def test_plugin_commands(monkeypatch: pytest.MonkeyPatch, use_plugins: Any) -> None:
    monkeypatch.setattr(main, "commands", dict(main.commands))

    class Cmds:
        @hookimpl
        def mixvox_register_commands(self, cli: click.Group) -> None:
            @cli.command()
            def hello() -> None:
                click.echo("hello from a plugin")

            @cli.command(name="say")
            def hijack() -> None:
                click.echo("hijacked")

    use_plugins(("cmds", Cmds()))
    register_plugin_commands(main)
    r = invoke("hello")
    assert r.exit_code == 0 and r.stdout == "hello from a plugin\n"
    r = invoke("say", "--help")
    assert "hijacked" not in r.stdout and "--output" in r.stdout


def test_version_and_help() -> None:
    r = invoke("--version")
    assert r.exit_code == 0 and "mixvox" in r.stdout
    r = invoke("--help")
    for cmd in ("say", "batch", "route", "engines", "plugins"):
        assert cmd in r.stdout


def test_odd_argv_text(tmp_path: Path) -> None:
    # Python keeps undecodable argv bytes as lone surrogates; that must be a clean error
    r = invoke("say", "bad \udcff text", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 1 and "not valid UTF-8" in r.stderr


# ---------------------------------------------------------------------------------------------
# Config file
# ---------------------------------------------------------------------------------------------


def test_config_file_defaults_and_flags_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_plugins: Any
) -> None:
    from mixvox.engines.chattts.options import ChatTTSCallOptions, ChatTTSOptions

    rec = Recorder("chattts", 100, options=ChatTTSOptions, call_options=ChatTTSCallOptions)
    use_plugins(("fake-chattts", rec))
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        'engine = "chattts"\nspeaker = "CFG"\n[chattts]\nmodel_dir = "models"\n'
        'backend = "onnx"\nprecision = "fp16"\n',
        "utf-8",
    )
    monkeypatch.setenv("MIXVOX_CONFIG", str(cfg))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)
    out = str(tmp_path / "x.wav")
    r = invoke("say", "hello", "--raw", "-o", out)
    assert r.exit_code == 0, r.output
    assert rec.factory_kwargs[-1] == {
        "model_dir": (tmp_path / "models").resolve(),
        "backend": "onnx",
        "precision": "fp16",
    }
    assert rec.options[-1].speaker == "CFG"
    assert rec.checked[-1].model_dir == (tmp_path / "models").resolve()  # the check sees it too
    r = invoke("say", "hello", "--raw", "-o", out, "--backend", "torch", "--speaker", "CLI")
    assert r.exit_code == 0, r.output
    assert rec.factory_kwargs[-1]["backend"] == "torch"
    assert rec.factory_kwargs[-1]["precision"] == "fp16"
    assert rec.options[-1].speaker == "CLI"
    # --engine beats the config's engine, and chattts settings do not leak into espeak
    n = len(rec.factory_kwargs)
    r = invoke("say", "hello", "--raw", "-o", out, "--engine", "espeak")
    assert r.exit_code == 0, r.output
    assert len(rec.factory_kwargs) == n and "espeak" in r.stderr
    assert "ignores" not in r.stderr


def test_config_lexicons_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.toml").write_text('[en]\nblorp = { spoken = "alpha" }\n', "utf-8")
    (tmp_path / "b.toml").write_text('[en]\nblorp = { spoken = "beta" }\n', "utf-8")
    cfg = tmp_path / "config.toml"
    cfg.write_text('lexicons = ["a.toml"]\n', "utf-8")
    monkeypatch.setenv("MIXVOX_CONFIG", str(cfg))
    r = invoke("route", "--json", "say blorp now")
    assert json.loads(r.stdout)["spoken"] == "say alpha now"
    r = invoke("route", "--json", "say blorp now", "--lexicon", str(tmp_path / "b.toml"))
    assert json.loads(r.stdout)["spoken"] == "say beta now"
    cfg.write_text("max_chunk_chars = 'many'\n", "utf-8")
    r = invoke("say", "hi", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 1 and "max_chunk_chars must be an integer" in r.stderr
    assert "Traceback" not in r.output


def test_chattts_cli_options_from_the_issue(tmp_path):
    """--temperature 0 is greedy (allowed), --model-dir names ChatTTS (no silent fallback)."""
    from click.testing import CliRunner

    from mixvox.cli import main

    tiny = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
    if not tiny.is_dir():
        pytest.skip("shared fixtures missing")
    runner = CliRunner()
    out = tmp_path / "g.wav"
    args = [
        "say",
        "--model-dir",
        str(tiny),
        "--temperature",
        "0",
        "--reverify",
        "--max-frames",
        "12",
        "你好",
        "-o",
        str(out),
    ]
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 44
    res = runner.invoke(
        main, ["say", "--model-dir", str(tmp_path / "nope"), "hi", "-o", str(tmp_path / "n.wav")]
    )
    assert res.exit_code == 1
    assert "nope" in res.output and not (tmp_path / "n.wav").exists()
