"""The one evaluation loop over EvalSpec: every setting through it with one row builder and one
no-code result, the spec's SandboxConfig (and recorded specs without it), and `recode eval`'s
options generated from the spec's fields (one set of defaults)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys

import pytest
from parity_helpers import Scripted

from recode_lib.cli import eval as cli_eval
from recode_lib.core.jsonl import read_jsonl
from recode_lib.data.schema import Problem
from recode_lib.evaluation import episodes, loop
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion
from recode_lib.sandbox.config import SandboxConfig

SOLUTION = "def f(x):\n    return x + 1"
ANSWER = f"<think>\nadd one\n</think>\n```python\n{SOLUTION}\n```"
RESULT = {
    "status",
    "outcome",
    "passed",
    "total",
    "time_s",
    "memory_mb",
    "trust",
    "strictness",
    "first_failure",
}


def problem():
    return Problem(
        id="t/inc",
        source="t",
        prompt="Write f(x) returning x + 1.",
        tests={
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [1], "expected": 2}, {"args": [41], "expected": 42}],
        },
        time_limit_s=2.0,
    )


def call(name, **args):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


class Truncating(Scripted):
    """Scripted, but sample 2 hits the token limit (a parsable block, cut: a format error)."""

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = [
            Completion(c.text, c.n_tokens, "length") if r.index == 2 else c
            for r, c in zip(requests, super().generate_samples(requests, sampling), strict=True)
        ]
        for j, c in enumerate(out):
            if callback:
                callback(j, c)
        return out


# sample 0 answers with code, sample 1 has no code (sample 2, single only: truncated)
GENERATORS = {
    "single": lambda: Truncating([ANSWER, "No code, sorry.", ANSWER]),
    "tool": lambda: Scripted([ANSWER, call("run_python", code="print(1)")]),  # turns run out
    "agentic": lambda: Scripted(
        [
            call("write_file", path="solution.py", text=SOLUTION)
            + call("submit", path="solution.py"),
            "I give up.",
        ]
    ),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{setting: rows} of one evaluation per setting, and the settings the loop saw."""
    seen = []
    real = loop.episode_row

    def spy(p, episode):
        seen.append(episode.setting)
        return real(p, episode)

    mp = pytest.MonkeyPatch()
    mp.setattr(loop, "episode_row", spy)
    out = {}
    try:
        for setting, gen in GENERATORS.items():
            n = 3 if setting == "single" else 2
            spec = EvalSpec(
                setting=setting,
                n=n,
                max_new_tokens=64,
                max_turns=2,
                workers=1,
                tool_time_limit_s=3,
                progress=False,
            )
            folder = tmp_path_factory.mktemp(setting)
            s = spec.evaluate("scripted", [problem()], folder, generator=gen())
            assert s["setting"] == setting
            out[setting] = {r["sample"]: r for r in read_jsonl(folder / "samples.jsonl")}
    finally:
        mp.undo()
    return out, seen


def test_every_setting_goes_through_the_one_loop_with_the_same_row_fields(runs):
    rows, seen = runs
    assert seen.count("single") == 3 and seen.count("tool") == 2 and seen.count("agentic") == 2
    fields = {
        setting: {frozenset(r) for r in by_sample.values()} for setting, by_sample in rows.items()
    }
    assert all(len(f) == 1 for f in fields.values()), fields  # every row, one field set
    assert fields["single"] == fields["tool"] == fields["agentic"]
    for setting, by_sample in rows.items():
        assert by_sample[0]["outcome"] == "correct" and by_sample[0]["setting"] == setting
    assert (rows["single"][0]["turns"], rows["single"][0]["tool_calls"]) == (1, 0)
    assert rows["single"][0]["transcript"] is None and rows["agentic"][0]["turns"] == 1
    assert rows["tool"][0]["transcript"][-1]["content"] == ANSWER


def test_the_no_code_result_is_one_dict_in_every_setting(runs):
    rows, _ = runs
    no_code = {setting: {f: by_sample[1][f] for f in RESULT} for setting, by_sample in rows.items()}
    no_code["single (truncated)"] = {f: rows["single"][2][f] for f in RESULT}
    assert rows["single"][2]["format_reason"].startswith("truncated at the token limit")
    assert rows["single"][2]["code"] is None and rows["single"][2]["format_ok"] is False
    expected = {
        "status": "no_code",
        "outcome": "format_error",
        "passed": 0,
        "total": 2,
        "time_s": 0.0,
        "memory_mb": None,
        "trust": "isolated",
        "strictness": {k: 0 for k in ("1", "2", "3", "4", "5", "inf")},
        "first_failure": None,
    }
    for setting, result in no_code.items():
        assert result == expected, setting
    reasons = [rows[s][1]["format_reason"] for s in ("single", "tool", "agentic")]
    assert reasons[1:] == ["ran out of turns without an answer", "no file submitted"], reasons
    assert reasons[0] == "no code block" and all(rows[s][1]["code"] is None for s in rows)


class TruncatedAnswer(Scripted):
    """Every answer turn hits the token limit (its code block still parses)."""

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = [
            Completion(c.text, c.n_tokens, "length")
            for c in super().generate_samples(requests, sampling)
        ]
        for j, c in enumerate(out):
            if callback:
                callback(j, c)
        return out


def test_a_truncated_tool_answer_is_a_format_error(tmp_path):
    spec = EvalSpec(
        setting="tool",
        n=1,
        max_new_tokens=64,
        max_turns=2,
        workers=1,
        tool_time_limit_s=3,
        progress=False,
    )
    spec.evaluate("scripted", [problem()], tmp_path, generator=TruncatedAnswer([ANSWER]))
    (row,) = read_jsonl(tmp_path / "samples.jsonl")
    assert row["outcome"] == "format_error" and row["code"] is None
    assert row["format_reason"].startswith("truncated at the token limit")


def _parser():
    parser = argparse.ArgumentParser(
        formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=100, width=1000)
    )  # one line per option
    cli_eval.add_arguments(parser)
    return parser


BASE = ["--model", "m", "--benchmark", "microbench"]


def test_the_cli_defaults_are_the_spec_defaults_for_every_field():
    spec = cli_eval.spec_from_args(_parser().parse_args(BASE))
    default = EvalSpec()
    for f in dataclasses.fields(EvalSpec):
        assert getattr(spec, f.name) == getattr(default, f.name), f.name
    assert spec == default and spec.workers is None
    dests = {o["dest"] for o in cli_eval.spec_options()}
    names = {f.name for f in dataclasses.fields(EvalSpec)} - {"sandbox"}
    assert names <= dests  # every field is an option
    assert {"workers", "isolation", "sealed_inputs"} <= dests
    shown = {
        line.split()[0]: line
        for line in _parser().format_help().splitlines()
        if line.startswith("  --")
    }
    assert shown["--top-p"].endswith("(default: 1.0)")  # the spec's, not a copy of its own
    assert shown["--batch-size"].endswith("(default: 8)")


def test_cli_options_reach_the_spec_under_their_existing_names():
    args = _parser().parse_args(
        BASE
        + [
            "--n",
            "4",
            "--k",
            "1",
            "--k",
            "2",
            "--top-p",
            "0.5",
            "--no-reasoning",
            "--workers",
            "3",
            "--isolation",
            "plain",
            "--setting",
            "tool",
            "--max-turns",
            "2",
            "--max-tool-calls",
            "1",
            "--tool-time-limit",
            "3",
            "--tool-max-output",
            "100",
            "--early-stop",
        ]
    )
    spec = cli_eval.spec_from_args(args)
    assert (spec.n, spec.k, spec.top_p, spec.reasoning, spec.early_stop) == (
        4,
        (1, 2),
        0.5,
        False,
        True,
    )
    assert spec.temperature == 0.8  # n > 1 and no temperature: the spec's rule
    assert spec.sandbox == SandboxConfig(workers=3, isolation="plain") and spec.workers == 3
    assert (
        spec.setting,
        spec.max_turns,
        spec.max_tool_calls,
        spec.tool_time_limit_s,
        spec.tool_max_output_chars,
    ) == ("tool", 2, 1, 3.0, 100)
    assert EvalSpec(n=4).temperature == 0.8 and EvalSpec().temperature == 0.0


def test_a_recorded_spec_without_a_sandbox_still_loads():
    recorded = {
        "backend": "hf",
        "temperature": 0.8,
        "top_p": 0.95,
        "max_new_tokens": 256,
        "n": 4,
        "seed": 1,
        "k": [1, 2],
        "reasoning": True,
        "batch_size": 8,
        "tensor_parallel_size": 1,
        "base_url": "http://localhost:8000/v1",
        "concurrency": 8,
        "workers": 2,
        "early_stop": False,
        "on_config_change": "set_aside",
        "progress": False,
        "setting": "single",
        "max_turns": 5,
        "max_tool_calls": 4,
        "tool_time_limit_s": 10.0,
        "tool_memory_mb": 1024,
        "tool_max_output_chars": 4096,
        "ray": None,
        "chunk_size": None,
    }  # an EvalSpec.to_dict() from before `sandbox`
    spec = EvalSpec.from_dict(recorded)
    assert spec.sandbox == SandboxConfig(workers=2) and spec.workers == 2
    assert (
        spec.fingerprint()
        == EvalSpec(temperature=0.8, top_p=0.95, max_new_tokens=256).fingerprint()
    )
    without = {k: v for k, v in recorded.items() if k != "workers"}
    assert EvalSpec.from_dict(without).sandbox == SandboxConfig()
    mine = spec.replace(sandbox=SandboxConfig(isolation="plain", sealed_inputs=True))
    assert mine.workers is None and mine.replace(workers=5).sandbox.workers == 5
    again = EvalSpec.from_dict(json.loads(json.dumps(mine.to_dict())))
    assert again == mine and again.to_dict()["sandbox"]["isolation"] == "plain"
    assert "workers" not in mine.to_dict()
    with pytest.raises(ValueError, match=r"sandbox has no field\(s\) \['cores'\]"):
        EvalSpec.from_dict({**recorded, "sandbox": {"cores": 2}})


def test_evaluate_benchmarks_generator_is_the_settings(monkeypatch):
    made = []
    monkeypatch.setattr(episodes, "get_generator", lambda *a, **k: made.append(("plain", a)))
    monkeypatch.setattr(episodes, "tool_generator", lambda *a, **k: made.append(("tools", a)))
    episodes.generator_for(EvalSpec(), "m")
    episodes.generator_for(EvalSpec(setting="agentic"), "m")
    assert made == [("plain", ("hf", "m")), ("tools", ("hf", "m", "agentic"))]


@pytest.mark.parametrize("first", ["spec", "math", "loop", "rows", "calibration"])
def test_the_evaluation_modules_import_in_any_order(first):
    """spec imports loop and math, calibration spec: each may be the first one imported."""
    code = (
        f"import recode_lib.evaluation.{first}\n"
        "from recode_lib.evaluation.rows import TRUNCATED\n"
        "from recode_lib.evaluation.spec import EvalSpec\n"
        "from recode_lib.evaluation.math import evaluate_math\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


class WaitsForVerdicts(Scripted):
    """Scripted, but after reporting each sample it waits (up to 30 s) until the loop has
    judged it: only a loop that judges while generating lets it finish quickly."""

    def __init__(self, responses, folder):
        super().__init__(responses)
        self.folder, self.overlapped = folder, []

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        import time

        out = []
        for j, r in enumerate(requests):
            c = Completion(self.responses[r.index], n_tokens=5, finish_reason="stop")
            out.append(c)
            callback(j, c)
            t0 = time.time()
            path = self.folder / "samples.jsonl"
            while time.time() - t0 < 30 and not (
                path.exists() and len(path.read_text().splitlines()) > j
            ):
                time.sleep(0.05)
            self.overlapped.append(path.exists() and len(path.read_text().splitlines()) > j)
        return out


def test_judging_overlaps_generation_and_gives_the_same_rows(tmp_path, monkeypatch):
    """With overlap (the default for vllm on GPUs) each finished batch is judged while the next
    one generates; the rows are the ones judging afterwards gives."""
    monkeypatch.setattr(episodes, "FLUSH_EPISODES", 1)
    spec = EvalSpec(n=3, max_new_tokens=64, workers=1, progress=False)
    answers = [ANSWER, "No code, sorry.", ANSWER.replace("x + 1", "x + 2")]
    gen = WaitsForVerdicts(answers, tmp_path / "on")
    on = loop.run_evaluation(
        spec, "scripted", [problem()], tmp_path / "on", generator=gen, overlap=True
    )
    assert gen.overlapped == [True, True, True]
    off = loop.run_evaluation(
        spec, "scripted", [problem()], tmp_path / "off", generator=Scripted(answers), overlap=False
    )
    rows = {
        k: sorted(
            (r["id"], r["status"], r["outcome"], r["response"])
            for r in read_jsonl(tmp_path / k / "samples.jsonl")
        )
        for k in ("on", "off")
    }
    assert rows["on"] == rows["off"] and len(rows["on"]) == 3
    assert on["pass@1"] == off["pass@1"]
    assert not loop.overlap_judging(spec)  # hf: judged afterwards
