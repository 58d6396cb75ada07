"""HumanEval+ / MBPP+ tests: expected outputs from the reference, EvalPlus's input types and oracles.

The EvalPlus release files hold inputs (base_input, plus_input) but no expected outputs; EvalPlus
computes them by running the canonical solution. So does this module, once, in a subprocess
(recode_lib.data._reference_worker), caching them in cache_dir()/evalplus/<file>-<sha>.jsonl
(append-only, keyed by task id, so an interrupted run resumes). Outputs larger than
MAX_OUTPUT_CHARS of JSON per task (HumanEval/15, /130: over 100 MB) are not stored; those
tasks get a differential `script` test that runs the embedded reference on each input.

    outs = expected_outputs(jobs, cache_name="HumanEvalPlus-ab12cd34ef56")   # {task_id: (outs, times)}
    tests, time_limit = build_tests(dataset, task_id, entry_point, inputs, outs, times, atol)
    records = sandbox_records(load_humanevalplus(limit=10))   # -> `recode sandbox` input records

build_tests returns a `call` test (fn_name, cases with args/expected/input_len, the task's atol;
the sandbox applies EvalPlus's comparison). Values JSON cannot hold (tuples, sets, complex,
inf/nan) use recode_lib.data.pyvalues tags, which the sandbox codec decodes. EvalPlus's special
oracles (HumanEval/32 find_zero; MBPP+ 164/295/558/581 and set-equality tasks) become a
sandbox `checker`. Script tests (self-contained: Python literals, EvalPlus's comparison) are used
where a call test cannot work: MBPP+'s not-None tasks (their outputs are re.Match objects, which
do not cross the sandbox boundary as data) and tasks whose outputs are too large to store (the
script embeds the reference and recomputes them; the loaders give those 4 GB).
MBPP+ inputs are converted to tuples/sets/complex as EvalPlus 0.3.1's mbpp_deserialize_inputs
does (a table below, written from its documented behaviour). The `contract` field is not used
(it checks input validity for the reference, not the submission). Time limit per test:
max(1 s, 4 x the slowest reference call), EvalPlus's factor (for a script test, which runs all
inputs at once: 4 x twice the reference's total).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from recode_lib.data._io import DataError, json_len
from recode_lib.data.evalplus_script import MBPP_NOT_NONE, MBPP_SET_EQ
from recode_lib.data.evalplus_script import script as _script
from recode_lib.data.pyvalues import decode, encode, json_exact
from recode_lib.jsonl import JsonlStore
from recode_lib.paths import PROJECT_ROOT, cache_dir

# ---- MBPP+ input types (EvalPlus mbpp_deserialize_inputs) -----------------------------------
_T = tuple


def _tuple_all(x):
    return tuple(_tuple_all(i) for i in x) if isinstance(x, list) else x


_MBPP_CONVERT = [
    ({2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630,
      726, 740, 744, 809}, lambda inp: [_T(a) for a in inp]),
    ({63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780},
     lambda inp: [[_T(a) for a in ll] for ll in inp]),
    ({75, 413, 444, 753}, lambda inp: [[_T(a) for a in inp[0]]] + [inp[1]]),
    ({106, 750}, lambda inp: [inp[0]] + [_T(inp[1])]),
    ({115}, lambda inp: [[set(i) if isinstance(i, list) and len(i) else {} for i in inp[0]]]),
    ({124}, lambda inp: (float(inp[0]), complex(inp[1]))),
    ({250, 405, 446, 617, 720, 763, 808}, lambda inp: [_T(inp[0])] + [inp[1]]),
    ({259, 401, 445}, lambda inp: [_T(_T(a) for a in ll) for ll in inp]),
    ({278}, lambda inp: [_T(_T(i) if isinstance(i, list) else i for i in inp[0])]),
    ({307}, lambda inp: [_T(inp[0])] + [inp[1], inp[2]]),
    ({722}, lambda inp: [{k: _T(v) for k, v in inp[0].items()}] + inp[1:]),
    ({252}, lambda inp: [complex(inp[0])]),
    ({580, 615, 791}, _tuple_all),
]


def mbpp_inputs(task_id: str, inputs: list) -> list:
    """MBPP+ inputs with EvalPlus's Python types restored (tuples, sets, complex)."""
    num = int(task_id.split("/")[-1])
    for ids, fn in _MBPP_CONVERT:
        if num in ids:
            return [list(fn(inp)) for inp in inputs]
    return inputs


MAX_OUTPUT_CHARS = 2_000_000


def file_digest(path: str | os.PathLike) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


# ---- expected outputs ----------------------------------------------------------------------
def expected_outputs(jobs: list[dict], cache_name: str, *, workers: int = 2,
                     progress: bool = True) -> dict[str, tuple[list, list]]:
    """{id: (decoded outputs or None when too large, reference times)} for jobs {"id","code","entry_point","inputs",
    "output_not_none"?}; computes the missing ones in `workers` subprocesses and caches them.
    A reference that fails raises DataError naming the task and input."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # outputs include integers of 10^4+ digits
    store = JsonlStore(cache_dir() / "evalplus" / f"{cache_name}.jsonl")
    todo = [j for j in jobs if j["id"] not in store]
    if todo:
        _run_workers(todo, store, workers, progress, cache_name)
    out = {}
    by_id = {r["id"]: r for r in store.records()}
    for j in jobs:
        rec = by_id[j["id"]]
        if "error" in rec:
            raise DataError(f"{cache_name}: reference solution of {j['id']} fails: "
                            f"{rec['error']} (cached in {store.path}; delete it to retry)")
        outs = rec["outputs"]
        out[j["id"]] = (None if outs is None else decode(outs), rec["times"])
    return out


def _run_workers(todo: list[dict], store: JsonlStore, workers: int, progress: bool,
                 name: str) -> None:
    from tqdm.auto import tqdm
    env = dict(os.environ, PYTHONPATH=str(PROJECT_ROOT) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    chunks = [todo[i::max(1, workers)] for i in range(max(1, workers))]
    procs = []
    for chunk in chunks:
        if not chunk:
            continue
        p = subprocess.Popen([sys.executable, "-m", "recode_lib.data._reference_worker"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                             cwd=str(PROJECT_ROOT))
        procs.append((p, chunk))
    bar = tqdm(total=len(todo), desc=f"reference outputs {name}", disable=not progress)
    import threading

    def feed(p, chunk):
        for j in chunk:
            p.stdin.write(json.dumps({**j, "inputs": encode(j["inputs"]),
                                      "max_output_chars": MAX_OUTPUT_CHARS}) + "\n")
        p.stdin.close()

    lock = threading.Lock()

    def drain(p):
        for line in p.stdout:
            rec = json.loads(line)
            with lock:
                store.append(rec)
                bar.update(1)

    threads = [threading.Thread(target=f, args=a) for p, c in procs
               for f, a in ((feed, (p, c)), (drain, (p,)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bar.close()
    for p, chunk in procs:
        if p.wait() != 0:
            raise DataError(f"{name}: reference worker exited with status {p.returncode}")


# ---- tests ---------------------------------------------------------------------------------
def build_tests(dataset: str, task_id: str, entry_point: str, inputs: list,
                outputs: list | None, times: list, atol: float,
                reference: str | None = None) -> tuple[dict, float]:
    """(tests spec, per-test time limit) for one HumanEval+/MBPP+ task; see module doc.
    outputs=None (too large to store) needs `reference`: the script test recomputes them."""
    if outputs is None:
        if reference is None:
            raise DataError(f"{task_id}: no stored outputs and no reference to recompute them")
        # one script runs every input twice (reference + submission): limit on the total
        time_limit = round(max(1.0, 4.0 * 2 * sum(times)), 3)
        # inline (separate=False): shipping 100 MB outputs between processes costs more than
        # the tests; these few tasks keep the in-process harness and its residual risk
        return {"kind": "script", "script": _script(dataset, entry_point, inputs, None, atol,
                                                    reference), "separate": False}, time_limit
    if len(inputs) != len(outputs):
        raise DataError(f"{task_id}: {len(inputs)} inputs but {len(outputs)} outputs")
    if dataset == "mbpp" and entry_point in MBPP_NOT_NONE:
        # the outputs are re.Match objects, which cannot leave the sandbox as data
        time_limit = round(max(1.0, 4.0 * sum(times)), 3)
        return {"kind": "script", "script": _script(dataset, entry_point, inputs, outputs,
                                                    atol)}, time_limit
    time_limit = round(max(1.0, 4.0 * max(times, default=0.0)), 3)
    cases = []
    for a, o in zip(inputs, outputs):
        args = a if json_exact(a) else encode(a)
        cases.append({"args": args, "expected": o if json_exact(o) else encode(o),
                      "input_len": json_len(args)})
    spec = {"kind": "call", "fn_name": entry_point, "cases": cases, "atol": float(atol)}
    checker = oracle_checker(dataset, entry_point)
    if checker:
        spec["checker"] = checker
    return spec, time_limit


_CHECKERS = {
    ("humaneval", "find_zero"): """
def check(args, output, expected, atol):
    xs = args[0]
    return abs(sum(c * math.pow(output, i) for i, c in enumerate(xs))) <= atol
""",
    ("mbpp", "are_equivalent"): """
def check(args, output, expected, atol):
    return True  # EvalPlus 0.3.1 accepts any output for Mbpp/164
""",
    ("mbpp", "sum_div"): """
def check(args, output, expected, atol):
    return output == 0 or default_equal(output, expected, atol)
""",
    ("mbpp", "surface_Area"): """
def check(args, output, expected, atol):
    b, h = args
    want = round(b ** 2 + 4 * (b * math.sqrt((b / 2) ** 2 + h ** 2)) / 2)
    return default_equal(output, expected, atol) or abs(output - want) <= atol
""",
    ("mbpp", "digit_distance_nums"): """
def check(args, output, expected, atol):
    x, y = str(args[0]), str(args[1])
    m = max(len(x), len(y))
    want = sum(abs(int(p) - int(q)) for p, q in zip(x.zfill(m), y.zfill(m)))
    return default_equal(output, expected, atol) or output == want
""",
}
_SET_EQ = """
def check(args, output, expected, atol):
    return set(output) == set(expected)
"""
_NOT_NONE = """
def check(args, output, expected, atol):
    if isinstance(output, bool):
        return output == expected
    return expected == (output is not None)
"""


def oracle_checker(dataset: str, entry_point: str) -> str | None:
    """The sandbox `checker` source for EvalPlus's special oracles, or None."""
    if (dataset, entry_point) in _CHECKERS:
        return _CHECKERS[(dataset, entry_point)].lstrip()
    if dataset == "mbpp" and entry_point in MBPP_SET_EQ:
        return _SET_EQ.lstrip()
    if dataset == "mbpp" and entry_point in MBPP_NOT_NONE:
        return _NOT_NONE.lstrip()
    return None


def problems_with_tests(family: str, items, jobs, cache_key: str, workers) -> list:
    """Problem records (dict, inputs, where) + reference jobs -> Problems with `call` tests whose
    expected outputs come from the (cached) reference runs; shared by HumanEval+ and MBPP+."""
    from recode_lib.data.schema import Problem

    expected = expected_outputs(jobs, cache_key, workers=workers)
    out = []
    for (d, inputs, where), job in zip(items, jobs):
        outs, times = expected[job["id"]]
        d["tests"], d["time_limit_s"] = build_tests(
            family, job["id"], d["entry_point"], inputs, outs, times, d["metadata"]["atol"],
            reference=job["code"])
        if "_REF_NS" in d["tests"].get("script", ""):  # recomputes huge outputs: more memory
            d["memory_mb"] = 4096
        out.append(Problem.from_dict(d, where))
    return out


def sandbox_records(problems, code_of=None) -> list[dict]:
    """`recode sandbox` input records for Problems built here (load_humanevalplus /
    load_mbppplus): the submission is `code_of(problem)`, by default the reference solution.
    The one EvalPlus record builder: the real-data tests and benchmarks/bench_sandbox.py use it."""
    return [{"id": p.id, "code": code_of(p) if code_of else p.reference_solution,
             "tests": p.tests, "time_limit_s": p.time_limit_s, "memory_mb": p.memory_mb}
            for p in problems]
