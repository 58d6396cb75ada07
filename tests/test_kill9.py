"""SIGKILL at a random moment of `recode eval`, CRPL synthesis and a GRPO run, then a re-run:
the output is complete, with no duplicated and no lost record (the `recode sandbox`
one is in test_sandbox_judge.py). Each test really kills a subprocess (its whole process group)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines()) if path.exists() else 0


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT), "TOKENIZERS_PARALLELISM": "false"}


def kill_when(cmd, ready, timeout=240.0) -> None:
    """Start `cmd`, SIGKILL its process group as soon as ready() holds; fail if it finished."""
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=_env(),
        cwd=ROOT,
    )
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not ready():
        time.sleep(0.02)
    if proc.poll() is not None:
        raise AssertionError(
            f"finished before the kill (rc {proc.returncode}): "
            f"{proc.stderr.read().decode()[-2000:]}"
        )
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run(cmd) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]


def ids_once(path: Path, key="id") -> list:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ids = [r[key] for r in rows]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicated records"
    return sorted(ids)


def test_recode_eval_killed_then_rerun(tiny_model_dir, tmp_path):
    out = tmp_path / "ev"
    cmd = [
        sys.executable,
        "-m",
        "recode_lib",
        "eval",
        "--model",
        str(tiny_model_dir),
        "--benchmark",
        "microbench",
        "--limit",
        "3",
        "--n",
        "2",
        "--k",
        "1",
        "--max-new-tokens",
        "16",
        "--batch-size",
        "1",
        "--workers",
        "1",
        "--out",
        str(out),
    ]
    kill_when(cmd, lambda: _lines(out / "generations.jsonl") >= 2)
    assert _lines(out / "samples.jsonl") < 6, "the kill did not land mid-run"
    run(cmd)
    want = sorted(
        f"{p}#{i}"
        for p in {
            json.loads(line)["problem_id"]
            for line in (out / "samples.jsonl").read_text().splitlines()
        }
        for i in range(2)
    )
    assert ids_once(out / "samples.jsonl") == want and len(want) == 6
    assert len(ids_once(out / "generations.jsonl")) == 6  # each sample generated once
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_samples"] == 6


CRPL_SCRIPT = textwrap.dedent('''
    import sys, time
    from recode_lib.data.schema import Problem
    from recode_lib.generation import Completion
    from recode_lib.process_reward.crpl import (CRPLConfig, GeneratorSpec, generate_base_traces,
                                                synthesize_rewrites)
    from recode_lib.core.prompts import format_response

    class Slow:
        """Deterministic, slow: a correct answer, or a rewrite with new reasoning."""
        def generate(self, messages, sampling):
            time.sleep(0.25)
            out = []
            for m in messages:
                text = m[-1]["content"]
                if "Rewrite" in text or "rewrite" in text:
                    body = format_response("Changed reasoning " + str(len(text)) + ".",
                                           "def f():\\n    return 1")
                else:
                    body = format_response("Return one.", "def f():\\n    return 1")
                out.append([Completion(body, 5, "stop")] * sampling.n)
            return out

    out = sys.argv[1]
    probs = [Problem(id=f"toy/{i}", source="toy", prompt=f"Write f() returning 1 ({i}).",
                     tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
                     time_limit_s=2.0) for i in range(6)]
    cfg = CRPLConfig(policy="slow", batch_size=2, dimensions=("logical_rigor",),
                     generators=[GeneratorSpec("slow", "slow", n_candidates=1)])
    gen = Slow()
    traces = generate_base_traces(probs, cfg, out + "/traces.jsonl", generator=gen)
    synthesize_rewrites(traces, cfg, out + "/rewrites.jsonl", generators={"slow": gen})
''')


def test_crpl_synthesis_killed_in_each_stage_then_rerun(tmp_path):
    script = tmp_path / "crpl.py"
    script.write_text(CRPL_SCRIPT)
    ref, out = tmp_path / "ref", tmp_path / "out"
    ref.mkdir()
    out.mkdir()
    run([sys.executable, str(script), str(ref)])
    cmd = [sys.executable, str(script), str(out)]
    kill_when(cmd, lambda: _lines(out / "traces.jsonl") >= 2)  # stage 1
    kill_when(cmd, lambda: _lines(out / "rewrites.jsonl") >= 2)  # stage 2
    run(cmd)
    for name in ("traces.jsonl", "rewrites.jsonl"):
        assert ids_once(out / name) == ids_once(ref / name), name
    assert len(ids_once(out / "traces.jsonl")) == 6 and len(ids_once(out / "rewrites.jsonl")) == 12


GRPO_SCRIPT = textwrap.dedent("""
    import sys
    from recode_lib.data.schema import Problem
    from recode_lib.training.grpo import load_recipe, train

    probs = [Problem(id=f"toy/{i}", source="toy", prompt=f"Write f() returning {i}.",
                     tests={"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": i}]},
                     time_limit_s=2.0) for i in range(4)]
    recipe = load_recipe("cg_grpo_smoke", model=sys.argv[1], rewards=[{"name": "outcome_only"}],
                         max_steps=5, max_completion_length=12, num_generations=4,
                         per_device_train_batch_size=8, save_steps=1, save_total_limit=2,
                         sandbox_workers=1)
    train(recipe, probs, sys.argv[2])
""")


def test_grpo_run_killed_then_rerun(tiny_model_dir, tmp_path):
    from recode_lib.core.run_files import read_metrics

    script = tmp_path / "grpo.py"
    script.write_text(GRPO_SCRIPT)
    out = tmp_path / "run"
    cmd = [sys.executable, str(script), str(tiny_model_dir), str(out)]
    kill_when(cmd, lambda: _lines(out / "metrics.jsonl") >= 2)
    assert not (out / "final" / ".complete").exists(), "the kill did not land mid-run"
    # what a kill while saving leaves (saves are not atomic): a checkpoint without its state,
    # and a metrics line of a step no checkpoint holds
    steps = sorted(int(d.name.split("-")[1]) for d in out.glob("checkpoint-*"))
    torn = out / f"checkpoint-{steps[-1] + 1}"
    torn.mkdir()
    (torn / "config.json").write_text("{")
    with open(out / "metrics.jsonl", "a") as fh:
        fh.write(json.dumps({"step": steps[-1] + 1, "loss": 123.0}) + "\n")
    run(cmd)
    rows = read_metrics(out)
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5]
    assert all(r.get("loss") != 123.0 for r in rows)  # the re-run's own records
    assert (out / "final" / ".complete").is_file()
    assert (out / f"torn-step-{steps[-1] + 1}.0" / "config.json").is_file()  # set aside
