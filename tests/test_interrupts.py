"""Interrupts with real processes and signals: Ctrl-C or SIGTERM in `recode sandbox` never
stores a verdict for work cut short, says so in one line, exits 130/143, and the re-run gives
exactly the verdicts of an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from recode_lib.core.paths import PROJECT_ROOT

SLOW_RIGHT = "import time\ndef f():\n    time.sleep(0.4)\n    return 1\n"


def records(n):
    return [
        {
            "id": f"r{i:03d}",
            "code": SLOW_RIGHT,
            "time_limit_s": 5,
            "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
        }
        for i in range(n)
    ]


def sandbox(inp, out, **kw):
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recode_lib",
            "sandbox",
            str(inp),
            "--out",
            str(out),
            "--workers",
            "2",
            "--no-progress",
        ],
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sandbox_run_stores_no_verdict_for_work_cut_short(tmp_path, sig, status):
    pytest.importorskip("recode_lib.sandbox")
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in records(24)))
    proc = sandbox(inp, out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # interrupt once some, not all, are judged
        if out.exists() and out.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert 3 <= len(first) < 24
    assert all(r["status"] == "passed" for r in first), [r["status"] for r in first]
    again = sandbox(inp, out)
    again.communicate(timeout=120)
    assert again.returncode == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == [r["id"] for r in records(24)]
    assert all(r["status"] == "passed" for r in rows)


def test_a_second_writer_on_one_output_is_refused_at_once(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "dup.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in records(16)))
    first = sandbox(inp, out)
    deadline = time.monotonic() + 60
    while not (out.exists() and out.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    second = sandbox(inp, out)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 2 and f"PID {first.pid}" in err and "Traceback" not in err
    first.communicate(timeout=120)
    assert first.returncode == 0
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == [r["id"] for r in records(16)]  # no duplicate lines


def test_a_file_with_duplicates_says_how_to_repair_it_and_the_repair_keeps_the_first(tmp_path):
    from recode_lib.core.jsonl import JsonlError, JsonlStore
    from recode_lib.core.jsonl import main as jsonl_main

    out = tmp_path / "old.jsonl"
    out.write_text('{"id": "a", "v": 1}\n{"id": "b", "v": 2}\n{"id": "a", "v": 3}\n')
    with pytest.raises(JsonlError, match=r"python -m recode_lib.core.jsonl dedupe .*old.jsonl"):
        JsonlStore(out)
    assert jsonl_main(["dedupe", str(out)]) == 0
    assert [r["v"] for r in JsonlStore(out).records()] == [1, 2]
