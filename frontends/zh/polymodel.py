"""Context model for polyphonic characters: a small bidirectional LSTM over the sentence.

The weights are g2pM's (kakaobrain/g2pM 0.1.2.5, Apache-2.0; Park & Lee, Interspeech 2020),
trained on the CPP train split: one-layer BiLSTM (64-dim character embeddings, 32 hidden units
per direction) and a two-layer classifier over 876 readings. ``bench/convert_g2pm.py`` turned
the wheel's pickles into ``data/polyphone_bilstm.npz`` (read with ``allow_pickle=False``).
They are shipped as published: fine-tuning them on CPP dev's even lines
(``bench/finetune_polyphone.py``) lowered validation accuracy, so that script fell back to
them. The code here is our own and is written for speed, not a port of g2pM's:

* the recurrence runs in ONNX Runtime (``data/polyphone_bilstm.onnx``: embedding lookup and
  the LSTM op, one thread), a core dependency; without it, a numpy loop does the same work
  (input projections of a sentence in two matrix products, both directions in one step over a
  block-diagonal recurrent matrix); tests check both against the plain equations;
* the classifier only scores the readings the model was trained to tell apart for that
  character (the CPP label space, as g2pW lists it: 347 characters with two or more readings);
  any other character is not the model's to decide.

:mod:`.g2p` asks the model only where the word dictionary does not decide (above all
one-character words), and lets it overrule a rare dictionary word only where it is near certain
(:meth:`SentenceReadings.sure`); dictionary and sandhi layers stay ours.
"""

from __future__ import annotations

import atexit
import threading
from importlib import resources
from typing import Any

import numpy as np

from mixvox.textutil import is_han

_BOS, _EOS, _UNK = "시", "끝", "<UNK>"  # g2pM's sentence markers (arbitrary non-Han tokens)
_FILE = "polyphone_bilstm.npz"
_ONNX = "polyphone_bilstm.onnx"  # the same embedding + BiLSTM as one graph


def _sigmoid_as_tanh(w: np.ndarray, hidden: int) -> np.ndarray:
    """Reorder PyTorch gate columns ``i f g o`` to ``i f o g`` (sigmoid gates first)."""
    i, f, g, o = (w[..., k * hidden : (k + 1) * hidden] for k in range(4))
    return np.concatenate([i, f, o, g], axis=-1)


class PolyphoneModel:
    """The BiLSTM reading chooser. Thread-safe after :meth:`load` (state is read-only)."""

    def __init__(self) -> None:
        self._loaded = False
        self._labelled = False
        self._lock = threading.Lock()
        self._cands: dict[str, tuple[int, ...]] = {}
        self.classes: list[str] = []
        self._sess: Any = None  # ONNX Runtime session, when onnxruntime imports
        self._onnx_thread: threading.Thread | None = None
        self._pairs: dict[tuple[int, ...], tuple[np.ndarray, float]] = {}
        self.use_onnx = True

    def _members(self, names: tuple[str, ...] | None) -> dict[str, np.ndarray]:
        ref = resources.files("mixvox.frontends.zh").joinpath("data").joinpath(_FILE)
        with ref.open("rb") as fh, np.load(fh, allow_pickle=False) as z:
            return {k: z[k] for k in (names or z.files)}  # members are read one by one

    def load_labels(self) -> None:
        """Read the label space only (which characters, which readings: about 1 ms)."""
        if self._labelled:
            return
        with self._lock:
            if self._labelled:
                return
            a = self._members(("classes", "poly_chars", "poly_readings"))
            self.classes = [str(x) for x in a["classes"]]
            ours = {c: i for i, c in enumerate(self.classes)}
            cands: dict[str, list[int]] = {}
            for ch, r in zip(a["poly_chars"], a["poly_readings"], strict=True):
                cands.setdefault(str(ch), []).append(ours[str(r)])
            self._cands = {ch: tuple(v) for ch, v in cands.items()}
            self._labelled = True

    def load(self) -> None:
        """Read the weights (tens of ms); called when a sentence first needs the model."""
        if self._loaded:
            return
        self.load_labels()
        with self._lock:
            if self._loaded:
                return
            self._build(self._members(None))
            self._loaded = True
            if self.use_onnx:  # importing onnxruntime takes 100+ ms: numpy serves meanwhile
                self._onnx_thread = threading.Thread(target=self._start_onnx, daemon=True)
                self._onnx_thread.start()
                # a process that ends while the thread is inside ONNX Runtime's C++ start-up
                # aborts ("terminate called without an active exception", exit status 134):
                # at exit, let the start-up finish first (tens of ms)
                atexit.register(self.wait_onnx, 10.0)

    def _start_onnx(self) -> None:
        try:
            self._sess = _onnx_session()
        except Exception:  # numpy does the same work; a broken runtime must not stop speech
            self._sess = None

    def wait_onnx(self, timeout: float = 30.0) -> bool:
        """Wait for the background ONNX Runtime session; True when it is in use."""
        t = self._onnx_thread
        if t is not None:
            t.join(timeout)
        return self._sess is not None

    def _build(self, a: dict[str, np.ndarray]) -> None:
        hid = a["w_hh_fw"].shape[1]
        self.hidden = hid
        vocab = [str(x) for x in a["vocab"]]
        self._idx = {c: i for i, c in enumerate(vocab)}
        self.known = frozenset(c for c in vocab if len(c) == 1)
        self._bos, self._eos, self._unk = self._idx[_BOS], self._idx[_EOS], self._idx[_UNK]
        emb = a["embedding"].astype(np.float32)
        # Gate layout of a step, 8 blocks of `hid`: i_f i_b f_f f_b o_f o_b g_f g_b (forward and
        # backward interleaved per gate, sigmoid gates first). Sigmoid gates are pre-halved so
        # that one tanh serves all gates: sigmoid(x) = (tanh(x / 2) + 1) / 2.
        scale = np.array([0.5, 0.5, 0.5, 1.0], np.float32).repeat(hid)
        win = np.zeros((2, emb.shape[1], 4, 2, hid), np.float32)
        bias = np.zeros((4, 2, hid), np.float32)
        rec = np.zeros((2, hid, 4, 2, hid), np.float32)
        for k, d in enumerate(("fw", "bw")):
            w = _sigmoid_as_tanh(a[f"w_ih_{d}"].T, hid) * scale
            win[k, :, :, k, :] = w.reshape(-1, 4, hid)
            b = _sigmoid_as_tanh(a[f"b_ih_{d}"] + a[f"b_hh_{d}"], hid) * scale
            bias[:, k, :] = b.reshape(4, hid)
            r = _sigmoid_as_tanh(a[f"w_hh_{d}"].T, hid) * scale
            rec[k, :, :, k, :] = r.reshape(hid, 4, hid)
        self._emb = emb
        self._win = win.reshape(2, emb.shape[1], 8 * hid)  # input weights per direction
        self._bias = bias.reshape(8 * hid)
        self._rec = rec.reshape(2 * hid, 8 * hid)
        self._w1, self._b1 = a["w_fc1"], a["b_fc1"]
        self._w2, self._b2 = a["w_fc2"], a["b_fc2"]

    # -- candidates ----------------------------------------------------------------------------
    def candidates(self, ch: str) -> tuple[int, ...]:
        """Class indices of the readings ``ch`` can have (empty: the model does not decide)."""
        if not self._labelled:
            self.load_labels()
        return self._cands.get(ch, ())

    def is_polyphone(self, ch: str) -> bool:
        return len(self.candidates(ch)) > 1

    def only_reading(self, ch: str) -> str | None:
        """The one reading CPP knows for a character it lists with a single reading.

        These are characters whose pypinyin first reading is often the rare one (晟 sheng4, not
        cheng2; 仆 pu2, not pu1): the label space itself is the decision, no pass needed.
        """
        cands = self.candidates(ch)
        return _to_ours(self.classes[cands[0]]) if len(cands) == 1 else None

    # -- inference -----------------------------------------------------------------------------
    def hidden_states(self, text: str) -> np.ndarray:
        """BiLSTM outputs for ``text`` framed by the sentence markers: ``[len+2, 2*hidden]``."""
        self.load()
        get, unk = self._idx.get, self._unk
        ids = [self._bos] + [get(c, unk) for c in text] + [self._eos]
        sess = self._sess
        if sess is not None and self.use_onnx:
            return sess.run(None, {"ids": np.array(ids, np.int64)})[0]
        return self._numpy_states(ids)

    def _numpy_states(self, ids: list[int]) -> np.ndarray:
        """The same recurrence in numpy (used when onnxruntime is missing; checked in tests)."""
        n, hid = len(ids), self.hidden
        x = self._emb[ids]  # step t: forward at t, backward at n-1-t
        z = x @ self._win[0] + x[::-1] @ self._win[1] + self._bias
        rec = self._rec
        out = np.empty((n, 2 * hid), np.float32)
        h = np.zeros(2 * hid, np.float32)
        c = np.zeros(2 * hid, np.float32)
        buf = np.empty(8 * hid, np.float32)
        tmp = np.empty(2 * hid, np.float32)
        s_i, s_f, s_o = buf[: 2 * hid], buf[2 * hid : 4 * hid], buf[4 * hid : 6 * hid]
        sig, g = buf[: 6 * hid], buf[6 * hid :]
        dot, tanh, mul = np.dot, np.tanh, np.multiply
        for t in range(n):  # preallocated buffers: no array is created inside the loop
            dot(h, rec, out=buf)
            buf += z[t]
            tanh(buf, out=buf)
            sig *= 0.5
            sig += 0.5
            c *= s_f
            mul(s_i, g, out=tmp)
            c += tmp
            tanh(c, out=tmp)
            mul(s_o, tmp, out=h)
            out[t] = h
        res = np.empty_like(out)
        res[:, :hid] = out[:, :hid]
        res[:, hid:] = out[::-1, hid:]
        return res

    def predict(self, text: str, positions: list[int] | None = None) -> dict[int, str]:
        """Reading (tone-numbered pinyin, ``lv4`` style) of each polyphone of ``text``.

        ``positions``: the indices to decide (default: every character the model covers);
        positions whose character the model does not cover are left out of the result.
        """
        self.load()
        if positions is None:
            positions = list(range(len(text)))
        todo = [(p, self.candidates(text[p])) for p in positions if 0 <= p < len(text)]
        out = {p: _to_ours(self.classes[c[0]]) for p, c in todo if len(c) == 1}
        todo = [(p, c) for p, c in todo if len(c) > 1]
        if todo:
            hs = self.hidden_states(text)
            out.update({p: self.classify(hs[p + 1], cands) for p, cands in todo})
        return out

    def probabilities(self, state: np.ndarray, cands: tuple[int, ...]) -> dict[str, float]:
        """Softmax over the candidate readings (for analysis and confidence thresholds)."""
        hv = np.maximum(self._w1 @ state + self._b1, 0.0)
        idx = np.fromiter(cands, np.int64, len(cands))
        logits = self._w2[idx] @ hv + self._b2[idx]
        e = np.exp(logits - logits.max())
        e /= e.sum()
        return {_to_ours(self.classes[int(i)]): float(p) for i, p in zip(idx, e, strict=True)}

    def classify(self, state: np.ndarray, cands: tuple[int, ...]) -> str:
        """The best of the candidate classes ``cands`` for one BiLSTM output ``state``."""
        return self.choose(np.maximum(self._w1 @ state + self._b1, 0.0), cands)

    def hidden_layer(self, states: np.ndarray) -> np.ndarray:
        """The classifier's hidden layer for many BiLSTM outputs at once (``[n, 32]``)."""
        return np.maximum(states @ self._w1.T + self._b1, 0.0)

    def sure(self, hv: np.ndarray, cands: tuple[int, ...], margin: float) -> str | None:
        """The best candidate when its logit beats every other by ``margin``, else ``None``.

        ``margin = log(999)`` is a softmax probability of at least 0.999 for two candidates.
        """
        idx = np.fromiter(cands, np.int64, len(cands))
        logits = self._w2[idx] @ hv + self._b2[idx]
        top = int(np.argmax(logits))
        rest = np.delete(logits, top)
        if rest.size and float(logits[top] - rest.max()) < margin:
            return None
        return _to_ours(self.classes[int(idx[top])])

    def choose(self, hv: np.ndarray, cands: tuple[int, ...]) -> str:
        """The best candidate for one hidden-layer vector ``hv``."""
        if len(cands) == 2:  # the common case: one dot product with the difference of rows
            pair = self._pairs.get(cands)
            if pair is None:
                a, b = cands
                pair = self._pairs.setdefault(
                    cands, (self._w2[a] - self._w2[b], float(self._b2[a] - self._b2[b]))
                )
            w, bias = pair
            return _to_ours(self.classes[cands[0] if float(w @ hv) + bias >= 0 else cands[1]])
        idx = np.fromiter(cands, np.int64, len(cands))
        logits = self._w2[idx] @ hv + self._b2[idx]
        return _to_ours(self.classes[int(idx[int(np.argmax(logits))])])


def _onnx_session() -> Any:
    """An ONNX Runtime session for the BiLSTM, one thread (the text side must not hog cores)."""
    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - a core dependency; numpy does the same work
        return None
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    data = resources.files("mixvox.frontends.zh").joinpath("data").joinpath(_ONNX).read_bytes()
    return ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])


def _to_ours(label: str) -> str:
    """CPP/g2pM spell ü ``u:``; pypinyin's TONE3 and the rest of mixvox spell it ``v``."""
    return label.replace("u:", "v")


_MODEL: PolyphoneModel | None = None

#: Logit margin for :meth:`SentenceReadings.sure`: probability 0.999 between two readings.
SURE_MARGIN = float(np.log(999.0))


def default_model() -> PolyphoneModel:
    """One shared model per process (the weights are read-only)."""
    global _MODEL
    if _MODEL is None:
        _MODEL = PolyphoneModel()
    return _MODEL


class SentenceReadings:
    """The model's readings for one text, computed on the first question only.

    Most words never ask (the dictionary decides), so a sentence without an undecided
    polyphone costs nothing; one that has any pays one BiLSTM pass for all of them.
    """

    __slots__ = ("_hs", "_map", "_model", "_seen", "_text")

    def __init__(self, model: PolyphoneModel, text: str) -> None:
        self._model, self._text = model, text
        self._hs: np.ndarray | None = None
        self._seen = ""
        self._map: list[int] = []

    def _run(self) -> np.ndarray:
        # The model reads what it was trained on: characters of its vocabulary and Han
        # characters (rare ones map to <UNK> as in training). Control characters, emoji and
        # other scripts are left out of its view, so they cannot sway a reading (你\x00好 hao3).
        self._model.load()
        known = self._model.known
        keep = [i for i, c in enumerate(self._text) if c in known or is_han(c)]
        self._seen = "".join(self._text[i] for i in keep)
        self._map = [-1] * len(self._text)
        for j, i in enumerate(keep):
            self._map[i] = j
        # the classifier's hidden layer for every position in one product (a few are asked)
        self._hs = self._model.hidden_layer(self._model.hidden_states(self._seen))
        return self._hs

    def reading(self, pos: int) -> str | None:
        """The reading of ``text[pos]`` (``None``: not a character the model covers)."""
        if not 0 <= pos < len(self._text):
            return None
        m = self._model
        cands = m.candidates(self._text[pos])
        if len(cands) < 2:
            return m.only_reading(self._text[pos]) if cands else None
        hs = self._hs if self._hs is not None else self._run()
        return m.choose(hs[self._map[pos] + 1], cands)

    def sure(self, pos: int, margin: float = SURE_MARGIN) -> str | None:
        """The model's reading of ``text[pos]`` only where it is near certain (else ``None``).

        Used to overrule a *rare* dictionary word (see :meth:`.g2p.ZhG2P.word_pinyin`);
        characters the model does not cover, or covers with one reading, give ``None``.
        """
        if not 0 <= pos < len(self._text):
            return None
        m = self._model
        cands = m.candidates(self._text[pos])
        if len(cands) < 2:
            return None
        hs = self._hs if self._hs is not None else self._run()
        return m.sure(hs[self._map[pos] + 1], cands, margin)
