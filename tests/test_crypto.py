"""Issue 11: models encrypted at rest (AES-256-GCM), keys managed, plaintext only in memory."""

from __future__ import annotations

import base64
import json
import random
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mixvox import crypto
from mixvox.cli import main
from mixvox.interfaces import MixvoxError, SynthesisOptions
from mixvox.plugins.hookspecs import hookimpl

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("cache", "data", "config", "tmp"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    for var in ("MIXVOX_CHATTTS_DIR", crypto.KEY_ENV, crypto.KEY_FILE_ENV, "MIXVOX_CONFIG"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A copy of the tiny checkpoint (../shared is read-only), private as a model should be."""
    dst = tmp_path / "plain"
    shutil.copytree(TINY / "asset", dst / "asset")
    shutil.copy(TINY / "sha256.json", dst / "sha256.json")
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o700 if p.is_dir() else 0o600)
    return dst


@pytest.fixture
def keyfile(tmp_path: Path) -> Path:
    return crypto.write_key_file(tmp_path / "model.key")


@pytest.fixture
def enc(plain: Path, keyfile: Path, tmp_path: Path) -> Path:
    crypto.encrypt_model(plain, tmp_path / "enc", crypto.load_key_file(keyfile))
    return tmp_path / "enc"


def weight_blocks(root: Path, n: int = 24, size: int = 64) -> list[bytes]:
    """Random 64-byte blocks from the tensor data of every safetensors file under ``root``."""
    rng = random.Random(0)
    out = []
    for p in sorted(root.rglob("*.safetensors")):
        data = p.read_bytes()
        start = 8 + int.from_bytes(data[:8], "little")
        for _ in range(n):
            i = rng.randrange(start, len(data) - size)
            out.append(data[i : i + size])
    return out


def files_holding(blocks: list[bytes], *roots: Path) -> list[str]:
    hits = []
    for root in roots:
        for p in root.rglob("*"):
            if p.is_file() and not p.is_symlink():
                data = p.read_bytes()
                if any(b in data for b in blocks):
                    hits.append(str(p))
    return hits


# -- keys -------------------------------------------------------------------------------------


def test_keygen_writes_a_private_random_key_and_never_overwrites(tmp_path: Path) -> None:
    k = tmp_path / "k"
    r = CliRunner().invoke(main, ["keygen", str(k)])
    assert r.exit_code == 0, r.output
    assert stat.S_IMODE(k.stat().st_mode) == 0o600
    key = crypto.load_key_file(k)
    assert len(key) == 32
    before = k.read_bytes()
    r = CliRunner().invoke(main, ["keygen", str(k)])
    assert r.exit_code == 2 and "refusing to overwrite" in r.stderr
    assert k.read_bytes() == before
    other = crypto.load_key_file(crypto.write_key_file(tmp_path / "k2"))
    assert other != key
    assert base64.b64encode(key).decode() not in r.output


def test_key_file_others_can_read_or_write_is_refused(keyfile: Path) -> None:
    for mode in (0o644, 0o620, 0o604):
        keyfile.chmod(mode)
        with pytest.raises(crypto.UnsafePermissions, match=f"chmod 600 {keyfile}"):
            crypto.load_key_file(keyfile)


def test_model_dir_others_can_write_is_refused(enc: Path, keyfile: Path) -> None:
    key = crypto.load_key_file(keyfile)
    (enc / "asset").chmod(0o777)
    with pytest.raises(crypto.UnsafePermissions, match=r"chmod go-w .*asset"):
        crypto.decrypt_files(enc, key)


# -- the encrypted copy -----------------------------------------------------------------------


def test_encrypted_copy_holds_no_plaintext_and_a_full_manifest(plain: Path, enc: Path) -> None:
    blocks = weight_blocks(plain)
    assert files_holding(blocks, enc) == []
    man = json.loads((enc / crypto.MANIFEST_NAME).read_text())
    rels = sorted(p.relative_to(plain).as_posix() for p in plain.rglob("*") if p.is_file())
    assert sorted(man["files"]) == rels
    assert man["cipher"] == "AES-256-GCM" and man["mac"]
    for meta in man["files"].values():
        assert len(meta["sha256"]) == 64 and len(meta["ciphertext_sha256"]) == 64
    # a fresh nonce per file: two encryptions of the same bytes differ
    a = (enc / "asset/Vocos.safetensors").read_bytes()
    assert a[8:20] != (enc / "asset/DVAE.safetensors").read_bytes()[8:20]


def test_decrypt_model_gives_back_the_same_bytes(plain: Path, enc: Path, keyfile, tmp_path) -> None:
    r = CliRunner().invoke(
        main, ["decrypt-model", str(enc), str(tmp_path / "back"), "--key-file", str(keyfile)]
    )
    assert r.exit_code == 0, r.output
    for p in plain.rglob("*"):
        if p.is_file():
            assert (tmp_path / "back" / p.relative_to(plain)).read_bytes() == p.read_bytes()


def test_cli_encrypt_model(plain: Path, keyfile: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        main, ["encrypt-model", str(plain), str(tmp_path / "e2"), "--key-file", str(keyfile)]
    )
    assert r.exit_code == 0, r.output
    assert crypto.is_encrypted(tmp_path / "e2")
    r = CliRunner().invoke(
        main, ["encrypt-model", str(plain), str(tmp_path / "e2"), "--key-file", str(keyfile)]
    )
    assert r.exit_code == 2 and "not empty" in r.stderr


# -- loading ----------------------------------------------------------------------------------


def speak(eng) -> np.ndarray:
    from test_chattts_engine import utterance

    utt, chunks = utterance()
    return np.concatenate([c.samples for c in eng.stream(utt, chunks, SynthesisOptions(seed=7))])


def test_round_trip_speaks_the_same_samples_and_writes_no_plaintext(
    plain: Path, enc: Path, keyfile: Path, tmp_path: Path
) -> None:
    from mixvox.engines.chattts.assets import _PLAINTEXT
    from mixvox.engines.chattts.engine import ChatTTSEngine

    eng = ChatTTSEngine(enc, key_file=keyfile)
    try:
        got = speak(eng)
        # a second engine on the same model, with the stream stages built lazily
        eng.audio.backend.stream_stages("hidden")
    finally:
        eng.close()
    assert not any(k.startswith(str(enc)) for k in _PLAINTEXT)  # released with the engine
    blocks = weight_blocks(plain)
    dirs = [tmp_path / d for d in ("cache", "data", "tmp")]
    assert files_holding(blocks, *dirs) == []
    assert not list((tmp_path / "cache").rglob("*.onnx"))
    ref_eng = ChatTTSEngine(plain, cache_dir=tmp_path / "plain-cache")
    try:
        want = speak(ref_eng)
    finally:
        ref_eng.close()
    assert got.shape == want.shape and np.array_equal(got, want)
    # once the encrypted engine is closed, the same weights in the clear are cached as usual
    assert list((tmp_path / "plain-cache").rglob("*.onnx"))


def test_key_from_the_environment(enc: Path, keyfile: Path, monkeypatch) -> None:
    from mixvox.engines.chattts.assets import load_assets

    monkeypatch.setenv(crypto.KEY_FILE_ENV, str(keyfile))
    a = load_assets(enc)
    assert a.encrypted and a.verified
    a.release()
    monkeypatch.delenv(crypto.KEY_FILE_ENV)
    monkeypatch.setenv(crypto.KEY_ENV, keyfile.read_text().strip())
    a = load_assets(enc)
    assert a.encrypted
    a.release()


class KeyProvider:
    def __init__(self, key: bytes) -> None:
        self.key, self.asked = key, []

    @hookimpl
    def mixvox_model_key(self, model_dir: Path) -> bytes:
        self.asked.append(model_dir)
        return self.key


def test_key_provider_plugin_hook(enc: Path, keyfile: Path, monkeypatch) -> None:
    import mixvox.registry
    from mixvox.engines.chattts.assets import load_assets

    provider = KeyProvider(crypto.load_key_file(keyfile))
    reg = mixvox.registry.build_registry(extra_plugins=[("kms", provider)])
    monkeypatch.setattr(mixvox.registry, "_registry", reg)
    a = load_assets(enc)
    assert a.encrypted and [p.resolve() for p in provider.asked] == [enc.resolve()]
    a.release()


def test_missing_key_is_a_clear_error(enc: Path) -> None:
    from mixvox.engines.chattts.assets import load_assets

    with pytest.raises(crypto.ModelKeyError, match=f"{enc}.*--key-file"):
        load_assets(enc)


def _say(enc: Path, key: Path, tmp_path: Path):
    out = tmp_path / "o.wav"
    args = ["say", "你好", "-e", "chattts", "--model-dir", str(enc), "-o", str(out)]
    return CliRunner().invoke(main, [*args, "--key-file", str(key)]), out


def test_cli_say_with_an_encrypted_model(enc: Path, keyfile: Path, tmp_path: Path) -> None:
    r, out = _say(enc, keyfile, tmp_path)
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 1000
    # never a key in logs, even at debug level
    out.unlink()
    args = ["-vv", "say", "你好", "-e", "chattts", "--model-dir", str(enc), "-o", str(out)]
    r = CliRunner().invoke(main, [*args, "--key-file", str(keyfile)])
    assert r.exit_code == 0, r.output
    key = crypto.load_key_file(keyfile)
    assert keyfile.read_text().strip() not in r.output and key.hex() not in r.output


def test_wrong_key_exits_2_naming_the_file(enc: Path, tmp_path: Path) -> None:
    wrong = crypto.write_key_file(tmp_path / "wrong.key")
    r, out = _say(enc, wrong, tmp_path)
    assert r.exit_code == 2 and "wrong key" in r.stderr and str(enc) in r.stderr
    assert not out.exists() and "Traceback" not in r.output


def test_flipped_byte_exits_2_naming_the_file(enc: Path, keyfile: Path, tmp_path: Path) -> None:
    f = enc / "asset" / "Vocos.safetensors"
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 1
    f.write_bytes(bytes(data))
    r, out = _say(enc, keyfile, tmp_path)
    assert r.exit_code == 2 and "Vocos.safetensors" in r.stderr and not out.exists()


def test_swapped_files_are_caught(enc: Path, keyfile: Path, tmp_path: Path) -> None:
    a, b = enc / "asset" / "DVAE.safetensors", enc / "asset" / "Vocos.safetensors"
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    r, _ = _say(enc, keyfile, tmp_path)
    assert r.exit_code == 2 and "DVAE.safetensors" in r.stderr
    # and with the manifest not in the way, the path bound in as associated data refuses it
    key = crypto.load_key_file(keyfile)
    with pytest.raises(crypto.TamperedError, match="swapped"):
        crypto.decrypt_bytes(key, "asset/DVAE.safetensors", da[:0] + db, str(a))


def test_edited_manifest_is_caught(enc: Path, keyfile: Path) -> None:
    man = json.loads((enc / crypto.MANIFEST_NAME).read_text())
    man["files"].pop("asset/Embed.safetensors")
    (enc / crypto.MANIFEST_NAME).write_text(json.dumps(man))
    with pytest.raises(crypto.TamperedError, match=crypto.MANIFEST_NAME):
        crypto.decrypt_files(enc, crypto.load_key_file(keyfile))


def test_tensorrt_refuses_an_encrypted_model(enc: Path, keyfile: Path, monkeypatch) -> None:
    from types import SimpleNamespace

    from mixvox.engines.chattts import engine as eng_mod

    fake = SimpleNamespace(backend="tensorrt", precision="fp16", device="cuda", describe=str)
    monkeypatch.setattr(eng_mod, "resolve", lambda *a, **k: fake)  # no GPU needed to refuse
    with pytest.raises(MixvoxError, match="tensorrt.*encrypted"):
        eng_mod.ChatTTSEngine(enc, key_file=keyfile, backend="tensorrt")


@pytest.mark.parametrize("command", ["say", "batch", "serve", "bench"])
def test_key_file_option_on_every_loading_command(command: str) -> None:
    r = CliRunner().invoke(main, [command, "--help"])
    assert r.exit_code == 0 and "--key-file" in r.output


def test_bench_runs_an_encrypted_model(enc: Path, keyfile: Path) -> None:
    from mixvox.engines.chattts.cli import run_bench

    res = run_bench(enc, frames=4, key_file=str(keyfile), synth_seconds=0.2, text="你好")
    assert res["frames_per_s"] > 0


def test_cli_missing_key_exits_2(enc: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.wav"
    r = CliRunner().invoke(
        main, ["say", "你好", "-e", "chattts", "--model-dir", str(enc), "-o", str(out)]
    )
    assert r.exit_code == 2 and "no key was given" in r.stderr and str(enc) in r.stderr
    assert not out.exists()


def test_key_file_readable_by_others_exits_2_with_chmod_advice(
    enc: Path, keyfile: Path, tmp_path: Path
) -> None:
    keyfile.chmod(0o644)
    r, out = _say(enc, keyfile, tmp_path)
    assert r.exit_code == 2 and f"chmod 600 {keyfile}" in r.stderr and not out.exists()
