"""The parity of the training reward and the evaluation verdict, over every code benchmark
loader with local data: for the first problems of each, the reference solution and a wrong
answer are judged by evaluation (recode_lib.evaluation.spec.EvalSpec.evaluate) and rewarded through
the real training row (recode_lib.training.grpo.build_dataset -> the outcome reward); the
reward is 1 exactly when evaluation counts the answer correct, and the two ran the very same
program. Needs ../shared/data (RECODE_DATA_DIR); the microbench and easy loaders always run."""

from __future__ import annotations

import pytest
from parity_helpers import Recording, Scripted

from recode_lib.core.bench_env import bcb_python
from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.paths import data_dir
from recode_lib.core.prompts import format_response
from recode_lib.data import available_benchmarks, load_benchmark
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.rewards import get_reward
from recode_lib.sandbox.records import runs_in_process
from recode_lib.training.grpo import build_dataset

NOT_CODE = {"aime24", "math_synth", "math_train"}
PER_BENCHMARK = 2
WRONG = "def nothing_useful():\n    return None\n"


def _benchmarks():
    return [b for b in available_benchmarks(data_dir()) if b not in NOT_CODE]


@pytest.mark.parametrize("name", _benchmarks())
def test_reward_equals_the_evaluation_verdict(name, tmp_path):
    try:
        problems = load_benchmark(name, limit=PER_BENCHMARK, data_dir=data_dir())
    except Exception as exc:  # e.g. a loader whose extra data is absent here
        pytest.skip(f"{name}: cannot load here ({type(exc).__name__}: {str(exc)[:120]})")
    problems = [p for p in problems if p.reference_solution][:PER_BENCHMARK]
    if not problems:
        pytest.skip(f"{name}: no problem with a reference solution")
    for k, p in enumerate(problems):
        responses = [
            format_response("The reference.", p.reference_solution),
            format_response("A guess.", WRONG),
        ]
        out = tmp_path / f"ev{k}"
        # without BigCodeBench's env (`make bcb-env`, ~2.5 GB) its problems are judged by the
        # project's interpreter: the same for both paths (env_missing where a module lacks)
        spec = EvalSpec(
            temperature=0.8, n=2, workers=1, progress=False, env_missing_ok=bcb_python() is None
        )
        spec.evaluate("scripted", [p], out, generator=Scripted(responses))
        rows = sorted(read_jsonl(out / "samples.jsonl"), key=lambda r: r["sample"])
        row = build_dataset([p]).to_list()[0]
        cols = {c: [v, v] for c, v in row.items() if c != "prompt"}
        runner = Recording(allow_in_process_tests=runs_in_process(p.tests))
        rewards = get_reward("outcome", runner=runner)([row["prompt"]] * 2, responses, **cols)
        verdicts = [1.0 if r["outcome"] == "correct" else 0.0 for r in rows]
        assert rewards == verdicts, (p.id, [r["status"] for r in rows])
        ran = [r["code"] for r in rows if r["code"] is not None]
        assert runner.codes == ran, p.id
        assert rewards[1] == 0.0, p.id  # the wrong answer fails both
