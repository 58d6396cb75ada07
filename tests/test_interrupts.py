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

from recode_lib.paths import PROJECT_ROOT

SLOW_RIGHT = "import time\ndef f():\n    time.sleep(0.4)\n    return 1\n"


def records(n):
    return [{"id": f"r{i:03d}", "code": SLOW_RIGHT, "time_limit_s": 5,
             "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]}}
            for i in range(n)]


def sandbox(inp, out, **kw):
    return subprocess.Popen([sys.executable, "-m", "recode_lib", "sandbox", str(inp), "--out",
                             str(out), "--workers", "2", "--no-progress"],
                            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sandbox_run_stores_no_verdict_for_work_cut_short(tmp_path, sig, status):
    pytest.importorskip("recode_lib.sandbox")
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in records(24)))
    proc = sandbox(inp, out)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:          # interrupt once some, not all, are judged
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
