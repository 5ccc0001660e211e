"""Frontend options (``mixvox.frontend_options``): the English ``number_and`` switch from the
Python API, the config's ``[frontend.en]`` table, ``-F en.number_and=…`` and
``--number-and/--no-number-and``, each validated with a clear error for a wrong key or value."""

from __future__ import annotations

import json
import wave
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import mixvox
from mixvox.batch import batch_settings
from mixvox.cli import main, settings_from
from mixvox.errors import ConfigError, OptionError
from mixvox.frontends.en.plugin import EnFrontend, EnOptions
from mixvox.plugins.config import load_config


def spoken(utt: mixvox.Utterance) -> str:
    return " ".join(w.spoken for s in utt.sentences for w in s.words if w.spoken)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def route_spoken(*args: str) -> str:
    r = invoke("route", "--json", *args)
    assert r.exit_code == 0, r.output
    return str(json.loads(r.stdout)["spoken"])


TEXT = "It costs $105 for 245 km"
WITH_AND = "It costs one hundred and five dollars for two hundred and forty five kilometers"
US = "It costs one hundred five dollars for two hundred forty five kilometers"


def test_python_api_router_and_synthesizer_router() -> None:
    assert spoken(mixvox.Router().route(TEXT)) == WITH_AND
    us = mixvox.Router(frontend_options={"en": {"number_and": False}})
    assert spoken(us.route(TEXT)) == US
    assert (
        spoken(mixvox.Router(frontend_options={"en": EnOptions(number_and=False)}).route(TEXT))
        == US
    )
    # two routers with different options do not leak into each other (a context variable)
    assert spoken(mixvox.Router().route(TEXT)) == WITH_AND
    tts = mixvox.Synthesizer("espeak", frontend_options={"en": {"number_and": "false"}})
    assert spoken(tts.route(TEXT)) == US
    # English islands in a Chinese sentence follow the English frontend's option too
    zh = us.route("他说 it costs 245 dollars")
    assert "two hundred forty five" in spoken(zh)


def test_frontend_instance_default_and_option() -> None:
    assert EnFrontend().options.number_and is True
    assert EnFrontend(EnOptions(number_and=False)).options.number_and is False


@pytest.mark.parametrize(
    ("opts", "message"),
    [
        ({"en": {"number_and": "maybe"}}, "en frontend option number_and must be true or false"),
        ({"en": {"numbers": False}}, "en frontend has no option 'numbers' (valid: number_and)"),
        ({"xx": {"a": 1}}, "no frontend for language 'xx'"),
        (
            {"zh": {"number_and": False}},
            "zh frontend has no option 'number_and' (valid: liang_bai)",
        ),
        ({"en": 3}, "frontend.en must be a table"),
    ],
)
def test_python_api_errors(opts: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        mixvox.Router(frontend_options=opts)


def test_cli_flags_and_pairs() -> None:
    assert route_spoken(TEXT) == WITH_AND
    assert route_spoken(TEXT, "--no-number-and") == US
    assert route_spoken(TEXT, "-F", "en.number_and=false") == US
    assert route_spoken(TEXT, "--frontend-option", "en.number-and=no") == US
    # the flag beats -F
    assert route_spoken(TEXT, "-F", "en.number_and=false", "--number-and") == WITH_AND


def test_cli_zh_liang_bai_flag_pair_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Mandarin 二百/两百 choice travels the same ways as the English "and"."""
    zh = "满200减30，第200名"
    assert route_spoken(zh) == "满二百减三十，第二百名"
    assert route_spoken(zh, "--liang-bai") == "满两百减三十，第二百名"  # an ordinal stays 二百
    assert route_spoken(zh, "-F", "zh.liang_bai=true") == "满两百减三十，第二百名"
    cfg = tmp_path / "config.toml"
    cfg.write_text("[frontend.zh]\nliang_bai = true\n", "utf-8")
    monkeypatch.setenv("MIXVOX_CONFIG", str(cfg))
    assert route_spoken(zh) == "满两百减三十，第二百名"
    assert route_spoken(zh, "--er-bai") == "满二百减三十，第二百名"  # a flag beats the config


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-F", "en.number_and=maybe"], "en frontend option number_and must be true or false"),
        (["-F", "en.nmber_and=false"], "en frontend has no option 'nmber_and'"),
        (["-F", "number_and=false"], "is not LANG.KEY=VALUE"),
        (["-F", "fr.x=1"], "no frontend for language 'fr'"),
    ],
)
def test_cli_wrong_values_are_usage_errors(args: list[str], message: str) -> None:
    r = invoke("route", TEXT, *args)
    assert r.exit_code == 2
    assert message in r.stderr and "Traceback" not in r.output


def test_config_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[frontend.en]\nnumber_and = false\n", "utf-8")
    monkeypatch.setenv("MIXVOX_CONFIG", str(cfg))
    assert load_config().frontends == {"en": {"number_and": False}}
    assert route_spoken(TEXT) == US
    assert route_spoken(TEXT, "--number-and") == WITH_AND  # a flag beats the config
    cfg.write_text('[frontend.en]\nnumber_and = "perhaps"\n', "utf-8")
    r = invoke("route", TEXT)
    assert r.exit_code == 1
    assert f"config {cfg.resolve()} [frontend.en]: en frontend option number_and" in r.stderr
    cfg.write_text('frontend = "en"\n', "utf-8")
    with pytest.raises(ConfigError, match="frontend must be a table"):
        load_config()
    cfg.write_text("[frontend]\nen = 1\n", "utf-8")
    with pytest.raises(ConfigError, match=r"frontend.en must be a table \(\[frontend.en\]\)"):
        load_config()


def _frames(path: Path) -> int:
    with wave.open(str(path)) as w:
        return w.getnframes()


def test_say_speaks_the_chosen_reading(tmp_path: Path) -> None:
    """The option reaches the audio: without "and" espeak has less to say."""
    a, b = tmp_path / "and.wav", tmp_path / "us.wav"
    for out, extra in ((a, []), (b, ["--no-number-and"])):
        r = invoke("say", "It costs $105", "--engine", "espeak", "-q", "-o", str(out), *extra)
        assert r.exit_code == 0, r.output
    assert _frames(b) < _frames(a)


def test_batch_fingerprint_names_the_option() -> None:
    plain = settings_from({}, "batch")
    assert "frontend" not in batch_settings(plain, "wav", "0")  # older manifests still match
    us = settings_from({"frontend_en_number_and": False}, "batch")
    assert batch_settings(us, "wav", "0")["frontend"] == {"en": {"number_and": False}}


def test_ray_batch_refuses_frontend_options(tmp_path: Path) -> None:
    script = tmp_path / "s.txt"
    script.write_text("hello 105\n", "utf-8")
    r = invoke(
        "batch", str(script), "-o", str(tmp_path / "out"), "--ray", "auto", "--no-number-and"
    )
    assert r.exit_code == 1
    assert "do not work with --ray yet" in r.stderr
