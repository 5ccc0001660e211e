"""``mixvox download`` without the network.

Two stand-ins for the Hugging Face hub, both serving a folder laid out like the 2Noise/ChatTTS
repository (the tiny checkpoint, plus pickled ``.pt`` files and a README that must *not* be
fetched):

* a minimal hub HTTP server on 127.0.0.1 (``HF_ENDPOINT``): the real ``huggingface_hub``
  client runs unchanged -- repo info, tree listing, HEAD + GET of each file, ``allow_patterns``
  filtering, writing into ``local_dir``. Not exercised: authentication, xet/LFS CDN redirects,
  resumed downloads, the real hub's rate limits and error pages;
* a monkeypatched ``snapshot_download`` for the failure paths (network errors, tampering).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from click.testing import CliRunner

from mixvox.engines.chattts import download as dl
from mixvox.engines.chattts.assets import OFFICIAL_SHA256, load_assets
from mixvox.interfaces import MixvoxError

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A folder shaped like the hub repository (tiny weights, its manifest at the top)."""
    root = tmp_path / "repo"
    shutil.copytree(TINY / "asset", root / "asset")
    shutil.copyfile(TINY / "sha256.json", root / "sha256.json")
    (root / "asset" / "GPT.pt").write_bytes(b"\x80\x04pickle that must not be fetched")
    (root / "config" / "decoder.yaml").parent.mkdir()
    (root / "config" / "decoder.yaml").write_text("dim: 1\n")
    (root / "README.md").write_text("# ChatTTS\n")
    return root


class _Hub(http.server.BaseHTTPRequestHandler):
    root: Path
    repo_id: str
    requests: list[str]

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def _files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if p.is_file())

    def _json(self, obj: object) -> None:
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self, head: bool) -> None:
        path = unquote(urlparse(self.path).path)
        self.requests.append(f"{'HEAD' if head else 'GET'} {path}")
        api = f"/api/models/{self.repo_id}/"
        resolve = f"/{self.repo_id}/resolve/"
        if path.startswith(api + "revision/"):
            rels = [p.relative_to(self.root).as_posix() for p in self._files()]
            return self._json(
                {"id": self.repo_id, "sha": COMMIT, "siblings": [{"rfilename": r} for r in rels]}
            )
        if path.startswith(api + "tree/"):
            entries = []
            for p in self._files():
                data = p.read_bytes()
                entries.append(
                    {
                        "type": "file",
                        "path": p.relative_to(self.root).as_posix(),
                        "size": len(data),
                        "oid": hashlib.sha1(data).hexdigest(),
                    }
                )
            return self._json(entries)
        if path.startswith(resolve):
            rel = path[len(resolve) :].split("/", 1)[1]
            f = self.root / rel
            if not f.is_file():
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.end_headers()
                return
            data = f.read_bytes()
            self.send_response(200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not head:
                self.wfile.write(data)
            return
        self.send_response(404)
        self.end_headers()

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)


@pytest.fixture
def hub(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str]]]:
    repo_id = "test/ChatTTS-tiny"
    requests: list[str] = []
    handler = type("Hub", (_Hub,), {"root": repo, "repo_id": repo_id, "requests": requests})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "ENDPOINT", endpoint)
    monkeypatch.setattr(
        hc, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}"
    )
    try:
        yield repo_id, requests
    finally:
        server.shutdown()
        server.server_close()


def test_download_over_http_from_a_local_hub(hub, tmp_path: Path) -> None:
    repo_id, requests = hub
    dest = tmp_path / "models" / "chattts"
    assets = dl.download(dest, repo=repo_id)
    assert assets.root == dest
    got = sorted(
        p.relative_to(dest).as_posix()
        for p in dest.rglob("*")
        if p.is_file() and ".cache" not in p.parts
    )
    expected = sorted([*json.loads((TINY / "sha256.json").read_text()), "sha256.json"])
    assert got == expected  # json + safetensors (+ the repo's manifest); no .pt, yaml, README
    fetched = [r for r in requests if r.startswith("GET") and "/resolve/" in r]
    assert not any(r.endswith((".pt", ".yaml", "README.md")) for r in fetched)
    assert any(r.endswith("asset/gpt/model.safetensors") for r in fetched)
    assert load_assets(dest).manifest_source == str(dest / "sha256.json")


def test_cli_download_then_engine_check(hub, tmp_path: Path, monkeypatch) -> None:
    from mixvox.engines.chattts import plugin
    from mixvox.engines.chattts.cli import download_cmd

    repo_id, _ = hub
    assert plugin.check() is not None
    res = CliRunner().invoke(download_cmd, ["--repo", repo_id])
    assert res.exit_code == 0, res.output
    assert "verified" in res.output
    # the default destination is where the engine looks
    assert (tmp_path / "data" / "chattts" / "asset" / "Vocos.safetensors").is_file()
    assert plugin.check() is None


def test_tampered_file_on_the_hub_is_caught(hub, repo: Path, tmp_path: Path) -> None:
    repo_id, _ = hub
    f = repo / "asset" / "Vocos.safetensors"
    data = bytearray(f.read_bytes())
    data[-1] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.raises(MixvoxError, match=r"asset/Vocos\.safetensors"):
        dl.download(tmp_path / "dest", repo=repo_id)


# -- the failure paths, with the hub client replaced ---------------------------------------


def _fake_hub(source: Path, calls: list[dict], monkeypatch, sizes: dict[str, int] | None = None):
    """Serve ``source`` through fakes of the two hub calls download() makes."""

    def fetch(repo, rel, revision, dest, force):
        calls.append({"repo_id": repo, "revision": revision, "file": rel})
        src = source / rel
        if not src.is_file():
            raise FileNotFoundError(f"404 {rel}")
        dst = Path(dest) / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        return dst

    def size(repo, rel, revision):
        if sizes and rel in sizes:
            return sizes[rel]
        src = source / rel
        return src.stat().st_size if src.is_file() else None

    monkeypatch.setattr(dl, "fetch_file", fetch)
    monkeypatch.setattr(dl, "remote_size", size)


def test_official_repo_is_checked_against_pinned_hashes(repo: Path, tmp_path, monkeypatch) -> None:
    calls: list[dict] = []
    _fake_hub(repo, calls, monkeypatch)
    dest = tmp_path / "dest"
    (dest).mkdir()
    (dest / "sha256.json").write_text((TINY / "sha256.json").read_text())  # planted manifest
    with pytest.raises(MixvoxError) as err:
        dl.download(dest, revision="v1")
    # the tiny weights are not the official ones: the pinned hashes (not the planted
    # manifest, which was removed) judged them
    assert "official" in str(err.value)
    assert not (dest / "sha256.json").exists()
    assert {c["repo_id"] for c in calls} == {"2Noise/ChatTTS"}
    assert {c["revision"] for c in calls} == {"v1"}
    # exactly the pinned file names, no globs, no repo manifest
    assert sorted(c["file"] for c in calls) == sorted(OFFICIAL_SHA256)
    assert not (dest / "asset" / "GPT.pt").exists()


def test_explicit_manifest_for_another_repo(repo: Path, tmp_path, monkeypatch) -> None:
    _fake_hub(repo, [], monkeypatch)
    manifest = json.loads((TINY / "sha256.json").read_text())
    assets = dl.download(tmp_path / "d", repo="me/finetune", manifest=manifest)
    assert assets.manifest == manifest
    bad = dict(manifest, **{"asset/Embed.safetensors": OFFICIAL_SHA256["asset/Embed.safetensors"]})
    with pytest.raises(MixvoxError, match=r"asset/Embed\.safetensors"):
        dl.download(tmp_path / "e", repo="me/finetune", manifest=bad)


def test_network_failure_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    def broken(*a, **kw):
        raise OSError("connection refused")

    monkeypatch.setattr(dl, "remote_size", broken)
    with pytest.raises(MixvoxError, match="download of 2Noise/ChatTTS failed.*connection refused"):
        dl.download(tmp_path / "x")
