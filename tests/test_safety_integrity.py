"""Issue 11, integrity: in-place edits are always re-hashed, graphs are keyed by the bytes
they were built from, --reverify re-hashes cached graphs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest

from mixvox.engines.chattts import onnx_graph
from mixvox.engines.chattts.assets import VerdictCache, load_assets, read_asset
from mixvox.engines.chattts.audio.loader import load_audio_models
from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph
from mixvox.interfaces import MixvoxError

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))


@pytest.fixture
def model(tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(TINY / "asset", dst / "asset")
    shutil.copy(TINY / "sha256.json", dst / "sha256.json")
    return dst


def edit_in_place(path: Path, offset: int = -64) -> bytes:
    """Flip one byte, keep the size and restore mtime (what a careful attacker does)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    old = bytes(data)
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    return old


def restore(path: Path, old: bytes) -> None:
    st = path.stat()
    path.write_bytes(old)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_in_place_edit_with_size_and_mtime_restored_is_rehashed(model: Path) -> None:
    load_assets(model)  # remembers the verdicts
    edit_in_place(model / "asset" / "Vocos.safetensors")
    with pytest.raises(MixvoxError, match="Vocos.safetensors"):
        load_assets(model)


def test_verdict_key_covers_device_inode_and_ctime(model: Path) -> None:
    p = model / "asset" / "Vocos.safetensors"
    st = p.stat()
    from types import SimpleNamespace

    from mixvox.engines.chattts.assets import verdict_key

    names = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")
    same = SimpleNamespace(**{n: getattr(st, n) for n in names})
    key = verdict_key(p, same, "0" * 64)  # type: ignore[arg-type]
    assert key == verdict_key(p, st, "0" * 64)
    for name in ("st_dev", "st_ino", "st_ctime_ns"):  # what size + mtime cannot see
        other = SimpleNamespace(**{**vars(same), name: getattr(st, name) + 1})
        assert verdict_key(p, other, "0" * 64) != key, name  # type: ignore[arg-type]


def tiny_graph() -> onnx.ModelProto:
    g = GraphBuilder("t")
    x = g.input("x", np.float32, [4])
    w = g.const("w", np.arange(4096, dtype=np.float32))
    y = g.op("Add", x, g.op("ReduceSum", w, keepdims=0))
    g.output(y, "y", np.float32, [4])
    return g.build()


def test_tampered_cached_graph_is_rebuilt_not_loaded(tmp_path: Path) -> None:
    root = tmp_path / "graphs"
    builds: list[int] = []

    def build() -> onnx.ModelProto:
        builds.append(1)
        return tiny_graph()

    p = cached_graph("t", {"weights": "abc"}, build, root)
    good = p.read_bytes()
    assert cached_graph("t", {"weights": "abc"}, build, root) == p and len(builds) == 1
    edit_in_place(p, offset=len(good) // 2)
    p2 = cached_graph("t", {"weights": "abc"}, build, root)
    assert len(builds) == 2 and p2.read_bytes() == good


def test_reverify_rehashes_cached_graphs(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "graphs"
    p = cached_graph("t", {"weights": "abc"}, tiny_graph, root)
    hashed: list[Path] = []
    real = onnx_graph.sha256_file
    monkeypatch.setattr(onnx_graph, "sha256_file", lambda q: hashed.append(Path(q)) or real(q))
    cached_graph("t", {"weights": "abc"}, tiny_graph, root)
    assert hashed == []  # remembered
    onnx_graph.forget_graph_verdicts(root)
    cached_graph("t", {"weights": "abc"}, tiny_graph, root)
    assert hashed == [p]


def test_engine_reverify_forgets_graph_verdicts(model: Path, tmp_path: Path) -> None:
    from mixvox.engines.chattts.engine import ChatTTSEngine

    cache = tmp_path / "cache" / "onnx"
    ChatTTSEngine(model, cache_dir=cache).close()
    verdicts = VerdictCache(cache / "verified.json")
    assert verdicts._load()
    ChatTTSEngine(model, cache_dir=cache, verify="force").close()
    # every graph was hashed again: the file holds only verdicts made after the forget
    after = VerdictCache(cache / "verified.json")._load()
    assert after and min(after.values()) > max(verdicts._load().values())


def test_graph_is_keyed_by_the_bytes_read_not_the_claimed_hash(model: Path, tmp_path: Path) -> None:
    """Weights tampered while a (fooled) verification vouched for them: the graph built from
    them must not be the one used once the weights are fixed."""
    cache = tmp_path / "graphs"
    asset = model / "asset"
    claimed = json.loads((model / "sha256.json").read_text())["asset/Vocos.safetensors"]
    vocos = asset / "Vocos.safetensors"
    old = edit_in_place(vocos, offset=-8)
    bad = load_audio_models(asset, cache_dir=cache, sha256={"Vocos.safetensors": claimed})
    restore(vocos, old)
    good = load_audio_models(asset, cache_dir=cache, sha256={"Vocos.safetensors": claimed})
    assert bad.backend.graph_paths["vocos"] != good.backend.graph_paths["vocos"]
    assert good.vocos_weights.sha256 == claimed


def test_read_asset_returns_the_hash_of_what_it_read(model: Path) -> None:
    p = model / "asset" / "Vocos.safetensors"
    data, digest = read_asset(p)
    import hashlib

    assert digest == hashlib.sha256(data).hexdigest() and data == p.read_bytes()


def test_external_graph_weights_are_verified_too(tmp_path: Path) -> None:
    root = tmp_path / "graphs"
    p = cached_graph("t", {"weights": "x"}, tiny_graph, root, external_data=True)
    data = p.parent / "model.onnx.data"
    good = data.read_bytes()
    assert json.loads((p.parent / "manifest.json").read_text())["data_sha256"]
    edit_in_place(data, offset=100)
    p2 = cached_graph("t", {"weights": "x"}, tiny_graph, root, external_data=True)
    assert (p2.parent / "model.onnx.data").read_bytes() == good
