"""The ChatTTS tokenizer against the reference's token ids (golden.npz)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.tokenizer import ChatTTSTokenizer
from mixvox.interfaces import MixvoxError

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"


@pytest.fixture(scope="module")
def tok() -> ChatTTSTokenizer:
    return ChatTTSTokenizer(TINY / "asset" / "tokenizer")


@pytest.fixture(scope="module")
def golden() -> tuple[dict, np.lib.npyio.NpzFile]:
    return json.loads((TINY / "golden.json").read_text()), np.load(TINY / "golden.npz")


def test_ids_match_reference_for_every_golden_text(tok, golden) -> None:
    meta, z = golden
    assert set(meta["texts"]) == {"code_spk", "code_nospk", "refine", "mixed_case"}
    for name, text in meta["texts"].items():
        assert tok.encode(text) == z[f"tok/{name}/ids"].tolist(), name


def test_batch_left_padding_matches_reference(tok, golden) -> None:
    meta, z = golden
    texts = [meta["texts"]["code_spk"], meta["texts"]["code_nospk"]]
    ids, mask = tok.encode_batch(texts, num_vq=4)
    np.testing.assert_array_equal(ids, z["batch/ids"])
    np.testing.assert_array_equal(mask, z["batch/attention_mask"])
    np.testing.assert_array_equal(mask.astype(bool), z["batch/text_mask"])
    flat, _ = tok.encode_batch(texts)
    assert flat.shape == ids.shape[:2] and flat.dtype == np.int64


def test_no_fixed_padding_or_truncation(tok) -> None:
    assert len(tok.encode("你好")) == 2  # tokenizer.json pads to 256 unless disabled
    text = "".join(chr(0x4E00 + (i * 37) % 5000) for i in range(1000))
    ids = tok.encode(text)
    assert len(ids) == 1000  # one token per Han character, nothing cut at 256
    batch, mask = tok.encode_batch([text, "短"])
    assert batch.shape == (2, 1000) and mask[1].sum() == 1 and mask[1, -1] == 1


def test_special_ids_and_decode(tok, golden) -> None:
    meta, z = golden
    assert tok.spk_emb_id == 21143 and tok.break_0_id == 21147 and tok.eos_id == 21136
    assert len(tok) == 21178
    text = tok.decode(z["tok/refine/ids"])
    assert text.startswith("[Sbreak]") and "[break_6]" in text and "meeting" in text
    # decode -> encode keeps the ids (spaces between Han characters are separators only)
    assert tok.encode(text) == z["tok/refine/ids"].tolist()
    assert "[Sbreak]" not in tok.decode(z["tok/refine/ids"], skip_special_tokens=True)


def test_control_tokens_are_single_ids(tok) -> None:
    ids = tok.encode("[uv_break]你好[laugh][speed_5]")
    assert ids[0] == tok.token_id("[uv_break]") and ids[-1] == tok.token_id("[speed_5]")
    assert len(ids) == 5


def test_odd_input(tok) -> None:
    assert tok.encode("") == []
    assert isinstance(tok.encode("\u0000\ud7ff😀\u200d"), list)
    with pytest.raises(MixvoxError):
        tok.encode_batch([])


def test_bad_tokenizer_file(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(MixvoxError, match="cannot load"):
        ChatTTSTokenizer(tmp_path)
