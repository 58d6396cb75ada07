"""The judge survives any submission: forged protocol lines, values that break comparisons,
judge-side errors, dying workers and a SIGKILLed CLI. One hostile property per test; after each,
the next record is judged right by the same pool."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from sandbox_leftovers import describe, leftovers, wait_no_new

from recode_lib.sandbox import SandboxConfig, execute, execute_many, isolation_mode, verdict
from recode_lib.sandbox import pool as pool_mod
from recode_lib.sandbox.pool import get_pool

CFG = SandboxConfig(time_limit_s=2.0, memory_mb=256, max_output_bytes=1 << 20, workers=1)
CALL = {
    "kind": "call",
    "fn_name": "f",
    "cases": [{"args": [3], "expected": 3}, {"args": [4], "expected": 4}],
}
GOOD = "def f(x):\n    return x\n"
WRONG = "def f(x):\n    return x + 1\n"


def strict_json(res):
    json.dumps(res, allow_nan=False)
    return res


def judged_then_next_is_right(code, tests=CALL, **rec):
    """Run a hostile record, then a wrong and a correct one on the same pool."""
    res = execute_many(
        [
            {"id": "h", "code": code, "tests": tests, **rec},
            {"id": "w", "code": WRONG, "tests": CALL},
            {"id": "g", "code": GOOD, "tests": CALL},
        ],
        config=CFG,
        workers=1,
    )
    assert [r["status"] for r in res[1:]] == ["wrong_answer", "passed"]
    return strict_json(res[0])


def forging(lines):
    """A submission that writes `lines` to every file descriptor it has, then returns x."""
    return (
        "import os\ndef f(x):\n    for fd in range(3, 40):\n        try:\n"
        f"            os.write(fd, {lines!r})\n        except OSError:\n"
        "            pass\n    return x + 100\n"
    )


@pytest.mark.parametrize(
    "line",
    [
        b'T {"i": 0, "st": ["ok"], "out": 3}\n',  # unhashable status
        b'T {"i": 0, "st": "ok", "out": 3, "t": 1e400}\n',  # time that is not finite
        b'T {"i": 0, "st": "ok", "out": 3, "t": ' + b"9" * 400 + b"}\n",  # huge integer time
        b'T {"i": 0, "st": "ok", "out": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        b'T {"i": 0, not json at all\n',
        b"7\n",
        b"D {}\n",
        b'X {"st": "ok"}\n',
        b"S\n" * 1000,
    ],
)
def test_forged_protocol_lines_cost_only_their_record(line):
    res = judged_then_next_is_right(forging(line))
    assert res["status"] in ("runtime_error", "wrong_answer")


def test_a_forged_ok_line_is_still_compared_with_the_expected_value():
    # writing its own result line is no better than returning that value: the judge compares
    res = judged_then_next_is_right(
        forging(b'T {"i": 0, "st": "ok", "out": 30}\nT {"i": 1, "st": "ok", "out": 40}\n')
    )
    assert res["status"] == "wrong_answer"


def test_a_line_without_newline_hits_the_output_limit():
    code = (
        "import os\ndef f(x):\n    for fd in range(3, 40):\n        try:\n"
        '            os.write(fd, b\'T {"i": 0, "out": "\' + b\'x\' * (3 << 20))\n'
        "        except OSError:\n            pass\n    return x\n"
    )
    res = judged_then_next_is_right(code)
    assert res["status"] == "runtime_error"


@pytest.mark.parametrize(
    "value, expected",
    [
        ("10 ** 400", [1.5, 2.5]),
        ("__import__('functools').reduce(lambda a, _: [a], range(450), [])", [[1]]),
        ("float('nan')", 1.0),
    ],
)
def test_values_that_break_comparisons_are_wrong_answers(value, expected):
    tests = {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": expected}]}
    res = judged_then_next_is_right(f"def f(x):\n    return {value}\n", tests)
    assert res["status"] == "wrong_answer"


@pytest.mark.parametrize("printed", ["sNaN", "nan", "1e999999999", "-sNaN 1", "Infinity"])
def test_stdio_outputs_that_break_decimal_are_wrong_answers(printed):
    tests = {"kind": "stdio", "float_tol": 1e-6, "cases": [{"input": "", "output": "1.5"}]}
    res = judged_then_next_is_right(f"print({printed!r})\n", tests)
    assert res["status"] == "wrong_answer"


def test_a_judge_side_error_never_changes_the_next_verdict(monkeypatch):
    real = verdict.test_status

    def flaky(spec, msg, nonce=None):
        if msg.get("out") == 666:
            raise RuntimeError("judge bug")
        return real(spec, msg, nonce)

    monkeypatch.setattr(verdict, "test_status", flaky)
    execute({"id": "warm", "code": GOOD, "tests": CALL}, config=CFG)
    before = {w.info["pid"] for w in get_pool(CFG).workers()}
    res = execute_many(
        [
            {"id": "boom", "code": "def f(x):\n    print(1)\n    return 666\n", "tests": CALL},
            {"id": "w", "code": WRONG, "tests": CALL},
            {"id": "g", "code": GOOD, "tests": CALL},
        ],
        config=CFG,
        workers=1,
    )
    assert [r["status"] for r in res] == ["runtime_error", "wrong_answer", "passed"]
    assert "judge error" in res[0]["reason"]
    after = {w.info["pid"] for w in get_pool(CFG).workers()}
    assert not before & after, "the worker of the failed job was not replaced"


def test_early_stop_then_next_record_reads_no_stale_line():
    many = {
        "kind": "call",
        "fn_name": "f",
        "cases": [{"args": [i], "expected": -1} for i in range(200)],
    }
    res = execute_many(
        [
            {"id": "a", "code": "def f(x):\n    return x\n", "tests": many},
            {"id": "g", "code": GOOD, "tests": CALL},
        ],
        config=CFG,
        workers=1,
        early_stop=True,
    )
    assert res[0]["status"] == "wrong_answer" and res[1]["status"] == "passed"


def _uid_processes(uid, span=1):
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                if uid <= os.stat(f"/proc/{p}").st_uid < uid + span:
                    found.append(p)
            except OSError:
                pass
    return found


def test_a_dying_worker_leaves_no_process_of_its_submission():
    cfg = CFG.replace(time_limit_s=5.0)
    execute({"id": "warm", "code": GOOD, "tests": CALL}, config=cfg)
    (w,) = get_pool(cfg).workers()
    code = (
        "import os, time\ndef f(x):\n    if os.fork() == 0:\n        os.setsid()\n"
        "        if os.fork() == 0:\n            time.sleep(60)\n        os._exit(0)\n"
        "    time.sleep(3)\n    return x\n"
    )
    killer = threading.Timer(1.0, lambda: os.kill(w.info["pid"], signal.SIGKILL))
    killer.start()
    res = execute({"id": "d", "code": code, "tests": CALL}, config=cfg)
    killer.join()
    assert res["status"] in ("passed", "runtime_error")
    assert not w.alive()
    if w.info.get("uid"):
        left = _uid_processes(w.info["uid"], w.info.get("uid_span", 1))
        assert left == [], "a process of the dead worker's uids is left"
    assert execute({"id": "g", "code": GOOD, "tests": CALL}, config=cfg)["status"] == "passed"


def test_a_stopped_worker_is_killed_by_the_watchdog_and_the_record_judged_on_a_fresh_one():
    """A worker that stops answering (SIGSTOP here; any wedge) must not hang the judge: after
    the job's time limit + stall_grace_s of silence it is killed and the record retried."""
    cfg = CFG.replace(time_limit_s=1.0, stall_grace_s=1.0)
    assert execute({"id": "warm", "code": GOOD, "tests": CALL}, config=cfg)["status"] == "passed"
    (w,) = get_pool(cfg).workers()
    os.kill(w.proc.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    res = execute({"id": "g", "code": GOOD, "tests": CALL}, config=cfg)
    assert time.monotonic() - t0 < 30
    assert res["status"] == "passed" and w.stalled == 2.0 and not w.alive()
    assert w not in get_pool(cfg).workers()


def test_a_submission_that_sleeps_or_floods_cannot_make_the_watchdog_kill_its_worker():
    """The watchdog must not be a lever: a hang is the submission's time_limit (the worker
    reports it at the time limit, well inside the grace), a flood its output verdict; the worker
    stays the same, unstalled, and the next record is judged right on it."""
    cfg = CFG.replace(time_limit_s=1.0, stall_grace_s=1.0)
    assert execute({"id": "warm", "code": GOOD, "tests": CALL}, config=cfg)["status"] == "passed"
    (w,) = get_pool(cfg).workers()
    hang = "import time\ndef f(x):\n    while True:\n        time.sleep(0.05)\n"
    flood = "def f(x):\n    return 'x' * (4 << 20)\n"
    res = execute_many(
        [
            {"id": "hang", "code": hang, "tests": CALL},
            {"id": "flood", "code": flood, "tests": CALL},
            {"id": "g", "code": GOOD, "tests": CALL},
        ],
        config=cfg,
        workers=1,
    )
    assert res[0]["status"] == "time_limit" and res[1]["status"] != "passed"
    assert res[2]["status"] == "passed"
    assert w.stalled is None and w.alive() and get_pool(cfg).workers() == [w]


def test_a_worker_stalling_twice_is_the_records_runtime_error_not_a_hang(monkeypatch):
    from recode_lib.sandbox import pool as pool_mod

    cfg = CFG.replace(time_limit_s=1.0, stall_grace_s=0.5)
    real_run = pool_mod.Worker.run

    def stop_then_run(self, job, n_tests, on_message):
        os.kill(self.proc.pid, signal.SIGSTOP)  # every worker wedges before its job
        return real_run(self, job, n_tests, on_message)

    monkeypatch.setattr(pool_mod.Worker, "run", stop_then_run)
    t0 = time.monotonic()
    res = execute({"id": "s", "code": GOOD, "tests": CALL}, config=cfg)
    assert time.monotonic() - t0 < 30
    assert res["status"] == "runtime_error" and "died twice" in res.get("reason", "")
    monkeypatch.undo()
    assert execute({"id": "g", "code": GOOD, "tests": CALL}, config=cfg)["status"] == "passed"


def test_the_worker_survives_malformed_job_lines():
    with get_pool(CFG).worker() as slot:
        w = slot[0]
        for junk in (b"\n", b"[1, 2]\n", b"nope\n", b'{"op": "job", "job": 1}\n', b"\xff\xfe\n"):
            w.proc.stdin.write(junk)
        w.proc.stdin.flush()
        time.sleep(0.3)
        assert w.alive()
        # the half-valid job got an error answer; the next real job is not confused by it
        w.job_id = 1
        assert w.read(1).tag == "X" and w.read(1).tag == "D"
    assert execute({"id": "g", "code": GOOD, "tests": CALL}, config=CFG)["status"] == "passed"


def test_sigkill_of_the_cli_then_rerun_gives_every_record_once(tmp_path):
    recs = [
        {
            "id": f"r{i}",
            "code": "import time\ndef f(x):\n    time.sleep(0.15)\n    return x\n",
            "tests": CALL,
        }
        for i in range(12)
    ]
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    cmd = [
        sys.executable,
        "-m",
        "recode_lib",
        "sandbox",
        str(src),
        "--out",
        str(out),
        "--workers",
        "1",
        "--no-progress",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or len(out.read_bytes().splitlines()) < 3):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = len(out.read_bytes().splitlines())
    assert 3 <= first < len(recs), "the kill did not land mid-run"
    subprocess.run(cmd, check=True, capture_output=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in recs)
    assert all(r["status"] == "passed" for r in rows)


def test_a_huge_test_index_does_not_kill_the_worker():
    # int() of a 5000-digit index raised in the worker's line reader
    line = b'T {"i": ' + b"9" * 5000 + b', "st": "ok", "out": 3}\n'
    with get_pool(CFG).worker() as slot:
        pid = slot[0].info["pid"]
    res = judged_then_next_is_right(forging(line))
    assert res["status"] == "wrong_answer"  # the forged line is ignored; f's own value compared
    with get_pool(CFG).worker() as slot:
        assert slot[0].info["pid"] == pid and slot[0].alive()


def test_a_huge_wrong_stdio_line_costs_the_judge_little_memory():
    import tracemalloc

    n = 300_000
    out, exp = "1 " * n, "1 " * (n - 1) + "2"  # same token count: compared token by token
    tracemalloc.start()
    try:
        assert not verdict.stdio_equal(out, exp)
        assert verdict.stdio_equal(out, exp.replace("2", "1.0"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * len(out), f"peak {peak} bytes for a {len(out)}-byte line"


# A worker made to linger in its reap while it holds a child's uid (root mode: setresuid to
# the child's uid for kill(-1) and, where keys are reachable, the keyrings: the hook here)
_SLOW_REAP = """
import sys, time, runpy
sys.path.insert(0, {sandbox!r})
import limits
limits.KEYS_REACHABLE = True
limits.clear_keyrings = lambda: time.sleep(30)
sys.argv = [{zygote!r}]
runpy.run_path({zygote!r}, run_name="__main__")
"""


def test_a_worker_killed_while_it_holds_a_childs_uid_leaves_no_namespace_init(
    tmp_path, monkeypatch
):
    """Root mode's reap runs as the child's uid; a worker killed there (the judge discards a
    worker mid-job; the watchdog) cannot deliver its pid-namespace init's PR_SET_PDEATHSIG
    (the kernel checks the dying parent's permission to signal the root-owned init), so the
    init must end by another way: no process of the worker may outlive it."""
    if isolation_mode(CFG) != "root":
        pytest.skip("root mode only: the reap takes the child's uid there")
    wrapper = tmp_path / "slow_reap_zygote.py"
    wrapper.write_text(
        _SLOW_REAP.format(sandbox=str(pool_mod.ZYGOTE.parent), zygote=str(pool_mod.ZYGOTE))
    )
    monkeypatch.setattr(pool_mod, "ZYGOTE", wrapper)
    before = leftovers(str(wrapper))
    (spec,) = pool_mod.parse_all([{"id": "g", "code": GOOD, "tests": CALL}], CFG)
    w = pool_mod.Worker(CFG)
    try:

        def run():
            with contextlib.suppress(pool_mod.WorkerDied):
                w.run(spec.job, len(spec.input_lens), lambda m: False)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        deadline, uid = time.monotonic() + 20, "0"
        while uid == "0" and time.monotonic() < deadline:
            time.sleep(0.005)
            with open(f"/proc/{w.proc.pid}/status") as fh:
                uid = next(ln for ln in fh if ln.startswith("Uid:")).split()[1]
        assert uid != "0", "the worker never took the child's uid"
        os.kill(w.proc.pid, signal.SIGKILL)
        t.join(10)
        left = wait_no_new(before, zygote=str(wrapper))
        assert left == [], "outlived the killed worker: " + describe(left)
    finally:
        w.kill()
        for pid in leftovers(str(wrapper)):
            os.kill(pid, signal.SIGKILL)
