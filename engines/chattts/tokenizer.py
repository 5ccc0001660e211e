"""The ChatTTS text tokenizer, read with the ``tokenizers`` library (no transformers).

``asset/tokenizer/tokenizer.json`` is a BERT WordPiece tokenizer with ChatTTS's control tokens
(``[Stts]``, ``[spk_emb]``, ``[uv_break]``, ``[speed_5]`` ...) as added special tokens. The file
carries fixed padding *and* truncation at 256 tokens; the reference encodes without either, so
both are switched off here -- with them on, any text longer than 256 tokens would be cut without
a word. Texts are encoded without special tokens (no ``[CLS]``/``[SEP]``), and a batch is
left-padded with id 0 so that every row's last prompt token sits in the same column (the GPT
decodes all rows in lock-step from there).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from mixvox.interfaces import MixvoxError

PAD_ID = 0


class ChatTTSTokenizer:
    """Text <-> token ids for the ChatTTS GPT."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        """``path``: ``tokenizer.json`` or the ``asset/tokenizer`` folder holding it."""
        from tokenizers import Tokenizer

        p = Path(path)
        if p.is_dir():
            p = p / "tokenizer.json"
        from .assets import read_asset_text

        try:
            tok = Tokenizer.from_str(read_asset_text(p))  # from memory for encrypted models
        except Exception as exc:  # tokenizers raises plain Exception subclasses
            raise MixvoxError(f"cannot load the ChatTTS tokenizer {p}: {exc}") from None
        tok.no_padding()
        tok.no_truncation()
        self._tok = tok
        self.path = p
        self.vocab_size = tok.get_vocab_size(with_added_tokens=True)
        self.spk_emb_id = self._required("[spk_emb]")
        self.break_0_id = self._required("[break_0]")
        self.eos_id = self._required("[Ebreak]")  # end of a refine-text generation

    def _required(self, token: str) -> int:
        tid = self._tok.token_to_id(token)
        if tid is None:
            raise MixvoxError(f"{self.path} is not a ChatTTS tokenizer: it has no {token} token")
        return tid

    def token_id(self, token: str) -> int | None:
        return self._tok.token_to_id(token)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without special tokens, never padded or truncated."""
        return self._tok.encode(text, add_special_tokens=False).ids

    def encode_batch(
        self, texts: Sequence[str], num_vq: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Left-padded ids and attention mask of several texts.

        Returns ``ids`` ``int64 [B, T]`` (``[B, T, num_vq]`` with the ids repeated over the
        codebooks when ``num_vq`` is given, the shape the GPT's embedding step takes) and
        ``attention_mask`` ``int64 [B, T]`` (1 on real tokens, 0 on padding).
        """
        if not texts:
            raise MixvoxError("nothing to encode: empty batch")
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        longest = max(len(e.ids) for e in encs)
        ids = np.full((len(encs), longest), PAD_ID, dtype=np.int64)
        mask = np.zeros((len(encs), longest), dtype=np.int64)
        for i, e in enumerate(encs):
            n = len(e.ids)
            if n:
                ids[i, longest - n :] = e.ids
                mask[i, longest - n :] = 1
        if num_vq is not None:
            ids = np.repeat(ids[:, :, None], num_vq, axis=2)
        return ids, mask

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``. Control tokens are kept by default (refined text carries them).

        WordPiece decoding puts spaces between Chinese characters (``今 天``); that is harmless
        because the BERT pre-tokenizer splits every Han character on its own when the text is
        encoded again.
        """
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[str]:
        return [self.decode(ids) for ids in batch]

    def __len__(self) -> int:
        return self.vocab_size
