"""CPU benchmark of the ChatTTS engine: every backend on the same checkpoint, in one run.

    python bench/make_checkpoint.py /tmp/chattts-full          # once: full-size random weights
    python bench/cpu.py /tmp/chattts-full [--frames 128] [--threads 2] [--json out.jsonl]

For each configuration (onnx fp32, onnx int8, onnx int4, torch fp32 by default; ``--configs`` to change)
a fresh process runs ``mixvox bench`` (:func:`mixvox.engines.chattts.cli.run_bench`), so peak
RSS is per configuration and no runtime state leaks between them. Reported per configuration:

* decode frames/s at batch 1 and batch 8 (GPT code frames over all items, per second);
* RTF of a whole synthesis (text -> waveform, streamed through Decoder + Vocos) of 10 s of
  audio -- pinned with min = max frames, since random weights would stop at random points;
* time to the first streamed audio of that synthesis;
* the refine stage's cost for the same text (what ``refine=True`` adds before any audio);
* peak RSS, load time (graph building is cached: run twice and read the second run).

One code frame is 1/46.875 s of audio, so real time needs 46.9 frames/s per stream. Figures
from a shared or loaded machine are not comparable: check the load average printed first, and
each run's ``foreign_cpu_pct`` (CPU time other processes used during that run, in % of one
core; more than a few % means the run shared the cores). ``onnx:int4/128`` picks the int4
block size, ``+kv32`` / ``+kv8`` the KV cache (``onnx:int4/128+kv32``), ``+mlp128`` the block of
the MLP's gate|up and down matrices alone (``onnx:int4+mlp128``: q|k|v and o at 64).
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

# Runs inside a separate environment that has the reference package (PyPI ``chattts`` 0.2.5,
# torch, transformers); it is only *run*, never imported by mixvox. argv: model_dir frames
# batches(comma) threads. Measures the same quantities as ``mixvox bench``.
REF_SCRIPT = r"""
import json, resource, sys, time
import numpy as np, torch
import ChatTTS
model_dir, frames, batches, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
decode_only = len(sys.argv) > 5 and sys.argv[5] == "decode-only"
if threads != "0":
    torch.set_num_threads(int(threads))
a = model_dir + "/asset/"
chat = ChatTTS.Chat()
t0 = time.perf_counter()
chat._load(vocos_ckpt_path=a + "Vocos.safetensors", dvae_ckpt_path=a + "DVAE.safetensors",
           gpt_ckpt_path=a + "gpt", embed_path=a + "Embed.safetensors",
           decoder_ckpt_path=a + "Decoder.safetensors", tokenizer_path=a + "tokenizer",
           device=torch.device("cpu"))
load_s = time.perf_counter() - t0
text = sys.stdin.read()
spk = chat.sample_random_speaker()
P = ChatTTS.Chat.InferCodeParams
def code(texts, n):
    p = P(spk_emb=spk, min_new_token=n, max_new_token=n, show_tqdm=False,
          ensure_non_empty=False, manual_seed=0)
    return next(chat._infer_code(list(texts), False, chat.device, True, p))
code([text], 4)
fps = {}
for b in [int(x) for x in batches.split(",")]:
    t0 = time.perf_counter()
    out = code([text] * b, frames)
    dt = time.perf_counter() - t0
    fps[str(b)] = round(sum(len(i) for i in out.ids) / dt, 2)
if decode_only:
    print(json.dumps({"backend": "reference", "precision": "fp32", "batch": 1,
        "frames": frames, "load_s": round(load_s, 3),
        "frames_per_s": fps[batches.split(",")[0]], "frames_per_s_by_batch": fps,
        "rtf": None, "first_chunk_ms": None, "refine_ms": None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
    sys.exit(0)
n = int(round(10.0 * 46.875))
kw = dict(skip_refine_text=True, do_text_normalization=False, do_homophone_replacement=False,
          split_text=False)
params = P(spk_emb=spk, min_new_token=n, max_new_token=n, show_tqdm=False, manual_seed=0)
t0 = time.perf_counter()
wavs = chat.infer(text, params_infer_code=params, **kw)
synth_s = time.perf_counter() - t0
audio_s = sum(w.size for w in wavs) / 24000
t0 = time.perf_counter()
first = None
for piece in chat.infer(text, stream=True, params_infer_code=params, **kw):
    if first is None and np.asarray(piece).size:
        first = time.perf_counter() - t0
R = ChatTTS.Chat.RefineTextParams
ntok = len(chat.tokenizer._tokenizer.encode(text, add_special_tokens=False)) + 8
t0 = time.perf_counter()
chat.infer(text, refine_text_only=True, do_text_normalization=False,
           do_homophone_replacement=False, split_text=False,
           params_refine_text=R(min_new_token=ntok, max_new_token=ntok, show_tqdm=False))
refine_s = time.perf_counter() - t0
print(json.dumps({"backend": "reference", "precision": "fp32", "batch": 1,
    "frames": frames, "load_s": round(load_s, 3), "frames_per_s": fps[batches.split(",")[0]],
    "frames_per_s_by_batch": fps, "audio_s": round(audio_s, 3), "synth_s": round(synth_s, 3),
    "rtf": round(synth_s / audio_s, 4) if audio_s else None,
    "first_chunk_ms": round(1000 * first, 1) if first is not None else None,
    "refine_tokens": ntok, "refine_ms": round(1000 * refine_s, 1),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def _busy_s() -> float:
    """CPU seconds all processes have used since boot (``/proc/stat``; 0 where absent)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            v = [int(x) for x in fh.readline().split()[1:9]]
    except (OSError, ValueError):
        return 0.0
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def _own_s() -> float:
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def run_metered(cmd: list[str], **kw: object) -> tuple[subprocess.CompletedProcess, float, float]:
    """``subprocess.run(cmd)``, its wall time, and the CPU other processes used meanwhile in %
    of one core (machine-wide CPU time minus this process's and its children's): a run with
    more than a few % of foreign CPU was measured on a loaded machine."""
    b0, o0, t0 = _busy_s(), _own_s(), time.perf_counter()
    proc = subprocess.run(cmd, **kw)  # type: ignore[call-overload]
    wall = time.perf_counter() - t0
    foreign = max(0.0, (_busy_s() - b0) - (_own_s() - o0))
    return proc, wall, round(100 * foreign / max(wall, 1e-9), 1)


def run_reference(model_dir: Path, python: str, args: argparse.Namespace) -> dict:
    from mixvox.engines.chattts.cli import BENCH_TEXT

    cmd = [
        python,
        "-c",
        REF_SCRIPT,
        str(model_dir),
        str(args.frames),
        ",".join(map(str, args.batches)),
        str(args.threads or 0),
        "decode-only" if args.decode_only else "full",
    ]
    proc, wall, foreign = run_metered(
        cmd, input=BENCH_TEXT, capture_output=True, text=True, timeout=args.timeout
    )
    if proc.returncode != 0:
        return {"backend": "reference", "precision": "fp32", "error": proc.stderr.strip()[-500:]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_s"] = round(wall, 1)
    res["foreign_cpu_pct"] = foreign
    return res


def run_config(model_dir: Path, backend: str, precision: str, args: argparse.Namespace) -> dict:
    precision, *flags = precision.split("+")  # "int4+kv32": fp32 KV cache (kv8: int8)
    precision, _, block = precision.partition("/")  # "int4/128": that int4 block size
    kv = next((f for f in flags if f in ("kv32", "kv8")), "")
    # "int4+mlp128": gate|up and down with block 128 (q|k|v, o keep the config's block)
    mlp = next((f[3:] for f in flags if f.startswith("mlp")), "")
    unknown = [f for f in flags if f not in ("kv32", "kv8") and not f.startswith("mlp")]
    if unknown:
        return {"backend": backend, "precision": precision, "error": f"unknown flags {unknown}"}
    env = {k: v for k, v in os.environ.items() if k != "MIXVOX_INT4_MLP_BLOCK"}  # only +mlp sets it
    if mlp:
        env["MIXVOX_INT4_MLP_BLOCK"] = mlp
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
    if args.first_lookahead is not None:
        cmd += ["--first-lookahead", str(args.first_lookahead)]
    if args.decode_only:
        cmd += ["--decode-only"]
    if block:
        cmd += ["--int4-block", block]
    if kv:
        cmd += ["--kv-cache", {"kv32": "fp32", "kv8": "int8"}[kv]]
    proc, wall, foreign = run_metered(
        cmd, capture_output=True, text=True, timeout=args.timeout, env=env
    )
    if proc.returncode != 0:
        return {"backend": backend, "precision": precision, "error": proc.stderr.strip()[-500:]}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["process_s"] = round(wall, 1)
    res["foreign_cpu_pct"] = foreign
    if mlp:
        res["int4_mlp_block"] = int(mlp)
    return res


def table(rows: list[dict], batches: list[int]) -> str:
    head = (
        ["config"]
        + [f"frames/s b{b}" for b in batches]
        + ["RTF (10 s)", "first chunk ms", "refine ms", "peak RSS MB", "load s"]
    )
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        name = (
            f"{r['backend']} {r['precision']}"
            + (f"/{r['int4_block']}" if r.get("int4_block") else "")
            + (f" mlp/{r['int4_mlp_block']}" if r.get("int4_mlp_block") else "")
            + (f" kv {r['kv_cache']}" if r.get("kv_cache") else "")
        )
        if "error" in r:
            lines.append(f"| {name} | error: {r['error'][:80]} |")
            continue
        fps = r.get("frames_per_s_by_batch", {})
        cells = (
            [name]
            + [str(fps.get(str(b), "")) for b in batches]
            + [
                str(r.get("rtf")),
                str(r["first_chunk_ms"]),
                str(r["refine_ms"]),
                str(r["peak_rss_mb"]),
                str(r["load_s"]),
            ]
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(rounds: list[dict[str, dict]], configs: list[str]) -> str:
    """Median batch-1 frames/s per configuration over the rounds, and the median of the
    per-round ratios against the reference (each ratio taken within one round, so a load
    change between rounds cancels out)."""
    import statistics

    lines = [
        "| config | median frames/s b1 | per-round frames/s (CPU % other processes used "
        "meanwhile) | median ratio vs reference (per round) |",
        "|---|---|---|---|",
    ]
    for cfg in configs:
        fps = [r[cfg].get("frames_per_s") for r in rounds if "error" not in r[cfg]]
        ratios = [
            r[cfg]["frames_per_s"] / r["reference:fp32"]["frames_per_s"]
            for r in rounds
            if "reference:fp32" in r
            and "error" not in r[cfg]
            and "error" not in r["reference:fp32"]
        ]
        med = f"{statistics.median(fps):.2f}" if fps else "error"
        rat = (
            f"{statistics.median(ratios):.2f}x ({', '.join(f'{x:.2f}' for x in ratios)})"
            if ratios
            else "-"
        )
        per = ", ".join(
            f"{r[cfg]['frames_per_s']} ({r[cfg].get('foreign_cpu_pct', '?')} %)"
            for r in rounds
            if "error" not in r[cfg]
        )
        lines.append(f"| {cfg} | {med} | {per} | {rat} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--frames", type=int, default=128, help="frames decoded per item")
    ap.add_argument("--batches", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8])
    ap.add_argument("--configs", default="onnx:fp32,onnx:int8,onnx:int4,torch:fp32")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--first-lookahead",
        type=int,
        default=None,
        help="reduced first-chunk look-ahead (frames) for the mixvox configs' synthesis",
    )
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument(
        "--decode-only",
        action="store_true",
        help="decode frames/s only: no refine pass, no whole synthesis (shorter processes)",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run every configuration this many times, interleaved (the order rotates each "
        "round); ratios against the reference are taken within each round, then the median",
    )
    ap.add_argument("--json", dest="json_out", type=Path, help="also append JSON lines here")
    ap.add_argument(
        "--reference",
        metavar="PYTHON",
        help="python of an environment with the reference chattts 0.2.5 installed",
    )
    args = ap.parse_args(argv)
    load = os.getloadavg()
    print(
        f"# {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        file=sys.stderr,
    )
    rows = []
    configs = args.configs.split(",") + (["reference:fp32"] if args.reference else [])
    rounds: list[dict[str, dict]] = []
    for rnd in range(args.rounds):
        shift = rnd % len(configs)
        this_round: dict[str, dict] = {}
        for cfg in configs[shift:] + configs[:shift]:
            backend, precision = cfg.split(":")
            print(f"# round {rnd + 1}/{args.rounds}: {backend} {precision} ...", file=sys.stderr)
            if backend == "reference":
                res = run_reference(args.model_dir, args.reference, args)
            else:
                res = run_config(args.model_dir, backend, precision, args)
            res["loadavg_1m"] = round(os.getloadavg()[0], 1)
            res["round"] = rnd + 1
            this_round[cfg] = res
            if rnd == 0:
                rows.append(res)
            print(json.dumps(res, sort_keys=True))
            if args.json_out:
                with open(args.json_out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(res, sort_keys=True) + "\n")
        rounds.append(this_round)
    if args.rounds > 1:
        print(ratio_table(rounds, configs))
    print(table(rows, args.batches))
    ok = all("error" not in r for rnd in rounds for r in rnd.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
