"""CPU benchmark of the ChatTTS engine: every backend on the same checkpoint, in one run.

    python bench/make_checkpoint.py /tmp/chattts-full          # once: full-size random weights
    python bench/cpu.py /tmp/chattts-full [--frames 128] [--threads 2] [--json out.jsonl]

For each configuration (onnx fp32, onnx int8, torch fp32 by default; ``--configs`` to change)
a fresh process runs ``mixvox bench`` (:func:`mixvox.engines.chattts.cli.run_bench`), so peak
RSS is per configuration and no runtime state leaks between them. Reported per configuration:

* decode frames/s at batch 1 and batch 8 (GPT code frames over all items, per second);
* RTF of a whole synthesis (text -> waveform, streamed through Decoder + Vocos) of 10 s of
  audio -- pinned with min = max frames, since random weights would stop at random points;
* time to the first streamed audio of that synthesis;
* the refine stage's cost for the same text (what ``refine=True`` adds before any audio);
* peak RSS, load time (graph building is cached: run twice and read the second run).

One code frame is 1/46.875 s of audio, so real time needs 46.9 frames/s per stream. Figures
from a shared or loaded machine are not comparable: check the load average printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

CODE = "from mixvox.cli import main; main()"


def run_config(model_dir: Path, backend: str, precision: str, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        "-c",
        CODE,
        "bench",
        "--model-dir",
        str(model_dir),
        "--frames",
        str(args.frames),
        "--backend",
        backend,
        "--precision",
        precision,
        "--json",
    ]
    for b in args.batches:
        cmd += ["--batch", str(b)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"backend": backend, "precision": precision, "error": proc.stderr.strip()[-500:]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_s"] = round(wall, 1)
    return res


def table(rows: list[dict], batches: list[int]) -> str:
    head = (
        ["config"]
        + [f"frames/s b{b}" for b in batches]
        + ["RTF (10 s)", "first chunk ms", "refine ms", "peak RSS MB", "load s"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        name = f"{r['backend']} {r['precision']}"
        if "error" in r:
            lines.append(f"| {name} | error: {r['error'][:80]} |")
            continue
        fps = r.get("frames_per_s_by_batch", {})
        cells = (
            [name]
            + [str(fps.get(str(b), "")) for b in batches]
            + [
                str(r["rtf"]),
                str(r["first_chunk_ms"]),
                str(r["refine_ms"]),
                str(r["peak_rss_mb"]),
                str(r["load_s"]),
            ]
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--frames", type=int, default=128, help="frames decoded per item")
    ap.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8])
    ap.add_argument("--configs", default="onnx:fp32,onnx:int8,torch:fp32")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--json", dest="json_out", type=Path, help="also append JSON lines here")
    args = ap.parse_args(argv)
    load = os.getloadavg()
    print(
        f"# {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        file=sys.stderr,
    )
    rows = []
    for cfg in args.configs.split(","):
        backend, precision = cfg.split(":")
        print(f"# running {backend} {precision} ...", file=sys.stderr)
        res = run_config(args.model_dir, backend, precision, args)
        res["loadavg_1m"] = round(os.getloadavg()[0], 1)
        rows.append(res)
        print(json.dumps(res, sort_keys=True))
        if args.json_out:
            with open(args.json_out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(res, sort_keys=True) + "\n")
    print(table(rows, args.batches))
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
