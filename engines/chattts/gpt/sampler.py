"""Sampling for the ChatTTS GPT: logits processors and the draw, in numpy.

Shared by every backend (the backends only produce hidden states), so a change of sampling
semantics is made once. The order and semantics follow the reference implementation
(``ChatTTS/model/processors.py`` and ``GPT.generate``):

1. divide by the temperature (per codebook for the code stage, one value for refine);
2. repetition penalty over the last ``penalty_window`` *generated* tokens of the same row
   (prompt tokens never count): a token seen ``n`` times gets ``alpha = penalty ** n``; a
   negative logit is multiplied by ``alpha``, a non-negative one divided by it (so both move
   down);
3. top-p (``TopPLogitsWarper``: sort ascending, drop tokens whose cumulative probability is
   ``<= 1 - top_p``, always keep the ``min_keep`` most likely);
4. top-k (``TopKLogitsWarper``: drop tokens strictly below the k-th largest logit,
   ``k = max(top_k, min_keep)``);
5. (in the loop) the end token is set to ``-inf`` while ``step < min_new_tokens`` or when
   ``suppress_eos`` is set; softmax; draw.

Dropped tokens are set to ``-inf``. Temperature 0 means greedy: the division is skipped (it
is a positive scaling and does not change the argmax of the penalised logits) and ``draw``
takes the argmax.

One deliberate difference: the reference zeroes the penalty of *rows* beyond ``num_code``
(a batch of more than 156 code-stage items), an indexing slip that makes results depend on
batch size; here every row is penalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["SamplingParams", "draw", "process_logits", "repetition_penalty", "top_k", "top_p"]


@dataclass(frozen=True)
class SamplingParams:
    """How one stage samples. Defaults are the reference's code-stage defaults.

    ``temperature`` is one value or one per codebook (code stage); ``0`` means greedy.
    ``eos_id`` ``None`` means the stage default (625 = ``num_audio_tokens - 1`` for codes; the
    refine stage needs the tokenizer's ``[Ebreak]`` id). ``max_new_tokens`` caps every item;
    ``GPT.generate`` also takes a per-item cap (the engine's length guard).
    """

    temperature: float | tuple[float, ...] = 0.3
    top_p: float | None = 0.7
    top_k: int | None = 20
    repetition_penalty: float = 1.05
    penalty_window: int = 16
    min_keep: int = 3
    eos_id: int | None = None
    suppress_eos: bool = False
    min_new_tokens: int = 0
    max_new_tokens: int = 2048
    temperatures: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = np.atleast_1d(np.asarray(self.temperature, dtype=np.float32))
        if t.ndim != 1 or t.size == 0 or not np.all(np.isfinite(t)) or np.any(t < 0):
            raise ValueError(
                f"temperature must be >= 0 (one value or one per codebook): {self.temperature!r}"
            )
        object.__setattr__(self, "temperatures", t)
        if self.top_p is not None and not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1]: {self.top_p}")
        if self.top_k is not None and self.top_k < 1:
            raise ValueError(f"top_k must be >= 1: {self.top_k}")
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0: {self.repetition_penalty}")
        if self.penalty_window < 0 or self.min_keep < 1:
            raise ValueError("penalty_window must be >= 0 and min_keep >= 1")
        if self.min_new_tokens < 0 or self.max_new_tokens < 1:
            raise ValueError("min_new_tokens must be >= 0 and max_new_tokens >= 1")

    @classmethod
    def for_refine(cls, eos_id: int, **overrides: object) -> SamplingParams:
        """The reference's refine-text defaults (``RefineTextParams``): temperature 0.7,
        top-p 0.7, top-k 20 and *no* repetition penalty; ``eos_id`` is ``[Ebreak]``."""
        kw: dict = {"temperature": 0.7, "repetition_penalty": 1.0, "eos_id": eos_id}
        kw.update(overrides)
        return cls(**kw)

    @property
    def greedy(self) -> bool:
        """True when every temperature is 0 (argmax decoding)."""
        return bool(np.all(self.temperatures == 0))

    def divisors(self, n_rows: int) -> np.ndarray:
        """``[n_rows, 1]`` float32: what each logits row is divided by (its temperature, 1 for
        greedy rows), made once per row count (read-only; the decode loop asks every step)."""
        cache: dict[int, np.ndarray] = self.__dict__.setdefault("_divisors", {})
        d = cache.get(n_rows)
        if d is None:
            temp = self.row_temperatures(n_rows)
            d = np.where(temp > 0, temp, 1.0).astype(np.float32)[:, None]
            d.flags.writeable = False
            cache[n_rows] = d
        return d

    def row_temperatures(self, n_rows: int) -> np.ndarray:
        """Temperature of each logits row; rows are item-major (``b * Q + q``) as in the
        reference, so a per-codebook vector of length Q is tiled over the batch."""
        t = self.temperatures
        if t.size == 1:
            return np.full(n_rows, t[0], dtype=np.float32)
        if n_rows % t.size:
            raise ValueError(f"{t.size} temperatures do not divide {n_rows} logits rows")
        return np.tile(t, n_rows // t.size)


def _as_rows(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, x.shape[-1])


def repetition_penalty(
    logits: np.ndarray, history: np.ndarray, penalty: float, window: int
) -> np.ndarray:
    """Penalise tokens seen in the last ``window`` entries of ``history`` (``[N, T]``).

    Only the seen (row, token) pairs change: an unseen token's factor is ``penalty ** 0 = 1``,
    and ``x * 1 == x / 1 == x`` exactly, so updating the few seen entries (at most ``N *
    window``) gives the dense formula's result bit for bit, at a fraction of its work. The
    factors come from a table of ``penalty ** k`` (float32) for ``k = 0 .. window``.
    """
    out = np.array(logits, dtype=np.float32, copy=True)
    n, v = out.shape
    if penalty == 1.0 or window == 0 or history.shape[-1] == 0:
        return out
    hist = np.asarray(history)[:, -window:]
    if hist.size and (hist.min() < 0 or hist.max() >= v):
        raise ValueError(f"history token out of range [0, {v})")
    flat = (np.arange(n)[:, None] * v + hist).reshape(-1)
    freq = np.bincount(flat, minlength=n * v)
    seen = np.flatnonzero(freq)
    alpha = _penalty_table(float(penalty), hist.shape[-1])[freq[seen]]
    flat_out = out.reshape(-1)
    val = flat_out[seen]
    flat_out[seen] = np.where(val < 0, val * alpha, val / alpha)
    return out


_PENALTY_TABLES: dict[tuple[float, int], np.ndarray] = {}


def _penalty_table(penalty: float, upto: int) -> np.ndarray:
    """``float32(penalty) ** k`` for ``k = 0 .. upto`` (float32), computed once per pair."""
    table = _PENALTY_TABLES.get((penalty, upto))
    if table is None:
        k = np.arange(upto + 1, dtype=np.float32)
        table = np.power(np.float32(penalty), k).astype(np.float32)
        if len(_PENALTY_TABLES) > 64:
            _PENALTY_TABLES.clear()
        _PENALTY_TABLES[(penalty, upto)] = table
    return table


def _top_p_cut(srt: np.ndarray, p: float, min_keep: int) -> np.ndarray:
    """Per row, how many of the ascending ``srt`` (a sorted copy of the logits) top-p drops:
    the reference's rule (drop tokens whose ascending cumulative probability is ``<= 1 - p``,
    keep the ``min_keep`` largest). The cumulative sum of non-negative terms never
    decreases, so the dropped tokens are always a prefix of the ascending order."""
    mx = srt[:, -1:]
    e = np.exp(srt - np.where(np.isfinite(mx), mx, 0.0), dtype=np.float32)
    probs = e / e.sum(axis=-1, keepdims=True)
    drop = np.cumsum(probs, axis=-1, dtype=np.float32) <= np.float32(1.0 - p)
    return np.minimum(drop.sum(axis=-1), max(srt.shape[-1] - min_keep, 0))


def _drop_below_rank(out: np.ndarray, srt: np.ndarray, cut: np.ndarray) -> None:
    """Set to ``-inf`` (in place) the first ``cut[r]`` tokens of row ``r`` in *stable*
    ascending order (equal logits: the lower index first), given ``srt``, the row-sorted
    copy of ``out``. Same result as scattering a prefix mask through a stable argsort, at
    the cost of one sort instead of a (much slower) stable argsort."""
    rows = np.flatnonzero(cut > 0)
    if rows.size == 0:
        return
    V = out.shape[-1]
    thr = srt[rows, np.minimum(cut[rows], V - 1)][:, None]  # first kept value per row
    sub = out[rows]
    below = sub < thr
    # tokens equal to the threshold: the ones sorted before the cut are dropped too
    n_tied_dropped = cut[rows] - below.sum(axis=-1)
    for j in np.flatnonzero(n_tied_dropped > 0):
        tied = np.flatnonzero(sub[j] == thr[j, 0])[: n_tied_dropped[j]]
        below[j, tied] = True
    sub[below] = -np.inf
    out[rows] = sub


def top_p(logits: np.ndarray, p: float, min_keep: int = 3) -> np.ndarray:
    """Nucleus filter with the reference's boundary rule (see module docstring)."""
    out = np.array(logits, dtype=np.float32, copy=True)
    if p >= 1.0:
        return out
    srt = np.sort(out, axis=-1)
    _drop_below_rank(out, srt, _top_p_cut(srt, p, min_keep))
    return out


def top_k(logits: np.ndarray, k: int, min_keep: int = 3) -> np.ndarray:
    """Keep logits >= the k-th largest (ties at the boundary are all kept, as in torch)."""
    out = np.array(logits, dtype=np.float32, copy=True)
    k = min(max(k, min_keep), out.shape[-1])
    kth = -np.partition(-out, k - 1, axis=-1)[:, k - 1 : k]
    out[out < kth] = -np.inf
    return out


def _top_p_then_k(x: np.ndarray, p: float, k: int, min_keep: int) -> np.ndarray:
    """:func:`top_p` then :func:`top_k` from one sort and one threshold per row (the same
    result, bit for bit).

    Top-p drops the first ``cut`` tokens in stable ascending order: every value below
    ``thr = srt[cut]``, and the lowest-index ties at ``thr`` until ``cut`` are gone. Top-k
    then drops values below the k-th largest of what is left: ``kth = srt[V - k]`` when top-p
    kept at least ``k`` (``cut <= V - k``), else nothing. So when ``kth > thr`` the result is
    "drop below ``kth``" (everything top-p dropped is below it too), and otherwise top-k drops
    nothing that top-p kept (``kth == thr`` or top-p kept fewer than ``k``): the result is
    top-p's. One comparison against a per-row threshold does both.
    """
    V = x.shape[-1]
    k = min(max(k, min_keep), V)
    srt = np.sort(x, axis=-1)
    cut = _top_p_cut(srt, p, min_keep) if p < 1.0 else np.zeros(x.shape[0], np.int64)
    rows = np.arange(x.shape[0])
    thr = srt[rows, np.minimum(cut, V - 1)][:, None]
    kth = srt[:, V - k : V - k + 1]
    by_k = (cut <= V - k)[:, None] & (kth > thr)
    t = np.where(by_k, kth, thr)
    out = np.array(x, dtype=np.float32, copy=True)
    below = out < t
    # top-p's ties at its threshold: the ones sorted before the cut are dropped too. A row
    # has some exactly when the value just before its cut equals the threshold.
    tie = (cut > 0) & ~by_k[:, 0] & (srt[rows, np.maximum(cut - 1, 0)] == thr[:, 0])
    if tie.any():
        tied = cut - below.sum(axis=-1)
        for j in np.flatnonzero(tie):
            below[j, np.flatnonzero(out[j] == t[j, 0])[: tied[j]]] = True
    out[below] = -np.inf
    return out


def process_logits(logits: np.ndarray, history: np.ndarray, params: SamplingParams) -> np.ndarray:
    """Apply temperature -> repetition penalty -> top-p -> top-k to ``logits`` ``[..., V]``.

    ``history`` is ``[..., T]`` (same leading shape): the tokens generated so far in each row
    (for the code stage: that codebook's codes). Rows are item-major, so for the code stage
    pass ``[B, Q, V]`` logits or ``[B*Q, V]`` rows. Returns float32 logits, dropped = -inf.
    Does not touch the end token (the loop does, it knows the step).
    """
    shape = logits.shape
    x = _as_rows(np.asarray(logits, dtype=np.float32))
    hist = np.asarray(history).reshape(x.shape[0], -1)
    x = x / params.divisors(x.shape[0])
    x = repetition_penalty(x, hist, params.repetition_penalty, params.penalty_window)
    if params.top_p is not None and params.top_k is not None:
        x = _top_p_then_k(x, params.top_p, params.top_k, params.min_keep)
    elif params.top_p is not None:
        x = top_p(x, params.top_p, params.min_keep)
    elif params.top_k is not None:
        x = top_k(x, params.top_k, params.min_keep)
    return x.reshape(shape)


#: One random stream for a whole batch, or one per batch item (see :func:`draw`).
Rng = np.random.Generator | Sequence[np.random.Generator]


def first_rng(rng: Rng | None) -> np.random.Generator:
    """The generator a path with one random stream per batch uses (a GPU step seeds its
    counter-based noise from one draw): the first item's when there is one per item."""
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if not rng:
        raise ValueError("an empty list of random generators")
    return rng[0]


def uniforms(rng: Rng, rows: int) -> np.ndarray:
    """``rows`` uniform draws in [0, 1): from one generator, or ``rows / len(rng)``
    consecutive draws from each item's own generator, in row order.

    Why per item: lines of a batch script decoded together must each sound as when decoded
    alone with the same seed, whatever their batch-mates. Items that share one generator
    object (the chunks of one utterance) draw from it in turn, which is the same sequence as
    one draw of all their rows (numpy fills ``random(n)`` one double at a time)."""
    if isinstance(rng, np.random.Generator):
        return rng.random(rows)
    if not rng or rows % len(rng):
        raise ValueError(f"{rows} rows cannot be split over {len(rng)} random generators")
    per = rows // len(rng)
    return np.concatenate([g.random(per) for g in rng])


def draw(
    logits: np.ndarray,
    rng: Rng,
    greedy: bool | Sequence[bool] | np.ndarray = False,
) -> np.ndarray:
    """Draw one token per row of processed ``logits`` ``[..., V]`` (softmax then sample).

    ``greedy`` (one flag or one per row) takes the argmax instead; rows where every logit is
    ``-inf`` raise, since nothing can be drawn from them. ``rng``: one generator, or one per
    batch item (the rows split evenly over them, in order: :func:`uniforms`).
    """
    shape = logits.shape[:-1]
    x = _as_rows(np.asarray(logits, dtype=np.float32))
    mx = x.max(axis=-1, keepdims=True)
    if not np.all(np.isfinite(mx)):
        raise ValueError("a logits row has no finite value to draw from")
    g = np.broadcast_to(np.asarray(greedy, dtype=bool).reshape(-1), (x.shape[0],))
    ids = np.argmax(x, axis=-1)
    if not g.all():
        e = np.exp((x - mx).astype(np.float64))
        cdf = np.cumsum(e, axis=-1)
        u = uniforms(rng, x.shape[0]) * cdf[:, -1]
        sampled = np.minimum((cdf < u[:, None]).sum(axis=-1), x.shape[-1] - 1)
        # never land on a zero-probability token through rounding at the top of the CDF
        bad = e[np.arange(x.shape[0]), sampled] == 0
        sampled = np.where(bad, ids, sampled)
        ids = np.where(g, ids, sampled)
    return ids.astype(np.int64).reshape(shape)
