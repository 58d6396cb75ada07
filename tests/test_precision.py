"""Generation precision (recode_lib.core.models.inference_precision): bfloat16 or int8 weights for a
model that only generates, an option of the hf backend, part of an evaluation's protocol and of a
generation cache's key; old records keep their fingerprints."""

from __future__ import annotations

import hashlib
import json

import pytest
import torch

from recode_lib.core.models import PRECISIONS, inference_precision, load_model
from recode_lib.evaluation.guard import guard_run, precision_field
from recode_lib.evaluation.spec import EvalSpec, protocol_fingerprint
from recode_lib.generation import (
    CachedGenerator,
    Completion,
    Generator,
    SamplingConfig,
    backend_options,
    get_generator,
)
from recode_lib.weights.sweep import setting_build

MESSAGES = [{"role": "user", "content": "Write a function add(a, b)."}]


def test_int8_replaces_every_linear_with_a_quantized_one(tiny_model_dir):
    model, _ = load_model(str(tiny_model_dir))
    n_linear = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    q = inference_precision(model, "int8")
    quantized = [m for m in q.modules() if isinstance(m, torch.ao.nn.quantized.dynamic.Linear)]
    assert n_linear > 0 and len(quantized) == n_linear
    assert not any(type(m) is torch.nn.Linear for m in q.modules())


def test_bfloat16_casts_every_weight(tiny_model_dir):
    model, _ = load_model(str(tiny_model_dir))
    assert {p.dtype for p in inference_precision(model, "bfloat16").parameters()} == {
        torch.bfloat16
    }


def test_native_returns_the_model_unchanged(tiny_model_dir):
    model, _ = load_model(str(tiny_model_dir))
    assert inference_precision(model, "native") is model
    assert {p.dtype for p in model.parameters()} == {torch.float32}


def test_unknown_precision_and_int8_off_the_cpu_are_refused(tiny_model_dir):
    model, _ = load_model(str(tiny_model_dir))
    with pytest.raises(ValueError, match="one of"):
        inference_precision(model, "fp8")
    with pytest.raises(ValueError, match="CPU"):
        inference_precision(model, "int8", device="cuda")


def test_hf_generator_generates_with_int8_weights(tiny_model_dir):
    gen = get_generator("hf", str(tiny_model_dir), batch_size=2, precision="int8")
    assert gen.precision == "int8"
    outs = gen.generate(
        [MESSAGES, MESSAGES[::-1]], SamplingConfig(temperature=0.0, max_new_tokens=8)
    )
    assert [len(o) for o in outs] == [1, 1]
    assert all(0 < o[0].n_tokens <= 8 and isinstance(o[0].text, str) for o in outs)


@pytest.mark.parametrize(
    "flags, precision, dtype",
    [({"avx2", "avx512_bf16"}, "bfloat16", torch.bfloat16), ({"avx2"}, "native", torch.float32)],
)
def test_hf_generator_auto_holds_bf16_weights_only_where_the_cpu_computes_bf16(
    tiny_model_dir, tmp_path, monkeypatch, flags, precision, dtype
):
    # calibration (00's CAL_PRECISION) hands "auto" to the generator: the cache key and the
    # weights are what it became (emulated bf16 decodes 2x slower than float32)
    from recode_lib.core import bf16

    monkeypatch.setattr(bf16, "cpu_flags", lambda *a, **k: frozenset(flags))
    gen = get_generator("hf", str(tiny_model_dir), batch_size=2, precision="auto")
    assert gen.precision == precision
    assert all(p.dtype == dtype for p in gen.lm.parameters())
    assert CachedGenerator(gen, tmp_path / "generations.jsonl").key_model == (
        gen.model if precision == "native" else f"{gen.model}@bfloat16"
    )


def test_hf_generator_over_a_callers_model_refuses_another_precision(tiny_model_dir):
    model, tok = load_model(str(tiny_model_dir))
    with pytest.raises(ValueError, match="model_obj"):
        get_generator("hf", str(tiny_model_dir), model_obj=model, tokenizer=tok, precision="int8")


class _Fixed(Generator):
    backend = "hf"

    def __init__(self, text, precision):
        self.model, self.text, self.precision, self.calls = "m", text, precision, 0

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        self.calls += 1
        outs = [Completion(text=self.text, n_tokens=1, finish_reason="stop") for _ in requests]
        for i, c in enumerate(outs):
            if callback:
                callback(i, c)
        return outs


def test_a_cache_never_answers_int8_requests_with_native_samples(tmp_path):
    path, sampling = tmp_path / "gen.jsonl", SamplingConfig(temperature=0.0, max_new_tokens=4)
    assert (
        CachedGenerator(_Fixed("native", "native"), path).generate([MESSAGES], sampling)[0][0].text
        == "native"
    )
    int8 = _Fixed("int8", "int8")
    assert CachedGenerator(int8, path).generate([MESSAGES], sampling)[0][0].text == "int8"
    assert int8.calls == 1
    again = _Fixed("other", "native")
    assert CachedGenerator(again, path).generate([MESSAGES], sampling)[0][0].text == "native"
    assert again.calls == 0


def test_default_fingerprint_is_the_one_recorded_before_precision_existed():
    old = {
        "temperature": 0.8,
        "top_p": 1.0,
        "max_new_tokens": 96,
        "reasoning": False,
        "early_stop": False,
    }
    expected = hashlib.sha256(json.dumps(old, sort_keys=True).encode()).hexdigest()[:12]
    spec = EvalSpec(temperature=0.8, max_new_tokens=96, reasoning=False, n=2)
    assert protocol_fingerprint(old) == expected == spec.fingerprint()


def test_precision_changes_the_fingerprint():
    spec = EvalSpec(temperature=0.8, n=2)
    assert len({spec.replace(precision=p).fingerprint() for p in PRECISIONS}) == len(PRECISIONS)
    assert spec.replace(precision="int8").protocol()["precision"] == "int8"


def test_a_recorded_protocol_without_precision_is_followed_as_native():
    recorded = {
        "temperature": 0.6,
        "top_p": 0.95,
        "max_new_tokens": 64,
        "reasoning": True,
        "early_stop": False,
    }
    followed = EvalSpec(precision="int8").with_protocol(recorded)
    assert followed.precision == "native" and followed.temperature == 0.6


def test_precision_is_an_hf_option():
    assert EvalSpec(precision="bfloat16").generator_kwargs()["precision"] == "bfloat16"
    with pytest.raises(ValueError, match="hf backend"):
        EvalSpec(backend="vllm", precision="int8")
    with pytest.raises(ValueError, match="hf backend"):
        backend_options(
            "openai",
            batch_size=1,
            tensor_parallel_size=1,
            base_url="u",
            concurrency=1,
            precision="int8",
        )
    with pytest.raises(ValueError, match="precision"):
        EvalSpec(precision="int4")


def test_a_folder_evaluated_natively_is_another_configuration_for_int8(tmp_path):
    cfg = {"model": "m", "sampling": {"temperature": 0.0}}
    guard_run(tmp_path / "ev", {**cfg, **precision_field("native")}, "raise")
    guard_run(tmp_path / "ev", dict(cfg), "raise")  # native = as recorded before
    with pytest.raises(ValueError):
        guard_run(tmp_path / "ev", {**cfg, **precision_field("int8")}, "raise")


def test_the_live_alpha_model_refuses_another_precision(tiny_model_dir):
    with pytest.raises(ValueError, match="native"):
        setting_build(tiny_model_dir, EvalSpec(precision="int8"))
