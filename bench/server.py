"""Benchmark ``mixvox serve``: N concurrent streaming clients against a real server process.

For each N, N clients send ``POST /v1/audio/speech`` (``response_format=pcm``, streamed) at
once, each one request, and the script reports first-byte latency p50/p99, aggregate audio
seconds per wall second, errors by status, and the server's peak RSS (VmHWM from /proc).
Loopback only; bounded in count and time.

    python bench/server.py --engine espeak --clients 10 50 100
    python bench/server.py --model-dir ../shared/chattts/tiny --clients 10 50

Prints a Markdown table row per N (the BENCHMARKS.md format).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import httpx

TEXT = "今天的 meeting 改到 3:30 PM，请大家准时参加。"


def start_server(args: list[str], max_queue: int) -> tuple[subprocess.Popen[str], str]:
    home = tempfile.mkdtemp(prefix="mixvox-bench-")
    env = {**os.environ, "HOME": home, "XDG_CACHE_HOME": home + "/.cache"}
    env.pop("MIXVOX_API_KEYS", None)
    cmd = [sys.executable, "-m", "mixvox", "serve", "--port", "0", "--max-queue", str(max_queue)]
    cmd += ["--max-per-key", "1000", *args]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    url = ""
    for line in proc.stderr:
        m = re.search(r"serving on (http://\S+?)/ ", line)
        if m:
            url = m.group(1)
            break
    if not url:
        raise SystemExit("server did not start")
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
    t_end = time.monotonic() + 300
    while time.monotonic() < t_end:
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("server never became ready")


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def one(client: httpx.AsyncClient, url: str) -> tuple[int, float | None, int]:
    t0 = time.perf_counter()
    first = None
    n = 0
    async with client.stream(
        "POST", url + "/v1/audio/speech", json={"input": TEXT, "response_format": "pcm"}
    ) as r:
        async for chunk in r.aiter_bytes():
            if first is None:
                first = time.perf_counter() - t0
            n += len(chunk)
        return r.status_code, first, n


async def round_(url: str, n: int) -> dict[str, object]:
    limits = httpx.Limits(max_connections=n + 4)
    async with httpx.AsyncClient(timeout=600, limits=limits) as client:
        t0 = time.perf_counter()
        res = await asyncio.gather(*(one(client, url) for _ in range(n)), return_exceptions=True)
        wall = time.perf_counter() - t0
    codes: dict[str, int] = {}
    firsts, audio = [], 0.0
    for r in res:
        if isinstance(r, BaseException):
            codes[type(r).__name__] = codes.get(type(r).__name__, 0) + 1
            continue
        status, first, nbytes = r
        codes[str(status)] = codes.get(str(status), 0) + 1
        if status == 200 and first is not None:
            firsts.append(first)
            audio += nbytes / 2 / 24000
    firsts.sort()

    def pct(p: float) -> float:
        return firsts[min(len(firsts) - 1, int(p * len(firsts)))] if firsts else float("nan")

    return {
        "n": n,
        "p50": statistics.median(firsts) if firsts else float("nan"),
        "p99": pct(0.99),
        "audio_per_s": audio / wall,
        "wall": wall,
        "codes": codes,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, nargs="+", default=[10, 50, 100])
    ap.add_argument("--max-queue", type=int, default=128)
    args, server_args = ap.parse_known_args()
    proc, url = start_server(server_args, args.max_queue)
    try:
        engine = httpx.get(url + "/health").json()["engine"]
        print(
            f"# {engine} {' '.join(server_args)} | {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores | {time.strftime('%Y-%m-%d')}"
        )
        print(
            "| engine | clients | first byte p50 | first byte p99 | audio s/s | wall s | statuses | server peak RSS |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for n in args.clients:
            r = asyncio.run(round_(url, n))
            codes = ", ".join(f"{k}: {v}" for k, v in sorted(r["codes"].items()))  # type: ignore[union-attr]
            print(
                f"| {engine} | {n} | {r['p50']:.2f} s | {r['p99']:.2f} s | "
                f"{r['audio_per_s']:.1f} | {r['wall']:.1f} | {codes} | "
                f"{peak_rss_mb(proc.pid):.0f} MB |",
                flush=True,
            )
    finally:
        proc.terminate()
        proc.wait(60)


if __name__ == "__main__":
    main()
