"""The ChatTTS engine: IR chunks -> prompts -> GPT codes -> mel -> 24 kHz audio, streamed.

Pipeline of one ``stream()`` call:

1. each chunk is rendered to ChatTTS text (:mod:`.render`) and wrapped in the code prompt
   ``[Stts][spk_emb][speed_5]{text}[Ptts]``; optionally the text first goes through the
   *refine* stage (the same GPT writing ``[uv_break]``-style prosody tokens);
2. all chunks of the utterance (up to ``max_batch`` at a time) decode as **one GPT batch**,
   each stopping at its own end code, each capped by the length guard (its own max frames);
3. a worker thread runs the GPT while this generator turns finished frames into audio with a
   :class:`~mixvox.engines.chattts.audio.StreamingVocoder` (Decoder + Vocos): the first
   chunk's audio comes out while the GPT is still decoding, and later chunks' frames wait,
   buffered, for their turn, so audio is yielded per chunk in order;
4. a chunk that ends with no frames at all is decoded again (alone), at most ``max_retries``
   times; a chunk that hits its frame cap is reported.

Refinement is **off by default**. It runs a whole extra GPT pass over the text before any audio
can be produced (no streaming through it): one step per text token plus the prosody tokens it
adds. Measured with ``bench/cpu.py`` on the full-size random checkpoint (2-core CPU, 47 refined
tokens for a 39-token sentence, after the ORT fused-kernel work; BENCHMARKS.md): +1.6 s
before the first audio with onnx fp32 (first audio otherwise after 2.5 s), +0.7 s with onnx
int8 (otherwise 1.1 s) -- about +65 % latency. It also
samples at temperature 0.7, so it may rewrite words our frontends chose deliberately
(respellings, homophones), against the rule that nothing is dropped silently. ``refine=True``
(or per call ``extra["refine"]=True``) turns it on for livelier prosody.

Options (``SynthesisOptions.extra``): ``temperature``, ``top_p``, ``top_k``,
``repetition_penalty``, ``refine``, ``refine_temperature``, ``oral``/``laugh``/``break``
(refine prompt), ``prompt`` (code prompt, default ``[speed_5]`` or from ``speed``), ``speed``,
``raw``, ``min_frames``, ``max_frames``, ``save_codes`` (path: the codes of all chunks,
concatenated, as an ``int64 [frames, num_vq]`` ``.npy``). Unknown keys are reported with a
warning. ``options.speaker``: a speaker string, ``@file``, ``seed:N`` or ``none`` (the
model's ``[empty_spk]``, a different voice every chunk); without one, ``options.seed`` picks
``seed:N``, else :data:`DEFAULT_SPEAKER`, so every chunk of an utterance has the same voice.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import re
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mixvox.engines.chattts import render
from mixvox.engines.chattts.assets import ModelAssets, VerifyMode, load_assets
from mixvox.engines.chattts.audio import AudioModels, StreamingVocoder, load_audio_models
from mixvox.engines.chattts.audio.faststart import FastStartVocoder
from mixvox.engines.chattts.audio.window import DeviceFrames, WindowStream, WindowVocoder
from mixvox.engines.chattts.gpt import GPTRunner, SamplingParams, load_gpt
from mixvox.engines.chattts.gpu_link import device_generate, supports_device_frames
from mixvox.engines.chattts.runtime import RuntimeDecision, resolve
from mixvox.engines.chattts.speaker import Speaker, load_spk_stat
from mixvox.engines.chattts.tokenizer import ChatTTSTokenizer
from mixvox.interfaces import AudioChunk, MixvoxError, SynthesisOptions
from mixvox.ir import Chunk, Utterance

log = logging.getLogger("mixvox.chattts")

SAMPLE_RATE = 24000
#: The voice used when the caller names none (a fixed seeded speaker: one voice per utterance).
DEFAULT_SPEAKER = "seed:1"
#: Default number of retries of a chunk that produced no audio frames.
DEFAULT_RETRIES = 2

KNOWN_EXTRA = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "repetition_penalty",
        "refine",
        "refine_temperature",
        "oral",
        "laugh",
        "break",
        "prompt",
        "speed",
        "raw",
        "min_frames",
        "max_frames",
        "save_codes",
    }
)


#: A speaking-rate control word, as SSML ``<prosody rate>`` writes it into the IR.
_SPEED_WORD = re.compile(r"\[speed_(\d)\]")
_SPEED_IN_PROMPT = re.compile(r"\[speed_\d\]")


def speed_segments(chunks: Sequence[Chunk], call_prompt: str) -> list[tuple[Chunk, str | None]]:
    """Cut ``chunks`` at their ``[speed_N]`` control words: (piece, code prompt or ``None``).

    ChatTTS takes ``[speed_N]`` in the code prompt, before the text (``[Stts][spk_emb]
    [speed_5]{text}[Ptts]``, as the reference writes it); in the middle of the text it is a
    token the code stage did not learn to follow there, so a ``<prosody rate>`` span would
    not reliably change rate. Each piece therefore gets its own
    prompt (the call's prompt with its speed token replaced, or the token put first) and the
    control word itself is left out of the text. A rate holds until the next control word,
    across chunks, as a ``<prosody>`` element does; pieces keep their chunk's index. A piece
    is only cut where words were spoken at the old rate, so punctuation never stands alone.
    """
    out: list[tuple[Chunk, str | None]] = []
    prompt: str | None = None
    for chunk in chunks:
        pieces: list[tuple[list, str | None]] = []
        cur: list = []
        for w in chunk.words:
            m = _SPEED_WORD.fullmatch(w.spoken.strip()) if w.kind == "control" else None
            if m is None:
                cur.append(w)
                continue
            if any(x.kind == "word" for x in cur):
                pieces.append((cur, prompt))
                cur = []
            tok = m.group(0)
            if _SPEED_IN_PROMPT.search(call_prompt):
                prompt = _SPEED_IN_PROMPT.sub(tok, call_prompt, count=1)
            else:
                prompt = tok + call_prompt
        if cur or not pieces:
            pieces.append((cur, prompt))
        out.extend((Chunk(chunk.index, words), pr) for words, pr in pieces)
    return out


class _Cancelled(Exception):
    """Raised inside the GPT callback to stop a generation nobody listens to any more."""


@dataclass
class _Item:
    """One chunk's state while its batch decodes."""

    chunk: Chunk
    text: str
    bounds: render.FrameBounds
    prompt_ids: np.ndarray | None = None
    frames: list[np.ndarray] = field(default_factory=list)  # hidden or codes, not yet vocoded
    codes: list[Any] = field(default_factory=list)  # numpy, or DeviceFrames on the GPU
    n_frames: int = 0
    done: bool = False
    finished: bool = False
    retries: int = 0
    user_cap: bool = False  # max_frames came from the caller, not the length guard
    #: The code prompt of this item when a ``[speed_N]`` control word changed it (SSML
    #: ``<prosody rate>``), else ``None``: the call's prompt.
    prompt: str | None = None
    #: Whether this item ends its IR chunk (a chunk cut at a speed change gives several).
    last: bool = True
    #: The settings of this item's own request when one GPT batch holds several requests
    #: (:meth:`ChatTTSEngine.synthesize_many`), else ``None``: the batch's call.
    call: _Call | None = None
    #: With ``call``: the end-code minimum of this item's request (the smallest of its
    #: items', as when the request decodes alone).
    min_new: int | None = None
    #: With ``call``: the index of this item's request.
    request: int = 0


@dataclass
class _Call:
    """Per-call settings resolved from :class:`SynthesisOptions`."""

    temperature: float
    top_p: float | None
    top_k: int | None
    repetition_penalty: float
    refine: bool
    refine_temperature: float
    refine_prompt: str
    prompt: str
    speed: float
    raw: bool
    min_frames: int | None
    max_frames: int | None
    save_codes: str | None
    speaker: np.ndarray | None
    rng: np.random.Generator


def _frames_option(name: str, value: object) -> int | None:
    """``None`` or a frame count >= 0 (an int or its decimal text); else a clear error."""
    if value is None:
        return None
    try:
        n = int(str(value).strip()) if not isinstance(value, bool) else -1
    except ValueError:
        n = -1
    if n < 0:
        raise MixvoxError(f"{name} must be an integer >= 0 (code frames), got {value!r}")
    return n


class ChatTTSEngine:
    """ChatTTS through ONNX Runtime (default, no torch needed) or torch.

    ``model_dir``: the folder holding ``asset/`` (default: see :mod:`.assets`). ``verify``:
    ``True`` checks every file's SHA-256 (remembered verdicts), ``"force"`` re-hashes, ``False``
    skips (tests, trusted builds). ``source``: ``"hidden"`` (GPT hidden states -> Decoder, as
    the reference) or ``"codes"`` (codes -> DVAE). ``max_batch``: chunks decoded together.
    ``stream_every``: GPT frames per hand-over to the vocoder. ``first_chunk_frames`` /
    ``chunk_frames`` / ``lookahead_frames``: :class:`~.audio.StreamingVocoder` settings;
    the default exact lookahead (the vocoder's receptive field, 51 frames at full size) gives
    audio identical to a whole decode but delays the first piece: on the full-size model with
    onnx int8 the first audio comes after 1.9 s, with ``lookahead_frames=8`` after 0.5 s.
    ``first_lookahead_frames``: a reduced look-ahead for the start only, cross-faded into the
    exact stream (:class:`~.audio.faststart.FastStartVocoder`): early first audio, and every
    sample after the first ~1 s exact; None (default) = plain streaming. ``int4_block``:
    inputs per 4-bit scale with ``precision="int4"`` (32: more faithful, 64 default, 128:
    faster; BENCHMARKS.md). ``kv_cache``: the ONNX CPU GPT's KV cache, ``"fp32"`` or
    ``"int8"`` (static per-channel scales; default int8 for int4, fp32 otherwise, see
    ``onnx_stack.KV_CACHE_DEFAULT``; its agreement with fp32 is in BENCHMARKS.md).
    ``audio_path``: ``"window"`` (:class:`~.audio.window.WindowVocoder`: fixed windows, CUDA
    graphs per chunk size on its own stream, GPT frames kept on the GPU) or ``"layers"``
    (:class:`~.audio.StreamingVocoder`); default: window for the torch audio backend on
    CUDA, layers elsewhere. ``audio_dtype``: the torch audio models' dtype (default float16
    on CUDA unless ``precision="fp32"``, else float32; BENCHMARKS.md has the error).
    ``warmup``: run one short request at load (default: on CUDA), so the first real
    request finds every kernel compiled and buffer grown.
    ``speaker``: the voice when a call names none (default :data:`DEFAULT_SPEAKER`).
    """

    name = "chattts"
    sample_rate = SAMPLE_RATE
    consumes = "text"
    #: Per-call options this engine reads (the router refuses others as typos).
    known_options = KNOWN_EXTRA
    #: Chunks longer than this get hard to keep on track (and slower to start); prosody cuts here.
    max_chunk_chars = 80

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        backend: str = "onnx",
        precision: str | None = None,
        device: str = "cpu",
        refine: bool = False,
        *,
        verify: VerifyMode = True,
        source: str = "hidden",
        threads: int | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        max_batch: int = 8,
        max_retries: int = DEFAULT_RETRIES,
        stream_every: int = 8,
        first_chunk_frames: int = 8,
        chunk_frames: int = 32,
        lookahead_frames: int | None = None,
        first_lookahead_frames: int | None = None,
        int4_block: int | None = None,
        kv_cache: str | None = None,
        gpu_decoder: str | None = None,
        speaker: str | None = None,
        key_file: str | os.PathLike[str] | None = None,
        audio_path: str | None = None,
        audio_dtype: str | None = None,
        warmup: bool | None = None,
        **unknown: Any,
    ) -> None:
        for key in unknown:
            warnings.warn(f"chattts: ignoring unknown engine option {key!r}", stacklevel=2)
        # Decided (and validated) before anything loads; see runtime.py for the rules.
        # ``gpu_decoder``: torch on CUDA: "fused" (Triton step), "graphs", None/"auto"
        self.runtime: RuntimeDecision = resolve(backend, device, precision, gpu_decoder)
        log.info("chattts: %s", self.runtime.describe())
        if source not in ("hidden", "codes"):
            raise MixvoxError(f"source must be 'hidden' or 'codes', got {source!r}")
        if max_batch < 1 or max_retries < 0 or stream_every < 1:
            raise MixvoxError("max_batch and stream_every must be >= 1, max_retries >= 0")
        first_lookahead = _frames_option("first_lookahead_frames", first_lookahead_frames)
        if first_lookahead is not None and lookahead_frames is not None:
            warnings.warn(
                "chattts: first_lookahead_frames is ignored with lookahead_frames (every "
                "chunk is already approximate)",
                stacklevel=2,
            )
        self.int4_block = _frames_option("int4_block", int4_block)
        from mixvox.engines.chattts.gpt.onnx_stack import INT4_BLOCKS  # numpy + onnx only

        if self.int4_block is not None and (
            self.runtime.precision != "int4" or self.int4_block not in INT4_BLOCKS
        ):
            raise MixvoxError(
                f"int4_block must be one of {', '.join(map(str, INT4_BLOCKS))} and goes with "
                f"precision int4 (got {int4_block!r} with {self.runtime.precision})"
            )
        from mixvox.engines.chattts.gpt.onnx_stack import KV_CACHES

        if kv_cache is not None and (
            kv_cache not in KV_CACHES
            or self.runtime.gpt_runner != "onnx"
            or self.runtime.device != "cpu"
        ):
            raise MixvoxError(
                f"kv_cache must be one of {', '.join(KV_CACHES)} and goes with the onnx backend "
                f"on cpu (got {kv_cache!r} with {self.runtime.backend} on {self.runtime.device})"
            )
        self.kv_cache = kv_cache
        self.assets: ModelAssets = load_assets(model_dir, verify=verify, key_file=key_file)
        if self.assets.encrypted and self.runtime.backend == "tensorrt":
            self.assets.release()
            raise MixvoxError(
                "the tensorrt backend cannot run an encrypted model yet (its engine cache would "
                "hold the weights in the clear); use --backend torch or onnx"
            )
        if verify == "force":  # --reverify: cached graphs are hashed again too
            from .onnx_graph import forget_graph_verdicts

            forget_graph_verdicts(cache_dir)
        self.backend = self.runtime.backend
        self.precision = self.runtime.precision
        self.device = self.runtime.device
        self.refine = bool(refine)
        self.source = source
        self.max_batch = max_batch
        self.max_retries = max_retries
        self.stream_every = stream_every
        self.first_chunk_frames = first_chunk_frames
        self.chunk_frames = chunk_frames
        self.lookahead_frames = lookahead_frames
        self.first_lookahead_frames = first_lookahead
        self.default_speaker = speaker or DEFAULT_SPEAKER
        gpu_audio = self.runtime.audio_backend == "torch" and str(
            self.runtime.audio_device
        ).startswith("cuda")
        if audio_path not in (None, "window", "layers"):
            raise MixvoxError(f"audio_path must be 'window' or 'layers', got {audio_path!r}")
        if audio_path == "window" and self.runtime.audio_backend != "torch":
            raise MixvoxError("audio_path 'window' needs the torch audio backend (--backend torch)")
        self._gpu_audio = gpu_audio
        self.audio_path = audio_path or ("window" if gpu_audio else "layers")
        if audio_dtype is None:
            audio_dtype = "float16" if gpu_audio and self.runtime.precision != "fp32" else "float32"
        self.audio_dtype = audio_dtype
        self.tokenizer = ChatTTSTokenizer(self.assets.tokenizer_json)
        self._lock = threading.Lock()  # one GPT generation at a time
        self._speakers: dict[str, np.ndarray | None] = {}
        self._load_models(threads, cache_dir)
        if warmup or (warmup is None and self._gpu_audio):
            self.warmup()

    # -- loading -----------------------------------------------------------------------------

    def _load_models(self, threads: int | None, cache_dir: str | os.PathLike[str] | None) -> None:
        # Hashed (or remembered) by load_assets already: the loaders need not hash the 850 MB
        # GPT and ~220 MB of audio weights again (``None`` when assets were not verified).
        gpt_sha256 = self.assets.verified_sha256("asset/gpt/model.safetensors")
        audio_sha256 = {
            name: self.assets.verified_sha256(f"asset/{name}")
            for name in ("Decoder.safetensors", "DVAE.safetensors", "Vocos.safetensors")
        }
        cache = Path(cache_dir) if cache_dir is not None else None
        try:
            self.gpt: GPTRunner = load_gpt(
                self.assets.asset,
                self.runtime,
                cache_dir=cache,
                threads=threads,
                gpt_sha256=gpt_sha256,
                max_batch=self.max_batch,
                int4_block=self.int4_block,
                kv_cache=self.kv_cache,
            )
            self.audio: AudioModels = load_audio_models(
                self.assets.asset,
                self.runtime,
                cache_dir=cache,
                threads=threads,
                sha256=audio_sha256,
                dtype=self.audio_dtype,
                # on the GPU only the model the source reads (no unused weights in GPU memory)
                sources=(self.source,) if self._gpu_audio else ("hidden", "codes"),
            )
            self.window: WindowVocoder | None = None
            if self.audio_path == "window":  # graphs captured here, not in the first request
                self.window = WindowVocoder(self.audio, self.source)
        except ImportError as exc:
            raise MixvoxError(
                f"the ChatTTS {self.backend} backend needs a package that is not installed "
                f"({exc.name or exc}); install it (pip install 'mixvox[torch]' for torch) or "
                "use --backend onnx"
            ) from None
        except (ValueError, OSError) as exc:
            raise MixvoxError(
                f"cannot load the ChatTTS model in {self.assets.root}: {exc}"
            ) from None
        self.hidden_size = self.gpt.config.hidden_size
        self.num_vq = self.gpt.config.num_vq
        try:
            self.spk_stat: np.ndarray | None = load_spk_stat(self.assets.root)
        except MixvoxError as exc:
            log.warning("%s; random speakers will use a standard normal draw", exc)
            self.spk_stat = None

    def warmup(self) -> None:
        """One short request through the whole path (prompt, prefill, decode, vocoder, and
        the fast start if set): what is compiled, planned or allocated on first use is done
        here, so the first request after start is as fast as later ones."""
        from mixvox.ir import Sentence, Span, Word

        text = "warm up"
        w = Word(text, text, [], 0, len(text), lang="raw")
        utt = Utterance(text, [Sentence(text, 0, len(text), "raw", [Span("raw", text, 0, 7, [w])])])
        extra = {"raw": True, "min_frames": 24, "max_frames": 24, "refine": False}
        for _ in self.stream(utt, [Chunk(0, [w])], SynthesisOptions(seed=0, extra=extra)):
            pass

    def close(self) -> None:
        """Drop the models (ONNX sessions, torch modules) so their memory can be freed."""
        self.window = None
        for attr in ("gpt", "audio"):
            model = getattr(self, attr, None)
            if model is not None and hasattr(model, "close"):
                model.close()  # the CUDA runner frees its GPU memory here
            if hasattr(self, attr):
                delattr(self, attr)
        assets = getattr(self, "assets", None)
        if assets is not None:
            assets.release()  # an encrypted model's plaintext leaves memory with the engine

    # -- options -----------------------------------------------------------------------------

    def speaker_vector(self, spec: str | None, seed: int | None = None) -> np.ndarray | None:
        """The speaker vector for ``spec`` (``None``: ``seed:N`` or the default voice)."""
        if spec is None:
            spec = f"seed:{seed}" if seed is not None else self.default_speaker
        key = spec.strip()
        if key.lower() in ("none", "empty"):
            return None
        if key not in self._speakers:
            self._speakers[key] = Speaker.parse(
                key, dim=self.hidden_size, spk_stat=self.spk_stat
            ).vector
        return self._speakers[key]

    def _call(self, utterance: Utterance, options: SynthesisOptions) -> _Call:
        ex = dict(options.extra or {})
        for key in sorted(set(ex) - KNOWN_EXTRA):
            msg = f"chattts: ignoring unknown option {key!r}"
            warnings.warn(msg, stacklevel=3)
            utterance.warn("unknown-option", msg, 0, 0)

        def num(
            key: str, default: Any, cast: type, lo: float | None = None, hi: float | None = None
        ) -> Any:
            val = ex.get(key)
            if val is None:
                return default
            try:
                out = cast(val)
            except (TypeError, ValueError):
                raise MixvoxError(f"option {key} must be a number, got {val!r}") from None
            if (lo is not None and out < lo) or (hi is not None and out > hi):
                raise MixvoxError(f"option {key}={val} is out of range [{lo}, {hi}]")
            return out

        speed = num("speed", options.speed if options.speed else 1.0, float, 0.1, 3.0)
        prompt = ex.get("prompt")
        if prompt is None:
            prompt = render.speed_prompt(speed) if speed != 1.0 else render.DEFAULT_PROMPT
        max_frames = num("max_frames", None, int, 1, None)
        if max_frames is not None:
            max_frames = min(max_frames, render.MAX_FRAMES)
        save_codes = ex.get("save_codes")
        return _Call(
            temperature=num("temperature", 0.3, float, 0.0, 5.0),
            top_p=num("top_p", 0.7, float, 1e-6, 1.0),
            top_k=num("top_k", 20, int, 1, None),
            repetition_penalty=num("repetition_penalty", 1.05, float, 0.01, 10.0),
            refine=bool(ex.get("refine", self.refine)),
            refine_temperature=num("refine_temperature", 0.7, float, 0.0, 5.0),
            refine_prompt=render.refine_params(
                num("oral", None, int), num("laugh", None, int), num("break", None, int)
            ),
            prompt=str(prompt),
            speed=speed,
            raw=bool(ex.get("raw", False)),
            min_frames=num("min_frames", None, int, 0, None),
            max_frames=max_frames,
            save_codes=str(save_codes) if save_codes else None,
            speaker=self.speaker_vector(options.speaker, options.seed),
            rng=np.random.default_rng(options.seed),
        )

    # -- text --------------------------------------------------------------------------------

    def _item(
        self,
        utterance: Utterance,
        chunk: Chunk,
        call: _Call,
        prompt: str | None = None,
        last: bool = True,
    ) -> _Item:
        if call.raw or all(w.lang == "raw" for w in chunk.words if w.kind == "word"):
            text = " ".join(w.spoken for w in chunk.words).strip()
            seconds = render.expected_seconds(text=text)
        else:
            rendered = render.render_chunk(chunk)
            for note in rendered.notes:
                utterance.warn(note.code, note.message, note.start, note.end)
                warnings.warn(f"chattts: {note.message}", stacklevel=4)
            text = rendered.text
            seconds = render.expected_seconds(words=chunk.words)
        speed = call.speed
        if prompt is not None and (m := _SPEED_WORD.search(prompt)):
            speed = max(0.1, int(m.group(1)) / 5)
        bounds = render.frame_bounds(seconds, speed=speed)
        lo = bounds.min_frames if call.min_frames is None else call.min_frames
        hi = bounds.max_frames if call.max_frames is None else call.max_frames
        bounds = render.FrameBounds(min_frames=min(lo, hi), max_frames=hi)
        return _Item(
            chunk=chunk,
            text=text,
            bounds=bounds,
            user_cap=call.max_frames is not None,
            prompt=prompt,
            last=last,
        )

    def _refine(self, items: list[_Item], call: _Call) -> None:
        """Run the refine stage over ``items`` (one batch) and replace their text."""
        todo = [it for it in items if it.text]
        if not todo:
            return
        prompts = [
            np.asarray(self.tokenizer.encode(render.refine_prompt(it.text, call.refine_prompt)))
            for it in todo
        ]
        caps = [min(384, 2 * len(p) + 32) for p in prompts]
        params = SamplingParams(
            temperature=call.refine_temperature,
            top_p=call.top_p,
            top_k=call.top_k,
            repetition_penalty=1.0,
            eos_id=self.tokenizer.eos_id,
            max_new_tokens=max(caps),
        )
        with self._lock:
            results = self.gpt.generate(
                prompts, stage="refine", params=params, rng=call.rng, max_new_tokens=caps
            )
        for it, res in zip(todo, results, strict=True):
            kept = render.filter_refined(res.ids, self.tokenizer.break_0_id)
            text = self.tokenizer.decode(kept).strip()
            if text:
                it.text = text
            else:
                log.info(
                    "refine gave no text for chunk %d; using the unrefined text", it.chunk.index
                )

    def prompt_ids(self, text: str, call_prompt: str, speaker: bool) -> np.ndarray:
        return np.asarray(
            self.tokenizer.encode(render.code_prompt(text, speaker=speaker, prompt=call_prompt)),
            dtype=np.int64,
        )

    # -- decoding ----------------------------------------------------------------------------

    def _events(self, items: Sequence[_Item], call: _Call) -> Iterator[tuple]:
        """Run one GPT batch in a worker thread; yield its frame events as they come.

        Events: ``("frames", index, ids, hidden, done)`` and finally ``("result", results)``.
        Closing the generator stops the worker at its next step.
        """
        calls = [it.call or call for it in items]
        # Several requests in one batch (synthesize_many): each item keeps its request's
        # speaker, random stream and end-code minimum, so that it decodes as it would alone.
        mixed = any(c is not calls[0] for c in calls)
        call = calls[0]  # the sampling settings are the same for all (synthesize_many's key)
        params = SamplingParams(
            temperature=call.temperature,
            top_p=call.top_p,
            top_k=call.top_k,
            repetition_penalty=call.repetition_penalty,
            # One minimum for the whole request: the smallest of its items', so that no
            # item is forced past its own end.
            min_new_tokens=min(it.bounds.min_frames for it in items),
            max_new_tokens=render.MAX_FRAMES,
        )
        mins: list[int] | None = None
        speaker: Any = call.speaker
        rng: Any = call.rng
        if mixed:
            mins = [it.min_new if it.min_new is not None else it.bounds.min_frames for it in items]
            speaker = [c.speaker for c in calls]
            rng = [c.rng for c in calls]
        prompts: list[np.ndarray] = []
        for it in items:
            if it.prompt_ids is None:  # every item gets its prompt before the batch decodes
                raise RuntimeError(f"chunk {it.chunk.index} has no prompt")
            prompts.append(it.prompt_ids)
        caps = [it.bounds.max_frames for it in items]
        q: queue.Queue[tuple] = queue.Queue()
        cancel = threading.Event()

        def on_frames(b: int, ids: np.ndarray, hid: np.ndarray, done: bool) -> None:
            if cancel.is_set():
                raise _Cancelled
            q.put(("frames", b, ids, hid, done))

        generate: Any = self.gpt.generate
        if self.window is not None and supports_device_frames(self.gpt):
            # frames stay on the GPU: GPT -> WindowVocoder with no host copy in between
            generate = functools.partial(device_generate, self.gpt, frames_dtype=self.window.dtype)

        def work() -> None:
            try:
                with self._lock:
                    res = generate(
                        prompts,
                        stage="code",
                        spk_emb=speaker,
                        spk_emb_token_id=self.tokenizer.spk_emb_id,
                        params=params,
                        rng=rng,
                        max_new_tokens=caps,
                        on_frames=on_frames,
                        stream_every=self.stream_every,
                        min_new_tokens=mins,
                    )
                q.put(("result", res))
            except _Cancelled:
                q.put(("cancelled",))
            except BaseException as exc:  # re-raised in the consumer
                q.put(("error", exc))

        worker = threading.Thread(target=work, name="chattts-gpt", daemon=True)
        worker.start()
        try:
            while True:
                ev = q.get()
                if ev[0] == "error":
                    raise ev[1]
                if ev[0] == "cancelled":
                    return
                yield ev
                if ev[0] == "result":
                    return
        finally:
            cancel.set()
            worker.join()

    def _vocoder(self) -> StreamingVocoder | FastStartVocoder | WindowStream:
        make: Any = None
        if self.window is not None:
            make = functools.partial(WindowStream, self.window)
        if self.first_lookahead_frames is not None and self.lookahead_frames is None:
            return FastStartVocoder(
                self.audio,
                source=self.source,
                first_lookahead_frames=self.first_lookahead_frames,
                first_chunk_frames=self.first_chunk_frames,
                chunk_frames=self.chunk_frames,
                make_stream=make,
            )
        if make is not None:
            return make(
                first_chunk_frames=self.first_chunk_frames,
                chunk_frames=self.chunk_frames,
                lookahead_frames=self.lookahead_frames,
            )
        return StreamingVocoder(
            self.audio,
            source=self.source,
            first_chunk_frames=self.first_chunk_frames,
            chunk_frames=self.chunk_frames,
            lookahead_frames=self.lookahead_frames,
        )

    def _decode_group(self, items: list[_Item], call: _Call) -> Iterator[AudioChunk]:
        """Decode ``items`` as one batch; yield their audio in order (see the module notes)."""
        for piece, _ in self._decode_items(items, call):
            yield piece

    def _decode_items(self, items: list[_Item], call: _Call) -> Iterator[tuple[AudioChunk, _Item]]:
        """:meth:`_decode_group`, each piece with the item it belongs to."""
        live = [it for it in items if it.text]
        limit = int(getattr(self.gpt.config, "max_position_embeddings", 4096))
        for it in live:
            c = it.call or call
            it.prompt_ids = self.prompt_ids(it.text, it.prompt or c.prompt, c.speaker is not None)
            if len(it.prompt_ids) + max(1, it.bounds.min_frames) > limit:
                raise MixvoxError(
                    f"chunk {it.chunk.index} is too long for ChatTTS ({len(it.prompt_ids)} "
                    f"tokens; the model sees at most {limit} tokens + frames): split the text "
                    "(without --raw, mixvox cuts it into chunks itself)"
                )
        events = self._events(live, call) if live else iter(())
        batch_over = not live
        k = 0  # the item whose audio is due
        voc = None
        try:
            while k < len(items):
                it = items[k]
                if not it.text:  # nothing left to say after rendering
                    yield (
                        AudioChunk(np.zeros(0, np.float32), SAMPLE_RATE, it.chunk.index, it.last),
                        it,
                    )
                    k += 1
                    continue
                if voc is None:
                    voc = self._vocoder()
                while it.frames:  # vocode what has arrived
                    piece = voc.feed(it.frames.pop(0))
                    if piece.size:
                        yield AudioChunk(piece, SAMPLE_RATE, it.chunk.index, False), it
                if it.done and (it.n_frames > 0 or batch_over):
                    if it.n_frames == 0 and it.retries < self.max_retries:
                        it.retries += 1
                        it.done = False
                        log.info(
                            "chunk %d ended before any audio; retry %d/%d",
                            it.chunk.index,
                            it.retries,
                            self.max_retries,
                        )
                        yield from ((p, it) for p in self._retry(it, it.call or call, voc))
                        continue
                    yield from ((p, it) for p in self._finish_item(it, voc))
                    voc = None
                    k += 1
                    continue
                if batch_over:  # cannot happen: a finished batch marks every item done
                    raise MixvoxError("internal error: the GPT batch ended with an item open")
                ev = next(events, None)
                if ev is None or ev[0] == "result":
                    batch_over = True
                    if ev is not None:
                        for b, res in enumerate(ev[1]):
                            live[b].finished = bool(res.finished)
                            live[b].done = True
                    continue
                _, b, ids, hid, done = ev
                target = live[b]
                self._take(target, ids, hid, done)
        finally:
            if hasattr(events, "close"):
                events.close()

    def _take(self, it: _Item, ids: np.ndarray, hid: np.ndarray, done: bool) -> None:
        if len(ids):
            it.frames.append(hid if self.source == "hidden" else ids)
            it.codes.append(ids)  # host copy only if save_codes asks (DeviceFrames on GPU)
            it.n_frames += len(ids)
        if done:
            it.done = True
            # The GPT ends an item at its end code or at its cap; below the cap it was the code.
            it.finished = it.n_frames < it.bounds.max_frames

    def _retry(self, it: _Item, call: _Call, voc: Any) -> Iterator[AudioChunk]:
        """Decode one item again, alone, streaming into its vocoder."""
        for ev in self._events([it], call):
            if ev[0] == "result":
                it.finished = bool(ev[1][0].finished)
                it.done = True
                break
            _, _b, ids, hid, done = ev
            self._take(it, ids, hid, done)
            while it.frames:
                piece = voc.feed(it.frames.pop(0))
                if piece.size:
                    yield AudioChunk(piece, SAMPLE_RATE, it.chunk.index, False)

    def _finish_item(self, it: _Item, voc: Any) -> Iterator[AudioChunk]:
        tail = voc.finish() if it.n_frames else np.zeros(0, np.float32)
        if it.n_frames == 0:
            msg = f"chattts: chunk {it.chunk.index} produced no audio after {it.retries} retries"
            warnings.warn(msg, stacklevel=4)
        elif not it.finished:
            # Worth a warning only when the length guard (not the caller's max_frames) cut it.
            level = logging.INFO if it.user_cap else logging.WARNING
            log.log(
                level,
                "chunk %d reached its length limit (%d frames); its end may be cut",
                it.chunk.index,
                it.bounds.max_frames,
            )
        yield AudioChunk(np.asarray(tail, np.float32), SAMPLE_RATE, it.chunk.index, it.last)

    def _items(self, utterance: Utterance, chunks: list[Chunk], call: _Call) -> list[_Item]:
        if call.raw:  # the user's text exactly: control words stay where they are
            return [self._item(utterance, c, call) for c in chunks]
        pieces = speed_segments(chunks, call.prompt)
        return [
            self._item(
                utterance,
                piece,
                call,
                prompt,
                last=k + 1 == len(pieces) or pieces[k + 1][0].index != piece.index,
            )
            for k, (piece, prompt) in enumerate(pieces)
        ]

    # -- the Engine interface --------------------------------------------------------------------

    def stream(
        self, utterance: Utterance, chunks: list[Chunk], options: SynthesisOptions
    ) -> Iterator[AudioChunk]:
        """Audio of ``chunks`` in order, each chunk's pieces as soon as they are ready."""
        if not hasattr(self, "gpt"):
            raise MixvoxError("the ChatTTS engine was closed")
        call = self._call(utterance, options)
        yield from self._run(self._items(utterance, chunks, call), call)

    def _run(self, items: list[_Item], call: _Call) -> Iterator[AudioChunk]:
        """One request's items, ``max_batch`` at a time (refine and saved codes included)."""
        all_codes: list[Any] = []
        for start in range(0, len(items), self.max_batch):
            group = items[start : start + self.max_batch]
            if call.refine:
                self._refine(group, call)
            yield from self._decode_group(group, call)
            if call.save_codes:
                all_codes.extend(c for it in group for c in it.codes)
        if call.save_codes:
            save_codes(call.save_codes, all_codes, self.num_vq)

    def synthesize_many(
        self, requests: Sequence[tuple[Utterance, list[Chunk], SynthesisOptions]]
    ) -> list[list[AudioChunk] | Exception]:
        """Several utterances at once: their chunks decode as shared GPT batches.

        Why: a batch script of short lines decodes one line at a time otherwise, and a GPT
        step costs nearly the same for 1 row as for 8 (it reads the same weights), so a
        narration farm gets several times the audio per second this way (BENCHMARKS.md).

        Whole requests are packed in order into batches of at most ``max_batch`` chunks
        whose sampling settings are equal; each item keeps its own request's speaker, end-code
        minimum and random stream, so on the CPU a request decodes as it would alone with the
        same seed (up to the rounding of batched matmuls). A request with ``refine``,
        ``save_codes`` or more chunks than ``max_batch`` is decoded alone, like
        :meth:`stream`. Returns, per request in order, its audio pieces or the exception that
        stopped it (one failing request does not fail its batch-mates: a batch that fails is
        decoded again one request at a time).
        """
        if not hasattr(self, "gpt"):
            raise MixvoxError("the ChatTTS engine was closed")
        out: list[list[AudioChunk] | Exception | None] = [None] * len(requests)
        groups: list[list[tuple[int, _Call, list[_Item]]]] = []
        alone: dict[int, tuple[_Call, list[_Item]] | None] = {}  # None: build them again
        key_of: Any = None
        size = 0
        for i, (utt, chunks, options) in enumerate(requests):
            try:
                call = self._call(utt, options)
                items = self._items(utt, chunks, call)
            except Exception as exc:
                out[i] = exc
                continue
            if call.refine or call.save_codes or len(items) > self.max_batch:
                alone[i] = (call, items)
                continue
            key = (call.temperature, call.top_p, call.top_k, call.repetition_penalty)
            if not groups or key != key_of or size + len(items) > self.max_batch:
                groups.append([])
                key_of, size = key, 0
            groups[-1].append((i, call, items))
            size += len(items)
        for group in groups:
            if len(group) == 1:
                alone[group[0][0]] = (group[0][1], group[0][2])
                continue
            batch: list[_Item] = []
            for i, call, items in group:
                lo = min((it.bounds.min_frames for it in items), default=0)
                for it in items:
                    it.call, it.min_new, it.request = call, lo, i
                batch.extend(items)
            pieces: dict[int, list[AudioChunk]] = {i: [] for i, _, _ in group}
            try:
                for piece, it in self._decode_items(batch, group[0][1]):
                    pieces[it.request].append(piece)
            except Exception:  # one request's fault must not fail the others: alone, again
                log.info(
                    "a shared batch of %d requests failed; decoding them one by one", len(group)
                )
                alone.update((i, None) for i, _, _ in group)  # their items were used
                continue
            for i, found in pieces.items():
                out[i] = found
        for i in sorted(alone):
            utt, chunks, options = requests[i]
            try:
                prepared = alone[i]
                if prepared is None:
                    out[i] = list(self.stream(utt, chunks, options))
                else:
                    out[i] = list(self._run(prepared[1], prepared[0]))
            except Exception as exc:
                out[i] = exc
        return [r if r is not None else MixvoxError("internal error: no result") for r in out]


def save_codes(path: str | os.PathLike[str], codes: list[Any], num_vq: int) -> Path:
    """Write ``codes`` (concatenated) as an ``int64 [frames, num_vq]`` ``.npy``, atomically."""
    import io

    from mixvox.audio import atomic_write_bytes

    host = [c.numpy() if isinstance(c, DeviceFrames) else np.asarray(c) for c in codes]
    arr = (np.concatenate(host, axis=0) if host else np.zeros((0, num_vq), np.int64)).astype(
        np.int64
    )
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())
    return Path(path)
