"""The CUDA decode runner's logic, run on the CPU (no graphs, no compilation).

On a GPU the same code is captured in CUDA graphs (checked on an H200 by ``bench/gpu.py``,
see BENCHMARKS.md); here we check what does not depend on the device: the greedy codes and
hidden states against the reference goldens, the on-GPU sampler against the reference's
logits processors, continuous batching (slots refilled) and the engine-facing adapter.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mixvox.engines.chattts.gpt.cuda_graph import (  # noqa: E402
    CodeRequest,
    CudaGPT,
    CudaSampling,
    GraphGPT,
    _process_logits,
)
from mixvox.engines.chattts.gpt.sampler import SamplingParams  # noqa: E402

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
if not (TINY / "golden.npz").is_file():
    pytest.skip(f"shared fixtures not found at {TINY}", allow_module_level=True)


@pytest.fixture(scope="module")
def golden():
    return np.load(TINY / "golden.npz")


@pytest.fixture(scope="module", params=["stack", "none"])
def runner(request):
    m = CudaGPT(
        TINY / "asset",
        device="cpu",
        precision="fp32",
        max_batch=2,
        max_len=256,
        fused=request.param,
    )
    yield m
    m.close()


GREEDY = CudaSampling(greedy=True, suppress_eos=True)


def test_prompt_embedding_with_speaker_matches_golden(runner, golden):
    ids = torch.from_numpy(golden["tok/code_spk/ids"])
    spk = torch.from_numpy(golden["speaker/vector_f16"])
    emb = runner.embed_prompt(ids, spk, int(ids[1]))
    np.testing.assert_array_equal(emb.numpy(), golden["code_spk/emb"])


def test_greedy_codes_and_hiddens_match_golden(runner, golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    want = golden["greedy/codes"]
    r = runner.generate([CodeRequest(emb, max_new=len(want))], GREEDY)[0]
    np.testing.assert_array_equal(r.codes.numpy(), want)
    h, wh = r.hidden.numpy(), golden["greedy/hiddens"]
    assert np.abs(h - wh).max() / np.abs(wh).max() < 1e-4
    assert not r.finished  # the end code was suppressed


def test_continuous_batching_refills_slots_without_changing_results(runner, golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    want = golden["greedy/codes"]
    reqs = [
        CodeRequest(emb, max_new=24),
        CodeRequest(emb[:-3], max_new=10),
        CodeRequest(emb, max_new=24),
    ]
    out = runner.generate(reqs, GREEDY, max_batch=2)  # the third waits for a free slot
    assert [len(r.codes) for r in out] == [24, 10, 24]
    np.testing.assert_array_equal(out[0].codes.numpy(), want)
    np.testing.assert_array_equal(out[2].codes.numpy(), want)


def test_results_survive_the_refill_of_their_slot(runner, golden):
    """A finished item's hidden states are its own, not a view of a slot that the next
    request overwrites (fp32 hidden states used to alias the runner's output buffer)."""
    emb = torch.from_numpy(golden["code_spk/emb"])
    alone = runner.generate([CodeRequest(emb[:-3], max_new=10)], GREEDY)[0]
    want_codes, want_hidden = alone.codes.numpy().copy(), alone.hidden.numpy().copy()
    reqs = [
        CodeRequest(emb, max_new=24),
        CodeRequest(emb[:-3], max_new=10),
        CodeRequest(emb, max_new=24),
    ]
    out = runner.generate(reqs, GREEDY, max_batch=2)  # the third reuses the second's slot
    np.testing.assert_array_equal(out[1].codes.numpy(), want_codes)
    # equal up to the rounding of a batch of 2 against a batch of 1
    h = out[1].hidden.numpy()
    assert np.abs(h - want_hidden).max() / np.abs(want_hidden).max() < 1e-4
    np.testing.assert_array_equal(alone.hidden.numpy(), want_hidden)  # not overwritten either


def test_streaming_callback_sees_every_frame_once(runner, golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    seen = []
    r = runner.generate(
        [CodeRequest(emb, max_new=40, tag="a")],
        GREEDY,
        on_frames=lambda tag, c, h, done: seen.append((tag, len(c), done)),
    )[0]
    assert sum(n for _, n, _ in seen) == len(r.codes) == 40
    assert seen[-1][2] is True and all(t == "a" for t, _, _ in seen)


def test_sampling_stops_each_item_at_its_own_end(runner, golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    out = runner.generate([CodeRequest(emb, max_new=200)] * 2, CudaSampling(), seed=3)
    for r in out:
        assert r.finished and 0 < len(r.codes) < 200
        assert not (r.codes == 625).any()  # the end frame itself is not returned


def test_min_frames_blocks_the_end_code(runner, golden):
    emb = torch.from_numpy(golden["code_spk/emb"])
    r = runner.generate([CodeRequest(emb, max_new=60, min_new=60)], CudaSampling(), seed=3)[0]
    assert len(r.codes) == 60 and not r.finished


def test_sampler_matches_reference_processors(golden):
    logits = torch.from_numpy(golden["proc/logits"])
    past = torch.from_numpy(golden["proc/past"])[:, None, -16:]
    out = _process_logits(
        logits,
        past,
        torch.eye(logits.shape[1]),
        torch.tensor([0.3]),
        torch.tensor(1.05),
        torch.tensor(0.7),
        torch.tensor(20),
        torch.tensor(True),
        torch.zeros(len(logits), dtype=torch.bool),
        625,
    )[:, 0]
    want = torch.from_numpy(golden["proc/after_warpers"])
    assert torch.equal(torch.isinf(out), torch.isinf(want))
    finite = ~torch.isinf(want)
    assert (out[finite] - want[finite]).abs().max() < 1e-5


def test_graph_gpt_adapter_is_a_drop_in_for_the_engine(golden):
    m = GraphGPT(TINY / "asset", precision="fp32", device="cpu", use_graphs=False)
    ids = golden["tok/code_spk/ids"]
    frames = []
    res = m.generate(
        [ids],
        spk_emb=golden["speaker/vector_f16"],
        spk_emb_token_id=int(ids[1]),
        params=SamplingParams(temperature=0, suppress_eos=True),
        max_new_tokens=24,
        on_frames=lambda b, c, h, done: frames.append(done),
    )
    np.testing.assert_array_equal(res[0].ids, golden["greedy/codes"])
    assert frames[-1] is True
    m.close()


def test_graph_gpt_takes_per_item_speakers_streams_and_minimums(golden):
    """What ChatTTSEngine.synthesize_many passes when several requests share a batch: one
    speaker, one random generator and one end-code minimum per item (the GPU path seeds its
    counter-based noise from the first generator)."""
    m = GraphGPT(TINY / "asset", precision="fp32", device="cpu", use_graphs=False)
    ids = golden["tok/code_spk/ids"]
    spk = golden["speaker/vector_f16"]
    res = m.generate(
        [ids, ids],
        spk_emb=[spk, spk],
        spk_emb_token_id=int(ids[1]),
        params=SamplingParams(temperature=0, suppress_eos=True),
        rng=[np.random.default_rng(1), np.random.default_rng(2)],
        min_new_tokens=[3, 5],
        max_new_tokens=24,
    )
    assert len(res) == 2
    for r in res:
        np.testing.assert_array_equal(r.ids, golden["greedy/codes"])
    m.close()


def test_unsupported_sampling_is_refused(runner):
    with pytest.raises(ValueError, match="top_k"):
        runner.set_sampling(CudaSampling(top_k=50))
