"""ChatTTS model directories: layout, pinned hashes, remembered verdicts, pickle refusal."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from mixvox.engines.chattts import assets
from mixvox.engines.chattts.assets import (
    OFFICIAL_SHA256,
    REQUIRED_FILES,
    VerdictCache,
    load_assets,
    parse_manifest,
    resolve_model_dir,
    verify_files,
)
from mixvox.interfaces import MixvoxError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "chattts"
TINY = SHARED / "tiny"


@pytest.fixture(autouse=True)
def _isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(TINY / "asset", dst / "asset")
    shutil.copyfile(TINY / "sha256.json", dst / "sha256.json")
    for p in dst.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return dst


def _flip_byte(path: Path, offset: int = -1) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_official_manifest_is_the_published_one() -> None:
    assert json.loads((SHARED / "sha256.json").read_text()) == OFFICIAL_SHA256
    assert set(REQUIRED_FILES) == set(OFFICIAL_SHA256)


def test_genuine_tokenizer_and_config_match_official_hashes() -> None:
    for rel in ("asset/gpt/config.json", "asset/tokenizer/tokenizer.json"):
        assert assets.sha256_file(SHARED / rel) == OFFICIAL_SHA256[rel]


def test_model_with_own_manifest_loads(model: Path) -> None:
    a = load_assets(model)
    assert a.root == model
    assert a.manifest_source == str(model / "sha256.json")
    assert a.gpt_weights.is_file() and a.tokenizer_json.is_file() and a.vocos.is_file()
    assert a.gpt_config_dict()["hidden_size"] == 32
    rel = "asset/gpt/model.safetensors"
    assert a.verified and a.verified_sha256(rel) == a.manifest[rel]
    assert load_assets(model, verify=False).verified_sha256(rel) is None


def test_without_own_manifest_the_official_hashes_apply(model: Path) -> None:
    (model / "sha256.json").unlink()
    with pytest.raises(MixvoxError) as err:
        load_assets(model)
    msg = str(err.value)
    assert "official" in msg and "asset/" in msg and "mixvox download" in msg


def test_hash_mismatch_names_the_file(model: Path) -> None:
    _flip_byte(model / "asset" / "Embed.safetensors")
    with pytest.raises(MixvoxError) as err:
        load_assets(model)
    msg = str(err.value)
    assert "asset/Embed.safetensors" in msg
    assert "mixvox download" in msg
    assert OFFICIAL_SHA256["asset/Embed.safetensors"] not in msg  # the tiny manifest applies
    assert json.loads((model / "sha256.json").read_text())["asset/Embed.safetensors"] in msg


def test_missing_file_is_named(model: Path) -> None:
    (model / "asset" / "DVAE.safetensors").unlink()
    with pytest.raises(MixvoxError, match=r"asset/DVAE\.safetensors") as err:
        load_assets(model)
    assert "mixvox download" in str(err.value)


def test_missing_file_listed_only_in_manifest(model: Path) -> None:
    man = json.loads((model / "sha256.json").read_text())
    man["asset/extra/lora.safetensors"] = "0" * 64
    (model / "sha256.json").write_text(json.dumps(man))
    with pytest.raises(MixvoxError, match=r"asset/extra/lora\.safetensors is missing"):
        load_assets(model)


def test_verdict_cache_hit_and_miss_on_mtime(model: Path, tmp_path: Path) -> None:
    manifest, _ = assets.load_manifest(model)
    cache_file = tmp_path / "verdicts.json"
    first = verify_files(model, manifest, cache=VerdictCache(cache_file))
    assert sorted(first.hashed) == sorted(manifest) and not first.cached
    second = verify_files(model, manifest, cache=VerdictCache(cache_file))
    assert sorted(second.cached) == sorted(manifest) and not second.hashed
    # Same bytes, new mtime: hashed again (and still fine).
    target = model / "asset" / "Vocos.safetensors"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = verify_files(model, manifest, cache=VerdictCache(cache_file))
    assert third.hashed == ["asset/Vocos.safetensors"]
    # Changed bytes: mtime changes too, so the cache cannot hide the damage.
    _flip_byte(target, 100)
    with pytest.raises(MixvoxError, match="Vocos"):
        verify_files(model, manifest, cache=VerdictCache(cache_file))


def test_force_reverifies_what_the_cache_would_pass(model: Path) -> None:
    load_assets(model)  # remembers every file as good
    target = model / "asset" / "gpt" / "model.safetensors"
    st = target.stat()
    _flip_byte(target, 200)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime as before
    # Same size and mtime, but the inode change time moved: re-hashed (issue 11).
    with pytest.raises(MixvoxError, match=r"asset/gpt/model\.safetensors"):
        load_assets(model)
    with pytest.raises(MixvoxError, match=r"asset/gpt/model\.safetensors"):
        load_assets(model, verify="force")


def test_force_rehashes_remembered_files(model: Path, tmp_path: Path) -> None:
    manifest, _ = assets.load_manifest(model)
    cache_file = tmp_path / "verdicts.json"
    verify_files(model, manifest, cache=VerdictCache(cache_file))
    again = verify_files(model, manifest, force=True, cache=VerdictCache(cache_file))
    assert sorted(again.hashed) == sorted(manifest) and not again.cached


def test_failures_are_not_remembered(model: Path) -> None:
    target = model / "asset" / "Decoder.safetensors"
    good = target.read_bytes()
    st = target.stat()
    _flip_byte(target)
    with pytest.raises(MixvoxError):
        load_assets(model)
    target.write_bytes(good)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert load_assets(model).root == model


def test_corrupt_verdict_cache_is_ignored(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "chattts-verified.json"
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    load_assets(model)
    data = json.loads(cache.read_text())
    assert len(data["verified"]) == len(REQUIRED_FILES)


def test_verify_false_skips_hashing(model: Path) -> None:
    _flip_byte(model / "asset" / "Embed.safetensors")
    assert load_assets(model, verify=False).root == model


def test_pickle_only_directory_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "old"
    (root / "asset").mkdir(parents=True)
    for name in ("GPT.pt", "Decoder.pt", "DVAE.pt", "Vocos.pt"):
        (root / "asset" / name).write_bytes(b"\x80\x04not really")
    with pytest.raises(MixvoxError) as err:
        load_assets(root)
    msg = str(err.value)
    assert "GPT.pt" in msg and "pickle" in msg and "arbitrary code" in msg


def test_stray_pickles_next_to_safetensors_are_ignored(model: Path) -> None:
    (model / "asset" / "GPT.pt").write_bytes(b"\x80\x04junk")
    assert load_assets(model).root == model


def test_manifest_listing_a_pickle_is_refused(model: Path) -> None:
    man = json.loads((model / "sha256.json").read_text())
    man["asset/GPT.pt"] = "a" * 64
    (model / "sha256.json").write_text(json.dumps(man))
    with pytest.raises(MixvoxError, match="pickle"):
        load_assets(model)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"../etc/passwd": "a" * 64}, "inside asset/"),
        ({"/abs/asset/x": "a" * 64}, "inside asset/"),
        ({"asset/Embed.safetensors": "xyz"}, "valid SHA-256"),
        ({"asset/Embed.safetensors": "a" * 64}, "does not list"),
        ([], "non-empty JSON object"),
    ],
)
def test_bad_manifests(bad: object, match: str) -> None:
    with pytest.raises(MixvoxError, match=match):
        parse_manifest(bad, "test")


def test_unreadable_own_manifest(model: Path) -> None:
    (model / "sha256.json").write_text("{")
    with pytest.raises(MixvoxError, match="cannot read the manifest"):
        load_assets(model)


def test_search_order_and_message(model: Path, tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(MixvoxError) as err:
        resolve_model_dir()
    msg = str(err.value)
    assert str(tmp_path / "data" / "chattts") in msg and str(tmp_path / "cache" / "chattts") in msg
    assert "mixvox download" in msg
    monkeypatch.setenv("MIXVOX_CHATTTS_DIR", str(model))
    assert resolve_model_dir() == model
    assert load_assets().root == model
    # An explicit directory is the only candidate: no silent fallback to another copy.
    with pytest.raises(MixvoxError, match="does not exist"):
        load_assets(tmp_path / "nowhere")


def test_pointing_at_asset_itself_gets_a_hint(model: Path) -> None:
    with pytest.raises(MixvoxError, match="holds asset/"):
        load_assets(model / "asset")


def test_data_dir_default_location(model: Path, tmp_path: Path) -> None:
    shutil.copytree(model, tmp_path / "data" / "chattts")
    assert resolve_model_dir() == tmp_path / "data" / "chattts"
