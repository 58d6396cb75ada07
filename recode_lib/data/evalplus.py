"""HumanEval+ / MBPP+ tests: expected outputs from the reference, EvalPlus's input types and
oracles.

    outs = expected_outputs(jobs, cache_name="HumanEvalPlus-ab12cd34ef56")  # {id: (outs, times)}
    tests, time_limit = build_tests(dataset, task_id, entry_point, inputs, outs, times, atol)
    records = sandbox_records(load_humanevalplus(limit=10))   # `recode sandbox` input records

Expected outputs are computed once by running the canonical solution in a subprocess, and
cached; the tests are `call` tests, so only inputs reach the sandbox (EvalPlus's special oracles
become a judge-side `checker`). Time limits: EvalPlus 0.3.1's per-test rule by default.
Not reproduced: EvalPlus's cap on a task's whole run (recode bounds each test, not their sum).
More: docs/modules/data.md (recode_lib.data.evalplus).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

from recode_lib.core.jsonl import JsonlStore
from recode_lib.core.locks import OutputLock
from recode_lib.core.paths import PROJECT_ROOT, cache_dir
from recode_lib.data._io import DataError, json_len
from recode_lib.data.evalplus_script import MBPP_NOT_NONE, MBPP_SET_EQ
from recode_lib.data.evalplus_script import script as _script
from recode_lib.data.pyvalues import decode, encode, json_exact
from recode_lib.data.schema import Problem
from recode_lib.sandbox.record_builder import sandbox_record

# ---- MBPP+ input types (EvalPlus mbpp_deserialize_inputs) -----------------------------------
_T = tuple


def _tuple_all(x):
    return tuple(_tuple_all(i) for i in x) if isinstance(x, list) else x


_MBPP_CONVERT = [
    (
        {
            2,
            116,
            132,
            143,
            222,
            261,
            273,
            394,
            399,
            421,
            424,
            429,
            470,
            560,
            579,
            596,
            616,
            630,
            726,
            740,
            744,
            809,
        },
        lambda inp: [_T(a) for a in inp],
    ),
    (
        {63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780},
        lambda inp: [[_T(a) for a in ll] for ll in inp],
    ),
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
def expected_outputs(
    jobs: list[dict], cache_name: str, *, workers: int = 2, progress: bool = True
) -> dict[str, tuple[list, list]]:
    """{id: (decoded outputs or None when too large, reference times)} for jobs
    {"id","code","entry_point","inputs", "output_not_none"?}; computes the missing ones in
    `workers` subprocesses and caches them. A reference that fails raises DataError naming the
    task and input. The digests of outputs too large to store: output_digests(cache_name)."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # outputs include integers of 10^4+ digits
    path = cache_dir() / "evalplus" / f"{cache_name}.jsonl"
    store = _filled(
        path, lambda s: [j for j in jobs if j["id"] not in s], workers, progress, cache_name
    )
    out = {}
    by_id = {r["id"]: r for r in store.records()}
    # caches written before digests were recorded: the digests go to a store of their own
    dstore = _filled(
        cache_dir() / "evalplus" / f"{cache_name}.digests.jsonl",
        lambda ds: [
            j
            for j in jobs
            if "error" not in by_id[j["id"]]
            and "digests" not in by_id[j["id"]]
            and by_id[j["id"]].get("outputs") is None
            and j["id"] not in ds
        ],
        workers,
        progress,
        cache_name + " (digests)",
    )
    digests = {r["id"]: r["digests"] for r in dstore.records() if r.get("digests")}
    digests.update({k: r["digests"] for k, r in by_id.items() if r.get("digests")})
    _DIGESTS[cache_name] = digests
    for j in jobs:
        rec = by_id[j["id"]]
        if "error" in rec:
            raise DataError(
                f"{cache_name}: reference solution of {j['id']} fails: "
                f"{rec['error']} (cached in {store.path}; delete it to retry)"
            )
        outs = rec["outputs"]
        out[j["id"]] = (None if outs is None else decode(outs), rec["times"])
    return out


_DIGESTS: dict[str, dict[str, list]] = {}


def output_digests(cache_name: str) -> dict[str, list]:
    """{id: [sha256 of each output]} for the tasks of the last expected_outputs(cache_name)
    whose outputs were too large to store."""
    return _DIGESTS.get(cache_name, {})


def _filled(path: Path, missing, workers: int, progress: bool, name: str) -> JsonlStore:
    """The cache store at `path` with the jobs `missing(store)` computed into it. The cache is
    shared by every process on the machine (pytest's workers, two notebooks, an evaluation's
    Ray tasks): the one that finds jobs missing fills them under the file's lock while the
    others wait, then re-read it (two writers at once appended the same ids twice)."""
    store = JsonlStore(path)
    if not missing(store):
        return store
    with OutputLock(path, wait=True):
        store = JsonlStore(path)  # what a writer we waited for added
        todo = missing(store)
        if todo:
            _run_workers(todo, store, workers, progress, name)
    return store


def _run_workers(
    todo: list[dict], store: JsonlStore, workers: int, progress: bool, name: str
) -> None:
    from tqdm.auto import tqdm

    env = dict(
        os.environ, PYTHONPATH=str(PROJECT_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    chunks = [todo[i :: max(1, workers)] for i in range(max(1, workers))]
    procs = []
    for chunk in chunks:
        if not chunk:
            continue
        p = subprocess.Popen(
            [sys.executable, "-m", "recode_lib.data._reference_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=str(PROJECT_ROOT),
        )
        procs.append((p, chunk))
    bar = tqdm(total=len(todo), desc=f"reference outputs {name}", disable=not progress)
    import threading

    def feed(p, chunk):
        for j in chunk:
            p.stdin.write(
                json.dumps(
                    {**j, "inputs": encode(j["inputs"]), "max_output_chars": MAX_OUTPUT_CHARS}
                )
                + "\n"
            )
        p.stdin.close()

    lock = threading.Lock()

    def drain(p):
        for line in p.stdout:
            rec = json.loads(line)
            with lock:
                store.append(rec)
                bar.update(1)

    threads = [
        threading.Thread(target=f, args=a)
        for p, c in procs
        for f, a in ((feed, (p, c)), (drain, (p,)))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bar.close()
    for p, _chunk in procs:
        if p.wait() != 0:
            raise DataError(f"{name}: reference worker exited with status {p.returncode}")


# ---- tests ---------------------------------------------------------------------------------
TIME_RULES = ("evalplus", "recode")  # see the module doc
DEFAULT_TIME_RULE = "evalplus"
EVALPLUS_MIN_TIME_LIMIT_S = 1.0  # evalplus/config.py DEFAULT_MIN_TIME_LIMIT (0.3.1)
EVALPLUS_TIME_FACTOR = 4.0  # evalplus/config.py DEFAULT_GT_TIME_LIMIT_FACTOR (0.3.1)


def _ceil_ms(x: float) -> float:
    return math.ceil(round(x * 1000.0, 6)) / 1000.0


def evalplus_time_limits(
    times: list, min_s: float = EVALPLUS_MIN_TIME_LIMIT_S, factor: float = EVALPLUS_TIME_FACTOR
) -> list[float]:
    """EvalPlus 0.3.1's per-test limits, `[max(min_time_limit, gt_time_limit_factor * t) for t
    in ref_time]`, rounded up to the millisecond."""
    return [_ceil_ms(max(min_s, factor * float(t))) for t in times]


def build_tests(
    dataset: str,
    task_id: str,
    entry_point: str,
    inputs: list,
    outputs: list | None,
    times: list,
    atol: float,
    reference: str | None = None,
    digests: list | None = None,
    time_rule: str = DEFAULT_TIME_RULE,
) -> tuple[dict, float]:
    """(tests spec, the record's time limit) for one HumanEval+/MBPP+ task; see module doc.
    outputs=None (too large to store) needs `reference`: the judge's checker recomputes them.
    time_rule "evalplus" gives each case its own time_limit_s (EvalPlus's rule; the record's
    limit is the largest), "recode" one limit for all; tests["time_rule"] says which."""
    if time_rule not in TIME_RULES:
        raise ValueError(f"{task_id}: time_rule must be one of {TIME_RULES}, got {time_rule!r}")
    if len(times) != len(inputs):
        raise DataError(f"{task_id}: {len(inputs)} inputs but {len(times)} reference times")
    if outputs is None:
        if reference is None:
            raise DataError(f"{task_id}: no stored outputs and no reference to recompute them")
        if (dataset, entry_point) in SCRIPT_ONLY:
            # one script runs every input twice (reference + submission): limit on the total
            time_limit = round(max(1.0, 4.0 * 2 * sum(times)), 3)
            return {
                "kind": "script",
                "script": _script(dataset, entry_point, inputs, None, atol, reference),
                "separate": False,
                "time_rule": "recode",
            }, time_limit
        # the judge recomputes each expected value with the trusted reference (in its
        # `checker`): neither the reference nor the expected values ever reach the sandbox
        ok = digests is not None and len(digests) == len(inputs)
        outputs = [{"sha256": d} for d in digests] if ok else [None] * len(inputs)
        checker = reference_checker(dataset, entry_point, reference)
    else:
        if len(inputs) != len(outputs):
            raise DataError(f"{task_id}: {len(inputs)} inputs but {len(outputs)} outputs")
        # MBPP+'s not-None tasks return re.Match objects: they reach the checker as opaque
        # values, which are "not None" (the expected values are booleans)
        checker = oracle_checker(dataset, entry_point)
    recompute = bool(checker and "_REF_NS" in checker)
    time_limit = round(max(1.0, 4.0 * max(times, default=0.0)), 3)
    if recompute:
        # huge outputs: encoding and moving them, and the judge's recomputation, take time too
        time_limit = round(max(1.0, 8.0 * max(times, default=0.0)) + 1.0, 3)
    limits = None
    if time_rule == "evalplus":
        limits = evalplus_time_limits(times)
        if recompute:
            limits = [_ceil_ms(2.0 * x + 1.0) for x in limits]
        time_limit = max(limits, default=EVALPLUS_MIN_TIME_LIMIT_S)
    cases = []
    for j, (a, o) in enumerate(zip(inputs, outputs, strict=False)):
        args = a if json_exact(a) else encode(a)
        cases.append(
            {
                "args": args,
                "expected": o if json_exact(o) else encode(o),
                "input_len": json_len(args),
            }
        )
        if limits is not None:
            cases[-1]["time_limit_s"] = limits[j]
    spec = {
        "kind": "call",
        "fn_name": entry_point,
        "cases": cases,
        "atol": float(atol),
        "time_rule": time_rule,
    }
    if checker:
        spec["checker"] = checker
    return spec, time_limit


# Outputs with more elements than the judge accepts from the sandbox (protocol.MAX_ELEMENTS):
# these keep an in-process script test embedding the reference (its residual risk: the
# submission's process holds the reference and the inputs).
SCRIPT_ONLY = {("humaneval", "make_a_pile"), ("humaneval", "tri"), ("mbpp", "combinations_colors")}

_CHECKERS = {
    # EvalPlus's oracle, |poly(x)| <= atol, with poly summed left to right: sum() of floats as
    # it was before Python 3.12 (the version the data and the reference were made with). From
    # 3.12 on sum() is compensated, and summed that way three inputs (219, 499, 794) have no
    # double at their one real root within 1e-4 of zero: no answer at all could pass
    ("humaneval", "find_zero"): """
def check(args, output, expected, atol):
    total = 0
    for i, c in enumerate(args[0]):
        total = total + c * math.pow(output, i)
    return abs(total) <= atol
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
from recode_lib.sandbox.codec import hash_safe as _hash_safe
def check(args, output, expected, atol):
    if set(_hash_safe(output)) == set(expected):  # no hash flood in the judge (codec.hash_safe)
        return True
    return default_equal(output, expected, atol)  # EvalPlus's tolerance fallback (ordered)
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


def reference_checker(dataset: str, entry_point: str, reference: str) -> str:
    """A checker that recomputes the expected value with the reference (run by the judge, on
    a deep copy of the arguments) and then applies the task's oracle or EvalPlus's comparison;
    for tasks whose outputs are too large to store."""
    oracle = oracle_checker(dataset, entry_point)
    not_none = dataset == "mbpp" and entry_point in MBPP_NOT_NONE
    head = (
        "import copy as _copy\nfrom recode_lib.sandbox.codec import digest as _digest\n"
        f"_REF_NS = {{'__name__': '__reference__'}}\nexec({reference!r}, _REF_NS)\n"
    )
    if oracle:
        head += oracle.replace("def check(", "def _oracle(") + "\n"
    call = "_oracle(args, output, exp, atol)" if oracle else "default_equal(output, exp, atol)"
    return head + (
        "def check(args, output, expected, atol):\n"
        "    if isinstance(expected, dict) and expected.get('sha256') == _digest(output):\n"
        "        return True   # the reference's very output (its digest, computed once)\n"
        f"    exp = _REF_NS[{entry_point!r}](*_copy.deepcopy(args))\n"
        + ("    exp = exp is not None\n" if not_none else "")
        + f"    return {call}\n"
    )


def problems_with_tests(
    family: str, items, jobs, cache_key: str, workers, time_rule: str = DEFAULT_TIME_RULE
) -> list:
    """Problem records (dict, inputs, where) + reference jobs -> Problems with `call` tests whose
    expected outputs come from the (cached) reference runs; shared by HumanEval+ and MBPP+.
    time_rule: "evalplus" (per-test limits, the default) or "recode" (module doc)."""
    expected = expected_outputs(jobs, cache_key, workers=workers)
    out = []
    for (d, inputs, where), job in zip(items, jobs, strict=True):
        outs, times = expected[job["id"]]
        d["tests"], d["time_limit_s"] = build_tests(
            family,
            job["id"],
            d["entry_point"],
            inputs,
            outs,
            times,
            d["metadata"]["atol"],
            reference=job["code"],
            digests=output_digests(cache_key).get(job["id"]),
            time_rule=time_rule,
        )
        if "_REF_NS" in (d["tests"].get("checker") or d["tests"].get("script") or ""):
            # huge outputs: more memory
            d["memory_mb"] = 4096

        out.append(Problem.from_dict(d, where))
    return out


def sandbox_records(problems, code_of=None) -> list[dict]:
    """`recode sandbox` input records for Problems built here (load_humanevalplus /
    load_mbppplus): the submission is `code_of(problem)`, by default the reference solution.
    Built by the sandbox's one record builder (recode_lib.sandbox.sandbox_record); the
    real-data tests and benchmarks/bench_sandbox.py use it."""
    return [
        sandbox_record(p.id, code_of(p) if code_of else p.reference_solution, p) for p in problems
    ]
