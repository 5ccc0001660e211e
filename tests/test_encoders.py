"""Streaming encoders, the resampler, subtitles writers and ``mixvox say`` outputs."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.encoders import Resampler, StreamEncoder, encode_all
from mixvox.subtitles import Segment, to_srt, to_vtt


def tone(rate: int, seconds: float, hz: float = 440.0) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from([(22050, 24000), (24000, 22050), (16000, 24000), (44100, 24000)]),
    st.lists(st.integers(1, 5000), min_size=1, max_size=12),
)
def test_resampler_pieces_equal_whole(rates, sizes):
    src, dst = rates
    x = np.random.default_rng(len(sizes)).standard_normal(sum(sizes)).astype(np.float32) * 0.1
    whole_r = Resampler(src, dst)
    whole = np.concatenate([whole_r.process(x), whole_r.flush()])
    r = Resampler(src, dst)
    parts, i = [], 0
    for n in sizes:
        parts.append(r.process(x[i : i + n]))
        i += n
    parts.append(r.flush())
    pieces = np.concatenate(parts)
    assert len(pieces) == len(whole) == -(-len(x) * dst // src)
    np.testing.assert_allclose(pieces, whole, atol=1e-6)


def test_resampler_keeps_a_tone():
    src, dst = 22050, 24000
    r = Resampler(src, dst)
    y = np.concatenate([r.process(tone(src, 1.0)), r.flush()])
    ref = tone(dst, 1.0)
    assert np.abs(y[200:-200] - ref[200:-200]).max() < 1e-3


@pytest.mark.parametrize("fmt", ["wav", "mp3", "opus", "flac", "pcm"])
@pytest.mark.parametrize("rate", [22050, 24000])
def test_every_format_decodes_back(fmt, rate):
    x = tone(rate, 2.0)
    data = encode_all([x[i : i + 3000] for i in range(0, len(x), 3000)], rate, fmt)
    if fmt == "pcm":
        y, out_rate = np.frombuffer(data, "<i2") / 32768.0, 24000
    else:
        y, out_rate = sf.read(io.BytesIO(data))
    expect_rate = 24000 if fmt in ("pcm", "opus") else rate
    assert out_rate == expect_rate
    assert abs(len(y) / out_rate - 2.0) < 0.12  # mp3 adds its encoder delay
    assert 0.3 < np.sqrt(np.mean(y**2)) < 0.4  # the tone's RMS (0.354), not silence


def test_streaming_formats_give_bytes_before_the_end():
    x = tone(24000, 6.0)
    for fmt in ("wav", "pcm", "mp3", "opus"):
        enc = StreamEncoder(fmt, 24000)
        early = b"".join(enc.write(x[i : i + 2400]) for i in range(0, len(x), 2400))
        assert len(early) > 0.5 * len(early + enc.close()), fmt
    enc = StreamEncoder("flac", 24000)  # FLAC's header needs the length: whole at close
    assert enc.write(x) == b"" and sf.read(io.BytesIO(enc.close()))[0].shape == x.shape


def test_srt_and_vtt():
    segs = [Segment(0.0, 1.25, "你好 world", 0, 8), Segment(1.25, 3661.5, "a -->\n b", 9, 15)]
    assert to_srt(segs) == (
        "1\n00:00:00,000 --> 00:00:01,250\n你好 world\n\n2\n00:00:01,250 --> 01:01:01,500\na -> b\n"
    )
    vtt = to_vtt(segs)
    assert vtt.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:01.250\n你好 world\n")
    assert "01:01:01.500" in vtt


def test_say_mp3_opus_and_subtitles(tmp_path):
    from mixvox.cli import main

    runner = CliRunner()
    text = "第一句话。" + "This is a long English sentence for the captions. " * 4 + "最后。"
    for ext in ("mp3", "opus"):
        out = tmp_path / f"x.{ext}"
        srt = tmp_path / f"x.{ext}.srt"
        r = runner.invoke(
            main, ["say", "-e", "espeak", text, "-o", str(out), "--subtitles", str(srt)]
        )
        assert r.exit_code == 0, r.output
        y, rate = sf.read(out)
        assert len(y) / rate > 3
        cues = srt.read_text("utf-8").strip().split("\n\n")
        assert len(cues) >= 2 and cues[0].startswith("1\n00:00:00,000 --> ")
    r = runner.invoke(
        main, ["say", "-e", "espeak", "hi", "-o", str(tmp_path / "a.wav"), "--subtitles", "x.txt"]
    )
    assert r.exit_code == 1 and ".srt or .vtt" in r.output


def test_say_stdout_streams_pcm_and_wav(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "mixvox",
        "say",
        "-e",
        "espeak",
        "-q",
        "你好 world。" * 30,
        "-o",
        "-",
    ]
    pcm = subprocess.run([*cmd, "-f", "pcm"], capture_output=True, check=True).stdout
    y = np.frombuffer(pcm, "<i2")
    assert len(y) / 24000 > 10
    wav = subprocess.run(cmd, capture_output=True, check=True).stdout
    assert wav[4:8] == b"\xff\xff\xff\xff"  # a streaming header: written before the length is known
    w, rate = sf.read(io.BytesIO(wav))
    assert rate == 22050 and abs(len(w) / rate - len(y) / 24000) < 0.01
    # a reader sees the first bytes long before the process ends
    p = subprocess.Popen([*cmd, "-f", "pcm"], stdout=subprocess.PIPE)
    assert p.stdout is not None
    first = p.stdout.read(4096)
    still_running = p.poll() is None
    rest = p.stdout.read()
    p.wait()
    assert len(first) == 4096 and len(rest) > 100000 and still_running


def test_batch_subtitles(tmp_path):
    from mixvox.cli import main

    script = tmp_path / "s.txt"
    script.write_text("你好 world.\nSecond line here.\n", "utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(
        main, ["batch", str(script), "-o", str(out), "-e", "espeak", "-q", "--subtitles", "vtt"]
    )
    assert r.exit_code == 0, r.output
    vtt = (out / "0002.vtt").read_text("utf-8")
    assert vtt.startswith("WEBVTT") and "Second line here." in vtt
    assert (out / "0001.wav").exists() and "你好 world." in (out / "0001.vtt").read_text("utf-8")
