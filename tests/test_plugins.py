"""The plugin system: entry points, precedence, broken plugins, allow/deny lists, the example
third-party plugin (examples/mixvox-techlex) and the config file."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from mixvox.choice import EngineRequest, prepare
from mixvox.cli import engine_tables
from mixvox.errors import MixvoxWarning
from mixvox.interfaces import LexEntry, MixvoxError
from mixvox.ir import Chunk, Sentence, Span, Utterance, Word
from mixvox.pipeline import load_lexicons
from mixvox.plugins import hookimpl
from mixvox.plugins.config import Config, load_config
from mixvox.plugins.lexicons import load_lexicon_file
from mixvox.registry import BUILTIN_PLUGINS, build_registry, get_registry

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "mixvox-techlex"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    monkeypatch.delenv("MIXVOX_PLUGINS", raising=False)
    monkeypatch.delenv("MIXVOX_DISABLE_PLUGINS", raising=False)
    monkeypatch.delenv("MIXVOX_CONFIG", raising=False)


class UserLexicon:
    """A user plugin: its nginx beats the built-in one; it adds a word of its own."""

    @staticmethod
    @hookimpl
    def mixvox_lexicon(lang):
        if lang == "en":
            return {
                "nginx": LexEntry("nginx", respelling="N G I N X", source="user"),
                "foobar": LexEntry("foobar", ("F", "UW1", "B", "AA2", "R"), source="user"),
            }
        return None


class RaisingLexicon:
    @staticmethod
    @hookimpl
    def mixvox_lexicon(lang):
        raise RuntimeError("lexicon exploded")


class GarbageLexicon:
    @staticmethod
    @hookimpl
    def mixvox_lexicon(lang):
        return {"nginx": "engine x"}  # plain strings instead of LexEntry


def _utt() -> Utterance:
    text = "你好。"
    words = [
        Word("你好", "你好", ["ni3", "hao3"], 0, 2, "zh"),
        Word("。", "。", [], 2, 3, "zh", "punct"),
    ]
    return Utterance(text, [Sentence(text, 0, 3, "zh", [Span("zh", text, 0, 3, words)])])


# ---------------------------------------------------------------------------------------------
# Built-ins through entry points
# ---------------------------------------------------------------------------------------------


def test_builtins_come_in_through_entry_points():
    eps = {ep.name: ep.value for ep in metadata.entry_points(group="mixvox")}
    assert eps["lexicons"] == "mixvox.plugins.lexicons"
    assert eps["prosody"] == "mixvox.plugins.prosody"
    reg = build_registry()
    for name in ("lexicons", "prosody"):
        rec = reg.plugins[name]
        assert rec.loaded and rec.error is None and rec.builtin
        assert rec.module == BUILTIN_PLUGINS[name]
        assert rec.distribution == "mixvox"
    lex = load_lexicons(registry=reg)
    assert lex["zh"].get("重构").phonemes == ("chong2", "gou4")
    assert lex["en"].get("Nginx").respelling == "engine x"  # case-insensitive fallback
    chunks = reg.call_first("mixvox_prosody", utterance=_utt(), max_chunk_chars=50)
    assert [c.spoken for c in chunks] == ["你好。"]


def test_get_registry_is_cached_and_reloadable():
    a = get_registry()
    assert get_registry() is a
    b = get_registry(reload=True)
    assert b is not a and get_registry() is b


# ---------------------------------------------------------------------------------------------
# Precedence
# ---------------------------------------------------------------------------------------------


def test_user_plugin_lexicon_beats_builtin(tmp_path):
    reg = build_registry(extra_plugins=[("mine", UserLexicon)])
    names = [name for name, _ in reg.call_all("mixvox_lexicon", lang="en")]
    assert names == ["mine", "lexicons"]  # the trylast built-in is asked last
    en = load_lexicons(registry=reg)["en"]
    assert en.get("nginx").respelling == "N G I N X" and en.get("nginx").source == "user"
    assert en.get("foobar").phonemes[1] == "UW1"
    assert en.get("k8s").spoken == "kubernetes"  # built-in words the user did not touch stay

    # and a --lexicon file beats every plugin
    f = tmp_path / "mine.toml"
    f.write_text('[en]\nnginx = "engine ex"\n', encoding="utf-8")
    en = load_lexicons([f], registry=reg)["en"]
    assert en.get("nginx").respelling == "engine ex"
    assert en.get("foobar").source == "user"


def test_user_prosody_plugin_is_asked_first():
    class OneChunk:
        @staticmethod
        @hookimpl
        def mixvox_prosody(utterance, max_chunk_chars):
            return [Chunk(0, utterance.words), Chunk(1, [])]

    reg = build_registry(extra_plugins=[("mine", OneChunk)])
    chunks = reg.call_first("mixvox_prosody", utterance=_utt(), max_chunk_chars=50)
    assert len(chunks) == 2  # the user's answer, not the built-in's single chunk


# ---------------------------------------------------------------------------------------------
# Broken plugins
# ---------------------------------------------------------------------------------------------


def test_plugin_raising_in_hook_is_reported_and_skipped(caplog):
    reg = build_registry(extra_plugins=[("bad", RaisingLexicon), ("mine", UserLexicon)])
    with caplog.at_level(logging.WARNING, logger="mixvox.plugins"):
        lex = load_lexicons(registry=reg)
    err = reg.plugins["bad"].error
    assert err is not None and "mixvox_lexicon" in err and "lexicon exploded" in err
    assert "RuntimeError" in err
    assert "'bad'" in caplog.text
    assert lex["en"].get("foobar") is not None  # the other user plugin still works
    assert lex["zh"].get("重构") is not None  # and so does the built-in
    assert reg.plugins["mine"].error is None and reg.plugins["lexicons"].error is None


def test_plugin_returning_garbage_is_reported_and_skipped():
    reg = build_registry(extra_plugins=[("junk", GarbageLexicon)])
    lex = load_lexicons(registry=reg)
    assert "expected str -> LexEntry" in reg.plugins["junk"].error
    assert lex["en"].get("nginx").respelling == "engine x"  # the built-in entry, not junk


def test_broken_prosody_plugin_falls_back_to_builtin():
    class Broken:
        @staticmethod
        @hookimpl
        def mixvox_prosody(utterance, max_chunk_chars):
            raise ValueError("no")

    class Wrong:
        @staticmethod
        @hookimpl
        def mixvox_prosody(utterance, max_chunk_chars):
            return "not chunks"

    reg = build_registry(extra_plugins=[("broken", Broken), ("wrong", Wrong)])
    chunks = reg.call_first("mixvox_prosody", utterance=_utt(), max_chunk_chars=50)
    assert [c.spoken for c in chunks] == ["你好。"]
    assert "ValueError: no" in reg.plugins["broken"].error
    assert "expected a list of Chunk" in reg.plugins["wrong"].error


def test_extra_plugin_with_bad_hook_signature_is_reported():
    class BadSig:
        @staticmethod
        @hookimpl
        def mixvox_lexicon(language):  # the hook's argument is called lang
            return {}

    reg = build_registry(extra_plugins=[("badsig", BadSig), ("mine", UserLexicon)])
    rec = reg.plugins["badsig"]
    assert not rec.loaded and "failed to load" in rec.error and "language" in rec.error
    assert load_lexicons(registry=reg)["en"].get("foobar") is not None


def _fake_distribution(root: Path, dist: str, plugins: dict[str, str]) -> None:
    """A plugin distribution on disk (module files + dist-info with entry points)."""
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
    )
    lines = ["[mixvox]"]
    for name, source in plugins.items():
        module = f"{dist.replace('-', '_')}_{name}"
        (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        lines.append(f"{name} = {module}")
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_entry_point_plugins_failing_at_import_or_in_hook(tmp_path, monkeypatch):
    _fake_distribution(
        tmp_path,
        "mixvoxtest-plugins",
        {
            "importboom": "raise ImportError('needs a missing library')\n",
            "hookboom": """
                from mixvox.plugins import hookimpl

                @hookimpl
                def mixvox_lexicon(lang):
                    raise KeyError(lang)
            """,
            "good": """
                from mixvox.interfaces import LexEntry
                from mixvox.plugins import hookimpl

                @hookimpl
                def mixvox_lexicon(lang):
                    return {"wibble": LexEntry("wibble", ("W", "IH1", "B", "AH0", "L"))}
            """,
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = build_registry()
    imp = reg.plugins["importboom"]
    assert not imp.loaded and imp.distribution == "mixvoxtest-plugins"
    assert imp.error == "failed to load: ImportError: needs a missing library"
    assert reg.plugins["hookboom"].loaded
    lex = load_lexicons(registry=reg)
    assert "mixvox_lexicon failed: KeyError" in reg.plugins["hookboom"].error
    assert lex["en"].get("wibble").phonemes[1] == "IH1"  # the good plugin of the same dist
    assert lex["en"].get("nginx") is not None  # built-ins unaffected
    assert reg.plugins["prosody"].loaded and reg.plugins["prosody"].error is None


# ---------------------------------------------------------------------------------------------
# MIXVOX_PLUGINS / MIXVOX_DISABLE_PLUGINS
# ---------------------------------------------------------------------------------------------


def test_allow_list(monkeypatch):
    monkeypatch.setenv("MIXVOX_PLUGINS", " prosody , zh ")
    reg = build_registry()
    assert reg.plugins["prosody"].loaded
    assert not reg.plugins["lexicons"].loaded
    assert "disabled" in reg.plugins["lexicons"].error
    assert not reg.plugins["en"].loaded
    lex = load_lexicons(registry=reg)
    assert all(lx.get("重构") is None and lx.get("nginx") is None for lx in lex.values())
    assert reg.call_first("mixvox_prosody", utterance=_utt(), max_chunk_chars=50) is not None


def test_allow_list_does_not_apply_to_explicit_extra_plugins(monkeypatch):
    monkeypatch.setenv("MIXVOX_PLUGINS", "prosody,en")
    reg = build_registry(extra_plugins=[("mine", UserLexicon)])
    en = load_lexicons(registry=reg)["en"]
    assert en.get("foobar") is not None and en.get("k8s") is None


def test_deny_list(monkeypatch):
    monkeypatch.setenv("MIXVOX_DISABLE_PLUGINS", "lexicons")
    reg = build_registry()
    assert not reg.plugins["lexicons"].loaded
    assert reg.plugins["prosody"].loaded
    lex = load_lexicons(registry=reg)
    assert all(lx.get("重构") is None and lx.get("nginx") is None for lx in lex.values())
    monkeypatch.setenv("MIXVOX_DISABLE_PLUGINS", "prosody")
    reg = build_registry()
    assert reg.plugins["lexicons"].loaded and not reg.plugins["prosody"].loaded
    assert reg.call_first("mixvox_prosody", utterance=_utt(), max_chunk_chars=50) is None


def test_extra_plugin_cannot_steal_a_loaded_name():
    reg = build_registry(extra_plugins=[("lexicons", UserLexicon)])
    rec = reg.plugins["lexicons"]
    assert rec.loaded and rec.builtin and rec.error is None  # the built-in record is kept
    assert load_lexicons(registry=reg)["en"].get("foobar") is None


# ---------------------------------------------------------------------------------------------
# The example third-party plugin (examples/mixvox-techlex)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def example_module(monkeypatch):
    """The example's module imported from the source tree (no install needed)."""
    import importlib

    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ in the checkout
    monkeypatch.syspath_prepend(str(EXAMPLE))
    monkeypatch.delitem(sys.modules, "mixvox_techlex", raising=False)
    mod = importlib.import_module("mixvox_techlex")
    yield mod
    sys.modules.pop("mixvox_techlex", None)


def test_example_plugin_lexicon_level(example_module):
    # Without frontends: the registry + load_lexicons see the plugin's entries over built-ins.
    mod = example_module
    before = load_lexicons(registry=build_registry())
    after = load_lexicons(registry=build_registry(extra_plugins=[("techlex", mod)]))
    assert before["zh"].get("重分片") is None
    assert after["zh"].get("伺服器").phonemes == ("si4", "fu2", "qi4")
    assert after["zh"].get("重分片").phonemes == ("chong2", "fen1", "pian4")
    assert after["en"].get("etcd").phonemes == ("EH1", "T", "S", "IY1", "D", "IY1")
    assert after["en"].get("kubectl").respelling == "cube control"
    assert "cloud.toml" in after["en"].get("etcd").source
    assert after["en"].get("nginx") is before["en"].get("nginx")  # built-ins still there
    assert mod.mixvox_lexicon(lang="fr") is None


def test_example_pyproject_registers_entry_point():
    import tomllib

    meta = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["entry-points"]["mixvox"] == {"techlex": "mixvox_techlex"}


_ROUTE_SCRIPT = """
import json, sys
import mixvox
from mixvox.registry import get_registry
utt = mixvox.route(sys.argv[1])
rec = get_registry().plugins.get("techlex")
print(json.dumps({
    "words": {w.text: w.phonemes for w in utt.words if w.kind == "word"},
    "techlex": None if rec is None else [rec.loaded, rec.error, rec.distribution],
}))
"""


@pytest.mark.slow
def test_example_plugin_installed_changes_pronunciation(tmp_path):
    """pip-install the example into a folder and route text with and without it on the path.

    The install happens in a copy under ``tmp_path`` into a ``--target`` prefix there, so the
    checkout is left exactly as it was (no build/, no egg-info).
    """
    before_tree = sorted(p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*"))
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--target", str(target), str(src)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    assert (target / "mixvox_techlex" / "cloud.toml").is_file()

    # Every word of the plugin's lexicon, once, as the frontends see it.
    tables = load_lexicon_file(src / "mixvox_techlex" / "cloud.toml")
    zh_words, en_words = list(tables["zh"]), list(tables["en"])
    text = "，".join(zh_words) + "。" + " ".join(f"{w}," for w in en_words) + " ok."
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIXVOX_")}
    env.pop("PYTHONPATH", None)

    def route(extra_path: Path | None) -> dict:
        e = dict(env)
        if extra_path is not None:
            e["PYTHONPATH"] = str(extra_path)
        out = subprocess.run(
            [sys.executable, "-c", _ROUTE_SCRIPT, text],
            check=True, capture_output=True, text=True, env=e, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        return json.loads(out.stdout.strip().splitlines()[-1])

    before, after = route(None), route(target)
    assert before["techlex"] is None
    assert after["techlex"] == [True, None, "mixvox-techlex"]
    # With the plugin every word is read as its entry says ...
    for lang in ("zh", "en"):
        for word, entry in tables[lang].items():
            assert after["words"][word] == list(entry.phonemes), word
    # ... which changes the reading of zh and en words the built-in G2P gets differently.
    changed = {w for w in zh_words + en_words if before["words"].get(w) != after["words"][w]}
    assert changed & set(zh_words), before["words"]
    assert changed & set(en_words), before["words"]
    # (etcd is no longer among them: the built-in acronym table reads it "et C D" too)
    assert "重分片" in changed and "kubectl" in changed
    assert before["words"]["ok"] == after["words"]["ok"]  # other words are untouched
    assert sorted(p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*")) == before_tree


# ---------------------------------------------------------------------------------------------
# Config file
# ---------------------------------------------------------------------------------------------


def test_config_defaults_when_default_file_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "mixvox.plugins.config.default_config_path", lambda: tmp_path / "nope" / "config.toml"
    )
    assert load_config() == Config()


def test_config_full(tmp_path, caplog):
    cfg_dir = tmp_path / "conf"
    cfg_dir.mkdir()
    path = cfg_dir / "config.toml"
    path.write_text(
        textwrap.dedent(
            """
            engine = "espeak"
            speaker = "abc"
            lexicons = ["words.toml", "/abs/more.tsv", "~/x.toml"]
            max_chunk_chars = 80
            colour = "blue"

            [chattts]
            model_dir = "models"
            backend = "onnx"
            precision = "fp16"
            turbo = true
            """
        ),
        encoding="utf-8",
    )
    with caplog.at_level(logging.WARNING, logger="mixvox.config"):
        cfg = load_config(str(path))
        # the older [chattts] table is read as [engine.chattts] once engines are known
        reg = build_registry()
        with pytest.warns(MixvoxWarning, match=r"\[chattts\] is deprecated"):
            tables = engine_tables(cfg, reg)
    assert cfg.engine == "espeak" and cfg.speaker == "abc" and cfg.max_chunk_chars == 80
    assert cfg.lexicons == [
        cfg_dir.resolve() / "words.toml",
        Path("/abs/more.tsv"),
        Path("~/x.toml").expanduser(),
    ]
    request = EngineRequest(tables=tables, base_dir=cfg.path.parent)
    opts = prepare(reg.engine("chattts"), request).options
    assert (opts.model_dir, opts.backend, opts.precision) == (
        cfg_dir.resolve() / "models",
        "onnx",
        "fp16",
    )
    assert cfg.path == path.resolve()
    assert "'colour'" in caplog.text and "'chattts.turbo'" in caplog.text


def test_config_from_env_var(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text('engine = "chattts"\nlexicons = "one.tsv"\n', encoding="utf-8")
    monkeypatch.setenv("MIXVOX_CONFIG", str(path))
    cfg = load_config()
    assert cfg.engine == "chattts" and cfg.lexicons == [tmp_path.resolve() / "one.tsv"]
    monkeypatch.setenv("MIXVOX_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(MixvoxError, match=r"config file not found: .*missing.toml \(from \$MIXVOX"):
        load_config()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("engine = 3\n", "engine must be a string (got integer)"),
        ("max_chunk_chars = '80'\n", "max_chunk_chars must be an integer (got string)"),
        ("max_chunk_chars = true\n", "max_chunk_chars must be an integer (got boolean)"),
        ("max_chunk_chars = 0\n", "max_chunk_chars must be at least 1"),
        ("lexicons = [1]\n", "lexicons[0] must be a string"),
        ("lexicons = {a = 1}\n", "lexicons must be an array of paths (got table)"),
        ("engine = {chattts = 'x'}\n", "engine.chattts must be a table"),
        ("speaker = ''\n", "speaker must not be empty"),
        ("engine = \n", "is not valid TOML"),
    ],
)
def test_config_errors_name_key_and_file(tmp_path, body, message):
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(MixvoxError) as err:
        load_config(path)
    assert message in str(err.value)
    assert "bad.toml" in str(err.value)


def test_config_explicit_missing_file(tmp_path):
    with pytest.raises(MixvoxError, match="config file not found"):
        load_config(tmp_path / "none.toml")
