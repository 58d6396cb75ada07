"""The evaluation harness: generation -> program -> sandbox -> outcomes, pass@k, resume, CLI.

Most tests drive the harness with a scripted generator (fixed responses per problem and sample,
the model being the one part not under test here); one runs the real hf backend on the tiny
model end to end, and the CLI tests use the real loaders when the benchmark files are present.
"""

from __future__ import annotations

import json

import pytest

from recode_lib.core.jsonl import read_json, read_jsonl, write_jsonl_atomic
from recode_lib.data.schema import Problem, ProblemError
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion, Generator


def _block(code):
    return f"<think>\nSimple.\n</think>\n```python\n{code}\n```"


PROBLEMS = [
    Problem(
        id="t/add",
        source="t",
        prompt='def add(a, b):\n    """Sum of a and b."""\n',
        starter_code='def add(a, b):\n    """Sum of a and b."""\n',
        entry_point="add",
        tests={
            "kind": "call",
            "fn_name": "add",
            "cases": [{"args": [1, 2], "expected": 3}, {"args": [5, 5], "expected": 10}],
        },
    ),
    Problem(
        id="t/sq",
        source="t",
        prompt='def sq(x):\n    """Square of x."""\n',
        starter_code='def sq(x):\n    """Square of x."""\n',
        entry_point="sq",
        tests={"kind": "script", "script": "assert sq(3) == 9\nassert sq(-2) == 4\n"},
    ),
    Problem(
        id="t/double",
        source="t",
        prompt="Read n and print 2*n.",
        time_limit_s=1.0,
        tests={
            "kind": "stdio",
            "cases": [
                {"input": "3\n", "output": "6\n"},
                {"input": "100000000000\n", "output": "200000000000\n"},
            ],
        },
    ),
]
RESPONSES = {
    "t/add": [
        _block("def add(a, b):\n    return a + b\n\nprint(add(1, 2))"),
        _block("def add(a, b):\n    return a - b"),
    ],
    "t/sq": [_block("    return x * x"), "The square is x times x."],
    "t/double": [
        _block("n = int(input())\nprint(2 * n)"),
        _block("import time\nn = int(input())\nif n > 100:\n    time.sleep(5)\nprint(2 * n)"),
    ],
}


class Scripted(Generator):
    """Returns RESPONSES[problem][sample index]; counts what it is asked for."""

    backend = "scripted"
    model = "scripted"

    def __init__(self, fail=False):
        self.asked, self.fail = [], fail

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        if self.fail:
            raise AssertionError("nothing should be generated")
        out = []
        for j, r in enumerate(requests):
            pid = next(p.id for p in PROBLEMS if p.prompt.strip() in r.messages[-1]["content"])
            self.asked.append((pid, r.index))
            text = RESPONSES[pid][r.index]
            comp = Completion(text, n_tokens=len(text.split()), finish_reason="stop")
            out.append(comp)
            if callback:
                callback(j, comp)
        return out


def _eval(tmp_path, gen, n=2, k=(1, 2), **kw):
    spec = EvalSpec(temperature=0.8, n=n, k=k, workers=2, progress=False, **kw)
    return spec.evaluate("scripted", PROBLEMS, tmp_path / "ev", generator=gen)


def test_outcomes_pass_at_k_and_records(tmp_path):
    s = _eval(tmp_path, Scripted())
    assert s["pass@1"] == pytest.approx(0.5) and s["pass@2"] == pytest.approx(1.0)
    assert s["outcomes"] == pytest.approx(
        {
            "correct": 0.5,
            "optimization_failure": 1 / 6,
            "correctness_failure": 1 / 6,
            "format_error": 1 / 6,
        }
    )
    rows = {r["id"]: r for r in read_jsonl(tmp_path / "ev" / "samples.jsonl")}
    assert len(rows) == 6
    for r in rows.values():
        assert {
            "problem_id",
            "sample",
            "response",
            "code",
            "status",
            "outcome",
            "passed",
            "total",
            "n_tokens",
            "finish_reason",
        } <= set(r)
    assert rows["t/add#0"]["status"] == "passed" and "print" not in rows["t/add#0"]["code"]
    assert rows["t/add#1"]["status"] == "wrong_answer"
    assert rows["t/sq#0"]["assembly"] == "starter+body" and rows["t/sq#0"]["status"] == "passed"
    fmt = rows["t/sq#1"]
    assert (fmt["code"], fmt["status"], fmt["outcome"]) == (None, "no_code", "format_error")
    slow = rows["t/double#1"]
    assert (slow["status"], slow["outcome"], slow["passed"]) == (
        "time_limit",
        "optimization_failure",
        1,
    )
    assert slow["strictness"]["1"] == 1 and slow["strictness"]["inf"] == 0
    summary = read_json(tmp_path / "ev" / "summary.json")
    assert summary["pass@1"] == s["pass@1"] and summary["provenance"]["seed"] == 0
    assert summary["provenance"]["git"] is None or len(summary["provenance"]["git"]) >= 40
    assert summary["solved"] == ["t/add", "t/double", "t/sq"]
    assert summary["tokens"]["mean"] > 0 and summary["timing"]["problems_per_minute"] > 0


def test_resume_generates_and_executes_only_what_is_missing(tmp_path):
    first = Scripted()
    s1 = _eval(tmp_path, first, n=1, k=(1,))
    assert sorted(first.asked) == [("t/add", 0), ("t/double", 0), ("t/sq", 0)]
    assert s1["pass@1"] == pytest.approx(1.0)
    more = Scripted()
    s2 = _eval(tmp_path, more, n=2)
    assert sorted(more.asked) == [("t/add", 1), ("t/double", 1), ("t/sq", 1)]
    # a crash after generation but before execution: drop two executed records
    path = tmp_path / "ev" / "samples.jsonl"
    rows = read_jsonl(path)
    write_jsonl_atomic(path, rows[:-2])
    s3 = _eval(tmp_path, Scripted(fail=True), n=2)  # only executes, never generates
    assert len(read_jsonl(path)) == 6
    for key in ("pass@1", "pass@2", "outcomes"):
        assert s3[key] == s2[key]
    assert s3["timing"]["new_samples"] == 2


def test_other_sampling_in_the_same_folder_is_refused(tmp_path):
    _eval(tmp_path, Scripted(), n=1, k=(1,))
    with pytest.raises(ValueError, match="another configuration.*sampling"):
        spec = EvalSpec(temperature=0.2, n=1, progress=False)
        spec.evaluate("scripted", PROBLEMS, tmp_path / "ev", generator=Scripted())


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"k <= n.*n=1"):
        _eval(tmp_path, Scripted(), n=1, k=(1, 2))
    bad = PROBLEMS[0].to_dict()
    del bad["tests"]
    with pytest.raises(ProblemError, match="problem 0 .*'t/add'.*missing field 'tests'"):
        EvalSpec(progress=False).evaluate("m", [bad], tmp_path / "x", generator=Scripted())
    with pytest.raises(ValueError, match="duplicate id 't/add'"):
        EvalSpec(progress=False).evaluate(
            "m", PROBLEMS[:1] * 2, tmp_path / "y", generator=Scripted()
        )


def test_hf_backend_end_to_end_on_the_tiny_model(tiny_model_dir, tmp_path):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        spec = EvalSpec(
            backend="hf",
            temperature=1.0,
            n=2,
            max_new_tokens=8,
            batch_size=4,
            workers=1,
            progress=False,
        )
        s = spec.evaluate(str(tiny_model_dir), PROBLEMS[:2], tmp_path / "hf")
    finally:
        torch.set_num_threads(threads)
    rows = read_jsonl(tmp_path / "hf" / "samples.jsonl")
    gens = read_jsonl(tmp_path / "hf" / "generations.jsonl")
    assert len(rows) == 4 and len(gens) == 4
    assert all(1 <= r["n_tokens"] <= 8 for r in rows)
    assert all(r["outcome"] == "format_error" for r in rows if r["code"] is None)
    assert s["backend"] == "hf" and s["n_samples"] == 4
    assert sum(s["outcomes"].values()) == pytest.approx(1.0)


def _cli(argv, capsys):
    from recode_lib.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_unknown_benchmark_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("recode_lib.data", reason="benchmark loaders not present")
    from recode_lib import data

    if not hasattr(data, "load_benchmark"):
        pytest.skip("recode_lib.data.load_benchmark not present yet")
    code, _, err = _cli(
        ["eval", "--model", "x", "--benchmark", "no_such_bench", "--out", str(tmp_path / "o")],
        capsys,
    )
    assert code == 2 and "no_such_bench" in err


def test_cli_runs_humaneval_with_the_tiny_model(tiny_model_dir, shared_data_dir, tmp_path, capsys):
    from recode_lib import data

    if not hasattr(data, "load_benchmark"):
        pytest.skip("recode_lib.data.load_benchmark not present yet")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        code, out, err = _cli(
            [
                "eval",
                "--model",
                str(tiny_model_dir),
                "--benchmark",
                "humaneval",
                "--limit",
                "2",
                "--n",
                "2",
                "--k",
                "1",
                "--k",
                "2",
                "--max-new-tokens",
                "8",
                "--out",
                str(tmp_path / "o"),
                "--workers",
                "1",
            ],
            capsys,
        )
    finally:
        torch.set_num_threads(threads)
    assert code == 0, err
    assert "pass@2" in out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_problems"] == 2 and summary["samples_per_problem"] == [2]
    assert summary["benchmark"] == "humaneval"


def test_outcome_figure_is_rebuilt_from_summaries(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from recode_lib.analysis import plots

    s = _eval(tmp_path, Scripted(), n=1, k=(1,))
    summaries = {"a": s, "b": tmp_path / "ev" / "summary.json"}
    files = plots.fig_eval_outcomes(summaries, out_dir=tmp_path / "fig", name="outcomes")
    assert [f.name for f in files] == ["outcomes.pdf", "outcomes.png"]
    assert all(f.stat().st_size > 0 for f in files)
    fig, ax = plt.subplots()
    plots.draw_eval_outcomes(ax, {"a": s, "b": read_json(tmp_path / "ev" / "summary.json")})
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == pytest.approx(2.0)  # each bar's classes add up to 1
    with pytest.raises(plots.NoData):
        plots.fig_eval_outcomes({})


def test_cli_user_errors_exit_2_with_one_line(tmp_path, capsys):
    # microbench ships with the project, so this runs on a fresh clone without ../shared
    code, _, err = _cli(
        [
            "eval",
            "--model",
            str(tmp_path / "missing"),
            "--benchmark",
            "microbench",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "does not exist" in err
    code, _, err = _cli(
        [
            "eval",
            "--model",
            "m",
            "--benchmark",
            "microbench",
            "--k",
            "5",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "p"),
        ],
        capsys,
    )
    assert code == 2 and "k=[5] with n=1" in err


def test_a_changed_configuration_can_set_the_old_results_aside(tmp_path):
    _eval(tmp_path, Scripted(), n=1, k=(1,))
    spec = EvalSpec(temperature=0.2, n=1, progress=False, on_config_change="set_aside")
    s = spec.evaluate("scripted", PROBLEMS, tmp_path / "ev", generator=Scripted())
    assert s["n_samples"] == len(PROBLEMS)
    old = tmp_path / "ev.stale-1"
    assert (old / "samples.jsonl").is_file() and (old / "run.json").is_file()
    assert (
        json.loads((tmp_path / "ev" / "run.json").read_text())["sampling"]
        != json.loads((old / "run.json").read_text())["sampling"]
    )


def test_a_model_folder_rewritten_in_place_is_another_configuration(tmp_path):
    import os

    from recode_lib.core.models import model_stamp

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"x" * 10)
    (folder / "config.json").write_text("{}")
    first = model_stamp(folder)
    assert first and model_stamp(folder) == first and model_stamp("hub/name") is None
    os.utime(folder / "model.safetensors", ns=(1, 1))  # retrained: new mtime
    assert model_stamp(folder) != first
