"""The human step of a batch run: LCB-RB pairs waiting for a person stop the pipeline, `recode
adjudicate` decides them in the terminal one at a time (each decision on disk before the next
pair shows), and a resumed run picks the decisions up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.paths import runs_dir
from recode_lib.process_reward.lcbrb.adjudication import (
    DECISIONS_FILE,
    PENDING_FILE,
    AdjudicationPending,
    DecisionStore,
    read_pending,
    require_human_decisions,
    terminal_loop,
)
from recode_lib.runner.nbtools import new_notebook, write_notebook
from recode_lib.runner.pipeline import HumanStepPending, human_steps, load_profile, run_pipeline

REPO = Path(__file__).resolve().parents[1]


def kept_pairs(n=3) -> list[dict]:
    """Candidate pairs as dual_consistency keeps them."""
    return [
        {
            "id": f"fx/{i}|fx/{i}#0|fx/{i}#1",
            "problem_id": f"fx/{i}",
            "source": "fx",
            "prompt": f"Problem {i}: add two numbers.",
            "better": f"Reasoning {i}: add.\n```python\ndef f(a, b):\n    return a + b\n```",
            "worse": f"Reasoning {i}: subtract.\n```python\ndef f(a, b):\n    return a - b\n```",
            "better_verdict": {"outcome": "correct", "passed": 3, "total": 3},
            "worse_verdict": {"outcome": "correctness_failure", "passed": 1, "total": 3},
            "status": "kept",
            "reason": "",
            "consistency": {"better": True, "worse": True, "verified": True},
        }
        for i in range(n)
    ]


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_require_human_decisions_writes_the_pending_pairs_and_names_the_command(tmp_path):
    pairs = kept_pairs()
    store = DecisionStore(tmp_path / DECISIONS_FILE)
    store.record(pairs[0]["id"], "accept", "human")
    store.record(pairs[1]["id"], "pending", "auto")  # an automatic decision is no decision
    with pytest.raises(AdjudicationPending) as info:
        require_human_decisions(pairs, store, tmp_path)
    assert info.value.pending == 2
    msg = str(info.value)
    assert f"recode adjudicate {tmp_path}" in msg and "2 of 3" in msg
    assert f'pending_widget("{tmp_path}")' in msg
    assert [p["id"] for p in read_pending(tmp_path)] == [pairs[1]["id"], pairs[2]["id"]]
    for p in pairs[1:]:
        store.record(p["id"], "reject", "human")
    assert require_human_decisions(pairs, store, tmp_path) == 3
    assert read_pending(tmp_path) == []  # nothing left


def test_terminal_loop_saves_each_decision_before_the_next_pair(tmp_path):
    pairs = kept_pairs()
    path = tmp_path / DECISIONS_FILE
    store = DecisionStore(path)
    answers = iter(["a", "what?", "s", "n"])
    on_disk = []

    def read(prompt):
        on_disk.append(len(lines(path)))  # what is saved when the next answer is asked for
        return next(answers)

    shown = []
    out = terminal_loop(pairs, store, read=read, write=shown.append)
    assert on_disk == [0, 1, 1, 2]  # "what?" is asked again, nothing recorded
    assert [(r["pair_id"], r["decision"], r["by"]) for r in lines(path)] == [
        (pairs[0]["id"], "accept", "human"),
        (pairs[1]["id"], "swap", "human"),
    ]
    assert out == {"decided": 2, "skipped": 1, "left": 1, "total": 3}
    text = "\n".join(shown)
    assert "Reasoning 0: add." in text and "Reasoning 0: subtract." in text
    assert "outcome correct, passed 3/3" in text and "not an answer: 'what?'" in text
    # a second session resumes at the skipped pair only
    again = terminal_loop(pairs, DecisionStore(path), read=lambda _: "r", write=lambda *_: None)
    assert again == {"decided": 1, "skipped": 0, "left": 0, "total": 3}
    assert DecisionStore(path).decisions()[pairs[2]["id"]]["decision"] == "reject"


def test_end_of_input_stops_the_loop_keeping_what_was_decided(tmp_path):
    pairs = kept_pairs()
    answers = iter(["r"])

    def read(_prompt):
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    out = terminal_loop(
        pairs, DecisionStore(tmp_path / "d.jsonl"), read=read, write=lambda *_: None
    )
    assert out["decided"] == 1 and out["left"] == 2


def _wait_for(cond, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_recode_adjudicate_killed_after_one_of_three_keeps_that_one(tmp_path):
    """The terminal command, stdin a pipe: killed (SIGKILL) after the first answer, the first
    decision is on disk; started again it asks for the other two only."""
    folder = tmp_path / "03_lcb_rb"
    folder.mkdir()
    pairs = kept_pairs()
    (folder / PENDING_FILE).write_text("".join(json.dumps(p) + "\n" for p in pairs))
    decisions = folder / DECISIONS_FILE
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "recode_lib", "adjudicate", str(folder)]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        proc.stdin.write("a\n")
        proc.stdin.flush()
        _wait_for(lambda: len(lines(decisions)) == 1, "the first decision on disk")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert [(r["pair_id"], r["decision"]) for r in lines(decisions)] == [(pairs[0]["id"], "accept")]
    done = subprocess.run(cmd, input="s\nr\n", capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"[1/2] {pairs[1]['id']}" in done.stdout  # resumed at the undecided pair
    assert [r["decision"] for r in lines(decisions)] == ["accept", "swap", "reject"]
    assert "every pending pair has a human decision" in done.stdout


def test_recode_adjudicate_without_pending_pairs_is_one_error_line(tmp_path, capsys):
    from recode_lib.cli import main

    assert main(["adjudicate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and PENDING_FILE in err[0]


NOTEBOOK = """from recode_lib.core.jsonl import read_jsonl
from recode_lib.core.paths import runs_dir
from recode_lib.process_reward.lcbrb.adjudication import DecisionStore, require_human_decisions
OUT = runs_dir(PROFILE) / "03_x"
OUT.mkdir(parents=True, exist_ok=True)
kept = read_jsonl(KEPT)
store = DecisionStore(OUT / "adjudication.jsonl")
if ADJUDICATION == "widget":
    require_human_decisions(kept, store, OUT)
(OUT / "seen.json").write_text(json.dumps({p: d["decision"] for p, d in store.decisions().items()
                                           if d["by"] == "human"}))"""


@pytest.fixture
def book(tmp_path):
    d = tmp_path / "nbs"
    d.mkdir()
    kept = tmp_path / "kept.jsonl"
    kept.write_text("".join(json.dumps(p) + "\n" for p in kept_pairs()))
    params = 'PROFILE = "smoke"\nKEPT = ""\nADJUDICATION = "auto"'
    a = d / "03_x.ipynb"
    write_notebook(new_notebook([("params", params), ("code", "import json\n" + NOTEBOOK)]), a)
    b = d / "04_after.ipynb"
    write_notebook(new_notebook([("params", 'PROFILE = "smoke"'), ("code", "print('after')")]), b)
    spec = tmp_path / "p.yaml"
    spec.write_text(
        yaml.safe_dump({"common": {"KEPT": str(kept)}, "03_x": {"ADJUDICATION": "widget"}})
    )
    return [a, b], spec


def test_a_batch_run_stops_at_the_human_step_and_a_resumed_run_sees_the_decisions(book):
    nbs, spec = book
    logged = []
    with pytest.raises(HumanStepPending) as info:
        run_pipeline("t", notebooks=nbs, params_file=spec, log=logged.append)
    run = runs_dir("t")
    folder = run / "03_x"
    msg = str(info.value)
    assert f"recode adjudicate {folder}" in msg and "3 of 3" in msg
    assert info.value.resume == f"recode reproduce --profile t --params {spec}"
    assert info.value.resume in msg
    assert f"{info.value.resume} --set ADJUDICATION=auto" in msg  # or without the person
    assert any("03_x needs a person" in line for line in logged)  # said before it runs
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["03_x"]["status"] == "awaiting_human" and "04_after" not in manifest
    assert (run / "notebooks" / "03_x.pending.ipynb").is_file()
    pairs = read_pending(folder)
    assert len(pairs) == 3

    answers = iter(["a"])  # one decision, then the person stops (end of input)

    def read(_prompt):
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    terminal_loop(pairs, DecisionStore(folder / DECISIONS_FILE), read=read, write=lambda *_: None)
    with pytest.raises(HumanStepPending, match="2 of 3"):  # resumed: 2 still pending
        run_pipeline("t", notebooks=nbs, params_file=spec, log=lambda *_: None)
    assert [p["id"] for p in read_pending(folder)] == [p["id"] for p in pairs[1:]]
    terminal_loop(
        read_pending(folder),
        DecisionStore(folder / DECISIONS_FILE),
        read=lambda _: "s",
        write=lambda *_: None,
    )
    results = run_pipeline("t", notebooks=nbs, params_file=spec, log=lambda *_: None)
    assert [(r.stem, r.status) for r in results] == [
        ("03_x", "completed"),
        ("04_after", "completed"),
    ]
    seen = json.loads((folder / "seen.json").read_text())
    assert seen == {pairs[0]["id"]: "accept", pairs[1]["id"]: "swap", pairs[2]["id"]: "swap"}
    assert not (run / "notebooks" / "03_x.pending.ipynb").exists()
    assert read_jsonl(folder / PENDING_FILE) == []


def test_reproduce_exits_3_and_prints_the_way_on(monkeypatch, capsys):
    from recode_lib.cli import main, reproduce

    def stopped(*args, **kwargs):
        raise HumanStepPending(
            "the run stopped at 03_lcb_rb.ipynb\n  recode adjudicate X\n"
            "  recode reproduce --profile paper",
            "03_lcb_rb",
            "recode reproduce --profile paper",
        )

    monkeypatch.setattr(reproduce, "run_pipeline", stopped)
    assert main(["reproduce", "--profile", "paper", "--no-plan"]) == reproduce.HUMAN_STEP_EXIT == 3
    err = capsys.readouterr().err
    assert "recode adjudicate X" in err and "recode reproduce --profile paper" in err


def test_the_paper_profile_holds_the_human_step_and_smoke_does_not():
    from recode_lib.runner.pipeline import list_notebooks, profile_parameters

    nbs = list_notebooks()
    assert set(human_steps(profile_parameters("paper", notebooks=nbs))) == {"03_lcb_rb"}
    assert human_steps(profile_parameters("smoke", notebooks=nbs)) == {}
    assert load_profile("paper")["03_lcb_rb"]["ADJUDICATION"] == "widget"
