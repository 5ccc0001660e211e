"""Speaker strings (base16384 of LZMA2-raw float16), .npy files and seeded random speakers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mixvox.engines.chattts.speaker import (
    Speaker,
    decode_speaker,
    encode_speaker,
    load_spk_stat,
    random_speaker,
)
from mixvox.interfaces import MixvoxError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "chattts"
TINY = SHARED / "tiny"


def test_shared_string_decodes_to_the_golden_vector_exactly() -> None:
    golden = np.load(TINY / "golden.npz")["speaker/vector_f16"]
    vec = decode_speaker((TINY / "speaker.txt").read_text(encoding="utf-8"))
    assert vec.dtype == np.float16
    np.testing.assert_array_equal(vec.view(np.uint16), golden.view(np.uint16))


def test_our_encoder_reproduces_the_shared_string() -> None:
    text = (TINY / "speaker.txt").read_text(encoding="utf-8").strip()
    assert encode_speaker(decode_speaker(text)) == text


@settings(max_examples=40, deadline=None)
@given(
    arrays(
        np.float16,
        st.integers(1, 800),
        elements=st.floats(-65504, 65504, width=16, allow_nan=False),
    )
)
def test_round_trip_is_bit_exact(vec: np.ndarray) -> None:
    if not np.any(vec):
        vec = vec.copy()
        vec[0] = np.float16(1)
    out = decode_speaker(encode_speaker(vec))
    np.testing.assert_array_equal(out.view(np.uint16), vec.view(np.uint16))


def test_whitespace_in_pasted_strings_is_ignored() -> None:
    text = (TINY / "speaker.txt").read_text(encoding="utf-8").strip()
    wrapped = "\n".join(text[i : i + 10] for i in range(0, len(text), 10)) + "\n"
    np.testing.assert_array_equal(decode_speaker(wrapped), decode_speaker(text))


@pytest.mark.parametrize("bad", ["hello", "alice", "seed42", "你好世界abc", "一二三四"])
def test_not_a_speaker_string(bad: str) -> None:
    with pytest.raises(MixvoxError, match="speaker"):
        decode_speaker(bad)


def test_empty_and_zero_vectors_refused() -> None:
    with pytest.raises(MixvoxError):
        decode_speaker("   ")
    with pytest.raises(MixvoxError, match="all zeros"):
        decode_speaker(encode_speaker(np.zeros(8, np.float16)))
    with pytest.raises(MixvoxError, match="NaN"):
        decode_speaker(encode_speaker(np.array([1, np.nan], np.float16)))


def test_seeded_speakers_use_spk_stat() -> None:
    stat = load_spk_stat()
    assert stat.shape == (2, 768) and stat.dtype == np.float16
    np.testing.assert_array_equal(stat, np.load(SHARED / "spk_stat.npy"))
    a = random_speaker(42, 768, stat)
    z = np.random.Generator(np.random.PCG64(42)).standard_normal(768, dtype=np.float32)
    expect = (z * stat[0].astype(np.float32) + stat[1].astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(a, expect)
    np.testing.assert_array_equal(Speaker.parse("seed:42").vector, a)
    assert not np.array_equal(random_speaker(43, 768, stat), a)


def test_seeded_speaker_of_another_size() -> None:
    sp = Speaker.parse("seed:7", dim=32)
    assert sp.dim == 32 and np.isfinite(sp.vector.astype(np.float32)).all()
    np.testing.assert_array_equal(sp.vector, Speaker.parse("seed:7", dim=32).vector)
    n = sp.normalized()
    assert n.dtype == np.float32 and abs(float(np.linalg.norm(n)) - 1) < 1e-5


def test_parse_files_and_strings(tmp_path: Path) -> None:
    golden = np.load(TINY / "golden.npz")["speaker/vector_f16"]
    np.save(tmp_path / "v.npy", golden)
    (tmp_path / "v.txt").write_text((TINY / "speaker.txt").read_text(encoding="utf-8"))
    for spec in (
        f"@{tmp_path / 'v.npy'}",
        f"@{tmp_path / 'v.txt'}",
        (TINY / "speaker.txt").read_text(encoding="utf-8"),
    ):
        sp = Speaker.parse(spec, dim=32)
        np.testing.assert_array_equal(sp.vector, golden)
    sp.save_npy(tmp_path / "again.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "again.npy"), golden)


def test_parse_errors(tmp_path: Path) -> None:
    with pytest.raises(MixvoxError, match="expects 768"):
        Speaker.parse((TINY / "speaker.txt").read_text(encoding="utf-8"), dim=768)
    with pytest.raises(MixvoxError, match="not found"):
        Speaker.parse(f"@{tmp_path / 'missing.npy'}")
    with pytest.raises(MixvoxError, match="seed"):
        Speaker.parse("seed:abc")
    with pytest.raises(MixvoxError, match="seed"):
        Speaker.parse("seed:-1")
    np.save(tmp_path / "m.npy", np.ones((2, 3), np.float32))
    with pytest.raises(MixvoxError, match="1-D"):
        Speaker.parse(f"@{tmp_path / 'm.npy'}")
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(MixvoxError):  # object arrays need pickle: refused
        Speaker.parse(f"@{tmp_path / 'o.npy'}")
    with pytest.raises(MixvoxError, match="empty"):
        Speaker.parse("  ")


def test_cli_speaker_new_prints_a_decodable_seeded_string() -> None:
    from mixvox.engines.chattts.cli import speaker_group

    res = CliRunner().invoke(speaker_group, ["new", "--seed", "5"])
    assert res.exit_code == 0, res.output
    vec = decode_speaker(res.output.strip())
    np.testing.assert_array_equal(vec, Speaker.parse("seed:5").vector)
    res = CliRunner().invoke(speaker_group, ["info", "seed:5"])
    assert res.exit_code == 0 and '"dim": 768' in res.output


def test_cli_speaker_new_npy_and_bad_input(tmp_path: Path) -> None:
    from mixvox.engines.chattts.cli import speaker_group

    out = tmp_path / "v.npy"
    res = CliRunner().invoke(
        speaker_group, ["new", "--seed", "9", "--dim", "32", "--npy", str(out)]
    )
    assert res.exit_code == 0, res.output
    np.testing.assert_array_equal(np.load(out), decode_speaker(res.output.strip()))
    res = CliRunner().invoke(speaker_group, ["info", "not-a-speaker"])
    assert res.exit_code == 1 and "not a ChatTTS speaker string" in res.output
