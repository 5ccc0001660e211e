"""The one GPT decode loop, driven by scripted step functions (no model).

The host backends take one step per window and the whole batch at once; the CUDA-graph
runner takes ``sync_every`` steps per window and refills freed slots. Both go through
:func:`~mixvox.engines.chattts.gpt.decode.decode`; here a fake with several steps per window
and two slots for three items checks the loop's part: end rule, caps, refills, streaming.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from mixvox.engines.chattts.gpt.decode import decode


class ScriptedSteps:
    """Item ``j`` draws its end token at step ``ends[j]`` (``None``: never); frames are
    ``100 * j + t``."""

    def __init__(self, ends: Sequence[int | None], capacity: int, window: int) -> None:
        self.ends, self._capacity, self._window = list(ends), capacity, window
        self.item: list[int | None] = [None] * capacity
        self.step = [0] * capacity
        self.ended = [False] * capacity
        self.end_at = [-1] * capacity
        self.admitted: list[tuple[list[int], list[int]]] = []
        self.windows: list[int] = []

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def window(self) -> int:
        return self._window

    def admit(self, slots: Sequence[int], items: Sequence[int]) -> None:
        self.admitted.append((list(slots), list(items)))
        for s, j in zip(slots, items, strict=True):
            self.item[s], self.step[s], self.ended[s], self.end_at[s] = j, 0, False, -1

    def run(self, active: Sequence[int], n: int) -> None:
        self.windows.append(n)
        for s in range(self._capacity):
            j = self.item[s]
            for _ in range(n):
                if j is not None and not self.ended[s] and self.ends[j] == self.step[s]:
                    self.ended[s], self.end_at[s] = True, self.step[s]
                self.step[s] += 1

    def poll(self, active: Sequence[int]) -> tuple[list[bool], list[int]]:
        return self.ended, self.end_at

    def frames(self, slot: int, lo: int, hi: int, final: bool) -> tuple[np.ndarray, np.ndarray]:
        j = self.item[slot]
        assert j is not None
        ids = 100 * j + np.arange(lo, hi)
        return ids, ids.astype(np.float32)

    def release(self, slot: int) -> None:
        self.item[slot] = None


def test_one_loop_ends_caps_refills_and_streams() -> None:
    steps = ScriptedSteps(ends=[2, None, None], capacity=2, window=3)
    seen: dict[str, list[tuple[int, bool]]] = {"a": [], "b": [], "c": []}
    frames: dict[str, list[np.ndarray]] = {"a": [], "b": [], "c": []}

    def on_frames(tag: str, ids: np.ndarray, hid: np.ndarray, done: bool) -> None:
        seen[tag].append((len(ids), done))
        frames[tag].append(ids)

    out = decode(steps, [5, 10, 4], on_frames=on_frames, stream_every=4, tags=["a", "b", "c"])
    assert [len(r.ids) for r in out] == [2, 10, 4]  # end frame excluded; caps hold
    assert [r.finished for r in out] == [True, False, False]
    # the third item waits for the slot the first frees, and is admitted into it alone
    assert steps.admitted == [([0, 1], [0, 1]), ([0], [2])]
    # a window never runs an item past its cap
    assert steps.windows == [3, 3, 1, 3]
    for tag, r in zip("abc", out, strict=True):
        np.testing.assert_array_equal(np.concatenate(frames[tag]), r.ids)
        assert seen[tag][-1][1] is True and all(not d for _, d in seen[tag][:-1])
        assert all(n >= 4 for n, _ in seen[tag][:-1])  # stream_every frames per hand-over
    np.testing.assert_array_equal(out[2].ids, 200 + np.arange(4))


def test_stream_every_must_be_positive() -> None:
    with pytest.raises(ValueError, match="stream_every"):
        decode(ScriptedSteps([None], 1, 1), [3], stream_every=0)
