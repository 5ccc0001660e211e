"""GPU audio path: first streamed chunk, peak memory end to end, RTF, and the audio error.

``bench/gpu.py`` calls the functions below for its rows; alone::

    python bench/gpu_audio.py --out DIR [--ckpt /tmp/chattts_full] [--gpt default,torch,fused]

Every figure comes from ``ChatTTSEngine(backend="torch", device="cuda", precision="fp16")``
on the full-size random checkpoint (``engines/chattts/randckpt``), text in, PCM out:

* ``first_chunk``: ms from ``stream(text)`` to the first PCM samples, for the very first
  request after the engine loaded and warm (median of ``repeats``), exact streaming and
  the reduced first look-ahead (``first_lookahead_frames``);
* ``peak_memory``: ``torch.cuda.max_memory_allocated`` over load + one ~10 s request at
  batch 1 (``max_batch=1``) and with the default 8 batch slots, and ``nvidia-smi``'s
  figure for the process (CUDA context and allocator cache included);
* ``rtf``: text -> wav for about 10 s of audio (469 frames), the streamed request's time.

Scope: the engine (``ChatTTSEngine.stream``: raw text rendered, tokenized, decoded and
vocoded), not the router's frontends (CPU work; bench/text_speed.py).
* ``accuracy``: Decoder + Vocos in fp16 against fp32 (mel and waveform), the window
  streaming path against the whole decode, the fast start against the exact decode;
* ``parity_tiny``: the window path with CUDA graphs, fp32, against the whole decode on the
  tiny checkpoint (must be < 1e-5).

``gpt``: "default" (the engine's own choice), "torch" (``GraphGPT``, torch graphs) or
"fused" (``TritonGraphGPT``): the engine's ``load_gpt`` is swapped for the run, so both
GPT paths can be measured whatever the default is.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MIXVOX_SHARED", ROOT.parent / "shared"))
TEXT = "今天的 meeting 改到 3:30 PM，RTX 4070 跑 TensorRT 只要 22ms。"
FRAMES = 469  # about 10 s of audio


def log(*a: object) -> None:
    print(*a, flush=True)


def rel(a: Any, b: Any) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@contextlib.contextmanager
def gpt_path(kind: str) -> Iterator[None]:
    """Make the engine load the GPT runner ``kind`` ("default", "torch", "fused")."""
    from mixvox.engines.chattts import engine as eng_mod

    if kind == "default":
        yield
        return
    orig = eng_mod.load_gpt

    def load(asset: Any, runtime: Any, **kw: Any) -> Any:
        if kind == "fused":
            from mixvox.engines.chattts.gpt.triton_decode import TritonGraphGPT as cls
        else:
            from mixvox.engines.chattts.gpt.cuda_graph import GraphGPT as cls
        return cls(
            asset,
            precision=runtime.precision,
            device=runtime.device,
            max_batch=kw.get("max_batch", 8),
            gpt_sha256=kw.get("gpt_sha256"),
        )

    eng_mod.load_gpt = load  # type: ignore[assignment]
    try:
        yield
    finally:
        eng_mod.load_gpt = orig  # type: ignore[assignment]


def engine(ckpt: Path, kind: str = "default", **opts: Any) -> Any:
    """The ChatTTS engine on the GPU (fp16 GPT, the engine's own audio defaults)."""
    from mixvox.engines.chattts.engine import ChatTTSEngine

    with gpt_path(kind):
        return ChatTTSEngine(
            ckpt, backend="torch", device="cuda", precision="fp16", verify=False, **opts
        )


def _request(frames: int = FRAMES) -> tuple[Any, list, Any]:
    """One chunk of raw text (the engine renders and tokenizes it; the router's frontends
    are CPU work measured by bench/text_speed.py, and need packages the GPU image lacks)."""
    from mixvox.interfaces import SynthesisOptions
    from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

    w = Word(TEXT, TEXT, [], 0, len(TEXT), lang="raw")
    utt = Utterance(
        TEXT, [Sentence(TEXT, 0, len(TEXT), "raw", [Span("raw", TEXT, 0, len(TEXT), [w])])]
    )
    extra = {"raw": True, "min_frames": frames, "max_frames": frames, "refine": False}
    return utt, [Chunk(0, [w])], SynthesisOptions(seed=0, extra=extra)


def first_chunk_ms(eng: Any, frames: int = FRAMES) -> tuple[float, float, int]:
    """(ms to the first PCM samples, ms to the end, samples): text in -> PCM out."""
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    first, n = None, 0
    for piece in eng.stream(*_request(frames)):
        if first is None and len(piece.samples):
            first = time.perf_counter() - t0
        n += len(piece.samples)
    torch.cuda.synchronize()
    total = time.perf_counter() - t0
    return 1000 * (first if first is not None else float("nan")), 1000 * total, n


def nvidia_smi_mib() -> float | None:
    """This process's GPU memory as nvidia-smi sees it (None if unavailable)."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [r.split(",") for r in out.strip().splitlines() if r.strip()]
    mine = [float(m) for p, m in rows if p.strip() == str(os.getpid())]
    if mine:
        return sum(mine)
    try:  # in a VM the pid may not match: the card's total used
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout
        return float(out.strip().splitlines()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def _cuda_storages() -> dict[int, tuple[int, str, list[int]]]:
    """Every CUDA tensor storage that Python objects hold: data pointer -> (bytes, dtype,
    shape of one tensor on it)."""
    import gc

    import torch

    gc.collect()
    out: dict[int, tuple[int, str, list[int]]] = {}
    for o in gc.get_objects():
        try:
            if isinstance(o, torch.Tensor) and o.is_cuda:
                st = o.untyped_storage()
                out[st.data_ptr()] = (st.nbytes(), str(o.dtype), list(o.shape))
        except Exception:  # objects that refuse inspection are skipped
            continue
    return out


def engine_rows(
    ckpt: Path,
    kind: str = "default",
    *,
    max_batch: int = 1,
    lookaheads: tuple[int, ...] = (4, 8),
    repeats: int = 5,
    warmup: bool = True,
) -> dict:
    """Load an engine, then: first request after load, warm first chunk (exact and each
    reduced look-ahead), RTF for ~10 s, peak memory (load + requests), in that order."""
    import torch

    torch.cuda.synchronize()
    before = set(_cuda_storages())  # (collects garbage first: none freed inside the window)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    smi_before = nvidia_smi_mib()  # the process (context, earlier engines' leftovers) before
    t0 = time.perf_counter()
    eng = engine(ckpt, kind, max_batch=max_batch, warmup=warmup)
    row: dict = {
        "gpt": kind,
        "warmup_request_at_load": warmup,
        "gpt_runner": type(eng.gpt).__name__,
        "max_batch": max_batch,
        "audio_path": eng.audio_path,
        "audio_dtype": eng.audio_dtype,
        "window_graphs": bool(eng.window and eng.window.use_graphs),
        "window_graph_error": eng.window.graph_error if eng.window else None,
        "load_s": round(time.perf_counter() - t0, 2),
    }
    # where the peak is reached (load and warm-up captures, or the requests): the session-4
    # rise of the fused row (499 -> 636 MiB) was not isolated
    row["peak_after_load_mib"] = round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)
    row["allocated_after_load_mib"] = round((torch.cuda.memory_allocated() - base) / 2**20, 1)
    # the CUDA tensors the load left alive (Python-visible; the rest of the allocated bytes
    # are held by captured graphs' private pools), the largest first
    new = {k: v for k, v in _cuda_storages().items() if k not in before}
    row["live_tensors_after_load_mib"] = round(sum(v[0] for v in new.values()) / 2**20, 1)
    row["largest_live_tensors_after_load"] = [
        [round(n / 2**20, 1), dt, sh] for n, dt, sh in sorted(new.values(), reverse=True)[:8]
    ]
    row["first_request_ms"] = round(first_chunk_ms(eng)[0], 1)
    row["peak_after_first_request_mib"] = round(
        (torch.cuda.max_memory_allocated() - base) / 2**20, 1
    )
    warm: dict = {}
    ends = []
    for la in (None, *lookaheads):
        eng.first_lookahead_frames = la
        runs = [first_chunk_ms(eng) for _ in range(repeats)]
        warm["exact" if la is None else f"first_lookahead={la}"] = round(
            float(np.median([r[0] for r in runs])), 1
        )
        if la is None:
            ends = runs
    eng.first_lookahead_frames = None
    row["first_chunk_warm_ms"] = warm
    e2e_ms = float(np.median([r[1] for r in ends]))
    audio_s = ends[0][2] / 24000
    row["e2e_s"] = round(e2e_ms / 1000, 3)
    row["audio_s"] = round(audio_s, 2)
    row["rtf"] = round(e2e_ms / 1000 / max(audio_s, 1e-9), 4)
    row["peak_gpu_mib"] = round((torch.cuda.max_memory_allocated() - base) / 2**20, 1)
    row["reserved_gpu_mib"] = round(torch.cuda.max_memory_reserved() / 2**20, 1)
    row["nvidia_smi_mib"] = nvidia_smi_mib()
    row["nvidia_smi_before_load_mib"] = smi_before
    row["gpt_cache_mib"] = round(_gpt_cache_bytes(eng.gpt) / 2**20, 1)
    eng.close()
    del eng
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    log("engine:", json.dumps(row))
    return row


def timeline(
    ckpt: Path,
    kind: str = "default",
    *,
    first_lookahead: int | None = 4,
    switch_intervals: tuple[float | None, ...] = (None, 0.0005),
    repeats: int = 5,
) -> dict:
    """Where the first chunk's time goes: host times (ms from ``stream()``) of the GPT's
    prompt embedding, prefill, step windows, end-flag polls, the consumer receiving frames,
    each vocoder piece and the first PCM; per Python thread-switch interval (None: the
    default 5 ms), since the GPT thread and the vocoding thread share the GIL."""
    import torch

    eng = engine(ckpt, kind, max_batch=1, first_lookahead_frames=first_lookahead)
    marks: list[tuple[str, float]] = []
    t0 = [0.0]

    def mark(label: str) -> None:
        marks.append((label, round(1000 * (time.perf_counter() - t0[0]), 2)))

    def wrap(obj: Any, name: str, label: str, after: bool = False) -> None:
        orig = getattr(obj, name)

        def f(*a: Any, **k: Any) -> Any:
            mark(label)
            out = orig(*a, **k)
            if after:
                mark(label + " end")
            return out

        setattr(obj, name, f)

    cuda = eng.gpt.cuda
    wrap(eng.gpt, "_embed", "embed")
    wrap(cuda, "prefill", "prefill", after=True)
    wrap(cuda, "_run_steps", "steps")
    wrap(cuda, "_poll", "poll", after=True)
    wrap(eng, "_take", "frames to consumer")
    wrap(eng.window, "run", "vocoder piece", after=True)
    out: dict = {"gpt_runner": type(eng.gpt).__name__, "first_lookahead": first_lookahead}
    old = sys.getswitchinterval()
    try:
        for si in switch_intervals:
            sys.setswitchinterval(si or old)
            firsts, tl = [], []
            for _ in range(repeats):
                marks.clear()
                torch.cuda.synchronize()
                t0[0] = time.perf_counter()
                first = None
                for piece in eng.stream(*_request()):
                    if first is None and len(piece.samples):
                        first = 1000 * (time.perf_counter() - t0[0])
                        mark("first PCM")
                torch.cuda.synchronize()
                firsts.append(first)
                tl = [m for m in marks if m[1] <= (first or 0) + 0.01]
            key = f"switch_{si or old}"
            out[key] = {"first_chunk_ms": firsts, "median": float(np.median(firsts))}
            out[key]["timeline_last"] = tl
            log(
                f"timeline {out['gpt_runner']} L={first_lookahead} switch {si or old}:",
                json.dumps(out[key]),
            )
    finally:
        sys.setswitchinterval(old)
        eng.close()
        torch.cuda.empty_cache()
    return out


def _gpt_cache_bytes(gpt: Any) -> int:
    cuda = getattr(gpt, "cuda", None)
    try:
        return int(cuda.memory_bytes()) if cuda is not None else 0
    except Exception:
        return 0


def parity_tiny() -> dict:
    """Window path, fp32, CUDA graphs, tiny checkpoint vs the whole decode (numpy ISTFT)."""
    import torch

    from mixvox.engines.chattts.audio import load_audio_models
    from mixvox.engines.chattts.audio.window import DeviceFrames, WindowStream, WindowVocoder

    m = load_audio_models(SHARED / "chattts" / "tiny" / "asset", backend="torch", device="cuda")
    out: dict = {}
    for src in ("hidden", "codes"):
        v = WindowVocoder(m, src, max_frames=256)
        rng = np.random.default_rng(0)
        worst = 0.0
        for n in (1, 13, 80, 200):
            x = (
                rng.standard_normal((n, 32)).astype(np.float32)
                if src == "hidden"
                else rng.integers(0, 625, (n, 4))
            )
            whole = m.hidden_to_wav(x) if src == "hidden" else m.codes_to_wav(x)
            st = WindowStream(v, first_chunk_frames=8, chunk_frames=16)
            xt = torch.from_numpy(x).cuda()
            ps = [st.feed(DeviceFrames(xt[i : i + 16])) for i in range(0, n, 16)]
            y = np.concatenate([*ps, st.finish()])
            assert y.shape == whole.shape, (y.shape, whole.shape)
            worst = max(worst, float(np.abs(y - whole).max() / np.abs(whole).max()))
        out[src] = {"max_rel_err": worst, "graphs": v.use_graphs, "graph_error": v.graph_error}
    log("parity tiny (window, fp32, graphs) vs whole decode:", json.dumps(out))
    return out


def accuracy(ckpt: Path, frames: int = 200, lookaheads: tuple[int, ...] = (4, 8, 16)) -> dict:
    """fp16 vs fp32 (mel, waveform), window streaming vs whole, fast start vs exact; and the
    time of one window piece per chunk size (graph replay, events)."""
    import functools

    import torch

    sys.path.insert(0, str(ROOT / "bench"))
    from first_chunk import difference  # same error measures as the CPU table

    from mixvox.engines.chattts.audio import load_audio_models
    from mixvox.engines.chattts.audio.faststart import FastStartVocoder
    from mixvox.engines.chattts.audio.window import WindowStream, WindowVocoder

    asset = ckpt / "asset"
    m32 = load_audio_models(asset, backend="torch", device="cuda", sources=("hidden",))
    m16 = load_audio_models(
        asset, backend="torch", device="cuda", dtype="float16", sources=("hidden",)
    )
    h = np.random.default_rng(0).standard_normal((frames, 768)).astype(np.float32)
    mel32, mel16 = m32.decode_hidden(h), m16.decode_hidden(h)
    wav32, wav16 = m32.vocode(mel32), m16.vocode(mel16)
    res: dict = {
        "frames": frames,
        "fp16_mel_rel_err": rel(mel16, mel32),
        "fp16_wave_rel_err": rel(wav16, wav32),
        "fp16_wave_snr_db": -20 * np.log10(max(rel(wav16, wav32), 1e-12)),
    }
    for name, m in (("fp32", m32), ("fp16", m16)):
        v = WindowVocoder(m, "hidden", max_frames=frames + 64)
        st = WindowStream(v, first_chunk_frames=8, chunk_frames=32)
        y = np.concatenate([*(st.feed(h[i : i + 16]) for i in range(0, frames, 16)), st.finish()])
        res[f"window_{name}_vs_whole_{name}"] = rel(y, wav32 if name == "fp32" else wav16)
        res[f"window_{name}_vs_whole_fp32"] = rel(y, wav32)
        if name == "fp16":
            times = {}
            for n in v.sizes:
                buf = v.buffer()
                ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(True)
                with torch.cuda.stream(v.stream):
                    v.run(buf, 0, n, frames, n * v.spf)  # warm
                    ev0.record(v.stream)
                    for _ in range(20):
                        v.run(buf, 0, n, frames, n * v.spf)
                    ev1.record(v.stream)
                torch.cuda.synchronize()
                times[n] = round(ev0.elapsed_time(ev1) / 20, 3)
                v.release(buf)
            res["window_piece_ms_incl_copy_back"] = times
            fast = {}
            for la in lookaheads:
                fs = FastStartVocoder(
                    m,
                    first_lookahead_frames=la,
                    first_chunk_frames=8,
                    chunk_frames=32,
                    make_stream=functools.partial(WindowStream, v),
                )
                ps = [fs.feed(h[i : i + 16]) for i in range(0, frames, 16)]
                y = np.concatenate([*ps, fs.finish()])
                end = fs.switched_at + fs.fade if fs.switched_at else 0
                d = difference(y, wav16, end)
                d["vs_fp32_exact_wave_rel_err_first_part"] = rel(y[:end], wav32[:end])
                fast[f"first_lookahead={la}"] = d
            res["fast_start_vs_exact_fp16"] = fast
    log("accuracy:", json.dumps(res, default=float))
    return res


def make_checkpoint(path: Path) -> Path:
    from mixvox.engines.chattts import randckpt

    if not (path / "asset" / "gpt" / "model.safetensors").exists():
        t0 = time.time()
        randckpt.make_checkpoint(path, SHARED / "chattts", seed=0)
        log(f"generated full-size random checkpoint in {time.time() - t0:.1f}s")
    return path


def table(results: dict) -> str:
    lines = [
        "| GPT path | max_batch | warm-up request at load | first request after load ms | warm first chunk ms "
        "(exact / L=4 / L=8) | RTF ~10 s | peak MiB (torch) | nvidia-smi MiB |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results.get("engines", []):
        w = r["first_chunk_warm_ms"]
        lines.append(
            f"| {r['gpt_runner']} | {r['max_batch']} | {r['warmup_request_at_load']} | "
            f"{r['first_request_ms']} | "
            + " / ".join(str(v) for v in w.values())
            + f" | {r['rtf']} | {r['peak_gpu_mib']} | {r['nvidia_smi_mib']} |"
        )
    acc = results.get("accuracy")
    if acc:
        lines.append("")
        lines.append(
            f"fp16 vs fp32 ({acc['frames']} frames): mel rel err {acc['fp16_mel_rel_err']:.2e}, "
            f"wave rel err {acc['fp16_wave_rel_err']:.2e}; window fp32 vs whole fp32 "
            f"{acc['window_fp32_vs_whole_fp32']:.2e}; window fp16 vs whole fp16 "
            f"{acc['window_fp16_vs_whole_fp16']:.2e}; piece ms {acc.get('window_piece_ms_incl_copy_back')}"
        )
        for k, d in acc.get("fast_start_vs_exact_fp16", {}).items():
            lines.append(f"fast start {k} vs exact: {json.dumps(d, default=float)}")
    par = results.get("parity_tiny")
    if par:
        lines.append(f"parity tiny (window fp32, graphs) vs whole: {json.dumps(par)}")
    return "\n".join(lines) + "\n"


def main() -> int:
    import traceback

    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("gpu_audio_out"))
    ap.add_argument("--ckpt", type=Path, default=Path("/tmp/chattts_full"))
    ap.add_argument(
        "--configs",
        default="default:1:nowarm,default:1,default:8,fused:1",
        help="engine rows as GPT:max_batch[:nowarm] (GPT: default, torch, fused; nowarm: "
        "no warm-up request at load)",
    )
    ap.add_argument("--only", default="parity,accuracy,engines")
    ap.add_argument("--timeline", default="", help="GPT paths for the first-chunk timeline")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    only = set(args.only.split(","))
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    results["gpu"] = torch.cuda.get_device_name(0)
    steps: list[tuple[str, Any]] = [
        ("parity", lambda: results.__setitem__("parity_tiny", parity_tiny())),
        ("accuracy", lambda: results.__setitem__("accuracy", accuracy(make_checkpoint(args.ckpt)))),
    ]
    for cfg in args.configs.split(","):
        kind, mb, *flags = cfg.split(":")
        steps.insert(
            -1,
            (
                "engines",
                lambda kind=kind, mb=int(mb), warm="nowarm" not in flags: results.setdefault(
                    "engines", []
                ).append(
                    engine_rows(
                        make_checkpoint(args.ckpt),
                        kind,
                        max_batch=mb,
                        lookaheads=(4, 8),
                        repeats=5 if mb == 1 and warm else 2,
                        warmup=warm,
                    )
                ),
            ),
        )
    for kind in [k for k in args.timeline.split(",") if k]:
        steps.append(
            (
                "timeline",
                lambda kind=kind: results.setdefault("timeline", []).append(
                    timeline(make_checkpoint(args.ckpt), kind)
                ),
            )
        )
    for name, fn in steps:
        if name not in only:
            continue
        try:
            fn()
        except Exception:
            results.setdefault("errors", []).append(traceback.format_exc())
            log(f"step {name} failed:\n{traceback.format_exc()}")
        (args.out / "gpu_audio.json").write_text(json.dumps(results, indent=2, default=float))
    t = table(results)
    (args.out / "gpu_audio_table.md").write_text(t)
    log(t)
    return 1 if results.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
