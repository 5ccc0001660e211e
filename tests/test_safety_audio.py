"""Issue 11, bad output: file modes without umask flipping, NaN/constant audio, WAV size limit."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from mixvox import audio as audio_mod
from mixvox.audio import Audio, BadAudioError, atomic_write_bytes, save_stream


def tone(n: int = 2400, sr: int = 24000) -> Audio:
    return Audio(0.3 * np.sin(np.arange(n) * 0.05), sr)


def test_writes_never_touch_the_process_umask(tmp_path: Path, monkeypatch) -> None:
    """``os.umask`` is process-wide: flipping it to 0 lets other threads create 0666 files."""
    calls: list[int] = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda m: calls.append(m) or real(m))
    atomic_write_bytes(tmp_path / "a.bin", b"x")
    tone().save(tmp_path / "b.wav")
    save_stream(iter([tone(), tone()]), tmp_path / "c.wav", "WAV")
    assert calls == []
    want = 0o666 & ~audio_mod.UMASK
    for name in ("a.bin", "b.wav", "c.wav"):
        assert (tmp_path / name).stat().st_mode & 0o777 == want


def test_modes_stay_right_while_other_threads_create_files(tmp_path: Path) -> None:
    stop = threading.Event()

    def other() -> None:
        i = 0
        while not stop.is_set():
            fd = os.open(tmp_path / f"o{i % 5}", os.O_CREAT | os.O_WRONLY, 0o666)
            os.close(fd)
            i += 1

    t = threading.Thread(target=other)
    t.start()
    try:
        for i in range(200):
            atomic_write_bytes(tmp_path / f"w{i % 7}.bin", b"data")
    finally:
        stop.set()
        t.join()
    want = 0o666 & ~audio_mod.UMASK
    for i in range(5):
        assert (tmp_path / f"o{i}").stat().st_mode & 0o777 == want


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_audio_is_refused_naming_the_stage(tmp_path: Path, bad: float) -> None:
    a = tone()
    a.samples[100] = bad
    with pytest.raises(BadAudioError, match="write"):
        a.save(tmp_path / "x.wav")
    assert not (tmp_path / "x.wav").exists()
    with pytest.raises(BadAudioError, match="engine xyz"):
        audio_mod.check_samples(a.samples, "engine xyz")


def test_constant_audio_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BadAudioError, match="constant"):
        Audio(np.full(24000, 0.25, np.float32), 24000).save(tmp_path / "c.wav")
    with pytest.raises(BadAudioError, match="constant"):
        save_stream(
            iter([Audio(np.full(100, 0.1), 24000), Audio(np.full(50, 0.1), 24000)]),
            tmp_path / "d.wav",
            "WAV",
        )
    assert sorted(os.listdir(tmp_path)) == []


def test_wav_over_the_4gb_header_limit_is_refused_with_advice(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(audio_mod, "WAV_MAX_BYTES", 10_000)
    with pytest.raises(BadAudioError, match="FLAC"):
        tone(6000).save(tmp_path / "big.wav")
    with pytest.raises(BadAudioError, match="FLAC"):
        save_stream(iter([tone(3000), tone(3000)]), tmp_path / "big2.wav", "WAV")
    assert sorted(os.listdir(tmp_path)) == []
    tone(6000).save(tmp_path / "ok.flac")  # FLAC has no such limit
    assert (tmp_path / "ok.flac").stat().st_size > 0


def test_the_real_limit_is_the_riff_field() -> None:
    assert audio_mod.WAV_MAX_BYTES == 0xFFFFFFFF


def test_nan_weights_are_an_error_naming_the_engine_not_a_constant_file(
    tmp_path: Path, monkeypatch
) -> None:
    """The hole: NaN weights gave a file of constant samples and exit 0."""
    import shutil

    from click.testing import CliRunner
    from safetensors.numpy import load_file, save_file

    from mixvox.cli import main
    from mixvox.engines.chattts.assets import write_manifest

    tiny = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
    model = tmp_path / "nan-model"
    shutil.copytree(tiny / "asset", model / "asset")
    voc = model / "asset" / "Vocos.safetensors"
    tensors = load_file(str(voc))
    tensors["head.out.weight"] = np.full_like(tensors["head.out.weight"], np.nan)
    save_file(tensors, str(voc))
    write_manifest(model)
    monkeypatch.setenv("MIXVOX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MIXVOX_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "o.wav"
    args = ["say", "你好", "-e", "chattts", "--model-dir", str(model), "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1, r.output
    assert "chattts engine" in r.stderr and "NaN" in r.stderr
    assert not out.exists() and "Traceback" not in r.output


def test_empty_audio_is_not_saved_as_a_zero_second_file(tmp_path: Path) -> None:
    with pytest.raises(BadAudioError, match="0 samples"):
        Audio(np.zeros(0, np.float32), 24000).save(tmp_path / "e.wav")
    assert not (tmp_path / "e.wav").exists()
