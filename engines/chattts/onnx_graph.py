"""A small torch-free ONNX graph builder and an on-disk cache of built graphs.

Why build graphs by hand instead of ``torch.onnx.export``: the CPU path must not need torch at
run time, nor to produce its graphs. The models are small stacks of standard layers (Llama
blocks, ConvNeXt blocks), so writing them with ``onnx.helper`` is short, and every tensor name
is ours (stable names make IOBinding and TensorRT profiles easy).

Graphs derived from an encrypted model (:func:`~.assets.is_secret` of a key part) are never
written: they are built in memory, handed to the session through :func:`graph_source`, and
rebuilt at the next start. Their weights are plaintext, and the cache dir is not encrypted.

Cache layout (``cache_dir/<name>-<key>/``): ``model.onnx`` (+ ``model.onnx.data`` for external
weights) and ``manifest.json`` with the key parts and the SHA-256 of the graph file. The key is
a hash of the source weights' SHA-256, the builder version and the build options, so new
weights, a new builder or other options produce a new graph and a stale one is never used.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mixvox.engines.chattts.assets import (
    VerdictCache,
    is_in_memory,
    is_secret,
    register_plaintext,
    sha256_file,
    take_plaintext,
    verdict_key,
)
from mixvox.engines.chattts.assets import cache_dir as default_cache_dir

#: ONNX opset the builders target (LayerNormalization needs 17; Gelu needs 20).
OPSET = 17

_DTYPES = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.uint8): TensorProto.UINT8,
}


def onnx_dtype(dtype: Any) -> int:
    return _DTYPES[np.dtype(dtype)]


class GraphBuilder:
    """Accumulates nodes, initializers, inputs and outputs of one ONNX graph.

    ``op(type, *inputs, **attrs)`` adds a node and returns its (first) output name, so model
    code reads like straight-line math::

        g = GraphBuilder("gpt")
        x = g.input("x", np.float32, ["batch", "seq", 768])
        w = g.const("w", weight)
        y = g.op("MatMul", x, w)
        g.output(y, "y", np.float32, ["batch", "seq", 768])
        model = g.build()
    """

    def __init__(self, name: str, opset: int = OPSET) -> None:
        self.name = name
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._names: set[str] = set()
        self._consts: dict[tuple[Any, ...], str] = {}
        self._n = 0

    def fresh(self, hint: str) -> str:
        self._n += 1
        name = f"{hint}_{self._n}"
        while name in self._names:
            self._n += 1
            name = f"{hint}_{self._n}"
        self._names.add(name)
        return name

    def input(self, name: str, dtype: Any, shape: Sequence[int | str | None]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, onnx_dtype(dtype), list(shape)))
        self._names.add(name)
        return name

    def output(self, value: str, name: str, dtype: Any, shape: Sequence[int | str | None]) -> str:
        if value != name:
            self.nodes.append(helper.make_node("Identity", [value], [name]))
        self.outputs.append(helper.make_tensor_value_info(name, onnx_dtype(dtype), list(shape)))
        return name

    def const(self, hint: str, array: np.ndarray | float | int | Sequence[Any]) -> str:
        """Add an initializer (weights or small constants). Small constants are deduplicated.

        The shape is kept as given: a 0-d array (or a Python/numpy scalar) stays 0-d, which
        ``Range`` and index-dropping ``Gather`` need; ``[x]`` is a shape-[1] tensor.
        """
        arr = np.asarray(array)
        if arr.size <= 16:
            key = (arr.dtype.str, arr.shape, arr.tobytes())
            if key in self._consts:
                return self._consts[key]
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(np.require(arr, requirements="C"), name))
        if arr.size <= 16:
            self._consts[key] = name
        return name

    def op(self, op_type: str, *inputs: str, n_out: int = 1, name: str | None = None, **attrs: Any):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        if name is not None and n_out == 1:
            outs = [name]
            self._names.add(name)
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def build(self, doc: str = "") -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", self.opset)],
            producer_name="mixvox",
            doc_string=doc,
        )
        model.ir_version = min(model.ir_version, 10)  # readable by older onnxruntime releases
        return model


def cache_key(parts: dict[str, Any]) -> str:
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _intact(path: Path, expected: Any, verdicts: VerdictCache) -> bool:
    """True when ``path`` has the SHA-256 ``expected``.

    A match is remembered per (path, size, mtime), as for the model weights (assets.py), so a
    cached graph (the GPT stack alone is ~850 MB) is hashed once, not at every start; a
    truncated or rewritten file changes size or mtime and is hashed (and rebuilt) again.
    """
    if not isinstance(expected, str) or not path.is_file():
        return False
    key = verdict_key(path, path.stat(), expected)
    if verdicts.hit(key):
        return True
    if sha256_file(path) != expected:
        return False
    verdicts.add(key)
    verdicts.save()
    return True


def graph_source(path: str | os.PathLike[str]) -> str | bytes:
    """What to give ``onnxruntime.InferenceSession``: the bytes of a graph that was built in
    memory (encrypted model; taken, so they are freed with the session), else the path."""
    data = take_plaintext(Path(path))
    return data if data is not None else str(path)


def _flat(parts: Any) -> list[Any]:
    if isinstance(parts, dict):
        return [x for v in parts.values() for x in _flat(v)]
    if isinstance(parts, list | tuple):
        return [x for v in parts for x in _flat(v)]
    return [parts]


def forget_graph_verdicts(cache_dir: str | os.PathLike[str] | None = None) -> None:
    """Forget every remembered "this graph is intact" verdict (``--reverify``): the next use of
    each cached graph hashes it again."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "onnx"
    try:
        (root / "verified.json").unlink()
    except FileNotFoundError:
        pass


def graph_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a graph file; for one made by :func:`cached_graph`, its remembered hash.

    Keys derived from a cached graph (TensorRT engines) then cost no second read of it.
    """
    p = Path(path)
    try:
        expected = json.loads((p.parent / "manifest.json").read_text()).get("sha256")
        if _intact(p, expected, VerdictCache(p.parent.parent / "verified.json")):
            return expected
    except (OSError, ValueError, AttributeError):
        pass
    return sha256_file(p)


def cached_graph(
    name: str,
    key_parts: dict[str, Any],
    build: Callable[[], onnx.ModelProto],
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    external_data: bool | None = None,
) -> Path:
    """Return the path of graph ``name`` for ``key_parts``, building and caching it if needed.

    The cached file is checked against the SHA-256 in its manifest before it is returned
    (a remembered check while its size and mtime stay the same); a mismatch (a truncated or
    edited file) rebuilds it. Writes are atomic (a temporary folder renamed into place), so
    concurrent processes never see half a graph.
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir() / "onnx"
    key = cache_key({"name": name, **key_parts})
    folder = root / f"{name}-{key}"
    manifest = folder / "manifest.json"
    graph_path = folder / "model.onnx"
    if is_secret(_flat(key_parts)):  # from an encrypted model: never on disk
        if not is_in_memory(graph_path):
            data = build().SerializeToString()
            register_plaintext(graph_path, data, hashlib.sha256(data).hexdigest(), secret=False)
        return graph_path
    verdicts = VerdictCache(root / "verified.json")
    if manifest.is_file() and graph_path.is_file():
        try:
            meta = json.loads(manifest.read_text())
            data_path = folder / "model.onnx.data"
            data_ok = (
                _intact(data_path, meta.get("data_sha256"), verdicts)
                if data_path.is_file() or "data_sha256" in meta
                else True
            )
            if data_ok and _intact(graph_path, meta.get("sha256"), verdicts):
                return graph_path
        except (OSError, ValueError):
            pass
        shutil.rmtree(folder, ignore_errors=True)

    model = build()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        size = model.ByteSize()
        use_external = external_data if external_data is not None else size > 1_800_000_000
        tmp_graph = tmp / "model.onnx"
        if use_external:
            onnx.save_model(
                model,
                str(tmp_graph),
                save_as_external_data=True,
                all_tensors_to_one_file=True,
                location="model.onnx.data",
            )
        else:
            onnx.save_model(model, str(tmp_graph))
        meta = {"name": name, "key": key, "parts": key_parts, "sha256": sha256_file(tmp_graph)}
        if use_external:  # the weights live here: verified like the graph itself
            meta["data_sha256"] = sha256_file(tmp / "model.onnx.data")
        (tmp / "manifest.json").write_text(json.dumps(meta, indent=2, default=str))
        try:
            os.replace(tmp, folder)
        except OSError:  # another process won the race: use its copy
            shutil.rmtree(tmp, ignore_errors=True)
        else:  # just hashed: the next start need not hash it again (a rename keeps mtime)
            verdicts.add(verdict_key(graph_path, graph_path.stat(), meta["sha256"]))
            verdicts.save()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return graph_path
