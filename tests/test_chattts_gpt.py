"""ChatTTS GPT: parity with the reference goldens on the tiny checkpoint, for each backend,
plus the decode loop's batching/ending/streaming logic and the INT8 graph's measured cost."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mixvox.engines.chattts.gpt import (
    GenerationResult,
    GPTConfig,
    GPTWeights,
    SamplingParams,
    load_gpt,
    normalize_speaker,
    run_generation,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
TINY = SHARED / "chattts" / "tiny"
ASSET = TINY / "asset"

SPK_EMB_ID = 21143  # [spk_emb] in the official tokenizer
EBREAK_ID = 21135  # [Ebreak]


def rel(a: np.ndarray, b: np.ndarray) -> float:
    """max|a - b| / max|b|"""
    return float(np.abs(np.asarray(a, np.float64) - b).max() / np.abs(b).max())


def _need_shared() -> None:
    if not (TINY / "golden.npz").is_file():
        pytest.skip(f"tiny ChatTTS checkpoint not found at {TINY} (../shared beside checkout)")


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    _need_shared()
    with np.load(TINY / "golden.npz") as z:
        return {k: z[k] for k in z.files}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("gpt-graphs")


@pytest.fixture(scope="module", params=["onnx", "torch"])
def gpt(request, cache_dir):
    _need_shared()
    if request.param == "torch":
        pytest.importorskip("torch", reason="torch backend is an optional extra")
    return load_gpt(ASSET, backend=request.param, cache_dir=cache_dir)


def _spk_prompt(golden):
    return golden["tok/code_spk/ids"], golden["speaker/vector_f16"]


GREEDY = SamplingParams(
    temperature=0.0, top_p=0.7, top_k=20, repetition_penalty=1.05, suppress_eos=True
)


# -- config and weights ---------------------------------------------------------------------


def test_config_sizes_from_files():
    _need_shared()
    tiny = GPTConfig.from_asset_dir(ASSET)
    assert (tiny.hidden_size, tiny.num_layers, tiny.num_heads, tiny.head_dim) == (32, 2, 4, 8)
    full = GPTConfig.from_asset_dir(SHARED / "chattts" / "asset")
    assert (full.hidden_size, full.num_layers, full.num_heads, full.intermediate_size) == (
        768,
        20,
        12,
        3072,
    )
    assert full.num_audio_tokens == 626 and full.num_vq == 4 and full.eos_code == 625
    assert full.num_text_tokens == 21178 and full.rms_norm_eps == 1e-6


def test_config_rejects_unsupported(tmp_path):
    cfg = json.loads((ASSET / "gpt" / "config.json").read_text()) if ASSET.is_dir() else None
    if cfg is None:
        pytest.skip("tiny checkpoint absent")
    for patch in (
        {"num_key_value_heads": 2},
        {"rope_scaling": {"type": "linear"}},
        {"hidden_act": "gelu"},
    ):
        with pytest.raises(ValueError):
            GPTConfig.from_dict({**cfg, **patch})
    bad = dict(cfg)
    del bad["num_vq"], bad["num_audio_tokens"]
    with pytest.raises(ValueError, match="num_audio_tokens"):
        GPTConfig.from_dict(bad)
    (tmp_path / "gpt").mkdir()
    (tmp_path / "gpt" / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config"):
        GPTConfig.from_asset_dir(tmp_path)
    with pytest.raises(FileNotFoundError):
        GPTWeights.load(tmp_path, GPTConfig.from_dict(cfg))


def test_weight_norm_folded_per_output_row():
    _need_shared()
    from safetensors.numpy import load_file

    w = GPTWeights.load(ASSET)
    es = load_file(str(ASSET / "Embed.safetensors"))
    g = es["head_code.2.parametrizations.weight.original0"]
    v = es["head_code.2.parametrizations.weight.original1"]
    want = g * v / np.linalg.norm(v, axis=1, keepdims=True)
    np.testing.assert_allclose(w.head_code[2], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        np.linalg.norm(w.head_text, axis=1),
        np.abs(es["head_text.parametrizations.weight.original0"][:, 0]),
        rtol=1e-5,
    )


# -- parity with the reference ------------------------------------------------------------------


def test_embedding_with_speaker(gpt, golden):
    ids, spk = _spk_prompt(golden)
    emb = gpt.embed(ids[None], spk, SPK_EMB_ID)[0]
    assert rel(emb, golden["code_spk/emb"]) < 1e-6
    # the speaker row is exactly the float16-normalised vector; no other row is touched
    np.testing.assert_array_equal(emb[ids == SPK_EMB_ID][0], normalize_speaker(spk))
    plain = gpt.embed(ids[None])[0]
    np.testing.assert_array_equal(plain[ids != SPK_EMB_ID], emb[ids != SPK_EMB_ID])


def test_hidden_and_logits(gpt, golden):
    ids, spk = _spk_prompt(golden)
    h = gpt.hidden(gpt.embed(ids[None], spk, SPK_EMB_ID))[0]
    assert rel(h, golden["code_spk/hidden"]) < 1e-4
    assert rel(gpt.code_logits(h[-1]), golden["code_spk/code_logits"]) < 1e-4
    assert rel(gpt.text_logits(h[-1]), golden["code_spk/text_logits"]) < 1e-4


def test_greedy_codes_and_hiddens(gpt, golden):
    ids, spk = _spk_prompt(golden)
    (r,) = gpt.generate(
        [ids], spk_emb=spk, spk_emb_token_id=SPK_EMB_ID, params=GREEDY, max_new_tokens=24
    )
    np.testing.assert_array_equal(r.codes, golden["greedy/codes"])
    assert rel(r.hidden, golden["greedy/hiddens"]) < 1e-4
    assert not r.finished and len(r) == 24


def test_greedy_refine(gpt, golden):
    # the reference's refine defaults have no repetition penalty (RefineTextParams)
    params = SamplingParams.for_refine(EBREAK_ID, temperature=0.0, suppress_eos=True)
    (r,) = gpt.generate(
        [golden["tok/refine/ids"]], stage="refine", params=params, max_new_tokens=16
    )
    np.testing.assert_array_equal(r.ids, golden["refine/ids"])
    assert r.hidden.shape == (16, gpt.config.hidden_size)


def test_batch_left_padding_matches_single(gpt, golden):
    ids = golden["batch/ids"][:, :, 0]
    mask = golden["batch/attention_mask"]
    texts = [golden["tok/code_spk/ids"], golden["tok/code_nospk/ids"]]
    for b, t in enumerate(texts):  # the golden batch is these two texts, left padded
        np.testing.assert_array_equal(ids[b][mask[b] == 1], t)
    spk = golden["speaker/vector_f16"]
    hb = gpt.hidden(gpt.embed(ids, spk, SPK_EMB_ID), mask)
    for b, t in enumerate(texts):
        alone = gpt.hidden(gpt.embed(t[None], spk, SPK_EMB_ID))[0]
        assert np.isfinite(hb[b]).all()
        assert rel(hb[b][mask[b] == 1], alone) < 1e-4
    assert rel(hb[0][mask[0] == 1], golden["code_spk/hidden"]) < 1e-4


def test_generate_batch_equals_alone(gpt, golden):
    spk = golden["speaker/vector_f16"]
    prompts = [golden["tok/code_spk/ids"], golden["tok/mixed_case/ids"]]
    kw = {"spk_emb": spk, "spk_emb_token_id": SPK_EMB_ID, "params": GREEDY, "max_new_tokens": 20}
    both = gpt.generate(prompts, **kw)
    for b, p in enumerate(prompts):
        (alone,) = gpt.generate([p], **kw)
        np.testing.assert_array_equal(both[b].codes, alone.codes)
        assert rel(both[b].hidden, alone.hidden) < 1e-4
    np.testing.assert_array_equal(both[0].codes, golden["greedy/codes"][:20])


def test_each_item_stops_at_its_own_end(gpt, golden):
    spk = golden["speaker/vector_f16"]
    prompts = [golden["tok/code_spk/ids"], golden["tok/code_nospk/ids"]]
    base = gpt.generate(
        prompts, spk_emb=spk, spk_emb_token_id=SPK_EMB_ID, params=GREEDY, max_new_tokens=24
    )
    a, b = base[0].codes, base[1].codes
    # an end code that item 0 draws at frame 6 and item 1 never draws in 24 frames
    cands = [int(c) for c in a[6] if c not in a[:6] and c not in b]
    assert cands, "no usable end code in this checkpoint's greedy output"
    params = SamplingParams(temperature=0.0, eos_id=cands[0])
    out = gpt.generate(
        prompts, spk_emb=spk, spk_emb_token_id=SPK_EMB_ID, params=params, max_new_tokens=24
    )
    assert out[0].finished and len(out[0]) <= 6
    assert cands[0] not in out[0].codes
    np.testing.assert_array_equal(out[0].codes, a[: len(out[0])])
    assert len(out[1]) > len(out[0])
    (alone,) = gpt.generate(
        prompts[1:], spk_emb=spk, spk_emb_token_id=SPK_EMB_ID, params=params, max_new_tokens=24
    )
    np.testing.assert_array_equal(out[1].codes, alone.codes)
    assert out[1].finished == alone.finished


def test_sampling_is_seeded(gpt, golden):
    ids, spk = _spk_prompt(golden)
    params = SamplingParams(temperature=0.3, suppress_eos=True)
    run = [
        gpt.generate(
            [ids],
            spk_emb=spk,
            spk_emb_token_id=SPK_EMB_ID,
            params=params,
            rng=np.random.default_rng(s),
            max_new_tokens=12,
        )[0].codes
        for s in (1, 1, 2)
    ]
    np.testing.assert_array_equal(run[0], run[1])
    assert run[0].shape == (12, 4) and (run[0] < 625).all()


def test_bad_input(gpt, golden):
    ids, spk = _spk_prompt(golden)
    with pytest.raises(ValueError, match="eos_id"):
        gpt.generate([ids], stage="refine", params=SamplingParams(temperature=0))
    with pytest.raises(ValueError, match="one temperature"):
        gpt.generate(
            [ids], stage="refine", params=SamplingParams(temperature=(0.1, 0.2), eos_id=EBREAK_ID)
        )
    with pytest.raises(ValueError, match="empty"):
        gpt.generate([np.array([], np.int64)])
    with pytest.raises(ValueError, match="min_new_tokens"):
        gpt.generate([ids], min_new_tokens=[-1])
    with pytest.raises(ValueError, match="max_new_tokens"):
        gpt.generate([ids], max_new_tokens=0)
    with pytest.raises(ValueError, match="stage"):
        gpt.generate([ids], stage="audio")
    with pytest.raises(ValueError, match="dims"):
        gpt.embed(ids[None], np.ones(7, np.float16), SPK_EMB_ID)
    with pytest.raises(ValueError, match="range"):
        gpt.embed(np.array([[gpt.config.num_text_tokens]]))
    with pytest.raises(ValueError, match="spk_emb_token_id"):
        gpt.embed(ids[None], spk)
    assert gpt.generate([]) == []


# -- the loop's logic with a fake stack ---------------------------------------------------------


class FakeStack:
    """Returns each position id as the hidden state, so the logits can script the ends."""

    H = 3

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def begin(self, attention_mask: np.ndarray, max_len: int) -> None:
        self.max_len = max_len

    def forward(self, inputs_embeds, positions, start):
        B, T, _ = inputs_embeds.shape
        assert start + T <= self.max_len
        self.calls.append((start, T))
        out = np.zeros((B, T, self.H), np.float32)
        out[..., 0] = positions
        out[..., 1] = inputs_embeds[..., 0]
        return out


def _scripted_logits(prompt_lens, end_at, V=10, eos=9):
    def logits(h):
        B = h.shape[0]
        out = np.zeros((B, 2, V), np.float32)
        for b in range(B):
            step = int(h[b, 0]) - (prompt_lens[b] - 1)  # 0 for the prompt's last position
            out[b, :, (step % 5) + 1] = 5.0
            if step == end_at[b]:
                out[b, 1, eos] = 10.0
        return out

    return logits


def test_loop_ends_caps_positions_and_streaming():
    stack = FakeStack()
    lens = [4, 2, 3]
    T = max(lens)
    mask = np.zeros((3, T), np.int64)
    for b, n in enumerate(lens):
        mask[b, T - n :] = 1
    frames: dict[int, list] = {0: [], 1: [], 2: []}
    dones: list[int] = []

    def on_frames(b, ids, hid, done):
        frames[b].append((ids, hid))
        if done:
            dones.append(b)

    params = SamplingParams(temperature=0.0, top_p=None, top_k=None, repetition_penalty=1.0)
    res = run_generation(
        stack,
        np.zeros((3, T, 3), np.float32),
        mask,
        np.array([50, 50, 7]),
        params,
        np.random.default_rng(0),
        9,
        next_embed=lambda c: np.repeat(c[:, :1], 3, axis=1),
        logits=_scripted_logits(lens, [3, 11, 99]),
        num_vq=2,
        on_frames=on_frames,
        stream_every=4,
    )
    assert [len(r) for r in res] == [3, 11, 7]
    assert [r.finished for r in res] == [True, True, False]
    assert sorted(dones) == [0, 1, 2]
    for b, r in enumerate(res):
        assert isinstance(r, GenerationResult) and r.ids.shape == (len(r), 2)
        np.testing.assert_array_equal(r.ids[:, 0], (np.arange(len(r)) % 5) + 1)
        # hidden[t] is the state that produced ids[t]: its position is prompt_len - 1 + t
        np.testing.assert_array_equal(r.hidden[:, 0], lens[b] - 1 + np.arange(len(r)))
        np.testing.assert_array_equal(np.concatenate([f[0] for f in frames[b]]), r.ids)
        np.testing.assert_array_equal(np.concatenate([f[1] for f in frames[b]]), r.hidden)
        assert all(len(f[0]) == 4 for f in frames[b][:-1])
    # one prefill, then one slot per step, stopping once every item is done (11 steps + end)
    assert stack.calls[0] == (0, T)
    assert stack.calls[1:] == [(T + i, 1) for i in range(len(stack.calls) - 1)]
    assert len(stack.calls) - 1 == 11


def test_min_new_tokens_blocks_early_end():
    stack = FakeStack()
    mask = np.ones((1, 2), np.int64)
    params = SamplingParams(
        temperature=0.0, top_p=None, top_k=None, repetition_penalty=1.0, min_new_tokens=5
    )
    (r,) = run_generation(
        stack,
        np.zeros((1, 2, 3), np.float32),
        mask,
        np.array([9]),
        params,
        np.random.default_rng(0),
        9,
        next_embed=lambda c: np.repeat(c[:, :1], 3, axis=1),
        logits=_scripted_logits([2], [0]),
        num_vq=2,
    )
    assert len(r) == 9 and not r.finished  # the end at step 0 was suppressed, then never seen
    # per item: the same scripted end at step 1 is taken by item 0 and blocked for item 1
    res = run_generation(
        FakeStack(),
        np.zeros((2, 2, 3), np.float32),
        np.ones((2, 2), np.int64),
        np.array([9, 9]),
        params,
        np.random.default_rng(0),
        9,
        next_embed=lambda c: np.repeat(c[:, :1], 3, axis=1),
        logits=_scripted_logits([2, 2], [1, 1]),
        num_vq=2,
        min_new=np.array([0, 2]),
    )
    assert [len(x) for x in res] == [1, 9] and [x.finished for x in res] == [True, False]


# -- backends, cache and INT8 --------------------------------------------------------------------


def test_graph_cache_reused_and_keyed(cache_dir):
    _need_shared()
    from mixvox.engines.chattts.gpt.onnx_stack import stack_graph_path

    w = GPTWeights.load(ASSET)
    p1 = stack_graph_path(w, "fp32", cache_dir)
    mtime = p1.stat().st_mtime_ns
    assert stack_graph_path(w, "fp32", cache_dir) == p1 and p1.stat().st_mtime_ns == mtime
    meta = json.loads((p1.parent / "manifest.json").read_text())
    assert meta["parts"]["weights_sha256"] == w.gpt_sha256
    with pytest.raises(ValueError):
        stack_graph_path(w, "fp8", cache_dir)
    with pytest.raises(ValueError):
        load_gpt(ASSET, backend="tensorflow", cache_dir=cache_dir)


def test_int8_cost_is_bounded(golden, cache_dir):
    """Measured on this checkpoint (onnxruntime 1.32, MatMulNBits 8-bit weights, block 128,
    accuracy_level 4, AVX-512 VNNI CPU): code logits max rel error 0.0154, greedy codes
    identical for the first 8 frames, teacher-forced argmax agreement 98.25 % over 200 frames
    (the previous per-channel QInt8 ``DynamicQuantizeMatMul`` graph: 0.024, 11, 97.5 %).
    Random tiny weights have small logit margins, and the int8 kernels differ by CPU, so the
    bounds here are loose versions of those figures."""
    _need_shared()
    fp = load_gpt(ASSET, cache_dir=cache_dir)
    q8 = load_gpt(ASSET, precision="int8", cache_dir=cache_dir)
    ids, spk = _spk_prompt(golden)
    emb = fp.embed(ids[None], spk, SPK_EMB_ID)
    lf = fp.code_logits(fp.hidden(emb)[0])
    lq = q8.code_logits(q8.hidden(emb)[0])
    assert rel(lq, lf) < 0.04
    kw = {"spk_emb": spk, "spk_emb_token_id": SPK_EMB_ID, "params": GREEDY, "max_new_tokens": 40}
    (a,) = fp.generate([ids], **kw)
    (b,) = q8.generate([ids], **kw)
    np.testing.assert_array_equal(a.codes[:6], b.codes[:6])
    # teacher forcing on the fp32 codes: per-code argmax agreement
    seq = np.concatenate([emb[0], fp.embed_codes(a.codes[:-1])])[None]
    tf = slice(len(ids) - 1, None)
    af = fp.code_logits(fp.hidden(seq)[0, tf]).argmax(-1)
    aq = q8.code_logits(q8.hidden(seq)[0, tf]).argmax(-1)
    assert (af == aq).mean() > 0.95


def test_onnx_chunk_after_cache_and_position_limit(golden, cache_dir):
    """A multi-position chunk after a cached prefix (batch > 1 runs it position by position:
    GroupQueryAttention only takes such chunks at batch 1) equals one prefill of the whole
    sequence; positions past the rotary table are refused, not silently wrapped."""
    _need_shared()
    from mixvox.engines.chattts.gpt.onnx_stack import OnnxStack, runtime_graph_path

    w = GPTWeights.load(ASSET)
    stack = OnnxStack(w, cache_dir=cache_dir)
    assert runtime_graph_path(w, "fp32", cache_dir) == stack.graph_path  # cached, reused
    assert runtime_graph_path(w, "int8", cache_dir) != stack.graph_path
    with pytest.raises(ValueError, match="fp32, int8 or int4"):
        runtime_graph_path(w, "fp8", cache_dir)
    rng = np.random.default_rng(3)
    for B in (1, 2):
        x = rng.standard_normal((B, 10, w.config.hidden_size)).astype(np.float32)
        pos = np.tile(np.arange(10, dtype=np.int64), (B, 1))
        stack.begin(np.ones((B, 10), np.int64), 10)
        whole = stack.forward(x, pos, 0).copy()
        stack.begin(np.ones((B, 6), np.int64), 10)
        stack.forward(x[:, :6], pos[:, :6], 0)
        chunk = stack.forward(x[:, 6:], pos[:, 6:], 6)
        assert rel(chunk, whole[:, 6:]) < 1e-5
    stack.begin(np.ones((1, 1), np.int64), 2)
    with pytest.raises(ValueError, match="position"):
        stack.forward(x[:1, :1], np.array([[stack.max_position]]), 0)


def test_onnx_head_matches_numpy(golden, cache_dir):
    _need_shared()
    from mixvox.engines.chattts.gpt.onnx_stack import OnnxHead

    rng = np.random.default_rng(4)
    wt = rng.standard_normal((32, 50)).astype(np.float32)
    x = rng.standard_normal((2, 3, 32)).astype(np.float32)
    y = OnnxHead(wt)(x)
    assert y.shape == (2, 3, 50) and rel(y, x @ wt) < 1e-6
    w_out_in = np.ascontiguousarray(wt.T)  # torch layout [out, in]
    y2 = OnnxHead(w_out_in, out_in=True)(x[0, 0])
    assert y2.shape == (50,) and rel(y2, x[0, 0] @ wt) < 1e-6


def test_onnx_backend_never_imports_torch(tmp_path):
    _need_shared()
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from mixvox.engines.chattts.gpt import load_gpt, SamplingParams\n"
        f"g = load_gpt({str(ASSET)!r}, cache_dir={str(tmp_path)!r})\n"
        "r = g.generate([np.arange(5)], params=SamplingParams(temperature=0), "
        "max_new_tokens=3)\n"
        "assert len(r) == 1\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
