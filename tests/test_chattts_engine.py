"""The ChatTTS engine end to end on the tiny random checkpoint (its audio is noise)."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from mixvox.engines.chattts import render
from mixvox.engines.chattts.engine import ChatTTSEngine
from mixvox.engines.chattts.gpt import GenerationResult
from mixvox.interfaces import MixvoxError, SynthesisOptions
from mixvox.ir import Chunk, Sentence, Span, Utterance, Word

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
TEXTS = ["你好世界", "今天天气很好", "我们出去玩吧"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("chattts-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MIXVOX_CACHE_DIR", str(root))
        mp.setenv("MIXVOX_DATA_DIR", str(root / "data"))
        mp.delenv("MIXVOX_CHATTTS_DIR", raising=False)
        yield root


@pytest.fixture(scope="module")
def engine(cache) -> ChatTTSEngine:
    eng = ChatTTSEngine(TINY)
    yield eng
    eng.close()


def utterance(texts: list[str] = TEXTS) -> tuple[Utterance, list[Chunk]]:
    words, chunks, pos = [], [], 0
    for i, t in enumerate(texts):
        w = Word(t, t, [], pos, pos + len(t), lang="zh")
        pos += len(t)
        words.append(w)
        chunks.append(Chunk(i, [w]))
    text = "".join(texts)
    return Utterance(
        text, [Sentence(text, 0, pos, "zh", [Span("zh", text, 0, pos, words)])]
    ), chunks


class Recorder:
    """Wraps ``engine.gpt.generate`` to record calls (and optionally tamper with results)."""

    def __init__(self, engine: ChatTTSEngine, empty_item0_calls: int = 0) -> None:
        self.engine = engine
        self.orig = engine.gpt.generate
        self.calls: list[dict] = []
        self.empty_left = empty_item0_calls

    def __enter__(self) -> Recorder:
        self.engine.gpt.generate = self  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        self.engine.gpt.generate = self.orig  # type: ignore[method-assign]

    def __call__(self, prompts, **kw):
        self.calls.append({"prompts": [np.asarray(p).tolist() for p in prompts], **kw})
        if kw.get("stage") != "code" or self.empty_left <= 0:
            return self.orig(prompts, **kw)
        self.empty_left -= 1
        cb = kw.pop("on_frames")

        def drop_item0(b, ids, hid, done):
            if b != 0:
                cb(b, ids, hid, done)

        res = self.orig(prompts, on_frames=drop_item0, **kw)
        h = res[0].hidden.shape[1]
        cb(0, np.zeros((0, 4), np.int64), np.zeros((0, h), np.float32), True)
        res[0] = GenerationResult(np.zeros((0, 4), np.int64), np.zeros((0, h), np.float32), True)
        return res


def pieces_by_chunk(pieces) -> dict[int, np.ndarray]:
    out: dict[int, list[np.ndarray]] = {}
    for p in pieces:
        out.setdefault(p.chunk, []).append(p.samples)
    return {k: np.concatenate(v) for k, v in out.items()}


def test_engine_protocol(engine: ChatTTSEngine) -> None:
    from mixvox.interfaces import Engine

    assert isinstance(engine, Engine)
    assert (engine.name, engine.sample_rate, engine.consumes) == ("chattts", 24000, "text")


def test_chunks_in_order_one_final_each_and_saved_codes(engine, tmp_path: Path) -> None:
    utt, chunks = utterance()
    n = 40
    out = tmp_path / "codes.npy"
    extra = {"min_frames": n, "max_frames": n, "save_codes": str(out)}
    pieces = list(engine.stream(utt, chunks, SynthesisOptions(seed=1, extra=extra)))
    assert [p.chunk for p in pieces] == sorted(p.chunk for p in pieces)
    for k in range(3):
        mine = [p for p in pieces if p.chunk == k]
        assert [p.final for p in mine] == [False] * (len(mine) - 1) + [True]
        assert len(mine) >= 2  # streamed in several pieces, not one blob
    audio = pieces_by_chunk(pieces)
    for k in range(3):  # n code frames -> 2n mel frames -> (2n - 1) * 256 samples
        assert audio[k].shape == ((2 * n - 1) * 256,) and audio[k].dtype == np.float32
        assert np.isfinite(audio[k]).all() and np.abs(audio[k]).max() > 0
    codes = np.load(out)
    assert codes.shape == (3 * n, 4) and codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() < 625


def test_all_chunks_decode_as_one_gpt_batch(engine) -> None:
    utt, chunks = utterance()
    with Recorder(engine) as rec:
        list(engine.stream(utt, chunks, SynthesisOptions(seed=2)))
    assert len(rec.calls) == 1
    call = rec.calls[0]
    assert call["stage"] == "code" and len(call["prompts"]) == 3
    # the length guard: each chunk's own cap, and the batch's smallest minimum
    bounds = [render.frame_bounds(render.expected_seconds(words=c.words)) for c in chunks]
    assert list(call["max_new_tokens"]) == [b.max_frames for b in bounds]
    assert call["params"].min_new_tokens == min(b.min_frames for b in bounds) > 0
    tok = engine.tokenizer
    for p, t in zip(call["prompts"], TEXTS, strict=True):
        assert p == tok.encode(f"[Stts][spk_emb][speed_5]{t}[Ptts]")


def test_max_batch_splits_long_utterances(cache) -> None:
    eng = ChatTTSEngine(TINY, max_batch=2)
    utt, chunks = utterance()
    with Recorder(eng) as rec:
        out = list(eng.stream(utt, chunks, SynthesisOptions(seed=2, extra={"max_frames": 12})))
    assert [len(c["prompts"]) for c in rec.calls] == [2, 1]
    assert [p.chunk for p in out if p.final] == [0, 1, 2]


def test_first_audio_comes_while_the_gpt_is_still_decoding(engine) -> None:
    first_piece = threading.Event()
    generation_returned = threading.Event()
    orig = engine.gpt.generate

    def slow_generate(prompts, **kw):
        cb = kw.pop("on_frames")
        seen = {"n": 0}

        def gate(b, ids, hid, done):
            cb(b, ids, hid, done)
            if b == 0:
                seen["n"] += len(ids)
                if seen["n"] >= 48 and not done:
                    first_piece.wait(timeout=20)  # hold the GPT until audio came out

        res = orig(prompts, on_frames=gate, **kw)
        generation_returned.set()
        return res

    utt, chunks = utterance(TEXTS[:2])
    engine.gpt.generate = slow_generate  # type: ignore[method-assign]
    try:
        got_before_end = None
        for piece in engine.stream(
            utt, chunks, SynthesisOptions(seed=3, extra={"min_frames": 100, "max_frames": 100})
        ):
            if piece.samples.size and got_before_end is None:
                got_before_end = not generation_returned.is_set()
                first_piece.set()
    finally:
        engine.gpt.generate = orig  # type: ignore[method-assign]
    assert got_before_end is True


def test_seed_makes_runs_reproducible(engine) -> None:
    utt, chunks = utterance(TEXTS[:2])

    def run(seed: int) -> np.ndarray:
        opts = SynthesisOptions(seed=seed, extra={"max_frames": 30})
        return np.concatenate([p.samples for p in engine.stream(utt, chunks, opts)])

    a, b, c = run(11), run(11), run(12)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_empty_output_is_retried(engine) -> None:
    utt, chunks = utterance()
    with Recorder(engine, empty_item0_calls=1) as rec:
        pieces = list(engine.stream(utt, chunks, SynthesisOptions(seed=4)))
    assert [len(c["prompts"]) for c in rec.calls] == [3, 1]
    assert rec.calls[1]["prompts"][0] == rec.calls[0]["prompts"][0]
    audio = pieces_by_chunk(pieces)
    assert all(audio[k].size > 0 for k in range(3))
    assert [p.chunk for p in pieces if p.final] == [0, 1, 2]


def test_retries_are_bounded(engine) -> None:
    utt, chunks = utterance()
    with (
        Recorder(engine, empty_item0_calls=10) as rec,
        pytest.warns(UserWarning, match="chunk 0 produced no audio after 2 retries"),
    ):
        pieces = list(engine.stream(utt, chunks, SynthesisOptions(seed=4)))
    assert [len(c["prompts"]) for c in rec.calls] == [3, 1, 1]
    audio = pieces_by_chunk(pieces)
    assert audio[0].size == 0 and audio[1].size > 0 and audio[2].size > 0


def test_unknown_extra_keys_warn(engine) -> None:
    utt, chunks = utterance(TEXTS[:1])
    with pytest.warns(UserWarning, match="unknown option 'tempreature'"):
        list(
            engine.stream(
                utt, chunks, SynthesisOptions(extra={"tempreature": 0.1, "max_frames": 8})
            )
        )
    assert any(i.code == "unknown-option" for i in utt.warnings)


def test_bad_option_values(engine) -> None:
    utt, chunks = utterance(TEXTS[:1])
    for extra in ({"temperature": "hot"}, {"top_p": 2.0}, {"oral": 12}):
        with pytest.raises(MixvoxError):
            list(engine.stream(utt, chunks, SynthesisOptions(extra=extra)))


def test_refine_is_off_by_default_and_on_per_call(engine) -> None:
    utt, chunks = utterance(TEXTS[:2])
    with Recorder(engine) as rec:
        list(engine.stream(utt, chunks, SynthesisOptions(seed=5, extra={"max_frames": 8})))
    assert [c["stage"] for c in rec.calls] == ["code"]
    with Recorder(engine) as rec:
        list(
            engine.stream(
                utt,
                chunks,
                SynthesisOptions(
                    seed=5, extra={"refine": True, "max_frames": 8, "oral": 2, "break": 4}
                ),
            )
        )
    assert [c["stage"] for c in rec.calls] == ["refine", "code"]
    tok = engine.tokenizer
    assert rec.calls[0]["prompts"][0] == tok.encode("[Sbreak]你好世界[Pbreak][oral_2][break_4]")
    assert rec.calls[0]["params"].eos_id == tok.eos_id
    for p in rec.calls[1]["prompts"]:  # nothing from [break_0] up reaches the code stage
        inner = p[3:-1]
        assert all(i < tok.break_0_id for i in inner)


def test_speakers(engine) -> None:
    utt, chunks = utterance(TEXTS[:1])
    tok = engine.tokenizer
    spk_text = (TINY / "speaker.txt").read_text(encoding="utf-8")
    golden = np.load(TINY / "golden.npz")["speaker/vector_f16"]
    with Recorder(engine) as rec:
        list(
            engine.stream(utt, chunks, SynthesisOptions(speaker=spk_text, extra={"max_frames": 8}))
        )
        list(engine.stream(utt, chunks, SynthesisOptions(speaker="none", extra={"max_frames": 8})))
        list(engine.stream(utt, chunks, SynthesisOptions(extra={"max_frames": 8})))
    a, b, c = rec.calls
    np.testing.assert_array_equal(a["spk_emb"], golden)
    assert tok.spk_emb_id in a["prompts"][0] and a["spk_emb_token_id"] == tok.spk_emb_id
    assert b["spk_emb"] is None and tok.token_id("[empty_spk]") in b["prompts"][0]
    assert c["spk_emb"] is not None and c["spk_emb"].shape == (32,)  # the default voice
    from mixvox.engines.chattts.speaker import Speaker

    full_size = Speaker.parse("seed:1").to_string()  # a real model's 768 values
    with pytest.raises(MixvoxError, match="expects 32"):
        list(engine.stream(utt, chunks, SynthesisOptions(speaker=full_size)))
    with pytest.raises(MixvoxError, match="seed"):
        list(engine.stream(utt, chunks, SynthesisOptions(speaker="seed:1x")))


def test_raw_text_goes_as_is(engine) -> None:
    raw = "RTX 4070 [uv_break] 跑"
    w = Word(raw, raw, [], 0, len(raw), lang="raw")
    utt = Utterance(raw, [Sentence(raw, 0, len(raw), "raw", [Span("raw", raw, 0, len(raw), [w])])])
    with Recorder(engine) as rec:
        list(
            engine.stream(
                utt, [Chunk(0, [w])], SynthesisOptions(extra={"raw": True, "max_frames": 8})
            )
        )
    assert rec.calls[0]["prompts"][0] == engine.tokenizer.encode(
        f"[Stts][spk_emb][speed_5]{raw}[Ptts]"
    )


def test_chunk_with_nothing_to_say_yields_an_empty_final_piece(engine) -> None:
    utt, chunks = utterance(["你好", "😀"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pieces = list(engine.stream(utt, chunks, SynthesisOptions(extra={"max_frames": 8})))
    finals = [p for p in pieces if p.final]
    assert [p.chunk for p in finals] == [0, 1] and finals[1].samples.size == 0
    assert any(i.code == "engine-unsupported-char" for i in utt.warnings)


def test_closing_the_stream_early_stops_the_worker(engine) -> None:
    utt, chunks = utterance()
    gen = engine.stream(utt, chunks, SynthesisOptions(extra={"min_frames": 300, "max_frames": 300}))
    first = next(gen)
    assert first.chunk == 0
    gen.close()
    assert not [t for t in threading.enumerate() if t.name == "chattts-gpt"]
    more = list(engine.stream(utt, chunks[:1], SynthesisOptions(extra={"max_frames": 8})))
    assert more[-1].final


def test_small_generated_checkpoint_loads_and_speaks(cache, tmp_path: Path) -> None:
    from safetensors import safe_open

    from mixvox.engines.chattts.randckpt import Sizes, make_checkpoint

    out = make_checkpoint(tmp_path / "rand", TINY, sizes=Sizes.small(), seed=3)
    for rel in (
        "asset/Embed.safetensors",
        "asset/DVAE.safetensors",
        "asset/Vocos.safetensors",
        "asset/Decoder.safetensors",
        "asset/gpt/model.safetensors",
    ):
        with safe_open(out / rel, "np") as a, safe_open(TINY / rel, "np") as b:
            assert set(a.keys()) == set(b.keys()), rel
            for k in a.keys():
                assert a.get_slice(k).get_shape() == b.get_slice(k).get_shape(), (rel, k)
                assert a.get_slice(k).get_dtype() == b.get_slice(k).get_dtype(), (rel, k)
    eng = ChatTTSEngine(out)
    assert eng.assets.manifest_source.endswith("sha256.json")
    utt, chunks = utterance(TEXTS[:1])
    pieces = list(
        eng.stream(utt, chunks, SynthesisOptions(extra={"min_frames": 10, "max_frames": 10}))
    )
    assert sum(p.samples.size for p in pieces) == 19 * 256
    eng.close()


def test_missing_model_is_a_clear_error(cache, tmp_path: Path) -> None:
    with pytest.raises(MixvoxError, match="mixvox download"):
        ChatTTSEngine(tmp_path / "none")


def test_plugin_check(cache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mixvox.engines.chattts import plugin

    why = plugin.check()
    assert why is not None and "mixvox download" in why and str(cache / "data") in why
    monkeypatch.setenv("MIXVOX_CHATTTS_DIR", str(TINY))
    assert plugin.check() is None
    infos = []
    plugin.mixvox_register_engines(infos.append)
    assert infos[0].name == "chattts" and infos[0].priority == 10


def test_cli_say_writes_a_wav(cache, tmp_path: Path) -> None:
    from mixvox.cli import main

    out = tmp_path / "out.wav"
    res = CliRunner().invoke(
        main,
        [
            "say",
            "--engine",
            "chattts",
            "--model-dir",
            str(TINY),
            "-o",
            str(out),
            "--max-frames",
            "16",
            "--seed",
            "1",
            "今天的 meeting 改到 3:30 PM",
        ],
    )
    assert res.exit_code == 0, res.output
    data, sr = sf.read(out)
    assert sr == 24000 and data.size > 0


def test_cli_bench_json(cache) -> None:
    from mixvox.engines.chattts.cli import bench_cmd

    res = CliRunner().invoke(
        bench_cmd,
        ["--model-dir", str(TINY), "--frames", "16", "--batch", "1", "--batch", "2", "--json"],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output.strip().splitlines()[-1])
    for key in ("frames_per_s", "rtf", "first_chunk_ms", "peak_rss_mb"):
        assert isinstance(data[key], float) and data[key] > 0, key
    assert data["audio_s"] == pytest.approx(10.0, abs=0.05)
    assert set(data["frames_per_s_by_batch"]) == {"1", "2"} and data["batch"] == 1


def test_overlong_raw_text_is_a_clear_error(engine) -> None:
    raw = "你好" * 3000
    w = Word(raw, raw, [], 0, len(raw), lang="raw")
    utt = Utterance(raw, [Sentence(raw, 0, len(raw), "raw", [Span("raw", raw, 0, len(raw), [w])])])
    with pytest.raises(MixvoxError, match="too long"):
        list(engine.stream(utt, [Chunk(0, [w])], SynthesisOptions(extra={"raw": True})))


def test_prosody_rate_becomes_the_code_prompt_of_its_piece(engine) -> None:
    """ChatTTS heeds ``[speed_N]`` only in the code prompt: a ``<prosody rate>`` span is cut
    out as its own piece with that prompt, the rate holds across chunks, and each chunk still
    ends with exactly one final piece."""
    import mixvox

    utt = mixvox.route('<speak>先说这句<prosody rate="x-slow">这句很慢</prosody>又正常了</speak>')
    words = [w for s in utt.sentences for sp in s.spans for w in sp.words]
    chunks = [Chunk(0, words[: len(words) // 2]), Chunk(1, words[len(words) // 2 :])]
    with Recorder(engine) as rec:
        pieces = list(engine.stream(utt, chunks, SynthesisOptions(seed=2)))
    tok = engine.tokenizer
    prompts = [tok.decode(list(p)).replace(" ", "") for p in rec.calls[0]["prompts"]]
    slow = [p for p in prompts if "很慢" in p]
    assert slow and all("[speed_2]" in p for p in slow)  # x-slow: 0.5 -> [speed_2]
    assert any("先说" in p and "[speed_5]" in p for p in prompts)
    assert any("正常" in p and "[speed_5]" in p for p in prompts)
    for p in prompts:  # no speed token left in the text part, one in the prompt
        assert p.count("[speed_") == 1 and p.index("[speed_") < p.index("[Ptts]")
    assert len(prompts) >= 3  # the slow span is a piece of its own
    for k in (0, 1):
        finals = [p.final for p in pieces if p.chunk == k]
        assert finals and finals[-1] and finals.count(True) == 1


def test_speed_segments_carry_the_rate_across_chunks() -> None:
    from mixvox.engines.chattts.engine import speed_segments

    a = Word("快", "快", [], 0, 1, lang="zh")
    ctl = Word("[speed_8]", "[speed_8]", [], 1, 1, lang="zh", kind="control")
    b = Word("跑", "跑", [], 1, 2, lang="zh")
    c = Word("吧", "吧", [], 2, 3, lang="zh")
    out = speed_segments([Chunk(0, [a, ctl, b]), Chunk(1, [c])], "[speed_5]")
    assert [(ch.index, [w.spoken for w in ch.words], p) for ch, p in out] == [
        (0, ["快"], None),
        (0, ["跑"], "[speed_8]"),
        (1, ["吧"], "[speed_8]"),
    ]
    # a prompt without a speed token gets one put first
    assert speed_segments([Chunk(0, [ctl, b])], "[oral_2]")[0][1] == "[speed_8][oral_2]"


def _joined(pieces) -> np.ndarray:
    return np.concatenate([p.samples for p in pieces]) if pieces else np.zeros(0, np.float32)


def test_synthesize_many_decodes_requests_together_each_as_alone(engine) -> None:
    """Several utterances in one GPT batch (the batch script's throughput path): one code
    decode for all, and each request's audio as when it decodes alone with its seed."""
    specs = [
        (["你好世界"], 3),
        (["今天天气很好", "我们出去玩吧"], 4),
        (["再见"], 5),
        (["一二三"], 3),
    ]
    reqs = []
    for texts, seed in specs:
        utt, chunks = utterance(texts)
        reqs.append((utt, chunks, seed))
    alone = [
        _joined(list(engine.stream(u, c, SynthesisOptions(seed=s, extra={"max_frames": 40}))))
        for u, c, s in reqs
    ]
    with Recorder(engine) as rec:
        got = engine.synthesize_many(
            [(u, c, SynthesisOptions(seed=s, extra={"max_frames": 40})) for u, c, s in reqs]
        )
    code_calls = [c for c in rec.calls if c.get("stage") == "code"]
    assert len(code_calls) == 1 and len(code_calls[0]["prompts"]) == 5  # 1 + 2 + 1 + 1 items
    assert isinstance(code_calls[0]["rng"], list) and len(code_calls[0]["rng"]) == 5
    for want, pieces in zip(alone, got, strict=True):
        assert not isinstance(pieces, Exception)
        have = _joined(pieces)
        assert have.shape == want.shape and want.size > 0
        assert np.abs(have - want).max() < 1e-4  # the same codes; batched matmul rounding only


def test_synthesize_many_keeps_errors_and_settings_apart(engine) -> None:
    u1, c1 = utterance(["你好世界"])
    u2, c2 = utterance(["今天天气很好"])
    u3, c3 = utterance(["我们出去玩吧"])
    bad = SynthesisOptions(seed=1, extra={"temperature": "hot"})
    hot = SynthesisOptions(seed=1, extra={"temperature": 0.9, "max_frames": 20})
    cool = SynthesisOptions(seed=1, extra={"max_frames": 20})
    with Recorder(engine) as rec:
        got = engine.synthesize_many([(u1, c1, cool), (u2, c2, bad), (u3, c3, hot), (u1, c1, hot)])
    assert isinstance(got[1], MixvoxError) and "temperature" in str(got[1])
    assert all(not isinstance(g, Exception) and _joined(g).size for g in (got[0], got[2], got[3]))
    # a different temperature is another batch: [cool] alone, then [hot, hot] together
    sizes = sorted(len(c["prompts"]) for c in rec.calls if c.get("stage") == "code")
    assert sizes == [1, 2]


def test_batch_cli_gives_lines_to_the_engine_together(cache, tmp_path: Path) -> None:
    """`mixvox batch` hands the waiting lines to ChatTTS as one GPT batch (--batch-lines) and
    the files are those of one line at a time (16-bit rounding aside)."""
    from mixvox.cli import main

    script = tmp_path / "s.txt"
    script.write_text("你好世界\n今天的 meeting 改到 3:30 PM\n我们出去玩吧\nhello there\n第五行\n")
    calls = {"n": 0}
    orig = ChatTTSEngine._events

    def counting(self, items, call):
        calls["n"] += 1
        return orig(self, items, call)

    outs = {}
    for n in ("8", "1"):
        calls["n"] = 0
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ChatTTSEngine, "_events", counting)
            res = CliRunner().invoke(
                main,
                ["batch", str(script), "-o", str(tmp_path / n), "--engine", "chattts",
                 "--model-dir", str(TINY), "--seed", "3", "--max-frames", "30", "-q",
                 "--batch-lines", n],
            )  # fmt: skip
        assert res.exit_code == 0, res.output
        outs[n] = calls["n"]
    assert outs["1"] == 5 and outs["8"] < 5  # the first line alone, then the rest together
    for i in range(1, 6):
        a, _ = sf.read(tmp_path / "8" / f"{i:04d}.wav")
        b, _ = sf.read(tmp_path / "1" / f"{i:04d}.wav")
        assert a.shape == b.shape and np.abs(a - b).max() <= 2 / 32768


def test_synthesizer_synthesize_many_batches_for_chattts(cache) -> None:
    """The Python API's synthesize_many gives ChatTTS the texts waiting together; each result
    is the text's own audio (as synthesize makes it) or its own failure."""
    import mixvox
    from mixvox.errors import NothingToSay
    from mixvox.stages import Failed

    texts = ["你好世界", "今天的 meeting 改到 3:30 PM", "。。。", "hello there"]
    with mixvox.Synthesizer("chattts", model_dir=str(TINY)) as tts:
        assert tts.batch_size == tts.engine.max_batch > 1
        opts = {"seed": 2, "max_frames": 24}
        many = list(tts.synthesize_many(texts, **opts))
        assert isinstance(many[2], Failed) and isinstance(many[2].error, NothingToSay)
        for text, got in zip(texts, many, strict=True):
            if text == "。。。":
                continue
            want = tts.synthesize(text, **opts)
            assert isinstance(got, mixvox.Audio) and got.samples.shape == want.samples.shape
            assert np.abs(got.samples - want.samples).max() < 1e-4
        batch = tts.synthesize_batch(texts, **opts)
        assert isinstance(batch[2], NothingToSay)
        assert all(isinstance(b, mixvox.Audio) for i, b in enumerate(batch) if i != 2)


def test_synthesize_many_requests_decoded_alone_are_prepared_once(engine, tmp_path) -> None:
    """A request that must decode alone (saved codes here) is not prepared twice: its
    warnings appear once, and its codes file is written."""
    u1, c1 = utterance(["你好世界"])
    u2, c2 = utterance(["今天天气很好"])
    u3, c3 = utterance(["我们出去玩吧"])
    codes = tmp_path / "codes.npy"
    odd = SynthesisOptions(seed=1, extra={"max_frames": 12, "save_codes": str(codes), "foo": 1})
    plain = SynthesisOptions(seed=1, extra={"max_frames": 12})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = engine.synthesize_many([(u1, c1, odd), (u2, c2, plain), (u3, c3, plain)])
    assert all(not isinstance(g, Exception) and _joined(g).size for g in got)
    assert [w.code for w in u1.warnings].count("unknown-option") == 1
    assert np.load(codes).shape[1] == 4


def test_synthesize_many_one_bad_request_does_not_sink_its_batch(engine) -> None:
    """A request that fails inside the shared decode (a prompt longer than the model's
    window) fails alone; its batch-mates are decoded again and keep their audio."""
    raw = "你好" * 3000
    w = Word(raw, raw, [], 0, len(raw), lang="raw")
    long_utt = Utterance(
        raw, [Sentence(raw, 0, len(raw), "raw", [Span("raw", raw, 0, len(raw), [w])])]
    )
    u1, c1 = utterance(["你好世界"])
    u2, c2 = utterance(["今天天气很好"])
    opts = SynthesisOptions(seed=1, extra={"max_frames": 12, "raw": True})
    got = engine.synthesize_many(
        [(u1, c1, opts), (long_utt, [Chunk(0, [w])], opts), (u2, c2, opts)]
    )
    assert isinstance(got[1], MixvoxError) and "too long" in str(got[1])
    assert all(not isinstance(g, Exception) and _joined(g).size for g in (got[0], got[2]))
