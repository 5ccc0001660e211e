"""Start-up work the clean-up removed: weights and cached graphs are not hashed again.

``load_assets`` has already verified (or remembered verifying) every weight file, so the
loaders take those hashes instead of re-reading ~1 GB; a cached ONNX graph is hashed once per
(path, size, mtime), like the weights. Plus the graph builder's 0-d constants.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"


def test_graph_builder_keeps_scalars_0d() -> None:
    from onnx import numpy_helper

    from mixvox.engines.chattts.onnx_graph import GraphBuilder

    g = GraphBuilder("t")
    names = [g.const("s", np.float32(0.5)), g.const("v", np.array([1], np.int64))]
    w = g.const("w", np.arange(6, dtype=np.float32).reshape(2, 3).T)  # not C-contiguous
    shapes = {t.name: numpy_helper.to_array(t) for t in g.inits}
    assert shapes[names[0]].shape == () and shapes[names[1]].shape == (1,)
    assert (shapes[w] == np.arange(6, dtype=np.float32).reshape(2, 3).T).all()


def _no_hashing(*_a, **_k):
    raise AssertionError("weights hashed again after verification")


@pytest.mark.skipif(not TINY.is_dir(), reason="tiny ChatTTS checkpoint not in ../shared")
def test_audio_loader_takes_verified_hashes(monkeypatch, tmp_path) -> None:
    from mixvox.engines.chattts.audio import loader, vocos
    from mixvox.engines.chattts.audio import weights as decoder

    names = ("Decoder.safetensors", "DVAE.safetensors", "Vocos.safetensors")
    given = {n: f"{i}" * 64 for i, n in enumerate(names)}
    monkeypatch.setattr(decoder, "sha256_file", _no_hashing)
    monkeypatch.setattr(vocos, "sha256_file", _no_hashing)
    m = loader.load_audio_models(TINY / "asset", backend="onnx", cache_dir=tmp_path, sha256=given)
    assert (m.decoder_weights.sha256, m.dvae_weights.sha256, m.vocos_weights.sha256) == tuple(
        given.values()
    )
    # a file without a given hash is hashed by the loader (the hashes key the graph cache)
    partial = {n: given[n] for n in names[:2]}
    with pytest.raises(AssertionError, match="hashed again"):
        loader.load_audio_models(TINY / "asset", cache_dir=tmp_path, sha256=partial)


@pytest.mark.skipif(not TINY.is_dir(), reason="tiny ChatTTS checkpoint not in ../shared")
def test_engine_does_not_rehash_verified_weights(monkeypatch, tmp_path) -> None:
    from mixvox.engines.chattts import assets
    from mixvox.engines.chattts.audio import vocos
    from mixvox.engines.chattts.audio import weights as decoder
    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.engines.chattts.gpt import weights as gpt

    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("MIXVOX_CHATTTS_DIR", raising=False)
    for mod, name in ((decoder, "sha256_file"), (vocos, "sha256_file"), (gpt, "weights_sha256")):
        monkeypatch.setattr(mod, name, _no_hashing)
    eng = ChatTTSEngine(TINY)
    try:
        manifest = assets.load_assets(TINY).manifest
        assert eng.audio.vocos_weights.sha256 == manifest["asset/Vocos.safetensors"]
        assert eng.audio.decoder_weights.sha256 == manifest["asset/Decoder.safetensors"]
        assert eng.audio.dvae_weights.sha256 == manifest["asset/DVAE.safetensors"]
    finally:
        eng.close()


def test_cached_graph_is_hashed_once_until_it_changes(monkeypatch, tmp_path) -> None:
    import onnx

    from mixvox.engines.chattts import onnx_graph
    from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph

    builds = []

    def build():
        builds.append(1)
        g = GraphBuilder("t")
        x = g.input("x", np.float32, [2])
        g.output(g.op("Mul", x, g.const("two", np.float32(2.0))), "y", np.float32, [2])
        return g.build()

    hashed = []
    real_hash = onnx_graph.sha256_file
    monkeypatch.setattr(onnx_graph, "sha256_file", lambda p: hashed.append(p) or real_hash(p))
    path = cached_graph("t", {"v": 1}, build, tmp_path)
    assert (len(builds), len(hashed)) == (1, 1)  # hashed once, for the manifest
    assert cached_graph("t", {"v": 1}, build, tmp_path) == path
    assert (len(builds), len(hashed)) == (1, 1)  # remembered: neither rebuilt nor re-hashed

    # a rewrite (same size, new mtime) is hashed again; the same bytes are accepted
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert cached_graph("t", {"v": 1}, build, tmp_path) == path
    assert (len(builds), len(hashed)) == (1, 2)

    # a damaged file (other bytes) fails the check and is rebuilt
    path.write_bytes(path.read_bytes()[:-4] + b"\0\0\0\0")
    assert cached_graph("t", {"v": 1}, build, tmp_path) == path
    assert len(builds) == 2
    assert [n.op_type for n in onnx.load(str(path)).graph.node] == ["Mul", "Identity"]


def test_graph_sha256_reuses_the_cached_graphs_check(monkeypatch, tmp_path) -> None:
    from mixvox.engines.chattts import onnx_graph
    from mixvox.engines.chattts.assets import sha256_file
    from mixvox.engines.chattts.onnx_graph import GraphBuilder, cached_graph, graph_sha256

    def build():
        g = GraphBuilder("t")
        x = g.input("x", np.float32, [1])
        g.output(x, "y", np.float32, [1])
        return g.build()

    path = cached_graph("t", {}, build, tmp_path)
    expected = sha256_file(path)
    other = tmp_path / "loose.onnx"
    other.write_bytes(path.read_bytes())
    calls = []
    monkeypatch.setattr(onnx_graph, "sha256_file", lambda p: calls.append(p) or sha256_file(p))
    assert graph_sha256(path) == expected and calls == []  # remembered from the build
    assert graph_sha256(other) == expected and calls == [other]  # no manifest: hashed
