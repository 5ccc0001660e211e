"""Fine-tune the polyphone BiLSTM on the EVEN lines of CPP dev (never the odd ones).

Usage (torch is needed here only; mixvox itself runs the result on numpy/ONNX Runtime)::

    nice python bench/finetune_polyphone.py --out DIR [--epochs 6] [--lr 1e-3]

Why: the shipped weights are g2pM's (trained by its authors on the CPP train split, which is
not in ``../shared``). The dev split is all the public CPP data we have; its odd lines are
our held-out measure, so only even lines may be learnt from. Of those, every second (even
line numbers 0, 4, 8, ...: ``--val-every 2``) is kept out of training for early stopping; the
rest train. (Every fifth, ``--val-every 5``, is too small a check: its 563 targets rose by 2
while the model lost 23 of 2,815 on the odd lines; the half split, 1,407 targets, shows the
loss.) The loss is the cross-entropy over the character's candidate readings only (what
:class:`mixvox.frontends.zh.polymodel.PolyphoneModel` chooses between), plus an L2 pull
towards the original weights (``--anchor``), so that a few thousand sentences adjust the
model rather than overwrite what it learnt from the train split.

The epoch kept is the one with the best validation accuracy (ties: lower validation loss); if
no epoch beats the original weights on validation, the original weights are written unchanged
(the fallback; on 2026-12-01 that is what happened, see BENCHMARKS.md). Writes
``polyphone_bilstm.npz`` and ``.onnx`` (same members and graph as ``bench/convert_g2pm.py``)
into ``--out``; copy them into ``frontends/zh/data`` to ship. Deterministic (seeded, one
thread); about a minute of CPU; never run by tests or CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_zh as R
from convert_g2pm import lstm_onnx

from mixvox.textutil import is_han

_DATA = Path(__file__).resolve().parents[1] / "frontends/zh/data/polyphone_bilstm.npz"
_BOS, _EOS, _UNK = "시", "끝", "<UNK>"


def encode(
    cases: list[tuple[str, int, str]], a: dict[str, np.ndarray]
) -> list[tuple[list[int], int, list[int], int]]:
    """``(ids, target position in ids, candidate classes, gold index among candidates)``.

    The text is filtered as :class:`~mixvox.frontends.zh.polymodel.SentenceReadings` filters
    it at run time (vocabulary characters and Han only), so training sees what inference sees.
    Targets the model does not decide (one candidate, or a gold label outside the candidates)
    are left out.
    """
    vocab = {str(c): i for i, c in enumerate(a["vocab"])}
    known = {c for c in vocab if len(c) == 1}
    cls = {str(c): i for i, c in enumerate(a["classes"])}
    cands: dict[str, list[int]] = {}
    for ch, r in zip(a["poly_chars"], a["poly_readings"], strict=True):
        cands.setdefault(str(ch), []).append(cls[str(r)])
    out = []
    for text, idx, lb in cases:
        c = cands.get(text[idx], [])
        if len(c) < 2 or lb not in cls or cls[lb] not in c:
            continue
        keep = [i for i, ch in enumerate(text) if ch in known or is_han(ch)]
        if idx not in keep:
            continue
        ids = [vocab[_BOS]] + [vocab.get(text[i], vocab[_UNK]) for i in keep] + [vocab[_EOS]]
        out.append((ids, keep.index(idx) + 1, c, c.index(cls[lb])))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--testdata", type=Path, default=R.DEFAULT_TESTDATA)
    ap.add_argument("--weights", type=Path, default=_DATA, help="the original npz")
    ap.add_argument("--out", type=Path, required=True, help="folder for the npz and onnx")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--anchor", type=float, default=1e-3, help="L2 pull to original weights")
    ap.add_argument("--val-every", type=int, default=2, help="every Nth even line validates")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch
    from torch import nn

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    with np.load(args.weights, allow_pickle=False) as z:
        a = {k: z[k] for k in z.files}
    even = R.cpp_cases(args.testdata)[0::2]  # odd lines (1, 3, 5, ...) are never read
    val_cases = even[0 :: args.val_every]
    train_cases = [c for k, c in enumerate(even) if k % args.val_every]
    train, val = encode(train_cases, a), encode(val_cases, a)
    print(f"even lines: {len(even)}; train {len(train)} targets, validation {len(val)}")

    hid = a["w_hh_fw"].shape[1]
    emb = nn.Embedding.from_pretrained(torch.from_numpy(a["embedding"]).clone(), freeze=False)
    lstm = nn.LSTM(a["embedding"].shape[1], hid, bidirectional=True)
    fc1 = nn.Linear(2 * hid, a["w_fc1"].shape[0])
    fc2 = nn.Linear(a["w_fc1"].shape[0], a["w_fc2"].shape[0])
    names = {
        "lstm.weight_ih_l0": "w_ih_fw", "lstm.weight_hh_l0": "w_hh_fw",
        "lstm.bias_ih_l0": "b_ih_fw", "lstm.bias_hh_l0": "b_hh_fw",
        "lstm.weight_ih_l0_reverse": "w_ih_bw", "lstm.weight_hh_l0_reverse": "w_hh_bw",
        "lstm.bias_ih_l0_reverse": "b_ih_bw", "lstm.bias_hh_l0_reverse": "b_hh_bw",
        "fc1.weight": "w_fc1", "fc1.bias": "b_fc1", "fc2.weight": "w_fc2", "fc2.bias": "b_fc2",
        "emb.weight": "embedding",
    }  # fmt: skip
    mods = {"lstm": lstm, "fc1": fc1, "fc2": fc2, "emb": emb}
    params: dict[str, nn.Parameter] = {}
    with torch.no_grad():
        for full, key in names.items():
            mod, attr = full.split(".", 1)
            p = getattr(mods[mod], attr)
            p.copy_(torch.from_numpy(a[key]))
            params[key] = p
    orig = {k: p.detach().clone() for k, p in params.items()}

    def logits(item: tuple[list[int], int, list[int], int]) -> torch.Tensor:
        ids, pos, cands, _ = item
        x = emb(torch.tensor(ids)).unsqueeze(1)
        h = lstm(x)[0][pos, 0]
        return fc2.weight[cands] @ torch.relu(fc1(h)) + fc2.bias[cands]

    def evaluate(items: list) -> tuple[int, float]:  # type: ignore[type-arg]
        ok, loss = 0, 0.0
        with torch.no_grad():
            for it in items:
                lg = logits(it)
                ok += int(int(lg.argmax()) == it[3])
                loss += float(-torch.log_softmax(lg, 0)[it[3]])
        return ok, loss / max(1, len(items))

    def snapshot() -> dict[str, np.ndarray]:
        return {k: p.detach().numpy().astype(np.float32).copy() for k, p in params.items()}

    best_ok, best_loss = evaluate(val)
    best, best_epoch = snapshot(), 0
    tr_ok, _ = evaluate(train)
    print(f"epoch 0 (original): train {tr_ok}/{len(train)}  val {best_ok}/{len(val)} "
          f"loss {best_loss:.4f}")  # fmt: skip
    opt = torch.optim.Adam(list(params.values()), lr=args.lr)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(train))
        for start in range(0, len(train), 16):
            batch = [train[int(i)] for i in order[start : start + 16]]
            opt.zero_grad()
            loss = sum(-torch.log_softmax(logits(it), 0)[it[3]] for it in batch) / len(batch)
            pull = sum(((params[k] - orig[k]) ** 2).sum() for k in params)
            (loss + args.anchor * pull).backward()
            opt.step()
        tr_ok, _ = evaluate(train)
        ok, vloss = evaluate(val)
        print(f"epoch {epoch}: train {tr_ok}/{len(train)}  val {ok}/{len(val)} "
              f"loss {vloss:.4f}  ({time.perf_counter() - t0:.0f} s)")  # fmt: skip
        if ok > best_ok or (ok == best_ok and vloss < best_loss and best_epoch > 0):
            best_ok, best_loss, best, best_epoch = ok, vloss, snapshot(), epoch
    if best_epoch == 0:
        print("no epoch beat the original weights on validation: writing them unchanged")
    else:
        print(f"kept epoch {best_epoch}: val {best_ok}/{len(val)} loss {best_loss:.4f}")
    out = dict(a)
    out.update(best)
    if best_epoch:
        out["source"] = np.array(
            f"{a['source']}; fine-tuned on CPP dev even lines (bench/finetune_polyphone.py "
            f"--epochs {args.epochs} --lr {args.lr} --anchor {args.anchor} --val-every "
            f"{args.val_every} --seed {args.seed}; kept epoch {best_epoch})"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    npz = args.out / "polyphone_bilstm.npz"
    np.savez(npz, **out)
    npz.with_suffix(".onnx").write_bytes(lstm_onnx(out))
    print(f"wrote {npz} and {npz.with_suffix('.onnx')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
