"""ChatTTS's own commands: ``mixvox speaker``, ``mixvox download``, ``mixvox bench``.

Added to the ``mixvox`` group by the plugin hook ``mixvox_register_commands``. Heavy imports
(onnxruntime, the models) happen inside the commands, so ``mixvox --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from mixvox.engines.chattts.options import BACKENDS, PRECISIONS
from mixvox.interfaces import MixvoxError


def _fail(exc: MixvoxError) -> click.ClickException:
    from mixvox.cliflags import click_error

    return click_error(str(exc), getattr(exc, "exit_code", 1))  # key/encryption errors: 2


@click.group("speaker")
def speaker_group() -> None:
    """ChatTTS speakers: make, inspect and convert speaker strings."""


@speaker_group.command("new")
@click.option("--seed", type=click.IntRange(min=0), help="Seed (default: a random one).")
@click.option(
    "--dim",
    type=click.IntRange(min=1, max=8192),
    default=768,
    show_default=True,
    help="Vector size (the model's hidden size).",
)
@click.option(
    "--npy", "npy", type=click.Path(dir_okay=False), help="Also save the vector as a .npy file."
)
def speaker_new(seed: int | None, dim: int, npy: str | None) -> None:
    """Print a new speaker string (seeded random voice).

    \b
    mixvox speaker new --seed 42 > voice.txt
    mixvox say --speaker @voice.txt "你好" -o out.wav
    """
    from mixvox.engines.chattts.speaker import Speaker

    if seed is None:
        import secrets

        seed = secrets.randbelow(2**31)
        click.echo(f"mixvox: seed {seed}", err=True)
    try:
        spk = Speaker.parse(f"seed:{seed}", dim=dim)
        if npy:
            spk.save_npy(npy)
    except MixvoxError as exc:
        raise _fail(exc) from None
    click.echo(spk.to_string())


@speaker_group.command("info")
@click.argument("spec")
def speaker_info(spec: str) -> None:
    """Show what a speaker (string, @file or seed:N) holds."""
    import numpy as np

    from mixvox.engines.chattts.speaker import Speaker

    try:
        spk = Speaker.parse(spec)
    except MixvoxError as exc:
        raise _fail(exc) from None
    v = spk.vector.astype(np.float32)
    click.echo(
        json.dumps(
            {
                "source": spk.source,
                "dim": spk.dim,
                "norm": round(float(np.linalg.norm(v)), 4),
                "mean": round(float(v.mean()), 4),
                "std": round(float(v.std()), 4),
            },
            ensure_ascii=False,
        )
    )


@click.command("download")
@click.option(
    "--dest",
    type=click.Path(file_okay=False),
    help="Target folder (default: mixvox's data dir, where the engine looks).",
)
@click.option("--repo", default="2Noise/ChatTTS", show_default=True, help="Hugging Face repo.")
@click.option("--revision", help="Branch, tag or commit.")
@click.option("--force", is_flag=True, help="Download again even if the files are there.")
def download_cmd(dest: str | None, repo: str, revision: str | None, force: bool) -> None:
    """Download the ChatTTS weights (json + safetensors only) and verify their SHA-256."""
    from mixvox.engines.chattts.download import download

    try:
        assets = download(dest, repo=repo, revision=revision, force=force)
    except MixvoxError as exc:
        raise _fail(exc) from None
    click.echo(f"ChatTTS weights verified in {assets.root} ({assets.manifest_source})")


@click.command("bench")
@click.option("--model-dir", type=click.Path(file_okay=False, exists=True), required=True)
@click.option("--frames", type=click.IntRange(min=1, max=2048), default=256, show_default=True)
@click.option("--backend", type=click.Choice(BACKENDS), default="onnx", show_default=True)
@click.option("--precision", type=click.Choice(PRECISIONS), default="fp32", show_default=True)
@click.option("--device", default="cpu", show_default=True)
@click.option(
    "--batch",
    "batches",
    type=click.IntRange(min=1, max=64),
    multiple=True,
    help="Decode batch size (repeatable: --batch 1 --batch 8); default 1.",
)
@click.option("--threads", type=click.IntRange(min=1), help="Intra-op threads.")
@click.option("--text", default=None, help="Text for the whole-synthesis run.")
@click.option(
    "--first-lookahead",
    type=click.IntRange(min=0),
    default=None,
    help="Reduced look-ahead (code frames) of the first chunk, cross-faded into exact audio.",
)
@click.option(
    "--decode-only",
    is_flag=True,
    help="Measure decode frames/s only (skip the refine pass and the whole synthesis).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON line on stdout.")
@click.option(
    "--key-file", type=click.Path(dir_okay=False), help="Key of an encrypted model (keygen)."
)
@click.option(
    "--int4-block",
    type=click.IntRange(min=1),
    default=None,
    help="Weights per int4 quantization block (32, 64, 128; with --precision int4).",
)
@click.option(
    "--kv-cache",
    type=click.Choice(("fp32", "int8")),
    default=None,
    help="ONNX CPU GPT's KV cache (default: the precision's, int8 for int4).",
)
def bench_cmd(
    model_dir: str,
    frames: int,
    backend: str,
    precision: str,
    device: str,
    batches: tuple[int, ...],
    threads: int | None,
    text: str | None,
    first_lookahead: int | None,
    decode_only: bool,
    as_json: bool,
    key_file: str | None,
    int4_block: int | None,
    kv_cache: str | None,
) -> None:
    """Measure decode speed, real-time factor, first-chunk latency and peak memory."""
    try:
        res = run_bench(
            Path(model_dir),
            frames=frames,
            backend=backend,
            precision=precision,
            device=device,
            batches=batches or (1,),
            threads=threads,
            text=text,
            key_file=key_file,
            first_lookahead=first_lookahead,
            decode_only=decode_only,
            int4_block=int4_block,
            kv_cache=kv_cache,
        )
    except MixvoxError as exc:
        raise _fail(exc) from None
    if as_json:
        click.echo(json.dumps(res, sort_keys=True))
    else:
        for k, v in sorted(res.items()):
            click.echo(f"{k:>20}: {v}")
    sys.stdout.flush()


BENCH_TEXT = (
    "今天的会议改到下午三点半，请大家准时参加。"
    "The meeting moves to three thirty, so please be on time."
)


def run_bench(
    model_dir: Path,
    *,
    frames: int = 256,
    backend: str = "onnx",
    precision: str = "fp32",
    device: str = "cpu",
    batches: tuple[int, ...] = (1,),
    threads: int | None = None,
    text: str | None = None,
    synth_seconds: float = 10.0,
    key_file: str | None = None,
    first_lookahead: int | None = None,
    decode_only: bool = False,
    int4_block: int | None = None,
    kv_cache: str | None = None,
) -> dict[str, object]:
    """One benchmark run in this process (run each configuration in its own process: the peak
    RSS figure is per process).

    * ``frames_per_s``: GPT code frames per second over ``batches[0]`` parallel items decoding
      exactly ``frames`` frames each (end code suppressed), prompt prefill included, and
      ``frames_per_s_by_batch`` for every batch size asked for;
    * ``rtf``: wall time / audio duration of a whole synthesis (text -> waveform, streamed
      through the vocoder) of ``synth_seconds`` of audio, pinned with min = max frames so
      random weights give the same length as real ones;
    * ``first_chunk_ms``: from the ``stream()`` call to the first audio samples of that run;
    * ``peak_rss_mb``: the process's peak resident memory (``ru_maxrss``).

    ``decode_only`` skips the refine pass and the synthesis (their fields are ``None``): on a
    loaded machine, many short interleaved decode runs give steadier ratios than a few long
    ones (``bench/cpu.py --rounds``).
    """
    import resource
    import time

    import numpy as np

    from mixvox.engines.chattts.engine import ChatTTSEngine
    from mixvox.engines.chattts.gpt import SamplingParams
    from mixvox.engines.chattts.gpt.onnx_stack import INT4_BLOCK

    t0 = time.perf_counter()
    eng = ChatTTSEngine(
        model_dir,
        backend=backend,
        precision=precision,
        device=device,
        threads=threads,
        key_file=key_file,
        first_lookahead_frames=first_lookahead,
        int4_block=int4_block,
        kv_cache=kv_cache,
    )
    load_s = time.perf_counter() - t0
    kv_used = getattr(getattr(eng.gpt, "stack", None), "kv_cache", None)  # onnx: fp32 / int8
    body = text or BENCH_TEXT
    prompt = eng.prompt_ids(body, "[speed_5]", speaker=True)
    spk = eng.speaker_vector(None)
    params = SamplingParams(suppress_eos=True, max_new_tokens=frames)
    rng = np.random.default_rng(0)
    # warm-up: first calls allocate buffers and let the runtime pick kernels
    eng.gpt.generate(
        [prompt],
        stage="code",
        spk_emb=spk,
        spk_emb_token_id=eng.tokenizer.spk_emb_id,
        params=SamplingParams(suppress_eos=True, max_new_tokens=4),
        rng=rng,
    )
    fps: dict[str, float] = {}
    step_ms: dict[str, float] = {}
    for batch in batches:
        t0 = time.perf_counter()
        res = eng.gpt.generate(
            [prompt] * batch,
            stage="code",
            spk_emb=spk,
            spk_emb_token_id=eng.tokenizer.spk_emb_id,
            params=params,
            rng=rng,
        )
        decode_s = time.perf_counter() - t0
        fps[str(batch)] = round(sum(len(r.ids) for r in res) / decode_s, 2)
        step_ms[str(batch)] = round(1000 * decode_s / frames, 2)

    ref_tokens: int | None = None
    refine_s: float | None = None
    synth_s: float | None = None
    audio_s: float | None = None
    first: float | None = None
    if not decode_only:
        ref_tokens, refine_s, synth_s, audio_s, first = _refine_and_synthesis(
            eng, body, rng, synth_seconds
        )
    eng.close()
    return {
        "backend": backend,
        "precision": precision,
        "int4_block": int4_block or (INT4_BLOCK if precision == "int4" else None),
        "kv_cache": kv_used,
        "device": device,
        "batch": batches[0],
        "frames": frames,
        "threads": threads,
        "load_s": round(load_s, 3),
        "frames_per_s": fps[str(batches[0])],
        "frames_per_s_by_batch": fps,
        "step_ms": step_ms[str(batches[0])],
        "step_ms_by_batch": step_ms,
        "audio_s": None if audio_s is None else round(audio_s, 3),
        "synth_s": None if synth_s is None else round(synth_s, 3),
        "rtf": round(synth_s / audio_s, 4) if synth_s is not None and audio_s else None,
        "first_chunk_ms": round(1000 * first, 1) if first is not None else None,
        "first_lookahead": first_lookahead,
        "refine_tokens": ref_tokens,
        "refine_ms": None if refine_s is None else round(1000 * refine_s, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _refine_and_synthesis(
    eng: Any, body: str, rng: Any, synth_seconds: float
) -> tuple[int, float, float, float, float | None]:
    """The refine pass and the whole streamed synthesis of :func:`run_bench`:
    (refine tokens, refine s, synthesis s, audio s, first chunk s)."""
    import time

    import numpy as np

    from mixvox.engines.chattts import render
    from mixvox.engines.chattts.gpt import SamplingParams
    from mixvox.interfaces import SynthesisOptions
    from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

    # The refine stage's cost (what refine=True adds before the first audio): one refine pass
    # over the text producing as many tokens as the text has plus a few prosody tokens -- a
    # real model's typical output; random weights would otherwise run to the cap.
    ref_prompt = eng.tokenizer.encode(render.refine_prompt(body))
    ref_tokens = len(eng.tokenizer.encode(body)) + 8
    t0 = time.perf_counter()
    eng.gpt.generate(
        [np.asarray(ref_prompt)],
        stage="refine",
        params=SamplingParams(
            temperature=0.7,
            repetition_penalty=1.0,
            eos_id=eng.tokenizer.eos_id,
            suppress_eos=True,
            max_new_tokens=ref_tokens,
        ),
        rng=rng,
    )
    refine_s = time.perf_counter() - t0

    n = int(round(synth_seconds * 46.875))
    word = Word(body, body, [], 0, len(body), lang="raw")
    utt = Utterance(
        body, [Sentence(body, 0, len(body), "raw", [Span("raw", body, 0, len(body), [word])])]
    )
    opts = SynthesisOptions(seed=0, extra={"raw": True, "min_frames": n, "max_frames": n})
    t0 = time.perf_counter()
    first = None
    samples = 0
    for piece in eng.stream(utt, [Chunk(0, [word])], opts):
        if first is None and piece.samples.size:
            first = time.perf_counter() - t0
        samples += piece.samples.size
    synth_s = time.perf_counter() - t0
    audio_s = samples / eng.sample_rate
    return ref_tokens, refine_s, synth_s, audio_s, first


def register(cli: click.Group) -> None:
    """Add the commands to ``cli`` (called by the plugin hook)."""
    for cmd in (speaker_group, download_cmd, bench_cmd):
        if cmd.name not in cli.commands:
            cli.add_command(cmd)
