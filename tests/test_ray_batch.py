"""``mixvox batch --ray`` on a real local Ray cluster (head + 2 CPUs on loopback).

The cluster is started once for the module with ``ray start --head`` (as a user would) and
stopped after. Its processes get a temporary HOME and cache, so nothing is written into the
real user's home. What is checked: the same files, manifest and samples as a local batch
(espeak and ChatTTS on the tiny checkpoint), a worker killed mid-run (the batch completes),
a driver killed mid-run (a rerun resumes and completes), and the Python API.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

ray = pytest.importorskip(
    "ray", reason="the ray extra is not installed (pip install 'mixvox[ray]')"
)

MIXVOX = str(Path(sys.executable).with_name("mixvox"))
TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"

LINES = [
    "今天的 meeting 改到 3:30 PM",
    "# a comment line",
    "",
    "RTX 4070 跑 TensorRT 只要 22ms",
    "hello world, this is mixvox",
    "3个GPU, 80GB显存",
    "你好",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        RAY_USAGE_STATS_ENABLED="0",
        PYTHONUNBUFFERED="1",
    )
    env.pop("RAY_ADDRESS", None)
    env.pop("MIXVOX_CONFIG", None)
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A Ray head with 2 CPUs on 127.0.0.1, started and stopped by the test module."""
    home = tmp_path_factory.mktemp("rayhome")
    temp = tmp_path_factory.mktemp("rt")
    port = _free_port()
    env = _env(home)
    ray_bin = Path(sys.executable).with_name("ray")
    cmd = [
        str(ray_bin),
        "start",
        "--head",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--num-cpus=2",
        "--num-gpus=0",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    started = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield {"address": f"127.0.0.1:{port}", "env": env, "home": home}
    finally:
        subprocess.run([str(ray_bin), "stop", "--force"], env=env, capture_output=True, timeout=120)


def _mixvox(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MIXVOX, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        **kw,
    )


def _manifest(out: Path) -> dict[int, dict]:
    recs = {}
    for raw in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(raw)
        if "line" in rec:  # settings records (the batch fingerprint) have no line
            recs[rec["line"]] = rec
    return recs


def _same_outputs(a: Path, b: Path, lsb: int = 0) -> None:
    """The same manifests and audio; ``lsb``: how many 16-bit steps a sample may differ by
    (ChatTTS decodes the lines waiting together as one GPT batch, locally and in the actors,
    and batches of other sizes round their matmuls differently: the same codes, hidden states
    a few ulps apart)."""
    ma, mb = _manifest(a), _manifest(b)
    assert sorted(ma) == sorted(mb)
    for line, rec in ma.items():
        other = mb[line]
        for key in ("text", "file", "engine", "duration", "error"):
            assert rec.get(key) == other.get(key), (line, key, rec, other)
        if rec.get("file"):
            xa, sra = sf.read(a / rec["file"], dtype="float32")
            xb, srb = sf.read(b / rec["file"], dtype="float32")
            assert sra == srb
            assert xa.shape == xb.shape
            assert np.abs(xa - xb).max() <= lsb / 32768, (line, np.abs(xa - xb).max())


def test_ray_batch_matches_local_batch_espeak(cluster, tmp_path):
    script = tmp_path / "s.txt"
    raw = ("\n".join(LINES) + "\n").encode() + b"bad \xff byte\n"
    script.write_bytes(raw)
    local, remote = tmp_path / "local", tmp_path / "remote"
    r1 = _mixvox(["batch", str(script), "-o", str(local), "-e", "espeak", "-q"], cluster["env"])
    r2 = _mixvox(
        [
            "batch",
            str(script),
            "-o",
            str(remote),
            "-e",
            "espeak",
            "-q",
            "--ray",
            cluster["address"],
        ],
        cluster["env"],
    )
    # the bad line fails in both runs (exit 1), the others are written
    assert r1.returncode == 1 and r2.returncode == 1, r2.stderr
    assert "5 done, 0 skipped (already done), 1 failed, of 6 line(s)" in r2.stderr
    assert "line 8: not valid UTF-8" in r2.stderr
    assert "Traceback" not in r2.stderr
    _same_outputs(local, remote)
    assert sorted(p.name for p in remote.glob("*.wav")) == [
        "0001.wav",
        "0004.wav",
        "0005.wav",
        "0006.wav",
        "0007.wav",
    ]
    # a second run resumes: everything already done is skipped
    r3 = _mixvox(
        [
            "batch",
            str(script),
            "-o",
            str(remote),
            "-e",
            "espeak",
            "-q",
            "--ray",
            cluster["address"],
        ],
        cluster["env"],
    )
    assert "0 done, 5 skipped (already done), 1 failed" in r3.stderr, r3.stderr


@pytest.mark.skipif(not TINY.is_dir(), reason="shared fixtures missing")
def test_ray_batch_matches_local_batch_chattts_tiny(cluster, tmp_path):
    script = tmp_path / "s.txt"
    script.write_text("你好 world\n今天的 meeting 改到 3:30 PM\n3个GPU\n", encoding="utf-8")
    common = ["--model-dir", str(TINY), "--seed", "11", "--max-frames", "16", "-q"]
    local, remote = tmp_path / "local", tmp_path / "remote"
    r1 = _mixvox(["batch", str(script), "-o", str(local), *common], cluster["env"])
    assert r1.returncode == 0, r1.stderr
    r2 = _mixvox(
        ["batch", str(script), "-o", str(remote), *common, "--ray", cluster["address"]],
        cluster["env"],
    )
    assert r2.returncode == 0, r2.stderr
    assert "3 done, 0 skipped (already done), 0 failed, of 3 line(s)" in r2.stderr
    assert {rec["engine"] for rec in _manifest(remote).values()} == {"chattts"}
    _same_outputs(local, remote, lsb=2)


def _long_script(tmp_path: Path, n: int) -> Path:
    script = tmp_path / "long.txt"
    words = ["alpha", "今天", "meeting", "下午", "GPU", "报告", "review", "三点"]
    lines = [
        f"第{i}行 {words[i % len(words)]} line {i} {words[(i * 3) % len(words)]}" for i in range(n)
    ]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return script


def _wait_records(out: Path, at_least: int, proc: subprocess.Popen, timeout: float = 240) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = out / "manifest.jsonl"
        if m.exists():
            n = sum(1 for ln in m.read_bytes().splitlines() if ln.strip() and b'"line"' in ln)
            if n >= at_least:
                return n
        if proc.poll() is not None:
            return -1
        time.sleep(0.05)
    raise AssertionError("the batch made no progress")


def _worker_pids() -> list[int]:
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(ln.split()[0]) for ln in ps.splitlines() if "ray::EngineWorker" in ln]


def test_worker_killed_mid_run_batch_completes(cluster, tmp_path):
    n = 120
    script = _long_script(tmp_path, n)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            MIXVOX,
            "batch",
            str(script),
            "-o",
            str(out),
            "-e",
            "espeak",
            "-q",
            "--ray",
            cluster["address"],
            "--ray-workers",
            "2",
        ],
        env=cluster["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    done_before = _wait_records(out, 3, proc)
    assert done_before > 0, "the batch ended before a worker could be killed"
    pids = _worker_pids()
    assert pids, "no engine worker process found"
    os.kill(pids[0], signal.SIGKILL)
    still_running = proc.poll() is None
    _, err = proc.communicate(timeout=600)
    assert still_running, "the batch had already finished when the worker was killed"
    assert proc.returncode == 0, err
    assert f"{n} done, 0 skipped (already done), 0 failed, of {n} line(s)" in err
    recs = _manifest(out)
    assert sorted(recs) == list(range(1, n + 1))
    assert all((out / r["file"]).stat().st_size > 44 for r in recs.values())


def test_driver_killed_then_resumed(cluster, tmp_path):
    n = 120
    script = _long_script(tmp_path, n)
    out = tmp_path / "out"
    args = ["batch", str(script), "-o", str(out), "-e", "espeak", "-q", "--ray", cluster["address"]]
    proc = subprocess.Popen(
        [MIXVOX, *args],
        env=cluster["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    got = _wait_records(out, 5, proc)
    assert got > 0, "the batch ended before the driver could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    before = _manifest(out)
    assert 0 < len(before) < n
    r = _mixvox(args, cluster["env"])
    assert r.returncode == 0, r.stderr
    skipped = int(r.stderr.split(" skipped")[0].rsplit(",", 1)[1].strip())
    assert skipped >= len([rec for rec in before.values() if rec.get("file")])
    recs = _manifest(out)
    assert sorted(recs) == list(range(1, n + 1))
    assert not [rec for rec in recs.values() if rec.get("error")]
    for rec in recs.values():
        info = sf.info(str(out / rec["file"]))
        assert abs(info.duration - rec["duration"]) < 0.01


def test_python_api_on_the_cluster(cluster, tmp_path, monkeypatch):
    from mixvox.distributed import synthesize_script

    for key, val in cluster["env"].items():
        if key in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "RAY_USAGE_STATS_ENABLED"):
            monkeypatch.setenv(key, val)
    script = tmp_path / "s.jsonl"
    script.write_text(
        '{"text": "hello there"}\n{"text": "你好", "file": "greeting"}\n{"txt": 1}\n',
        encoding="utf-8",
    )
    before = signal.getsignal(signal.SIGTERM)
    res = synthesize_script(script, tmp_path / "out", engine="espeak", address=cluster["address"])
    # ray.init installs its own SIGTERM handler; the run puts the caller's back
    assert signal.getsignal(signal.SIGTERM) is before
    try:
        assert res.done == 2 and res.total == 3
        assert [line for line, _ in res.failed] == [3]
        assert (tmp_path / "out" / "greeting.wav").stat().st_size > 44
        assert (tmp_path / "out" / "1.wav").exists() is False
        assert (tmp_path / "out" / "0001.wav").stat().st_size > 44
    finally:
        ray.shutdown()


def test_missing_ray_is_a_clear_error(monkeypatch):
    from mixvox import distributed

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(distributed.RayUnavailable, match=r"pip install 'mixvox\[ray\]'"):
        distributed._import_ray()
