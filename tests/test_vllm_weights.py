"""Weight loads into a running vLLM model on both paths, and the CPU engine defaults, with
stand-in models (no vllm needed): recode_lib.generation.vllm_weights, the TRL colocate shim
recode_lib.training.vllm_sync and vllm_backend.cpu_engine_kwargs. The real engine runs in
tests/test_vllm_real_*.py (marker `vllm`)."""

from __future__ import annotations

import os
import sys
import types

import torch
from torch import nn

from recode_lib.generation import vllm_backend
from recode_lib.generation.vllm_backend import (
    CPU_ENGINE_DEFAULTS,
    CPU_KV_CACHE_BYTES,
    CPU_SEEDED_ENGINE_DEFAULTS,
    RESERVED_CPU_ENV,
    VLLMGenerator,
    cpu_engine_env,
    cpu_engine_environment,
    cpu_engine_kwargs,
)
from recode_lib.generation.vllm_weights import (
    has_repacked_layers,
    load_into_runner,
    repack_kept_weights,
)
from recode_lib.training import vllm_sync


class UnquantizedMethod:
    """A quant method that counts how often it (re)packed its layer."""

    def __init__(self):
        self.packed = 0

    def process_weights_after_loading(self, layer):
        self.packed += 1


def layer(rows: int, packed: bool) -> nn.Module:
    m = nn.Module()
    m.weight = nn.Parameter(torch.zeros(rows, 2), requires_grad=False)
    m.quant_method = UnquantizedMethod()
    if packed:
        m.cpu_linear = object()
    return m


class Model(nn.Module):
    def __init__(self, packed: bool):
        super().__init__()
        self.proj = layer(0, packed)  # a repacked linear: its weight is empty
        self.lm_head = layer(3, packed)  # an embedding-style layer that keeps its weight
        self.loaded: list = []

    def load_weights(self, weights):
        self.loaded.extend(weights)


class Runner:
    def __init__(self, packed: bool):
        self.model = Model(packed)
        self.reloads: list = []

    def reload_weights(self, weights_iterator=None, is_checkpoint_format=True):
        assert is_checkpoint_format
        self.reloads.append(list(weights_iterator))


def tensors():
    return [("model.proj.weight", torch.ones(2)), ("model.lm_head.weight", torch.ones(3))]


def test_cpu_engine_loads_through_vllm_reload_and_repacks_the_kept_weight():
    runner = Runner(packed=True)
    assert has_repacked_layers(runner.model)
    load_into_runner(runner, iter(tensors()))
    assert [[n for n, _ in r] for r in runner.reloads] == [[n for n, _ in tensors()]]
    assert runner.model.loaded == []  # load_weights cannot write there
    assert runner.model.lm_head.quant_method.packed == 1  # the tied head packed again
    assert runner.model.proj.quant_method.packed == 0  # reload already repacked it


def test_quantized_layers_are_not_processed_twice():
    model = Model(packed=True)
    model.lm_head.quant_method = type("Fp8LinearMethod", (UnquantizedMethod,), {})()
    assert repack_kept_weights(model) == 0 and model.lm_head.quant_method.packed == 0


def test_gpu_engine_loads_through_load_weights_unchanged():
    runner = Runner(packed=False)
    assert not has_repacked_layers(runner.model)
    load_into_runner(runner, iter(tensors()))
    assert runner.reloads == [] and [n for n, _ in runner.model.loaded] == [n for n, _ in tensors()]
    assert repack_kept_weights(runner.model) == 0


class Generation:
    """TRL's VLLMGeneration in colocate mode: sync_weights loads one tensor at a time."""

    def __init__(self, runner, params, mode="colocate"):
        self.mode, self.params, self.resets = mode, params, 0
        executor = type("X", (), {"driver_worker": type("W", (), {"model_runner": runner})()})()
        self.llm = type("LLM", (), {})()
        self.llm.llm_engine = type("E", (), {"model_executor": executor})()
        self.llm.reset_prefix_cache = self.reset

    def reset(self):
        self.resets += 1

    def sync_weights(self):
        model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, p in self.params:
            model.load_weights([(name, p)])
        self.llm.reset_prefix_cache()


def test_colocate_sync_collects_trl_tensors_then_loads_them_at_once():
    runner = Runner(packed=True)
    params = tensors()
    trainer = type("T", (), {})()
    trainer.vllm_generation = Generation(runner, params)
    assert vllm_sync.patch_colocate_sync(trainer)
    trainer.vllm_generation.sync_weights()
    (loaded,) = runner.reloads  # one reload with every tensor
    assert [n for n, _ in loaded] == [n for n, _ in params]
    params[0][1].fill_(7.0)  # TRL may unmerge/re-partition afterwards:
    assert torch.equal(loaded[0][1], torch.ones(2))  # the sync kept copies
    assert "load_weights" not in vars(runner.model)  # the model's own method is back
    assert trainer.vllm_generation.resets == 2  # TRL's reset, then one after the load


def test_colocate_sync_left_alone_on_gpu_engines_and_in_server_mode():
    for runner, mode in ((Runner(packed=False), "colocate"), (Runner(packed=True), "server")):
        trainer = type("T", (), {})()
        trainer.vllm_generation = Generation(runner, tensors(), mode)
        assert not vllm_sync.patch_colocate_sync(trainer)


def test_cpu_engine_defaults_fill_in_under_the_callers_keywords():
    assert cpu_engine_kwargs({}) == CPU_ENGINE_DEFAULTS | CPU_SEEDED_ENGINE_DEFAULTS
    assert CPU_SEEDED_ENGINE_DEFAULTS == {"enable_chunked_prefill": False}
    assert CPU_ENGINE_DEFAULTS["kv_cache_memory_bytes"] == CPU_KV_CACHE_BYTES == 1 << 30
    mine = cpu_engine_kwargs({"dtype": "bfloat16", "gpu_memory_utilization": 0.2})
    assert mine == {
        "dtype": "bfloat16",
        "enforce_eager": True,
        "gpu_memory_utilization": 0.2,
        "enable_chunked_prefill": False,
    }
    # TRL's colocate engine: its keywords win, the KV-cache size is always explicit; it seeds
    # the engine, not each request, and sets its own step budget: chunked prefill stays
    trl = vllm_sync.colocate_engine_kwargs({"model": "m", "gpu_memory_utilization": 0.3})
    assert trl == {**CPU_ENGINE_DEFAULTS, "model": "m", "gpu_memory_utilization": 0.3}


def test_llm_kwargs_change_only_for_a_cpu_engine(tiny_model_dir):
    gen = VLLMGenerator(str(tiny_model_dir), gpu_memory_utilization=0.3)
    assert gen.llm_kwargs() == {
        "model": str(tiny_model_dir),
        "tensor_parallel_size": 1,
        "gpu_memory_utilization": 0.3,
    }
    assert gen.llm_kwargs(on_cpu=True) == {
        **gen.llm_kwargs(),
        "dtype": "float32",
        "enforce_eager": True,
        "enable_chunked_prefill": False,
    }


def test_a_shared_engine_is_used_and_not_closed(tiny_model_dir):
    engine = object()
    gen = VLLMGenerator(str(tiny_model_dir), llm=engine)
    assert gen.engine() is engine
    gen.close()
    assert gen._llm is None  # dropped here, the owner keeps it


def test_a_small_machines_cpu_engine_keeps_no_core_for_its_scheduler():
    assert cpu_engine_env({}, 2) == {RESERVED_CPU_ENV: "0"}
    assert cpu_engine_env({}, 1) == {RESERVED_CPU_ENV: "0"}
    assert cpu_engine_env({"VLLM_CPU_OMP_THREADS_BIND": "auto"}, 2) == {RESERVED_CPU_ENV: "0"}


def test_the_users_cpu_settings_and_larger_machines_keep_vllms_choice():
    assert cpu_engine_env({RESERVED_CPU_ENV: "1"}, 2) == {}  # the user's value stands
    assert cpu_engine_env({"VLLM_CPU_OMP_THREADS_BIND": "0,1"}, 2) == {}  # explicit cores
    assert cpu_engine_env({"VLLM_CPU_OMP_THREADS_BIND": "nobind"}, 2) == {}  # data-parallel
    assert cpu_engine_env({}, 8) == {}  # unmeasured there: vLLM's default


def test_the_cpu_engine_environment_is_set_while_the_engine_is_built(monkeypatch):
    monkeypatch.delenv(RESERVED_CPU_ENV, raising=False)
    monkeypatch.delenv("VLLM_CPU_OMP_THREADS_BIND", raising=False)
    monkeypatch.setattr(vllm_backend.os, "sched_getaffinity", lambda pid: {0, 1})
    seen = {}

    class FakeLLM:  # what vllm.LLM's spawned engine core would inherit
        def __init__(self, **kwargs):
            seen["env"] = os.environ.get(RESERVED_CPU_ENV)
            seen["kwargs"] = kwargs

    fake = types.ModuleType("vllm")
    fake.LLM = FakeLLM
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setattr(vllm_backend, "vllm_on_cpu", lambda: True)
    VLLMGenerator("m").engine()
    assert seen["env"] == "0" and seen["kwargs"]["dtype"] == "float32"
    assert RESERVED_CPU_ENV not in os.environ  # restored once built
    with cpu_engine_environment() as added:
        assert added == {RESERVED_CPU_ENV: "0"} == {RESERVED_CPU_ENV: os.environ[RESERVED_CPU_ENV]}
    assert RESERVED_CPU_ENV not in os.environ
