"""The TensorRT backend's logic, with the ``tensorrt`` module faked.

TensorRT cannot be installed on our machines, so what is tested here is everything around
it: profiles, buffer plans, the strided cache copy, cache keys and their invalidation, the
verification of cached engines, the builder calls made for each precision, and the fallbacks.
"""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from mixvox.engines.chattts import runtime
from mixvox.engines.chattts.gpt import trt as T
from mixvox.interfaces import EngineUnavailable

DIMS = T.StackDims(num_layers=20, num_heads=12, head_dim=64, hidden_size=768)


# ---------------------------------------------------------------------------------------------
# a fake tensorrt module recording what the builder is asked to do
# ---------------------------------------------------------------------------------------------


class _Rec:
    def __init__(self) -> None:
        self.calls: list[tuple] = []


def fake_trt(version: str = "10.3.0", *, parse_ok: bool = True, build_ok: bool = True):
    rec = _Rec()
    m = types.ModuleType("tensorrt")
    m.__version__ = version

    class Logger:
        WARNING = 2

        def __init__(self, level):
            rec.calls.append(("logger", level))

    class MemoryPoolType:
        WORKSPACE = "workspace"

    class BuilderFlag:
        FP16 = "fp16"
        INT8 = "int8"

    class Profile:
        def __init__(self):
            self.shapes, self.values = {}, {}

        def set_shape(self, name, lo, opt, hi):
            self.shapes[name] = (tuple(lo), tuple(opt), tuple(hi))

        def set_shape_input(self, name, lo, opt, hi):
            self.values[name] = (tuple(lo), tuple(opt), tuple(hi))

    class Config:
        def __init__(self):
            self.flags, self.profiles, self.pool = set(), [], {}
            self.int8_calibrator = None
            self.calibration_profile = None

        def set_memory_pool_limit(self, kind, n):
            self.pool[kind] = n

        def set_flag(self, f):
            self.flags.add(f)

        def add_optimization_profile(self, p):
            self.profiles.append(p)

        def set_calibration_profile(self, p):
            self.calibration_profile = p

    class Parser:
        num_errors = 0 if parse_ok else 1

        def __init__(self, network, logger):
            pass

        def parse_from_file(self, path):
            rec.calls.append(("parse", path))
            return parse_ok

        def get_error(self, i):
            return "Unsupported operator Foo"

    class Builder:
        def __init__(self, logger):
            pass

        def create_network(self, flags):
            rec.calls.append(("network", flags))
            return object()

        def create_builder_config(self):
            cfg = Config()
            rec.config = cfg
            return cfg

        def create_optimization_profile(self):
            return Profile()

        def build_serialized_network(self, network, config):
            rec.calls.append(("build",))
            if not build_ok:
                return None
            return b"ENGINE:" + ",".join(sorted(config.flags)).encode()

    class IInt8EntropyCalibrator2:
        def __init__(self):
            pass

    m.Logger, m.MemoryPoolType, m.BuilderFlag = Logger, MemoryPoolType, BuilderFlag
    m.Builder, m.OnnxParser = Builder, Parser
    m.IInt8EntropyCalibrator2 = IInt8EntropyCalibrator2
    return m, rec


@pytest.fixture
def onnx_file(tmp_path):
    p = tmp_path / "stack.onnx"
    p.write_bytes(b"not really onnx, but hashed like one")
    return p


# ---------------------------------------------------------------------------------------------


def test_profiles_cover_prefill_and_decode():
    prof = T.stack_profiles(DIMS, max_batch=8, max_len=2304, max_prompt=512)
    assert [p.name for p in prof] == ["prefill", "decode"]
    pre, dec = prof
    assert pre.shapes["inputs_embeds"] == ((1, 1, 768), (1, 64, 768), (8, 512, 768))
    assert dec.shapes["inputs_embeds"] == ((1, 1, 768), (1, 1, 768), (8, 1, 768))
    # the cache length is fixed, the batch varies
    assert pre.shapes["past"][0] == (20, 2, 1, 12, 2304, 64)
    assert pre.shapes["past"][2] == (20, 2, 8, 12, 2304, 64)
    assert dec.shapes["key_mask"][2] == (8, 2304)
    assert dec.values["start"] == ((0,), (576,), (2303,))
    with pytest.raises(ValueError):
        T.stack_profiles(DIMS, max_batch=2, max_len=100, max_prompt=200)


def test_buffer_plan_sizes():
    plan = T.buffer_plan(DIMS, batch=2, max_len=1024, max_new=128)
    assert plan["past"].nbytes == 20 * 2 * 2 * 12 * 1024 * 64 * 4
    assert plan["present"].shape == (20, 2, 2, 12, 128, 64)
    assert plan["position_ids"].dtype == np.int64
    assert set(plan) == {"past", "key_mask", "inputs_embeds", "position_ids", "hidden", "present"}


def test_present_copy_writes_the_right_slots():
    """Simulate the 2-D copy with numpy: rows of `present` land at slot `start` of `past`."""
    dims = T.StackDims(num_layers=2, num_heads=3, head_dim=4, hidden_size=12)
    B, S, t, start = 2, 10, 3, 5
    past = np.zeros((2, 2, B, 3, S, 4), np.float32)
    present = np.random.default_rng(0).standard_normal((2, 2, B, 3, t, 4)).astype(np.float32)
    c = T.present_copy_2d(dims, B, S, t, start)
    flat_past = past.reshape(-1).view(np.uint8)
    flat_pres = present.reshape(-1).view(np.uint8)
    for r in range(c["height"]):
        d = c["dst_offset"] + r * c["dst_pitch"]
        s = r * c["src_pitch"]
        flat_past[d : d + c["width"]] = flat_pres[s : s + c["width"]]
    np.testing.assert_array_equal(past[:, :, :, :, start : start + t], present)
    assert not past[:, :, :, :, :start].any() and not past[:, :, :, :, start + t :].any()
    with pytest.raises(ValueError):
        T.present_copy_2d(dims, B, S, t, S - 1)


def test_cache_key_changes_with_every_part():
    prof = T.stack_profiles(DIMS, max_batch=8, max_len=2304, max_prompt=512)
    base = dict(
        onnx_sha256="a" * 64,
        trt_version="10.3.0",
        gpu_name="NVIDIA H200",
        precision="fp16",
        profiles=prof,
        workspace=1 << 30,
    )
    k0 = T.engine_key(T.engine_key_parts(**base))
    assert k0 == T.engine_key(T.engine_key_parts(**base))  # deterministic
    other_prof = T.stack_profiles(DIMS, max_batch=16, max_len=2304, max_prompt=512)
    for change in (
        {"onnx_sha256": "b" * 64},
        {"trt_version": "10.4.0"},
        {"gpu_name": "NVIDIA H100"},
        {"precision": "int8"},
        {"profiles": other_prof},
        {"workspace": 2 << 30},
    ):
        assert T.engine_key(T.engine_key_parts(**{**base, **change})) != k0, change
    with pytest.raises(ValueError):
        T.engine_key_parts(**{**base, "precision": "fp8"})


def test_engine_cache_verifies_before_loading(tmp_path):
    cache = T.EngineCache(tmp_path)
    assert cache.load("k") is None
    path = cache.store("k", b"engine bytes", {"a": 1})
    assert cache.load("k") == b"engine bytes"
    path.write_bytes(b"engine bytez")  # corrupted on disk
    assert cache.load("k") is None
    assert not (tmp_path / "k").exists()  # and removed, so it is rebuilt


def test_build_fp16_sets_flags_profiles_and_workspace(onnx_file):
    trt, rec = fake_trt()
    prof = T.stack_profiles(DIMS, max_batch=4, max_len=512, max_prompt=128)
    data = T.build_engine(trt, onnx_file, precision="fp16", profiles=prof, workspace=123)
    assert data == b"ENGINE:fp16"
    cfg = rec.config
    assert cfg.pool == {"workspace": 123}
    assert [p.shapes["inputs_embeds"][2] for p in cfg.profiles] == [(4, 128, 768), (4, 1, 768)]
    assert cfg.profiles[1].values["start"] == ((0,), (128,), (511,))
    assert ("network", 0) in rec.calls


def test_build_int8_needs_calibrator_and_sets_it(onnx_file):
    trt, rec = fake_trt()
    prof = T.stack_profiles(DIMS, max_batch=1, max_len=256, max_prompt=64)
    with pytest.raises(ValueError, match="calibrator"):
        T.build_engine(trt, onnx_file, precision="int8", profiles=prof)
    calib = object()
    data = T.build_engine(trt, onnx_file, precision="int8", profiles=prof, calibrator=calib)
    assert data == b"ENGINE:fp16,int8"
    assert rec.config.int8_calibrator is calib
    assert rec.config.calibration_profile is rec.config.profiles[0]


def test_parse_and_build_failures_are_clear(onnx_file):
    prof = T.stack_profiles(DIMS, max_batch=1, max_len=256, max_prompt=64)
    trt, _ = fake_trt(parse_ok=False)
    with pytest.raises(RuntimeError, match="Unsupported operator Foo"):
        T.build_engine(trt, onnx_file, precision="fp16", profiles=prof)
    trt, _ = fake_trt(build_ok=False)
    with pytest.raises(RuntimeError, match="failed to build"):
        T.build_engine(trt, onnx_file, precision="fp16", profiles=prof)


def test_load_or_build_uses_the_cache(onnx_file, tmp_path):
    trt, rec = fake_trt()
    prof = T.stack_profiles(DIMS, max_batch=1, max_len=256, max_prompt=64)
    kw = dict(precision="fp16", profiles=prof, cache_dir=tmp_path, trt=trt, gpu="NVIDIA H200")
    d1, parts = T.load_or_build(onnx_file, **kw)
    d2, _ = T.load_or_build(onnx_file, **kw)
    assert d1 == d2 and sum(c == ("build",) for c in rec.calls) == 1
    assert parts["gpu"] == "NVIDIA H200" and parts["tensorrt"] == "10.3.0"
    # a new GPU, TensorRT version or graph means a rebuild
    T.load_or_build(onnx_file, **{**kw, "gpu": "NVIDIA H100"})
    assert sum(c == ("build",) for c in rec.calls) == 2
    onnx_file.write_bytes(b"a changed graph")
    T.load_or_build(onnx_file, **kw)
    assert sum(c == ("build",) for c in rec.calls) == 3


def test_missing_tensorrt_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", None)  # import fails
    with pytest.raises(EngineUnavailable, match="TensorRT is not installed"):
        runtime.import_tensorrt()
    assert "TensorRT is not installed" in (runtime.tensorrt_unavailable_reason() or "")


def test_old_tensorrt_is_refused(monkeypatch):
    trt, _ = fake_trt("8.6.1")
    monkeypatch.setitem(sys.modules, "tensorrt", trt)
    with pytest.raises(EngineUnavailable, match="too old"):
        runtime.import_tensorrt()


def test_auto_backend_falls_back_without_tensorrt_or_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorrt", None)
    backend, device, why = runtime.choose_backend("auto")
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if has_cuda:
        assert (backend, device) == ("torch", "cuda")
    else:
        assert backend == "onnx" and device in ("cpu", "cuda")
    assert why
    assert runtime.choose_backend("tensorrt")[:2] == ("tensorrt", "cuda")
    assert runtime.choose_backend("onnx")[:2] == ("onnx", "cpu")
