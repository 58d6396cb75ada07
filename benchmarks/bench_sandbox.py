"""Sandbox benchmark: per-execution overhead vs a bare Python start, and HumanEval+ throughput
against the physical floor, an older sandbox (before/after) and EvalPlus 0.3.1.

    python benchmarks/bench_sandbox.py [--workers 2] [--limit N] [--before-root DIR]
                                       [--evalplus-python /tmp/evalplus-venv/bin/python]
                                       [--skip-evalplus]

Records come from the library's one EvalPlus builder (recode_lib.data.evalplus.sandbox_records
over load_humanevalplus: canonical solutions, base+plus inputs). The floor runs every input of
every record (the script of a script record) serially in one plain Python process (no sandbox,
no comparison), divided by the worker count. --before-root runs the same records through the
sandbox of another checkout (e.g. `git archive <rev> | tar -x -C DIR`), in the same run, so
ratios share one machine load (it goes first in every other round), and times both trees'
one-test record in alternating rounds of two warm processes.
EvalPlus must live in a separate venv (python3 -m venv /tmp/evalplus-venv &&
/tmp/evalplus-venv/bin/pip install evalplus==0.3.1) so it cannot change the project's pins.
The load average (`uptime`) is printed next to the figures. Prints figures only.

Where the CPU goes (read from /proc, so less sensitive to load than wall time): each
HumanEval+ round prints the CPU seconds of the judge (this process), of the warm workers and
of the confined children they reaped, against the floor's own. The overhead part measures what
one test and one record cost in each of the three processes at the least (a one-test record
60 times, a 20,000-test record of `return x`), and the throughput part turns that into the
design's bound: the floor's CPU plus those least costs times HumanEval+'s tests and records,
over the floor's CPU. With the judge and the workers sharing the machine's CPUs (2 workers on
2 CPUs), no run can come below that ratio, whatever else is made free.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from recode_lib.core.paths import data_dir  # noqa: E402

FILES = {"humanevalplus": "HumanEvalPlus.jsonl.gz", "mbppplus": "MbppPlus.jsonl.gz"}


def plus_records(name: str, code_of=None, limit: int | None = None) -> list[dict]:
    """HumanEval+/MBPP+ sandbox records (see recode_lib.data.evalplus.sandbox_records)."""
    from recode_lib.data.evalplus import sandbox_records
    from recode_lib.data.humaneval import load_humanevalplus
    from recode_lib.data.mbpp import load_mbppplus

    load = load_humanevalplus if name == "humanevalplus" else load_mbppplus
    return sandbox_records(load(limit=limit, download=False), code_of)


def load_avg() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


_HZ = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu() -> dict[str, float]:
    """CPU seconds so far of this process ("judge"), of its child processes, the warm
    workers ("worker"), and of what those reaped, the confined children ("children"), from
    /proc/<pid>/stat (utime+stime, cutime+cstime). A worker's reaped children count once the
    worker has collected them, which it does at the end of each record."""
    me, worker, children = os.getpid(), 0, 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == me:
            worker += int(fields[11]) + int(fields[12])
            children += int(fields[13]) + int(fields[14])
    self = os.times()
    return {"judge": self.user + self.system, "worker": worker / _HZ, "children": children / _HZ}


def cpu_since(before: dict[str, float]) -> dict[str, float]:
    now = tree_cpu()
    return {k: now[k] - before[k] for k in now}


def split_text(cpu: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in cpu.items()) + f" (total {sum(cpu.values()):.2f})"


# the least CPU one test and one record cost in each process (bench_overhead fills it)
LEAST: dict[str, dict[str, float]] = {}


_ONE = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from recode_lib.sandbox import SandboxConfig, execute
rec = {"id": "t", "code": "def f(x):\n    return x\n",
       "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]}}
cfg = SandboxConfig(workers=1)
execute(rec, config=cfg)
for line in sys.stdin:
    per = []
    for _ in range(int(line)):
        t = time.perf_counter()
        execute(rec, config=cfg)
        per.append(time.perf_counter() - t)
    print(json.dumps(statistics.median(per)), flush=True)
"""


def overhead_before_after(before_root: str, rounds: int = 6, n: int = 20) -> None:
    """The one-test record's latency of this tree and of before_root, alternating rounds of n
    in two warm processes, so that both see the same machine load."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ONE, root],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for root in (str(ROOT), before_root)
    ]
    meds: list[list[float]] = [[], []]
    for r in range(rounds):
        for k in (0, 1) if r % 2 == 0 else (1, 0):
            procs[k].stdin.write(f"{n}\n")
            procs[k].stdin.flush()
            meds[k].append(float(procs[k].stdout.readline()))
    for p in procs:
        p.stdin.close()
        p.wait()
    a, b = statistics.median(meds[0]), statistics.median(meds[1])
    print(
        f"  one test, this tree {a * 1e3:.2f} ms, before ({before_root}) {b * 1e3:.2f} ms "
        f"(alternating rounds) -> after/before = {a / b:.2f}x ({load_avg()})"
    )


def bench_overhead(n: int = 60) -> None:
    from recode_lib.sandbox import SandboxConfig, execute, isolation_mode

    cfg = SandboxConfig(workers=1)
    rec = {
        "id": "t",
        "code": "def f(x):\n    return x\n",
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [1], "expected": 1}]},
    }
    execute(rec, config=cfg)  # warm the worker
    per = []
    cpu0 = tree_cpu()
    for _ in range(n):
        t = time.perf_counter()
        assert execute(rec, config=cfg)["status"] == "passed"
        per.append(time.perf_counter() - t)
    LEAST["record"] = {k: v / n for k, v in cpu_since(cpu0).items()}
    floors = {}
    for label, cmd in (
        ("python -S -c pass", [sys.executable, "-S", "-c", "pass"]),
        ("python -I -c pass", [sys.executable, "-I", "-c", "pass"]),
    ):
        ts = []
        for _ in range(20):
            t = time.perf_counter()
            subprocess.run(cmd, check=True)
            ts.append(time.perf_counter() - t)
        floors[label] = statistics.median(ts)
    med = statistics.median(per)
    print(f"isolation mode: {isolation_mode(cfg)} ({load_avg()})")
    print(f"one submission, one test, warm worker: {med * 1e3:.2f} ms median over {n}")
    for label, f in floors.items():
        print(f"  floor {label}: {f * 1e3:.2f} ms  -> sandbox/floor = {med / f:.2f}x")
    many = dict(
        rec,
        tests={
            "kind": "call",
            "fn_name": "f",
            "cases": [{"args": [i], "expected": i} for i in range(20000)],
        },
    )
    cpu0 = tree_cpu()
    t = time.perf_counter()
    assert execute(many, config=cfg)["passed"] == 20000
    dt = time.perf_counter() - t
    cpu = cpu_since(cpu0)
    # a test's share: the record's CPU less one one-test record's
    LEAST["test"] = {k: max(v - LEAST["record"][k], 0.0) / 20000 for k, v in cpu.items()}
    print(
        f"20,000 tiny tests in one submission: {dt:.2f} s = {dt / 20000 * 1e6:.1f} us/test "
        f"({floors['python -S -c pass'] / (dt / 20000):.0f}x below one process start)"
    )
    print(
        "  least CPU per record (one-test record): "
        + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in LEAST["record"].items())
    )
    print(
        "  least CPU per test (the 20,000-test record): "
        + ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in LEAST["test"].items())
    )


_EVALPLUS_RUN = r"""
import json, sys, time
from concurrent.futures import ProcessPoolExecutor
from evalplus.data import get_human_eval_plus, get_human_eval_plus_hash
from evalplus.evaluate import get_groundtruth, check_correctness
from evalplus.eval import PASS
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
problems = get_human_eval_plus()
t = time.perf_counter()
gt = get_groundtruth(problems, get_human_eval_plus_hash(), [])
t_gt = time.perf_counter() - t
t = time.perf_counter()
with ProcessPoolExecutor(max_workers=int(sys.argv[1])) as ex:
    futs = {tid: ex.submit(check_correctness, "humaneval", 0, p,
                           p["prompt"] + p["canonical_solution"],
                           gt[tid], False, False, None, 1.0, 4.0)
            for tid, p in problems.items()}
    res = {tid: f.result() for tid, f in futs.items()}
t_run = time.perf_counter() - t
verd = {tid: r["base"][0] == PASS and r["plus"][0] == PASS for tid, r in res.items()}
print(json.dumps({"gt_s": t_gt, "run_s": t_run, "verdicts": verd}))
"""


_FLOOR = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.set_int_max_str_digits(0)
from recode_lib.sandbox.codec import decode
wall = time.perf_counter
cpu = time.process_time
total = total_cpu = 0.0
for line in sys.stdin:
    r = json.loads(line)
    g = {"__name__": "solution"}
    t, c = wall(), cpu()
    exec(r["code"], g)
    if r["tests"]["kind"] == "script":  # the SCRIPT_ONLY tasks: the script is the work
        try:
            exec(r["tests"]["script"], dict(g, __name__="__main__"))
        except Exception:
            pass
        total, total_cpu = total + wall() - t, total_cpu + cpu() - c
        continue
    fn = g[r["tests"]["fn_name"]]
    total, total_cpu = total + wall() - t, total_cpu + cpu() - c
    for case in r["tests"]["cases"]:
        args = decode(case["args"])
        t, c = wall(), cpu()
        try:
            fn(*args)
        except Exception:
            pass
        total, total_cpu = total + wall() - t, total_cpu + cpu() - c
print(json.dumps({"s": total, "cpu": total_cpu}))
"""

_BEFORE = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from recode_lib.sandbox import SandboxConfig, execute_many
recs = [json.loads(line) for line in sys.stdin]
cfg = SandboxConfig(workers=int(sys.argv[2]))
execute_many(recs[:int(sys.argv[2])], workers=int(sys.argv[2]), config=cfg)
t = time.perf_counter()
res = execute_many(recs, workers=int(sys.argv[2]), config=cfg)
passed = sum(r["status"] == "passed" for r in res)
print(json.dumps({"s": time.perf_counter() - t, "passed": passed}))
"""


def floor_run(recs: list[dict]) -> dict:
    """Every input run serially in one plain process (script records, the three SCRIPT_ONLY
    tasks, run their script: their work counts too): {"s": wall seconds of the calls,
    "cpu": their CPU seconds}."""
    feed = "".join(json.dumps(r) + "\n" for r in recs)
    proc = subprocess.run(
        [sys.executable, "-c", _FLOOR, str(ROOT)],
        input=feed,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def floor_s(recs: list[dict], workers: int) -> float:
    """The physical floor: floor_run's wall seconds divided by the worker count."""
    return floor_run(recs)["s"] / workers


def before_s(recs: list[dict], workers: int, root: str) -> dict:
    feed = "".join(json.dumps(r) + "\n" for r in recs)
    proc = subprocess.run(
        [sys.executable, "-c", _BEFORE, root, str(workers)],
        input=feed,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_throughput(
    workers: int,
    evalplus_python: str | None,
    limit: int | None,
    before_root: str | None,
    rounds: int = 2,
) -> None:
    from recode_lib.sandbox import SandboxConfig, execute_many

    recs = plus_records("humanevalplus", limit=limit)
    n_tests = sum(len(r["tests"].get("cases", [1])) for r in recs)
    cfg = SandboxConfig(workers=workers)
    execute_many(recs[:workers], workers=workers, config=cfg)  # start the workers
    print(f"HumanEval+: {len(recs)} canonical solutions, {n_tests:,} tests, {workers} workers")
    for rnd in range(rounds):
        print(f"round {rnd + 1} ({load_avg()})")
        # the before tree runs first in even rounds, second in odd ones (load drifts)
        b = before_s(recs, workers, before_root) if before_root and rnd % 2 else None
        cpu0 = tree_cpu()
        t = time.perf_counter()
        res = execute_many(recs, workers=workers, config=cfg)
        ours = time.perf_counter() - t
        cpu = cpu_since(cpu0)
        ok = {r["id"]: r["status"] == "passed" for r in res}
        fl = floor_run(recs)
        floor = fl["s"] / workers
        print(
            f"  recode sandbox (this tree): {ours:.2f} s, {sum(ok.values())}/{len(ok)} passed "
            f"({n_tests / ours:,.0f} tests/s)"
        )
        print(
            f"  physical floor (serial plain process / {workers}): {floor:.2f} s "
            f"-> sandbox/floor = {ours / floor:.2f}x"
        )
        print(
            f"  CPU seconds: {split_text(cpu)}; the floor's calls {fl['cpu']:.2f} "
            f"-> {sum(cpu.values()) / fl['cpu']:.2f}x the floor's CPU"
        )
        if LEAST:
            least = sum(
                len(recs) * LEAST["record"][k] + n_tests * LEAST["test"][k] for k in LEAST["test"]
            )
            print(
                f"  design bound: the floor's CPU + {len(recs)} records and {n_tests:,} tests at "
                f"their least cost ({least:.2f} CPU-s) = {(fl['cpu'] + least) / fl['cpu']:.2f}x "
                "the floor's CPU: the least ratio when judge and workers share the CPUs"
            )
        if before_root:
            b = b or before_s(recs, workers, before_root)
            print(
                f"  before ({before_root}): {b['s']:.2f} s, {b['passed']}/{len(recs)} passed "
                f"-> after/before = {ours / b['s']:.2f}x"
            )
        bad = [r["id"] + ":" + r["status"] for r in res if r["status"] != "passed"]
        if bad:
            print("  not passed:", ", ".join(bad))
    if not evalplus_python:
        return
    env = dict(os.environ, HUMANEVAL_OVERRIDE_PATH=str(data_dir() / FILES["humanevalplus"]))
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            [evalplus_python, "-c", _EVALPLUS_RUN, str(workers)],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
        )
    if proc.returncode != 0:
        print("EvalPlus run failed:\n" + proc.stderr[-3000:])
        return
    ev = json.loads(proc.stdout.strip().splitlines()[-1])
    theirs = {"humanevalplus/" + k.split("/")[-1]: v for k, v in ev["verdicts"].items()}
    theirs = {k: v for k, v in theirs.items() if k in ok}
    diff = sorted(k for k in ok if ok[k] != theirs.get(k))
    print(
        f"EvalPlus 0.3.1 (in-process check_correctness, ground truth {ev['gt_s']:.1f} s "
        f"not counted): {ev['run_s']:.2f} s, {sum(theirs.values())}/{len(theirs)} passed"
    )
    print(
        f"throughput ratio recode/EvalPlus: {ev['run_s'] / ours:.2f}x; verdict differences: "
        f"{len(diff)} {diff}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--evalplus-python", default="/tmp/evalplus-venv/bin/python")
    ap.add_argument("--skip-evalplus", action="store_true")
    ap.add_argument("--limit", type=int, default=None, help="first N problems only")
    ap.add_argument(
        "--before-root",
        default=None,
        help="a checkout whose sandbox to time on the same records (before/after)",
    )
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    if data_dir() is None:
        print("no data dir (RECODE_DATA_DIR / ../shared/data): only the overhead benchmark runs")
    bench_overhead()
    if args.before_root:
        overhead_before_after(args.before_root)
    if data_dir() is not None:
        ep = (
            None
            if args.skip_evalplus or not os.path.exists(args.evalplus_python)
            else args.evalplus_python
        )
        bench_throughput(args.workers, ep, args.limit, args.before_root, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
