"""Convert the g2pM wheel's polyphone BiLSTM into ``frontends/zh/data/polyphone_bilstm.npz``.

Usage: ``python bench/convert_g2pm.py G2PM_WHEEL_OR_DIR [--chars POLYPHONIC_CHARS.txt] [--out PATH]``
(``pip download g2pM==0.1.2.5 --no-deps`` gives the wheel; the character list is g2pW's
``cpp_dataset/POLYPHONIC_CHARS.txt``, Apache-2.0, copied in ``../shared/testdata/cpp_polyphone_dev``).

Why: g2pM (kakaobrain, Apache-2.0, trained on the CPP train split) ships its weights and
vocabularies as Python pickles, and mixvox loads no pickle at run time. This script reads
them once, through an unpickler that admits nothing but plain numpy arrays, dicts, strings and
numbers, and writes one ``.npz`` that ``numpy.load(allow_pickle=False)`` reads: the float32
weights, the character vocabulary (``vocab``, index order) and the reading classes
(``classes``, index order). g2pM's ``digest_cedict.pkl`` (derived from CC-CEDICT, CC BY-SA 4.0)
is NOT read or shipped. The candidate readings of each character are the CPP label space as
g2pW lists it (``char<TAB>pinyin``, 623 characters): the model only decides between readings it
was trained to tell apart, and never for a character CPP does not treat as a polyphone.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import pickle
import sys
import zipfile
from pathlib import Path

import numpy as np

_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("collections", "OrderedDict"),
}
_FILES = ("np_ckpt.pkl", "char2idx.pkl", "class2idx.pkl")
_KEYS = {
    "embedding.weight": "embedding",
    "lstm.weight_ih_l0": "w_ih_fw",
    "lstm.weight_hh_l0": "w_hh_fw",
    "lstm.bias_ih_l0": "b_ih_fw",
    "lstm.bias_hh_l0": "b_hh_fw",
    "lstm.weight_ih_l0_reverse": "w_ih_bw",
    "lstm.weight_hh_l0_reverse": "w_hh_bw",
    "lstm.bias_ih_l0_reverse": "b_ih_bw",
    "lstm.bias_hh_l0_reverse": "b_hh_bw",
    "logit_layer.0.weight": "w_fc1",
    "logit_layer.0.bias": "b_fc1",
    "logit_layer.2.weight": "w_fc2",
    "logit_layer.2.bias": "b_fc2",
}


class _ArraysOnly(pickle.Unpickler):
    """Refuses every global except the few numpy needs to rebuild a plain ndarray."""

    def find_class(self, module: str, name: str):  # type: ignore[no-untyped-def]
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def _read(src: Path, name: str) -> bytes:
    if src.is_dir():
        return (src / "g2pM" / name).read_bytes()
    with zipfile.ZipFile(src) as z:
        return z.read(f"g2pM/{name}")


def _index_list(mapping: object, what: str) -> list[str]:
    if not isinstance(mapping, dict) or not all(
        isinstance(k, str) and isinstance(v, int) for k, v in mapping.items()
    ):
        raise SystemExit(f"{what}: not a str -> int mapping")
    out = [""] * len(mapping)
    for k, v in mapping.items():
        out[v] = k
    if "" in out:
        raise SystemExit(f"{what}: indices are not 0..n-1")
    return out


def convert(src: Path, out: Path, chars: Path) -> None:
    raw = {n: _read(src, n) for n in _FILES}
    state = _ArraysOnly(io.BytesIO(raw["np_ckpt.pkl"])).load()
    vocab = _index_list(_ArraysOnly(io.BytesIO(raw["char2idx.pkl"])).load(), "char2idx")
    classes = _index_list(_ArraysOnly(io.BytesIO(raw["class2idx.pkl"])).load(), "class2idx")
    arrays: dict[str, np.ndarray] = {}
    for k, new in _KEYS.items():
        a = state[k]
        if not isinstance(a, np.ndarray) or a.dtype != np.float32:
            raise SystemExit(f"{k}: not a float32 array")
        arrays[new] = a
    pairs = [ln.split("\t") for ln in chars.read_text("utf-8").splitlines() if ln.strip()]
    known = set(classes)
    bad = [p for p in pairs if len(p) != 2 or p[1].strip() not in known]
    if bad:
        raise SystemExit(f"{chars}: readings not among the model's classes: {bad[:5]}")
    arrays["poly_chars"] = np.array([p[0] for p in pairs])
    arrays["poly_readings"] = np.array([p[1].strip() for p in pairs])
    arrays["vocab"] = np.array(vocab)
    arrays["classes"] = np.array(classes)
    sources = ", ".join(f"{n} sha256 {hashlib.sha256(raw[n]).hexdigest()[:16]}" for n in _FILES)
    arrays["source"] = np.array(f"g2pM 0.1.2.5 (Apache-2.0, kakaobrain/g2pM): {sources}")
    np.savez(out, **arrays)  # stored, not deflated: float weights do not compress, reads faster
    print(f"wrote {out} ({out.stat().st_size} bytes): {len(vocab)} chars, {len(classes)} classes")
    onnx_out = out.with_suffix(".onnx")
    onnx_out.write_bytes(lstm_onnx(arrays))
    print(f"wrote {onnx_out} ({onnx_out.stat().st_size} bytes): embedding + BiLSTM")


def lstm_onnx(a: dict[str, np.ndarray]) -> bytes:
    """The embedding lookup and the BiLSTM as one ONNX graph (ids ``[seq]`` -> ``[seq, 2H]``).

    ONNX Runtime steps the recurrence in native code (several times faster than a numpy loop
    on short sentences); the small classifier stays in numpy.
    """
    from onnx import TensorProto, helper, numpy_helper

    hid = a["w_hh_fw"].shape[1]

    def iofc(w: np.ndarray) -> np.ndarray:  # PyTorch gate order i f g o -> ONNX i o f c
        i, f, g, o = np.split(w, 4, axis=0)
        return np.concatenate([i, o, f, g], 0)

    w = np.stack([iofc(a["w_ih_fw"]), iofc(a["w_ih_bw"])])
    r = np.stack([iofc(a["w_hh_fw"]), iofc(a["w_hh_bw"])])
    b = np.stack(
        [np.concatenate([iofc(a[f"b_ih_{d}"]), iofc(a[f"b_hh_{d}"])]) for d in ("fw", "bw")]
    )
    inits = [
        numpy_helper.from_array(a["embedding"], "emb"),
        numpy_helper.from_array(w, "W"),
        numpy_helper.from_array(r, "R"),
        numpy_helper.from_array(b, "B"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([-1, 2 * hid], np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Unsqueeze", ["ids", "axis1"], ["ids2"]),  # [seq, batch=1]
        helper.make_node("Gather", ["emb", "ids2"], ["x"]),
        helper.make_node(
            "LSTM", ["x", "W", "R", "B"], ["y"], direction="bidirectional", hidden_size=hid
        ),  # fmt: skip
        helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),  # [seq, 1, 2, H]
        helper.make_node("Reshape", ["yt", "shape"], ["h"]),
    ]
    graph = helper.make_graph(
        nodes, "polyphone_bilstm",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["seq"])],
        [helper.make_tensor_value_info("h", TensorProto.FLOAT, ["seq", 2 * hid])],
        inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="g2pM wheel (.whl) or unpacked folder")
    default = Path(__file__).resolve().parents[1] / "frontends/zh/data/polyphone_bilstm.npz"
    ap.add_argument("--out", type=Path, default=default)
    shared = Path(__file__).resolve().parents[2] / "shared/testdata/cpp_polyphone_dev"
    ap.add_argument("--chars", type=Path, default=shared / "g2pw_POLYPHONIC_CHARS.txt")
    args = ap.parse_args(argv)
    convert(args.src, args.out, args.chars)
    return 0


if __name__ == "__main__":
    sys.exit(main())
