"""Time to the first streamed audio on CPU, exact vs a reduced first look-ahead, and its cost.

    python bench/make_checkpoint.py /tmp/fullckpt        # once: full-size random weights
    python bench/first_chunk.py /tmp/fullckpt [--precisions int8 int4] [--lookaheads 4 8 16]
        [--threads 2] [--frames 160] [--repeats 2]

One process, one engine per precision (``ChatTTSEngine``, ONNX on the CPU). For each
first-chunk mode (``exact``: plain exact streaming; ``L``: ``first_lookahead_frames=L``, an
approximate start cross-faded into the exact stream, see ``audio/faststart.py``):

* ``first chunk ms``: from the ``stream()`` call to the first audio samples (best of
  ``--repeats``), the engine's own path (prompt, prefill, decode, vocoder);
* ``frames``: GPT frames decoded before that piece could be vocoded (first chunk + look-ahead);
* the difference against the exact decode of the same hidden states (one decode of
  ``--frames`` frames, fed to the vocoder 8 frames at a time as the engine does), over the
  approximate start (up to the end of the cross-fade): waveform rel. error
  ``||y - y_exact|| / ||y_exact||`` (and SNR in dB), and the log-spectrum distance (RMS of
  the dB difference of 1024-point STFT magnitudes, hop 256); after the fade the samples are
  the exact ones (checked: max abs difference printed).

Random weights make speech-like structure absent, so the error figures are a pessimistic
stand-in for real weights. Figures from a loaded machine: see the load average printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np


def log_spec_db(y: np.ndarray, n_fft: int = 1024, hop: int = 256) -> np.ndarray:
    if y.size < n_fft:
        y = np.pad(y, (0, n_fft - y.size))
    frames = np.lib.stride_tricks.sliding_window_view(y, n_fft)[::hop]
    mag = np.abs(np.fft.rfft(frames * np.hanning(n_fft), axis=-1))
    return 20 * np.log10(mag + 1e-5)


def difference(approx: np.ndarray, exact: np.ndarray, end: int) -> dict:
    a, e = approx[:end].astype(np.float64), exact[:end].astype(np.float64)
    if end == 0:
        return {"approx_samples": 0, "after_fade_max_abs": float(np.abs(approx - exact).max())}
    err = float(np.linalg.norm(a - e)) / max(float(np.linalg.norm(e)), 1e-12)
    lsd = float(np.sqrt(np.mean((log_spec_db(a) - log_spec_db(e)) ** 2)))
    return {
        "approx_samples": int(end),
        "wave_rel_err": round(float(err), 4),
        "snr_db": round(float(-20 * np.log10(max(err, 1e-12))), 2),
        "log_spec_dist_db": round(lsd, 2),
        "after_fade_max_abs": float(np.abs(approx[end:] - exact[end:]).max())
        if approx.size > end
        else 0.0,
    }


def first_chunk_ms(eng, utt, chunk, opts) -> float:
    t0 = time.perf_counter()
    gen = eng.stream(utt, [chunk], opts)
    try:
        for piece in gen:
            if piece.samples.size:
                return 1000 * (time.perf_counter() - t0)
    finally:
        gen.close()
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir", type=Path)
    ap.add_argument("--precisions", nargs="+", default=["int8", "int4"])
    ap.add_argument("--lookaheads", nargs="+", type=int, default=[4, 8, 16])
    ap.add_argument("--first-chunk-frames", type=int, default=8)
    ap.add_argument("--frames", type=int, default=160)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", dest="json_out", type=Path)
    args = ap.parse_args(argv)

    from mixvox.engines.chattts.audio.faststart import FastStartVocoder
    from mixvox.engines.chattts.cli import BENCH_TEXT
    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.engines.chattts.gpt import SamplingParams
    from mixvox.interfaces import SynthesisOptions
    from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

    load = os.getloadavg()
    print(f"# {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    body = BENCH_TEXT
    word = Word(body, body, [], 0, len(body), lang="raw")
    utt = Utterance(
        body, [Sentence(body, 0, len(body), "raw", [Span("raw", body, 0, len(body), [word])])]
    )
    chunk = Chunk(0, [word])
    n = args.frames
    opts = SynthesisOptions(seed=0, extra={"raw": True, "min_frames": n, "max_frames": n})
    rows = []
    for precision in args.precisions:
        eng = ChatTTSEngine(
            args.model_dir,
            backend="onnx",
            precision=precision,
            threads=args.threads,
            first_chunk_frames=args.first_chunk_frames,
        )
        exact_la = eng.audio.receptive_field(eng.source)["code_frames"]
        # the same hidden states for every mode's difference
        prompt = eng.prompt_ids(body, "[speed_5]", speaker=True)
        (res,) = eng.gpt.generate(
            [prompt],
            stage="code",
            spk_emb=eng.speaker_vector(None),
            spk_emb_token_id=eng.tokenizer.spk_emb_id,
            params=SamplingParams(suppress_eos=True, max_new_tokens=n),
            rng=np.random.default_rng(0),
        )
        hidden = np.asarray(res.hidden, np.float32)
        whole = eng.audio.hidden_to_wav(hidden)
        first_chunk_ms(eng, utt, chunk, opts)  # warm-up
        for mode in ["exact", *args.lookaheads]:
            eng.first_lookahead_frames = None if mode == "exact" else int(mode)
            ms = min(first_chunk_ms(eng, utt, chunk, opts) for _ in range(args.repeats))
            row: dict = {
                "precision": precision,
                "mode": "exact" if mode == "exact" else f"first_lookahead={mode}",
                "first_chunk_ms": round(ms, 1),
                "frames_before_first": args.first_chunk_frames
                + (exact_la if mode == "exact" else int(mode)),
            }
            if mode != "exact":
                fs = FastStartVocoder(
                    eng.audio,
                    first_lookahead_frames=int(mode),
                    first_chunk_frames=args.first_chunk_frames,
                    chunk_frames=eng.chunk_frames,
                )
                pieces = [fs.feed(hidden[i : i + 8]) for i in range(0, n, 8)]
                y = np.concatenate([*pieces, fs.finish()])
                assert y.shape == whole.shape and fs.switched_at is not None
                # nothing approximate was emitted if the exact stream was first (switch at 0)
                end = fs.switched_at + fs.fade if fs.switched_at else 0
                row.update(difference(y, whole, end))
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.json_out:
                with open(args.json_out, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
        eng.close()
    print(f"# load average at the end {os.getloadavg()[0]:.1f}")
    head = [
        "precision",
        "first chunk",
        "ms",
        "frames decoded first",
        "approx. audio s",
        "wave rel. err",
        "SNR dB",
        "log-spectrum dist. dB",
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        approx_s = r.get("approx_samples")
        cells = [
            r["precision"],
            r["mode"],
            f"{r['first_chunk_ms']:.0f}",
            str(r["frames_before_first"]),
            f"{approx_s / 24000:.2f}" if approx_s else "0 (exact)",
            str(r.get("wave_rel_err", "0")),
            str(r.get("snr_db", "inf")),
            str(r.get("log_spec_dist_db", "0")),
        ]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
