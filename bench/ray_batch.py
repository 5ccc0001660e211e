"""Local ``mixvox batch`` against ``mixvox batch --ray`` with 1 and 2 engine workers.

    python bench/ray_batch.py [--engine espeak|chattts] [--model-dir DIR] [--lines N]
                              [--cpus 2] [--json OUT.json]

One Ray head (``ray start --head`` on 127.0.0.1, ``--cpus`` CPUs) is started for the whole
run and stopped after, so cluster start-up is not counted; engine loading is counted in
every row (the local batch loads its engine too). The same generated script of mixed zh/en
lines is spoken by each configuration, side by side in one run, into fresh folders; the
table gives wall time, lines/s, audio-seconds per second and the ratio to the local batch.
Every run's HOME and cache are temporary.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIXVOX = str(Path(sys.executable).with_name("mixvox"))

WORDS_ZH = ["今天", "下午", "会议", "报告", "显存", "模型", "数据", "客户"]
WORDS_EN = ["meeting", "review", "GPU", "deadline", "pipeline", "release", "budget", "sprint"]


def make_script(path: Path, n: int) -> None:
    lines = []
    for i in range(n):
        zh, en = WORDS_ZH[i % 8], WORDS_EN[(i * 3) % 8]
        lines.append(
            f"第{i + 1}条：{zh}的 {en} 改到 {i % 12 + 1}:30 PM，记得带 {i % 7 + 2} 份{zh}。"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([MIXVOX, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        raise SystemExit(f"failed: mixvox {' '.join(args)}\n{res.stderr}")
    return wall


def audio_seconds(out: Path) -> float:
    total = 0.0
    for raw in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        total += float(json.loads(raw).get("duration") or 0)
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="espeak")
    ap.add_argument("--model-dir", help="ChatTTS weights (for --engine chattts)")
    ap.add_argument("--lines", type=int, default=60)
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--extra", default="", help="more flags for mixvox batch, one string")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="mixvox-raybench-"))
    env = dict(os.environ)
    env.update(
        HOME=str(work / "home"),
        XDG_CACHE_HOME=str(work / "home" / ".cache"),
        RAY_USAGE_STATS_ENABLED="0",
    )
    env.pop("RAY_ADDRESS", None)
    script = work / "script.txt"
    make_script(script, a.lines)
    common = ["batch", str(script), "-e", a.engine, "-q", *a.extra.split()]
    if a.model_dir:
        common += ["--model-dir", a.model_dir]
    ray_bin = str(Path(sys.executable).with_name("ray"))
    port = free_port()
    subprocess.run(
        [
            ray_bin,
            "start",
            "--head",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            f"--num-cpus={a.cpus}",
            "--num-gpus=0",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={work / 'ray'}",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    address = f"127.0.0.1:{port}"
    rows = []
    # One line first, untimed: builds and caches whatever the engine caches (ONNX graphs), so
    # that the first timed configuration does not pay for it alone.
    warm = work / "warm.txt"
    warm.write_text("warm up 一下\n", encoding="utf-8")
    run(
        ["batch", str(warm), "-e", a.engine, "-q", *a.extra.split(), "-o", str(work / "warm")]
        + (["--model-dir", a.model_dir] if a.model_dir else []),
        env,
    )
    try:
        configs = [
            ("local mixvox batch", []),
            ("--ray, 1 worker", ["--ray", address, "--ray-workers", "1"]),
            ("--ray, 2 workers", ["--ray", address, "--ray-workers", "2"]),
        ]
        for name, extra in configs:
            out = work / f"out{len(rows)}"
            wall = run([*common, "-o", str(out), *extra], env)
            secs = audio_seconds(out)
            rows.append(
                {
                    "config": name,
                    "wall_s": wall,
                    "lines_per_s": a.lines / wall,
                    "audio_s_per_s": secs / wall,
                    "audio_s": secs,
                }
            )
    finally:
        subprocess.run([ray_bin, "stop", "--force"], env=env, capture_output=True)
    base = rows[0]["lines_per_s"]
    print(
        f"engine {a.engine}, {a.lines} lines, Ray head with {a.cpus} CPUs; "
        f"{platform.node()} ({os.cpu_count()} cores), Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print("| configuration | wall s | lines/s | audio-s/s | vs local |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['config']} | {r['wall_s']:.1f} | {r['lines_per_s']:.2f} | "
            f"{r['audio_s_per_s']:.2f} | {r['lines_per_s'] / base:.2f}x |"
        )
    if a.json:
        a.json.write_text(
            json.dumps({"engine": a.engine, "lines": a.lines, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
