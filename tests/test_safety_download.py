"""Issue 11: ``mixvox download`` never writes outside --dest, caps sizes, resumes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mixvox.engines.chattts import download as dl
from mixvox.interfaces import MixvoxError

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(TINY / "asset", root / "asset")
    shutil.copyfile(TINY / "sha256.json", root / "sha256.json")
    return root


class FakeHub:
    """The hub as an old client saw it: a listing that includes a traversal name."""

    def __init__(self, source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.source, self.fetched = source, []
        import huggingface_hub

        def old_snapshot(*, local_dir, **kw):  # what huggingface_hub<1 did with the patterns
            evil = Path(local_dir) / "asset" / ".." / ".." / "evil.json"
            evil.write_text("{}")
            for p in source.rglob("*"):
                if p.is_file():
                    dst = Path(local_dir) / p.relative_to(source)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(p, dst)
            return local_dir

        monkeypatch.setattr(huggingface_hub, "snapshot_download", old_snapshot)
        monkeypatch.setattr(dl, "fetch_file", self.fetch)
        monkeypatch.setattr(dl, "remote_size", self.size)
        self.sizes: dict[str, int] = {}

    def fetch(self, repo, rel, revision, dest, force):
        self.fetched.append(rel)
        dst = Path(dest) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.source / rel, dst)
        return dst

    def size(self, repo, rel, revision):
        return self.sizes.get(rel, (self.source / rel).stat().st_size)


def test_nothing_lands_outside_dest(repo: Path, tmp_path: Path, monkeypatch) -> None:
    hub = FakeHub(repo, monkeypatch)
    dest = tmp_path / "a" / "b" / "dest"
    dl.download(dest, repo="me/tiny")
    assert not (tmp_path / "a" / "evil.json").exists()
    assert sorted(hub.fetched) == sorted(
        ["sha256.json", *json.loads((TINY / "sha256.json").read_text())]
    )


def test_a_symlinked_folder_cannot_redirect_a_file(repo: Path, tmp_path: Path, monkeypatch) -> None:
    FakeHub(repo, monkeypatch)
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "asset").symlink_to(outside, target_is_directory=True)
    with pytest.raises(MixvoxError, match="outside"):
        dl.download(dest, repo="me/tiny")
    assert list(outside.iterdir()) == []


def test_a_manifest_naming_a_path_outside_asset_is_refused(
    repo: Path, tmp_path, monkeypatch
) -> None:
    man = json.loads((repo / "sha256.json").read_text())
    man["asset/../../evil.json"] = "0" * 64
    (repo / "sha256.json").write_text(json.dumps(man))
    hub = FakeHub(repo, monkeypatch)
    with pytest.raises(MixvoxError, match="inside asset"):
        dl.download(tmp_path / "dest", repo="me/tiny")
    assert hub.fetched == ["sha256.json"]


def test_size_cap_per_file(repo: Path, tmp_path: Path, monkeypatch) -> None:
    hub = FakeHub(repo, monkeypatch)
    hub.sizes["asset/Embed.safetensors"] = 10 * 1024**3
    with pytest.raises(MixvoxError, match=r"Embed\.safetensors.*limit"):
        dl.download(tmp_path / "dest", repo="me/tiny")
    assert "asset/Embed.safetensors" not in hub.fetched


def test_rerun_resumes_with_the_finished_files(repo: Path, tmp_path: Path, monkeypatch) -> None:
    hub = FakeHub(repo, monkeypatch)
    dest = tmp_path / "dest"
    real = hub.fetch
    calls = {"n": 0}

    def flaky(repo_id, rel, revision, d, force):
        calls["n"] += 1
        if calls["n"] == 4:
            raise OSError("connection reset")
        return real(repo_id, rel, revision, d, force)

    monkeypatch.setattr(dl, "fetch_file", flaky)
    with pytest.raises(MixvoxError, match="connection reset"):
        dl.download(dest, repo="me/tiny")
    done = list(hub.fetched)
    hub.fetched.clear()
    monkeypatch.setattr(dl, "fetch_file", real)
    assets = dl.download(dest, repo="me/tiny")
    assert assets.verified
    again = [r for r in hub.fetched if r != "sha256.json"]
    assert not set(again) & {r for r in done if r != "sha256.json"}


def test_pyproject_pins_a_hub_client_without_the_traversal() -> None:
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert "huggingface_hub>=0.20" not in text and "huggingface_hub>=1.26" in text
