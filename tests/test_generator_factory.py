"""One generator factory: every backend name, and every caller that builds a generation backend
(the tool settings' generators, the live interpolated model, the evaluation), goes through
recode_lib.generation.get_generator; tool rendering is an option of the hf and vllm backends."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

import recode_lib.generation as generation
from recode_lib.environments.chat import prepare_tool_tokenizer
from recode_lib.environments.python_tool import PythonToolEnv
from recode_lib.environments.rollout import tool_generator
from recode_lib.evaluation import episodes
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Backend, backend_options, get_generator
from recode_lib.weights import sweep

LIB = Path(__file__).resolve().parent.parent / "recode_lib"
CLASSES = {"HFGenerator", "VLLMGenerator", "OpenAIGenerator"}


@pytest.fixture
def built(monkeypatch):
    """The backend classes replaced, in the factory's module only, by recorders: a caller that
    built a backend itself would not be seen here."""
    made = []

    def recorder(name):
        class Fake(generation.Generator):
            def __init__(self, model, **kw):
                self.model, self.kw = model, kw
                made.append((name, model, kw))

            def engine(self):
                return SimpleNamespace(model="the engine's model")

            def generate_samples(self, requests, sampling, callback=None, progress=False):
                raise AssertionError("not generated in this test")

        return Fake

    for name in CLASSES:
        monkeypatch.setattr(generation, name, recorder(name))
    return made


OPTIONS = {
    "batch_size": 3,
    "tensor_parallel_size": 2,
    "base_url": "http://h:8000/v1",
    "concurrency": 5,
}


def test_every_backend_name_is_built_by_the_factory(built):
    for b in Backend:
        get_generator(b.value, "m", **backend_options(b.value, **OPTIONS))
    hf, vllm, openai, standin = built
    assert hf == (
        "HFGenerator",
        "m",
        {
            "model_obj": None,
            "tokenizer": None,
            "tools": None,
            "prepare_tokenizer": None,
            "batch_size": 3,
            "precision": "native",
        },
    )
    assert vllm == (
        "VLLMGenerator",
        "m",
        {"tokenizer": None, "tools": None, "prepare_tokenizer": None, "tensor_parallel_size": 2},
    )
    assert openai == ("OpenAIGenerator", "m", {"base_url": "http://h:8000/v1", "concurrency": 5})
    assert standin[0] == "VLLMGenerator" and standin[2]["engine"] == "standin"
    with pytest.raises(ValueError, match="unknown generation backend 'tgi'.*'vllm_standin'"):
        get_generator("tgi", "m")
    with pytest.raises(ValueError, match="hf or vllm"):
        get_generator("openai", "m", tools=[PythonToolEnv().run_python])
    with pytest.raises(ValueError, match="model_obj is for hf"):
        get_generator("vllm", "m", model_obj=object())
    assert len(built) == 4


def _tools_of(kw):
    return [t.__name__ for t in kw["tools"]], kw["prepare_tokenizer"]


def test_each_caller_builds_through_the_factory(built, monkeypatch):
    # the tool settings' generators
    for b in ("hf", "vllm", "vllm_standin"):
        tool_generator(b, "m", "tool", batch_size=2)
    assert [(n, m) for n, m, _ in built] == [
        ("HFGenerator", "m"),
        ("VLLMGenerator", "m"),
        ("VLLMGenerator", "m"),
    ]
    assert all(_tools_of(kw) == (["run_python"], prepare_tool_tokenizer) for _, _, kw in built)
    assert built[2][2]["engine"] == "standin"
    built.clear()

    # the evaluation, in each setting
    for b in Backend:
        episodes.generator_for(EvalSpec(backend=b.value), "m")
    episodes.generator_for(EvalSpec(setting="agentic"), "m")
    assert [n for n, _, _ in built] == [
        "HFGenerator",
        "VLLMGenerator",
        "OpenAIGenerator",
        "VLLMGenerator",
        "HFGenerator",
    ]
    assert built[-1][2]["tools"] and built[0][2]["tools"] is None
    built.clear()

    # the live interpolated model: (generator, sink) for every backend and setting
    net, tok = object(), object()
    monkeypatch.setattr("recode_lib.core.models.load_model", lambda path, device="cpu": (net, tok))
    monkeypatch.delenv("VLLM_ALLOW_INSECURE_SERIALIZATION", raising=False)
    server = SimpleNamespace(communicator=object())
    for b in Backend:
        for setting in ("single", "tool"):
            if b == Backend.OPENAI and setting == "tool":  # EvalSpec refuses it first
                with pytest.raises(ValueError, match="hf or vllm"):
                    sweep.setting_build("low", SimpleNamespace(backend="openai", setting="tool"))
                continue
            spec = EvalSpec(backend=b.value, setting=setting)
            gen, sink = sweep.setting_build("low", spec, server=server, served_model="served")
            assert gen.kw.get("tools") is None if setting == "single" else gen.kw["tools"]
    names = [(n, m) for n, m, _ in built]
    assert (
        names
        == [("HFGenerator", "low")] * 2
        + [("VLLMGenerator", "low")] * 2
        + [("OpenAIGenerator", "served")]
        + [("VLLMGenerator", "low")] * 2
    )
    hf_single = built[0][2]
    assert hf_single["model_obj"] is net and hf_single["tokenizer"] is tok
    assert hf_single["batch_size"] == EvalSpec().batch_size


def _calls_and_subclasses(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            if name in CLASSES:
                yield "call", name, node.lineno
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
                if name in CLASSES:
                    yield "subclass", name, node.lineno


def test_no_module_but_the_factory_builds_or_subclasses_a_backend():
    found = [
        (str(p.relative_to(LIB)), *hit)
        for p in sorted(LIB.rglob("*.py"))
        for hit in _calls_and_subclasses(ast.parse(p.read_text(encoding="utf-8")))
    ]
    assert sorted((path, kind, name) for path, kind, name, _ in found) == [
        ("generation/__init__.py", "call", "HFGenerator"),
        ("generation/__init__.py", "call", "OpenAIGenerator"),
        ("generation/__init__.py", "call", "VLLMGenerator"),
        # the data-parallel backend (built by the factory) is VLLMGenerators: one in each
        # engine's process, one in the caller that renders the prompts
        ("generation/data_parallel.py", "call", "VLLMGenerator"),
        ("generation/data_parallel.py", "call", "VLLMGenerator"),
    ], found


CONVS = [
    [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"type": "function", "function": {"name": "run_python", "arguments": {"code": c}}}
            ],
        },
        {"role": "tool", "name": "run_python", "content": "ok"},
    ]
    for c in ("print(1)", "print(2)")
]


def test_a_tools_generator_renders_the_tools_for_hf_as_the_template_does(tiny_model_dir):
    from transformers import AutoTokenizer

    ref = prepare_tool_tokenizer(AutoTokenizer.from_pretrained(tiny_model_dir))
    tools = [PythonToolEnv().run_python]

    def expected(messages):
        return ref.apply_chat_template(
            messages, tools=tools, tokenize=False, add_generation_prompt=True
        )

    gen = tool_generator("hf", str(tiny_model_dir), "tool", batch_size=2)
    hi = [{"role": "user", "content": "hi"}]
    text, n = gen.render(hi)
    assert text == expected(hi) and "<tools>" in text and '"name": "run_python"' in text
    assert n == len(ref(text, add_special_tokens=False)["input_ids"])
    # conversations that differ in their tool calls alone are two prompts
    a, b = (gen.render(c)[0] for c in CONVS)
    assert a == expected(CONVS[0]) and b == expected(CONVS[1]) and a != b
    plain = get_generator(
        "hf",
        str(tiny_model_dir),
        model_obj=gen.lm,
        tokenizer=AutoTokenizer.from_pretrained(tiny_model_dir),
    )
    assert "<tools>" not in plain.render(hi)[0]
    comps = gen.generate_samples(
        gen.requests_for([hi], generation.SamplingConfig(max_new_tokens=4)),
        generation.SamplingConfig(max_new_tokens=4),
    )
    assert len(comps) == 1 and 1 <= comps[0].n_tokens <= 4

    standin = tool_generator("vllm_standin", str(tiny_model_dir), "tool")
    assert standin.engine_name == "standin"
    assert (
        standin.render(CONVS[1]) == ref(expected(CONVS[1]), add_special_tokens=False)["input_ids"]
    )
