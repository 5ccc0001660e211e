"""Scaling of ``mixvox batch --ray`` across the GPUs of one host: 1 GPU, then 2 (or more).

    python bench/ray_gpu.py --model-dir CKPT [--make-checkpoint] [--lines 5000] [--gpus 1,2]
                            [--extra "--backend torch --device cuda --precision fp16"]
                            [--frames 60] [--out DIR]
    python bench/ray_gpu.py --engine espeak --cpu-workers 1,2 --lines 200      # CPU smoke run

One Ray head is started on 127.0.0.1 with every GPU of the machine (``ray start --head``),
one engine actor per GPU (``num_gpus=1``) runs the ChatTTS engine (torch fp16 CUDA graphs by
default) on the full-size random checkpoint (``--make-checkpoint`` writes it with the
project's generator), and the same generated script of mixed zh/en lines is spoken with 1
GPU and then with 2, side by side in one run. Every line is fixed to ``--frames`` code
frames per chunk (``min_frames = max_frames``) because sampling on random weights ends at
random points. While each configuration runs, ``nvidia-smi`` is sampled every 0.5 s.

Printed: lines/s, audio-seconds per second, mean GPU utilisation per device, scaling
efficiency (N-GPU throughput / (N x 1-GPU throughput)), and where the time goes (routing
tasks, synthesis inside the actors, driver writes, driver waiting). NCCL/NVLink settings are
left as the machine sets them: the run is data parallel and needs no collectives.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "chattts"

ZH = ["今天", "下午", "会议", "报告", "显存", "模型", "数据", "客户", "预算", "版本"]
EN = ["meeting", "review", "GPU", "deadline", "pipeline", "release", "budget", "sprint"]


def make_script(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            zh, en = ZH[i % len(ZH)], EN[(i * 3) % len(EN)]
            fh.write(f"第{i + 1}条：{zh}的 {en} 改到 {i % 12 + 1}:30 PM，带 {i % 7 + 2} 份{zh}。\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class GpuSampler:
    """``nvidia-smi`` utilisation per GPU, sampled in a thread (empty without nvidia-smi)."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.samples: dict[int, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        cmd = ["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits"]
        while not self._stop.is_set():
            try:
                out = subprocess.run(cmd, capture_output=True, text=True, timeout=5).stdout
            except (OSError, subprocess.TimeoutExpired):
                return
            for row in out.strip().splitlines():
                idx, util = (x.strip() for x in row.split(","))
                self.samples.setdefault(int(idx), []).append(float(util))
            self._stop.wait(self.every)

    def __enter__(self) -> GpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def means(self) -> dict[int, float]:
        return {i: sum(v) / len(v) for i, v in sorted(self.samples.items()) if v}


def engine_options(extra: str, model_dir: str | None) -> tuple[dict, dict]:
    """Split ``--extra`` mixvox flags into engine options and per-call overrides."""
    factory: dict[str, object] = {}
    if model_dir:
        factory["model_dir"] = model_dir
    args = shlex.split(extra)
    per_call = {"min_frames", "max_frames", "temperature", "top_p", "top_k", "speed"}
    overrides: dict[str, object] = {}
    for flag, value in zip(args[::2], args[1::2], strict=False):
        key = flag.lstrip("-").replace("-", "_")
        target = overrides if key in per_call else factory
        target[key] = (
            float(value)
            if key in ("temperature", "top_p", "speed")
            else (int(value) if key in ("min_frames", "max_frames", "top_k") else value)
        )
    return factory, overrides


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", default="chattts")
    ap.add_argument("--model-dir")
    ap.add_argument("--make-checkpoint", action="store_true", help="write --model-dir first")
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--gpus", default="1,2", help="GPU counts to compare, e.g. 1,2")
    ap.add_argument("--cpu-workers", help="instead of GPUs: CPU engine actor counts, e.g. 1,2")
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--extra", default="--backend torch --device cuda --precision fp16")
    ap.add_argument("--lines-per-task", type=int, default=16)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    a = ap.parse_args(argv)

    from mixvox.distributed import SynthSpec, run_on_ray

    work = Path(tempfile.mkdtemp(prefix="mixvox-raygpu-"))
    # A fresh HOME and cache for the run (and for the Ray processes it starts): nothing is
    # written into the user's home, and no earlier Ray state in ~/.ray is picked up.
    os.environ.update(
        HOME=str(work / "home"),
        XDG_CACHE_HOME=str(work / "home" / ".cache"),
        RAY_USAGE_STATS_ENABLED="0",
    )
    os.environ.pop("RAY_ADDRESS", None)
    if a.make_checkpoint:
        if not a.model_dir:
            raise SystemExit("--make-checkpoint needs --model-dir")
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "make_checkpoint.py"),
                a.model_dir,
                "--source",
                str(SHARED),
            ],
            check=True,
        )
    script = work / "script.txt"
    make_script(script, a.lines)
    if a.cpu_workers:
        counts = [int(x) for x in a.cpu_workers.split(",")]
        gpus_per_worker = 0.0
        factory, overrides = {}, {}
    else:
        counts = [int(x) for x in a.gpus.split(",")]
        gpus_per_worker = 1.0
        factory, overrides = engine_options(a.extra, a.model_dir)
        overrides.setdefault("min_frames", a.frames)
        overrides.setdefault("max_frames", a.frames)
    spec = SynthSpec(a.engine, options=factory)
    ray_bin = str(Path(sys.executable).with_name("ray"))
    if not Path(ray_bin).exists():
        ray_bin = "ray"
    port = free_port()
    head = [
        ray_bin,
        "start",
        "--head",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={work / 'ray'}",
    ]
    subprocess.run(head, check=True, capture_output=True)
    address = f"127.0.0.1:{port}"
    rows = []
    try:
        import ray

        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        total_gpus = ray.cluster_resources().get("GPU", 0)
        for n in counts:
            if gpus_per_worker and n > total_gpus:
                print(f"skip {n} GPU(s): the machine has {total_gpus:g}", flush=True)
                continue
            out = work / f"out{n}"
            with GpuSampler() as sampler:
                t0 = time.perf_counter()
                res = run_on_ray(
                    script,
                    out,
                    spec,
                    workers=n,
                    gpus_per_worker=gpus_per_worker,
                    default_engine=a.engine,
                    overrides=overrides,
                    progress=False,
                    lines_per_task=a.lines_per_task,
                    address=address,
                )
                wall = time.perf_counter() - t0
            secs = sum(
                float(json.loads(r).get("duration") or 0)
                for r in (out / "manifest.jsonl").read_text(encoding="utf-8").splitlines()
            )
            rows.append(
                {
                    "workers": n,
                    "wall_s": wall,
                    "done": res.done,
                    "failed": len(res.failed),
                    "lines_per_s": res.done / wall,
                    "audio_s_per_s": secs / wall,
                    "gpu_util": sampler.means(),
                    "timings": res.timings,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        ray.shutdown()
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True)
    if not rows:
        return 1
    base = rows[0]["lines_per_s"] / rows[0]["workers"]
    unit = "GPU" if gpus_per_worker else "CPU worker"
    print(
        f"\n{a.engine} {a.extra if gpus_per_worker else ''}; {a.lines} lines, {a.frames} frames "
        f"per chunk; {platform.node()}, {os.cpu_count()} cores, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print(
        f"| {unit}s | lines/s | audio-s/s | GPU util % (per device) | efficiency | "
        "route s | synth s (sum) | write s | driver wait s | failed |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        util = ", ".join(f"{u:.0f}" for u in r["gpu_util"].values()) or "–"
        eff = r["lines_per_s"] / (r["workers"] * base)
        t = r["timings"]
        print(
            f"| {r['workers']} | {r['lines_per_s']:.2f} | {r['audio_s_per_s']:.1f} | {util} | "
            f"{eff:.0%} | {t['route']:.1f} | {t['synthesize']:.1f} | {t['write']:.1f} | "
            f"{t['wait']:.1f} | {r['failed']} |"
        )
    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / f"ray_gpu_{time.strftime('%Y%m%dT%H%M', time.gmtime())}.json"
    log.write_text(json.dumps({"args": vars(a) | {"out": str(a.out)}, "rows": rows}, indent=1))
    print(f"log: {log}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
