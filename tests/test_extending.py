"""The extension points of docs/extending.md, each used as that guide says.

- your own benchmark: recode_lib.data.register_benchmark(name, loader); a toy benchmark is
  registered and evaluated through the normal entry point (EvalSpec.evaluate: assemble, the real
  sandbox, outcomes, pass@k) on CPU, with a scripted generator standing in for the model;
- your own reward: recode_lib.rewards.register_function / register; one GRPO step on the tiny
  model with a toy reward named in the recipe;
- RECODE_PLUGINS: a module named there registers both, in another process;
- your own recipe: a YAML path given to load_recipe / `recode grpo --recipe`;
- your own model: a local Hugging Face folder or a hub id (recode_lib.core.models.resolve_model).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from recode_lib import data
from recode_lib.core import plugins
from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.data import Problem, ProblemError, load_benchmark, register_benchmark
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion, Generator
from recode_lib.rewards import REGISTRY, Need, build_reward, get_reward, register, register_function
from recode_lib.rewards.registry import RewardConfigError, RewardResources


def toy_problems(n: int = 3, offset: int = 0) -> list[Problem]:
    """Problem i: `def f(): return i` (a call test)."""
    return [
        Problem(
            id=f"toy/{i}",
            source="toy",
            prompt=f"Write f() returning {i}.",
            entry_point="f",
            time_limit_s=2.0,
            tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i + offset}]},
        )
        for i in range(n)
    ]


@pytest.fixture
def clean_registries():
    """Leave the benchmark and reward registries as they were."""
    bench, rewards = dict(data._CUSTOM), dict(REGISTRY)
    yield
    data._CUSTOM.clear()
    data._CUSTOM.update(bench)
    REGISTRY.clear()
    REGISTRY.update(rewards)


class Answers(Generator):
    """The model stand-in: answers problem toy/i with `return i` for an even i, else `return -1`."""

    backend = model = "scripted"

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for j, r in enumerate(requests):
            i = int(r.messages[-1]["content"].split("returning ")[1].split(".")[0])
            value = i if i % 2 == 0 else -1
            text = f"<think>\nReturn it.\n</think>\n```python\ndef f():\n    return {value}\n```"
            out.append(Completion(text, n_tokens=12, finish_reason="stop"))
            if callback:
                callback(j, out[-1])
        return out


# --- your own benchmark -----------------------------------------------------------------------


def test_a_registered_benchmark_is_evaluated_through_the_normal_entry_point(
    tmp_path, clean_registries
):
    @register_benchmark("toy_bench")
    def load_toy(*, limit=None, data_dir=None, offset: int = 0):
        return toy_problems(4, offset)[:limit]

    assert "toy_bench" in data.list_benchmarks() and "toy_bench" in data.available_benchmarks()
    problems = load_benchmark("toy_bench", limit=3)
    assert [p.id for p in problems] == ["toy/0", "toy/1", "toy/2"]
    spec = EvalSpec(temperature=0.0, n=1, max_new_tokens=32, workers=2, progress=False)
    s = spec.evaluate(
        "scripted", problems, tmp_path / "ev", benchmark="toy_bench", generator=Answers()
    )
    assert s["benchmark"] == "toy_bench" and s["n_problems"] == 3
    assert s["pass@1"] == pytest.approx(2 / 3)  # toy/0 and toy/2 right, toy/1 wrong
    assert s["solved"] == ["toy/0", "toy/2"]
    assert s["outcomes"]["correct"] == pytest.approx(2 / 3)
    assert s["outcomes"]["correctness_failure"] == pytest.approx(1 / 3)
    # options reach the loader: with offset 1 no answer is right any more
    shifted = load_benchmark("toy_bench", offset=1)
    assert shifted[0].tests["cases"][0]["expected"] == 1
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['ofset'\]; valid: \['offset'\]"):
        load_benchmark("toy_bench", ofset=1)


def test_the_loader_contract_is_checked_and_names_the_benchmark(clean_registries):
    register_benchmark("plain", lambda: [p.to_dict() for p in toy_problems(5)])  # dicts, no limit
    got = load_benchmark("plain", limit=2)
    assert [p.id for p in got] == ["toy/0", "toy/1"] and isinstance(got[0], Problem)
    register_benchmark("plain", lambda: toy_problems(1))  # registering again replaces
    assert len(load_benchmark("plain")) == 1
    register_benchmark("dup", lambda: toy_problems(2) + toy_problems(1))
    with pytest.raises(ProblemError, match=r"benchmark 'dup', problem 2: duplicate id 'toy/0'"):
        load_benchmark("dup")
    bad = toy_problems(1)
    bad[0].tests = {"kind": "call", "cases": []}
    register_benchmark("bad_tests", lambda: bad)
    with pytest.raises(ProblemError, match=r"benchmark 'bad_tests'.*fn_name"):
        load_benchmark("bad_tests")
    register_benchmark("not_a_list", lambda: toy_problems(1)[0])
    with pytest.raises(ProblemError, match="must return a list of Problem, got Problem"):
        load_benchmark("not_a_list")
    with pytest.raises(ValueError, match="'mbppplus' is a built-in benchmark"):
        register_benchmark("mbppplus", lambda: [])
    with pytest.raises(ValueError, match="not a benchmark name"):
        register_benchmark("calibrated:mine", lambda: [])
    data.unregister_benchmark("plain")
    with pytest.raises(ValueError, match="unknown benchmark 'plain'"):
        load_benchmark("plain")


# --- your own reward --------------------------------------------------------------------------


def test_a_registered_reward_trains_one_grpo_step_on_the_tiny_model(
    tiny_model_dir, tmp_path, clean_registries
):
    from recode_lib.core.run_files import read_metrics
    from recode_lib.training.grpo import load_recipe, train

    seen = {}

    def brevity(prompts, completions, **columns):
        """1 for a completion of at most 20 characters, less the longer it is."""
        seen.setdefault("columns", set(columns))
        return [min(1.0, 20 / max(1, len(str(c)))) for c in completions]

    register_function("brevity", brevity)
    recipe = load_recipe(
        "cg_grpo_smoke",
        model=str(tiny_model_dir),
        rewards=[{"name": "brevity"}],
        max_steps=1,
        max_completion_length=8,
        num_generations=4,
        per_device_train_batch_size=4,
        save_steps=100,
        sandbox_workers=1,
    )
    res = train(recipe, toy_problems(4), tmp_path / "run")
    assert (res.final_dir / ".complete").is_file()
    rows = read_metrics(res.output_dir)
    assert len(rows) == 1 and 0.0 < rows[0]["rewards/brevity/mean"] <= 1.0
    assert {"problem", "problem_id"} <= seen["columns"]  # the dataset's columns reach it


def test_a_reward_factory_gets_its_options_and_the_runs_sandbox(clean_registries):
    runner = object()

    @register("scaled_outcome", needs=(Need.SANDBOX,))
    def make(*, runner, scale: float = 1.0):
        def scaled_outcome(prompts, completions, **columns):
            return [scale * float(runner is not None) for _ in completions]

        return scaled_outcome

    fn = build_reward("scaled_outcome", RewardResources({Need.SANDBOX: lambda: runner}), scale=2.0)
    assert fn(["p"], ["c", "d"]) == [2.0, 2.0]
    with pytest.raises(RewardConfigError, match=r"unknown option\(s\) \['scal'\]"):
        get_reward("scaled_outcome", runner=runner, scal=2.0)


# --- RECODE_PLUGINS: registrations that reach every process -----------------------------------

PLUGIN = textwrap.dedent("""
    from recode_lib.data import Problem, register_benchmark
    from recode_lib.rewards import register_function

    @register_benchmark("plugin_bench")
    def load(limit=None):
        return [Problem(id=f"plug/{i}", source="plug", prompt="p", tests={
            "kind": "stdio", "cases": [{"input": "", "output": str(i)}]}) for i in range(3)]

    def always_one(prompts, completions, **kw):
        return [1.0] * len(completions)

    register_function("plugin_reward", always_one)
""")


def test_recode_plugins_modules_register_in_every_process(tmp_path, monkeypatch, clean_registries):
    (tmp_path / "my_recode_plugin.py").write_text(PLUGIN)
    env = {
        **os.environ,
        plugins.ENV: "my_recode_plugin",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(PROJECT_ROOT)]),
    }
    code = (
        "from recode_lib.data import load_benchmark\n"
        "from recode_lib.training.grpo import load_recipe\n"
        "print(len(load_benchmark('plugin_bench', limit=2)))\n"
        "print(load_recipe('cg_grpo_smoke', rewards=[{'name': 'plugin_reward'}]).rewards)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["2", "[{'name': 'plugin_reward'}]"]
    # in this process too, on the first lookup of a name
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(plugins.ENV, "my_recode_plugin")
    monkeypatch.setattr(plugins, "_loaded", set())
    assert get_reward("plugin_reward")(["p"], ["c"]) == [1.0]
    assert "plugin_bench" in data.list_benchmarks()
    monkeypatch.setenv(plugins.ENV, "my_recode_plugin, no_such_recode_plugin")
    with pytest.raises(plugins.PluginError, match=r"RECODE_PLUGINS names 'no_such_recode_plugin'"):
        plugins.load_plugins()


# --- your own recipe and model ----------------------------------------------------------------


def test_a_recipe_is_a_yaml_path_on_top_of_grpo_config(tmp_path):
    from recode_lib.training.grpo import load_recipe

    path = tmp_path / "my_recipe.yaml"
    path.write_text(
        "model: smollm2\nrewards:\n  - {name: outcome_only}\n  - {name: format, "
        "weight: 0.5}\nlearning_rate: 3.0e-6\nmax_steps: 7\nbenchmark: microbench\n"
    )
    r = load_recipe(str(path), max_steps=9)  # --set max_steps=9
    assert (r.name, r.max_steps, r.learning_rate, r.benchmark) == (
        "my_recipe",
        9,
        3e-6,
        "microbench",
    )
    assert [x["name"] for x in r.rewards] == ["outcome_only", "format"]
    (tmp_path / "typo.yaml").write_text("rewards: [{name: outcome_only}]\nmax_step: 3\n")
    with pytest.raises(ValueError, match="typo.yaml: unknown .*'max_step': did you mean"):
        load_recipe(str(tmp_path / "typo.yaml"))


def test_a_model_is_a_local_folder_or_a_hub_id(tiny_model_dir, tmp_path):
    from recode_lib.core.models import ModelError, resolve_model

    assert resolve_model(str(tiny_model_dir)) == str(tiny_model_dir)
    assert resolve_model("Qwen/Qwen2.5-Coder-7B-Instruct") == "Qwen/Qwen2.5-Coder-7B-Instruct"
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model(str(tmp_path / "empty"))
