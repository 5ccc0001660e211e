"""The engine options contract: typed options, one choice, flags, ``-O``, config tables."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import mixvox
from mixvox.choice import EngineRequest, choose_engine
from mixvox.cli import main
from mixvox.engines.chattts.options import PRECISIONS, ChatTTSCallOptions, ChatTTSOptions
from mixvox.errors import EngineUnavailable, MixvoxError, MixvoxWarning, OptionError
from mixvox.options import EngineOptions, build_options, option, parse_pairs
from mixvox.registry import build_registry

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


@dataclass
class DemoOptions(EngineOptions):
    threads: int | None = option(None, help="Threads.", min=1)
    voice_dir: Path | None = option(None, help="Voices.", flag="--voice-dir")
    quality: str = option("high", help="Quality.", choices=("low", "high"))
    loud: bool = option(False, help="Loud.")


# ---------------------------------------------------------------------------------------------
# build_options
# ---------------------------------------------------------------------------------------------


def test_build_options_parses_text_and_records_given() -> None:
    opts = build_options(
        DemoOptions, {"threads": "4", "quality": "low", "loud": "yes"}, engine="demo"
    )
    assert (opts.threads, opts.quality, opts.loud, opts.voice_dir) == (4, "low", True, None)
    assert opts.given() == {"threads": 4, "quality": "low", "loud": True}
    assert build_options(DemoOptions, {}, engine="demo").given() == {}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"thread": 2},
            "demo engine has no option 'thread' (valid: threads, voice_dir, quality, loud)",
        ),
        ({"threads": "four"}, "demo option threads must be an integer (got string 'four')"),
        ({"threads": 0}, "demo option threads=0 is out of range [1, inf]"),
        ({"quality": "best"}, "demo option quality: 'best' is not one of low, high"),
        ({"loud": "maybe"}, "demo option loud must be true or false"),
        ({"threads": True}, "must be an integer (got boolean"),
    ],
)
def test_build_options_errors_name_the_valid_values(values: dict, message: str) -> None:
    with pytest.raises(OptionError) as err:
        build_options(DemoOptions, values, engine="demo")
    assert message in str(err.value)
    assert isinstance(err.value, MixvoxError) and isinstance(err.value, ValueError)


def test_config_paths_are_relative_to_the_config_file(tmp_path: Path) -> None:
    opts = build_options(DemoOptions, {"voice_dir": "v"}, engine="demo", base_dir=tmp_path)
    assert opts.voice_dir == tmp_path / "v"
    assert build_options(DemoOptions, {"voice_dir": "/abs"}, engine="d").voice_dir == Path("/abs")


def test_parse_pairs() -> None:
    assert parse_pairs(["a=1", "model-dir=x=y", "a=2"]) == {"a": "2", "model_dir": "x=y"}
    with pytest.raises(OptionError, match="'nokey' is not KEY=VALUE"):
        parse_pairs(["nokey"])


def test_chattts_options_declare_choices() -> None:
    assert {"fp32", "int8", "fp16", "bf16"} <= set(PRECISIONS)
    with pytest.raises(OptionError, match=f"'fp4' is not one of {', '.join(PRECISIONS)}$"):
        build_options(ChatTTSOptions, {"precision": "fp4"}, engine="chattts")
    with pytest.raises(OptionError, match="cpu, cuda, cuda:N"):
        build_options(ChatTTSOptions, {"device": "gpu0"}, engine="chattts")
    opts = build_options(ChatTTSOptions, {"device": "cuda:1", "reverify": True}, engine="chattts")
    assert opts.engine_kwargs() == {"device": "cuda:1", "verify": "force"}
    assert build_options(ChatTTSOptions, {}, engine="chattts").engine_kwargs() == {}
    call = build_options(ChatTTSCallOptions, {"break": 3, "top_k": "5"}, engine="chattts")
    assert call.given() == {"break": 3, "top_k": 5}
    with pytest.raises(OptionError, match="--min-frames 9 is larger than --max-frames 3"):
        build_options(ChatTTSCallOptions, {"min_frames": 9, "max_frames": 3}, engine="chattts")


# ---------------------------------------------------------------------------------------------
# Choosing the engine
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def no_chattts_load(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every way of opening ChatTTS weights fail loudly (and record the attempt)."""
    import mixvox.engines.chattts.engine as engine_mod

    opened: list[str] = []

    def refuse(*a: Any, **k: Any) -> Any:
        opened.append("load_assets")
        raise AssertionError("weights were opened")

    monkeypatch.setattr(engine_mod, "load_assets", refuse)
    return opened


def test_synthesizer_model_dir_picks_chattts(tiny_dir: Path) -> None:
    """The automatic choice asks each engine with the options given (was: espeak + warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", MixvoxWarning)  # no "espeak ignores model_dir"
        with mixvox.Synthesizer(model_dir=str(tiny_dir)) as tts:
            assert tts.engine_name == "chattts"
            assert tts.fallback_reason is None
            assert tts.engine_options.model_dir == tiny_dir
            audio = tts.synthesize("你好", max_frames=4)
    assert audio.sample_rate == 24000 and len(audio) > 0


def test_model_dir_without_weights_does_not_fall_back(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable) as err:
        mixvox.Synthesizer(model_dir=str(tmp_path / "none"))
    # model_dir is decisive and only ChatTTS takes it: as if --engine chattts had been given
    assert (
        str(err.value) == f"engine 'chattts' is not available: {tmp_path / 'none'} does not exist"
    )


def test_an_unknown_precision_is_refused_before_any_weight_file_is_opened(
    tiny_dir: Path, no_chattts_load: list[str]
) -> None:
    names = ", ".join(PRECISIONS)  # fp32, int8, fp16, bf16 (and what else the runtime has)
    with pytest.raises(OptionError, match=f"'fp4' is not one of {names}"):
        mixvox.Synthesizer("chattts", model_dir=str(tiny_dir), precision="fp4")
    with pytest.raises(OptionError, match=names):
        mixvox.Synthesizer(model_dir=str(tiny_dir), precision="fp4")
    r = invoke("say", "hi", "-o", "x.wav", "--engine", "chattts", "--precision", "fp4")
    assert r.exit_code == 2 and "fp32" in r.stderr and "bf16" in r.stderr
    r = invoke("say", "hi", "-o", "x.wav", "--model-dir", str(tiny_dir), "-O", "precision=fp4")
    assert r.exit_code == 1, r.output
    assert f"'fp4' is not one of {names}" in r.stderr
    assert "Traceback" not in r.output
    assert no_chattts_load == []


def test_unknown_option_key_names_the_valid_ones() -> None:
    with pytest.raises(
        OptionError, match=r"espeak engine has no option 'model_dri' \(valid: none\)"
    ):
        mixvox.Synthesizer("espeak", model_dri="x")
    with pytest.raises(OptionError) as err:
        mixvox.Synthesizer(model_dri="x")
    msg = str(err.value)
    assert "no engine has option(s) model_dri" in msg and "chattts: model_dir, backend" in msg


def test_check_and_factory_get_the_same_object(fake_engine: Any) -> None:
    fake = fake_engine("demo", options=DemoOptions)
    reg = build_registry(extra_plugins=[("demo", fake)])
    choice = choose_engine(None, reg, EngineRequest(options={"threads": "2"}))
    assert choice.info.name == "demo"
    choice.build()
    assert fake.checked[-1] is fake.built[-1] and fake.built[-1].threads == 2


def test_auto_choice_skips_engines_that_do_not_take_an_option(fake_engine: Any) -> None:
    top = fake_engine("top", priority=10**6, options=DemoOptions)
    other = fake_engine("other", priority=10**7, options=ChatTTSOptions)
    reg = build_registry(extra_plugins=[("top", top), ("other", other)])
    choice = choose_engine(None, reg, EngineRequest(options={"threads": 2, "quality": "low"}))
    assert choice.info.name == "top"
    assert "other: does not take option(s) quality" in (choice.reason or "")


# ---------------------------------------------------------------------------------------------
# CLI: engine flags and -O
# ---------------------------------------------------------------------------------------------


def test_say_help_lists_chattts_flags() -> None:
    out = invoke("say", "--help").output
    for flag in ("--model-dir", "--backend", "--device", "--precision", "--reverify",
                 "--temperature", "--top-p", "--top-k", "--refine / --no-refine",
                 "--min-frames", "--max-frames", "--save-codes", "-O, --option"):  # fmt: skip
        assert flag in out, flag
    for command in ("batch", "serve"):
        out = invoke(command, "--help").output
        assert "--model-dir" in out and "-O, --option" in out, command
        assert "--save-codes" not in out, command  # declared for `say` only


def test_dash_o_reaches_the_engine_typed(
    tmp_path: Path, use_plugins: Any, fake_engine: Any
) -> None:
    fake = fake_engine("demo", options=DemoOptions, call_options=ChatTTSCallOptions)
    use_plugins(("demo", fake))
    out = str(tmp_path / "x.wav")
    r = invoke("say", "hi", "--raw", "-o", out, "-O", "threads=3", "--option", "top_k=7")
    assert r.exit_code == 0, r.output
    assert fake.built[-1].given() == {"threads": 3}
    assert fake.calls[-1].extra == {"top_k": 7, "raw": True}
    r = invoke("say", "hi", "--raw", "-o", out, "-e", "demo", "-O", "thread=3")
    assert r.exit_code == 1
    assert "demo engine has no option 'thread' (valid: threads, voice_dir, quality" in r.stderr
    r = invoke("say", "hi", "--raw", "-o", out, "-O", "thread=3")
    assert r.exit_code == 1 and "no engine has option(s) thread (valid: demo: threads" in r.stderr
    assert "chattts: model_dir" in r.stderr and "espeak: none" in r.stderr
    r = invoke("say", "hi", "--raw", "-o", out, "-O", "threads")
    assert r.exit_code == 2 and "is not KEY=VALUE" in r.stderr


def test_flags_of_another_engine_are_ignored_with_one_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mixvox.engines.espeak.engine as espeak_engine

    seen: list[dict] = []
    real = espeak_engine.EspeakEngine.__init__

    def spy(self: Any, **kw: Any) -> None:
        seen.append(kw)
        real(self, **kw)

    monkeypatch.setattr(espeak_engine.EspeakEngine, "__init__", spy)
    r = invoke(
        "say", "hi", "--raw", "--engine", "espeak", "--backend", "onnx", "-o",
        str(tmp_path / "x.wav"),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert seen == [{}]  # espeak never hears of the ChatTTS flag
    lines = [x for x in r.stderr.splitlines() if "warning" in x]
    assert lines == ["mixvox: warning: espeak engine ignores option(s): backend"]


# ---------------------------------------------------------------------------------------------
# Config tables
# ---------------------------------------------------------------------------------------------


def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(body, "utf-8")
    monkeypatch.setenv("MIXVOX_CONFIG", str(path))
    return path


def test_engine_table_is_validated_by_the_engines_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_chattts_load: list[str]
) -> None:
    out = str(tmp_path / "x.wav")
    _config(tmp_path, monkeypatch, '[engine.chattts]\nprecision = "fp4"\n')
    r = invoke("say", "hi", "--raw", "--engine", "espeak", "-o", out)
    assert r.exit_code == 1  # checked even when another engine is named: a typo shows at once
    assert "config.toml [engine.chattts]: chattts option precision: 'fp4' is not one of" in r.stderr
    _config(tmp_path, monkeypatch, "[engine.chattts]\nturbo = true\n")
    r = invoke("say", "hi", "--raw", "--engine", "espeak", "-o", out)
    assert r.exit_code == 1 and "chattts engine has no option 'turbo' (valid: model_dir" in r.stderr
    _config(tmp_path, monkeypatch, "[engine.chattts]\nbackend = 1.5\n")
    r = invoke("say", "hi", "--raw", "--engine", "espeak", "-o", out)
    assert r.exit_code == 1 and "chattts option backend must be a string (got number)" in r.stderr
    assert no_chattts_load == []


def test_engine_table_reaches_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_plugins: Any, fake_engine: Any
) -> None:
    fake = fake_engine("chattts", options=ChatTTSOptions, call_options=ChatTTSCallOptions)
    use_plugins(("fake-chattts", fake))
    _config(
        tmp_path,
        monkeypatch,
        '[engine]\ndefault = "chattts"\n[engine.chattts]\nmodel_dir = "models"\n'
        'precision = "int8"\ntemperature = 0.1\n',
    )
    out = str(tmp_path / "x.wav")
    r = invoke("say", "hi", "--raw", "-o", out)
    assert r.exit_code == 0, r.output
    assert "deprecated" not in r.stderr
    assert fake.built[-1].given() == {"model_dir": tmp_path / "models", "precision": "int8"}
    assert fake.calls[-1].extra == {"temperature": 0.1, "raw": True}
    r = invoke("say", "hi", "--raw", "-o", out, "--precision", "fp16", "--temperature", "0.5")
    assert r.exit_code == 0, r.output  # flags beat the table
    assert fake.built[-1].given()["precision"] == "fp16"
    assert fake.calls[-1].extra["temperature"] == 0.5


def test_old_engine_table_still_read_with_a_deprecation_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, use_plugins: Any, fake_engine: Any
) -> None:
    fake = fake_engine("chattts", options=ChatTTSOptions, call_options=ChatTTSCallOptions)
    use_plugins(("fake-chattts", fake))
    _config(tmp_path, monkeypatch, '[chattts]\nbackend = "torch"\n')
    r = invoke("say", "hi", "--raw", "--engine", "chattts", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 0, r.output
    assert "[chattts] is deprecated; write it as [engine.chattts]" in r.stderr
    assert fake.built[-1].given() == {"backend": "torch"}


# ---------------------------------------------------------------------------------------------
# The seam itself
# ---------------------------------------------------------------------------------------------


def test_core_folders_do_not_mention_any_engine() -> None:
    """``grep -ril chattts router plugins`` prints nothing: the core knows no engine."""
    hits = [
        str(p.relative_to(ROOT))
        for folder in ("router", "plugins")
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and b"chattts" in p.read_bytes().lower()
    ]
    assert hits == []


def test_package_face() -> None:
    for name in ("hookimpl", "Engine", "EngineInfo", "Frontend", "LexEntry", "AudioChunk",
                 "errors", "EngineOptions", "option", "MixvoxError"):  # fmt: skip
        assert hasattr(mixvox, name), name
        assert name in mixvox.__all__, name
    assert mixvox.errors.OptionError is OptionError
    from mixvox.interfaces import EngineUnavailable as Old

    assert Old is EngineUnavailable  # old import names keep working
    assert (ROOT / "router" / "py.typed").is_file()


def test_engines_listing_uses_the_engine_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_dir: Path
) -> None:
    r = invoke("engines")
    assert r.exit_code == 0 and "espeak *" in r.output  # no weights in the sealed home
    _config(tmp_path, monkeypatch, f'[engine.chattts]\nmodel_dir = "{tiny_dir}"\n')
    r = invoke("engines")
    assert r.exit_code == 0, r.output
    assert "chattts *" in r.output and "espeak *" not in r.output


def test_fallback_notice_gives_the_advice_once(tmp_path: Path) -> None:
    r = invoke("say", "hi", "--raw", "-o", str(tmp_path / "x.wav"))
    assert r.exit_code == 0, r.output
    assert "using the espeak engine because chattts: no ChatTTS weights" in r.stderr
    assert r.stderr.count("`mixvox download`") == 1  # the reason has it: the hint is not repeated


def test_chattts_options_cover_the_engine_keywords() -> None:
    """Every ChatTTSEngine keyword can be set (a new one added there must be declared here)."""
    import inspect

    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.options import option_keys

    params = inspect.signature(ChatTTSEngine.__init__).parameters
    keywords = {n for n, p in params.items() if p.kind is not p.VAR_KEYWORD} - {"self"}
    # speaker: Synthesizer's own argument; verify: set by verify/reverify
    assert keywords - {"speaker"} <= set(option_keys(ChatTTSOptions))
