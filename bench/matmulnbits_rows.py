"""Cost of ONNX Runtime's ``MatMulNBits`` by the number of rows (batch), weights in cache.

Why: it tells whether a batched CPU decode step is bandwidth-bound (rows nearly free) or
compute-bound (time grows with the rows). One ``[M, K] x [K, N]`` node with random packed
weights (the GPT's gate|up shape by default: K 768, N 12,288), ``accuracy_level`` 4 (int8
activations, what mixvox's int4/int8 graphs use) and 0 (fp32), 4-bit block 64 and 8-bit block
128; median of 30 runs after 5 warm-ups, ``--threads`` intra-op threads.

Usage: ``python bench/matmulnbits_rows.py [--rows 1,8] [--k 768] [--n 12288] [--threads 2]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def session(k: int, n: int, bits: int, block: int, acc: int, threads: int) -> ort.InferenceSession:
    nb = (k + block - 1) // block
    rng = np.random.default_rng(0)
    b = rng.integers(0, 255, (n, nb, block * bits // 8), dtype=np.uint8)
    sc = rng.random(n * nb, dtype=np.float32) * 0.01
    node = helper.make_node(
        "MatMulNBits", ["A", "B", "S"], ["Y"], domain="com.microsoft",
        K=k, N=n, bits=bits, block_size=block, accuracy_level=acc,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "mnb",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, ["M", k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", n])],
        initializer=[
            helper.make_tensor("B", TensorProto.UINT8, b.shape, b.tobytes(), raw=True),
            helper.make_tensor("S", TensorProto.FLOAT, sc.shape, sc.tobytes(), raw=True),
        ],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), so)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1,8")
    ap.add_argument("--k", type=int, default=768)
    ap.add_argument("--n", type=int, default=12288)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    rows = [int(r) for r in args.rows.split(",")]
    print(f"| bits | block | accuracy_level | {' | '.join(f'{m} row(s) ms' for m in rows)} |")
    print("| --- | --- | --- |" + " --- |" * len(rows))
    for bits, block, acc in [(4, 64, 4), (4, 64, 0), (8, 128, 4)]:
        s = session(args.k, args.n, bits, block, acc, args.threads)
        cells = []
        for m in rows:
            a = np.random.default_rng(1).standard_normal((m, args.k)).astype(np.float32)
            for _ in range(5):
                s.run(None, {"A": a})
            ts = []
            for _ in range(30):
                t = time.perf_counter()
                s.run(None, {"A": a})
                ts.append(time.perf_counter() - t)
            cells.append(f"{np.median(ts) * 1e3:.3f}")
        print(f"| {bits} | {block} | {acc} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
