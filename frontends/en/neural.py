"""Out-of-vocabulary English G2P: g2p-en's GRU encoder-decoder, run in numpy.

The `g2p-en` wheel ships a small trained checkpoint (``checkpoint20.npz``: a one-layer GRU
encoder over letters, a one-layer GRU decoder over ARPAbet symbols, greedy decoding). Importing
the ``g2p_en`` *package* runs ``nltk.download`` at import time, which needs the network, so we
never import it: we only locate its folder with :func:`importlib.util.find_spec` (which does not
execute the package) and read the weights ourselves. The numbers are the same; the code is ours.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import numpy as np

from mixvox import errors

#: Output symbols of the checkpoint, in its index order (4 specials, then ARPAbet with stress).
PHONEME_SYMBOLS: tuple[str, ...] = (
    "<pad>",
    "<unk>",
    "<s>",
    "</s>",
    *(
        "AA0 AA1 AA2 AE0 AE1 AE2 AH0 AH1 AH2 AO0 AO1 AO2 AW0 AW1 AW2 AY0 AY1 AY2 B CH D DH "
        "EH0 EH1 EH2 ER0 ER1 ER2 EY0 EY1 EY2 F G HH IH0 IH1 IH2 IY0 IY1 IY2 JH K L M N NG "
        "OW0 OW1 OW2 OY0 OY1 OY2 P R S SH T TH UH0 UH1 UH2 UW UW0 UW1 UW2 V W Y Z ZH"
    ).split(),
)
#: Input symbols: 3 specials then a-z.
GRAPHEMES: tuple[str, ...] = ("<pad>", "<unk>", "</s>", *"abcdefghijklmnopqrstuvwxyz")
_G2IDX = {g: i for i, g in enumerate(GRAPHEMES)}
_START, _END = 2, 3
#: The checkpoint was trained on CMUdict words; past this the model loops, so we stop.
MAX_OUTPUT = 20
#: Longer inputs are cut into pieces of this many letters (the GRU degrades on very long words).
MAX_INPUT = 20


#: The g2p-en checkpoint could not be found or read (defined in :mod:`mixvox.errors`).
ModelUnavailable = errors.ModelUnavailable


def checkpoint_path() -> Path:
    """Path of g2p-en's ``checkpoint20.npz`` without importing the ``g2p_en`` package."""
    try:
        spec = importlib.util.find_spec("g2p_en")  # finds the folder; does not run the package
    except (ImportError, ValueError) as exc:
        raise ModelUnavailable(f"cannot locate the g2p-en package: {exc}") from exc
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable("the g2p-en package is not installed (pip install g2p-en)")
    for loc in spec.submodule_search_locations:
        p = Path(loc) / "checkpoint20.npz"
        if p.is_file():
            return p
    raise ModelUnavailable("g2p-en is installed but its checkpoint20.npz is missing")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


class NeuralG2P:
    """Greedy GRU encoder-decoder over letters -> ARPAbet (stress digits included)."""

    def __init__(self, path: Path | None = None) -> None:
        path = path or checkpoint_path()
        try:
            with np.load(path, allow_pickle=False) as z:
                w = {k: z[k].astype(np.float32) for k in z.files}
        except (OSError, ValueError, KeyError) as exc:  # corrupt or unreadable file
            raise ModelUnavailable(f"cannot read {path}: {exc}") from exc
        self.enc_emb = w["enc_emb"]
        # Pre-transpose once: every step is then x @ W (no per-step .T copies).
        self.enc_wih, self.enc_whh = w["enc_w_ih"].T.copy(), w["enc_w_hh"].T.copy()
        self.enc_bih, self.enc_bhh = w["enc_b_ih"], w["enc_b_hh"]
        self.dec_emb = w["dec_emb"]
        self.dec_wih, self.dec_whh = w["dec_w_ih"].T.copy(), w["dec_w_hh"].T.copy()
        self.dec_bih, self.dec_bhh = w["dec_b_ih"], w["dec_b_hh"]
        self.fc_w, self.fc_b = w["fc_w"].T.copy(), w["fc_b"]
        self.hidden = self.enc_whh.shape[0]
        # Encoder input projections for every grapheme can be precomputed (29 x 3H).
        self._enc_in = self.enc_emb @ self.enc_wih + self.enc_bih
        self._dec_in = self.dec_emb @ self.dec_wih + self.dec_bih

    def _cell(self, xin: np.ndarray, h: np.ndarray, whh: np.ndarray, bhh: np.ndarray):
        """One GRU step given the precomputed input projection ``xin`` (gates r, z, n)."""
        hh = h @ whh + bhh
        H = self.hidden
        r = _sigmoid(xin[..., :H] + hh[..., :H])
        z = _sigmoid(xin[..., H : 2 * H] + hh[..., H : 2 * H])
        n = np.tanh(xin[..., 2 * H :] + r * hh[..., 2 * H :])
        return (1.0 - z) * n + z * h

    def predict(self, word: str) -> list[str]:
        """ARPAbet for one word; letters outside a-z are ignored. Empty input -> []."""
        letters = [c for c in word.lower() if "a" <= c <= "z"]
        if not letters:
            return []
        out: list[str] = []
        for i in range(0, len(letters), MAX_INPUT):
            out += self._predict_piece(letters[i : i + MAX_INPUT])
        return out

    def _predict_piece(self, letters: list[str]) -> list[str]:
        ids = [_G2IDX.get(c, 1) for c in letters] + [_G2IDX["</s>"]]
        h = np.zeros((self.hidden,), np.float32)
        for i in ids:
            h = self._cell(self._enc_in[i], h, self.enc_whh, self.enc_bhh)
        prev = _START
        out: list[str] = []
        for _ in range(MAX_OUTPUT):
            h = self._cell(self._dec_in[prev], h, self.dec_whh, self.dec_bhh)
            logits = h @ self.fc_w + self.fc_b
            prev = int(np.argmax(logits))
            if prev == _END:
                break
            sym = PHONEME_SYMBOLS[prev]
            if not sym.startswith("<"):
                out.append(sym)
        return out


_MODEL: NeuralG2P | None = None
_LOCK = threading.Lock()


def get_model() -> NeuralG2P:
    """The shared model, loaded once on first use (about 1 MB of weights)."""
    global _MODEL
    if _MODEL is None:
        with _LOCK:
            if _MODEL is None:
                _MODEL = NeuralG2P()
    return _MODEL
