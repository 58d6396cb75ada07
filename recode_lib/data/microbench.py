"""The project's own efficiency micro-benchmark: 20 original stdin/stdout problems.

    load_microbench(limit=None, names=None, seed=0, lengths=TARGET_LENGTHS) -> list[Problem]
    python -m recode_lib.data.microbench calibrate     # re-measure time limits -> limits.json
    python -m recode_lib.data.microbench show          # the recorded calibration

Each problem is a file in data/microbench/problems/<name>.py with TITLE, STATEMENT, EFFICIENT,
NAIVE_COMPLEXITY, EXAMPLES (small hand-written inputs), REFERENCE (efficient program), NAIVE
(correct but asymptotically slow), WRONG (fast but incorrect) and generate(rng, length) -> input
text of about `length` characters. Tests = the examples + one seeded input per target length
(10^1 .. 10^5 characters), so the nested strictness rewards R_k (tests with input_len < 10^k) see
every decade. Expected outputs come from running REFERENCE in-process (trusted code), cached in
cache_dir()/microbench. Time limits per test come from data/microbench/limits.json, written by
`calibrate`: max(1 s, 8 x the reference's median wall time on the largest input, process start
included); calibrate also records where NAIVE starts to exceed the limit. Nothing is committed
except the problem files and limits.json (tests are regenerated from the seeds).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import random
import statistics
import subprocess
import sys
import time

from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.paths import PROJECT_ROOT, cache_dir
from recode_lib.data._io import DataError, take
from recode_lib.data.schema import Problem

ROOT = PROJECT_ROOT / "data" / "microbench"
PROBLEMS_DIR = ROOT / "problems"
LIMITS_FILE = ROOT / "limits.json"
TARGET_LENGTHS = (12, 40, 120, 400, 1200, 4000, 12000, 40000, 120000)
FIELDS = (
    "TITLE",
    "STATEMENT",
    "EFFICIENT",
    "NAIVE_COMPLEXITY",
    "EXAMPLES",
    "REFERENCE",
    "NAIVE",
    "WRONG",
    "generate",
)


def problem_names() -> list[str]:
    return sorted(p.stem for p in PROBLEMS_DIR.glob("*.py") if not p.stem.startswith("_"))


def load_spec(name: str):
    path = PROBLEMS_DIR / f"{name}.py"
    if not path.is_file():
        raise DataError(
            f"microbench: no problem {name!r} (no file {path}); available: {problem_names()}"
        )
    spec = importlib.util.spec_from_file_location(f"recode_microbench_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for f in FIELDS:
        if not hasattr(mod, f):
            raise DataError(f"{path}: missing field {f!r}")
    mod.PATH, mod.NAME = path, name
    return mod


def run_inprocess(code: str, stdin: str) -> str:
    """stdout of trusted `code` run as __main__ on `stdin` (for the reference only)."""
    old_in, old_out = sys.stdin, sys.stdout
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    sys.stdout = buf = io.StringIO()
    try:
        exec(compile(code, "<reference>", "exec"), {"__name__": "__main__"})
    finally:
        sys.stdin, sys.stdout = old_in, old_out
    return buf.getvalue()


def make_inputs(spec, seed: int = 0, lengths=TARGET_LENGTHS) -> list[str]:
    inputs = list(spec.EXAMPLES)
    for i, length in enumerate(lengths):

        def gen(target, i=i, length=length):
            return spec.generate(random.Random(f"{seed}:{spec.NAME}:{i}:{length}"), target)

        text = gen(length)
        if not 0.9 * length <= len(text) <= 1.1 * length:  # rescale the size once
            text = gen(max(1, round(length * length / max(1, len(text)))))
        inputs.append(text)
    return inputs


def make_cases(spec, seed: int = 0, lengths=TARGET_LENGTHS) -> list[dict]:
    """[{input, output, input_len}] with outputs from the reference, cached by content hash."""
    key = hashlib.sha256(
        json.dumps([spec.PATH.read_text(), seed, list(lengths)]).encode()
    ).hexdigest()[:16]
    path = cache_dir() / "microbench" / f"{spec.NAME}-{key}.json"
    if path.is_file():
        return read_json(path)
    cases = []
    for j, inp in enumerate(make_inputs(spec, seed, lengths)):
        try:
            out = run_inprocess(spec.REFERENCE, inp)
        except Exception as exc:
            raise DataError(
                f"{spec.PATH}: REFERENCE fails on test {j}: {type(exc).__name__}: {exc}"
            ) from None
        cases.append({"input": inp, "output": out, "input_len": len(inp)})
    write_json_atomic(path, cases)
    return cases


def read_limits() -> dict:
    if not LIMITS_FILE.is_file():
        raise DataError(
            f"{LIMITS_FILE} is missing: run `python -m recode_lib.data.microbench calibrate`"
        )
    return read_json(LIMITS_FILE).get("problems", {})


def load_microbench(
    data_dir=None,
    limit: int | None = None,
    names: list[str] | None = None,
    seed: int = 0,
    lengths=TARGET_LENGTHS,
) -> list[Problem]:
    """data_dir is accepted for the registry's uniform call and ignored (the files live in the
    project's data/microbench)."""
    limits = read_limits()
    out = []
    for name in take(list(names) if names is not None else problem_names(), limit):
        spec = load_spec(name)
        if name not in limits or "time_limit_s" not in limits[name]:
            raise DataError(
                f"{LIMITS_FILE}: no record for problem {name!r}: run "
                f"`python -m recode_lib.data.microbench calibrate`"
            )
        cal = limits[name]
        out.append(
            Problem.from_dict(
                dict(
                    id=f"microbench/{name}",
                    source="microbench",
                    prompt=f"{spec.TITLE}\n\n{spec.STATEMENT.strip()}",
                    tests={"kind": "stdio", "cases": make_cases(spec, seed, lengths)},
                    time_limit_s=float(cal["time_limit_s"]),
                    memory_mb=512,
                    reference_solution=spec.REFERENCE.strip() + "\n",
                    metadata={
                        "naive": spec.NAIVE.strip() + "\n",
                        "wrong": spec.WRONG.strip() + "\n",
                        "efficient": spec.EFFICIENT,
                        "naive_complexity": spec.NAIVE_COMPLEXITY,
                        "seed": seed,
                        "n_examples": len(spec.EXAMPLES),
                        "calibration": cal,
                    },
                ),
                f"microbench problem {name!r}",
            )
        )
    return out


# ---- calibration ---------------------------------------------------------------------------
def _timed_run(code: str, stdin: str, timeout: float) -> tuple[float, str | None]:
    """Wall time of `python -c code` (None output when it timed out)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            [sys.executable, "-c", code],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None
    return time.perf_counter() - t0, p.stdout if p.returncode == 0 else f"<rc {p.returncode}>"


def calibrate(
    names: list[str] | None = None,
    seed: int = 0,
    repeats: int = 3,
    factor: float = 8.0,
    floor_s: float = 1.0,
) -> dict:
    from tqdm.auto import tqdm

    old = read_json(LIMITS_FILE).get("problems", {}) if LIMITS_FILE.is_file() else {}
    for name in tqdm(names or problem_names(), desc="calibrate microbench"):
        spec = load_spec(name)
        cases = make_cases(spec, seed)
        big = cases[-1]
        t_ref = statistics.median(
            _timed_run(spec.REFERENCE, big["input"], 60)[0] for _ in range(repeats)
        )
        limit = max(floor_s, round(factor * t_ref, 2))
        naive_pass, naive_fail, wrong_fail = 0, None, None
        for c in cases:
            t, out = _timed_run(spec.NAIVE, c["input"], 2 * limit)
            if out is not None and t <= limit and out.split() == c["output"].split():
                naive_pass = max(naive_pass, c["input_len"])
            elif naive_fail is None:
                naive_fail = c["input_len"]
        for c in cases:
            _, out = _timed_run(spec.WRONG, c["input"], 2 * limit)
            if out is None or out.split() != c["output"].split():
                wrong_fail = c["input_len"]
                break
        old[name] = {
            "time_limit_s": limit,
            "reference_s_largest": round(t_ref, 4),
            "largest_input_len": big["input_len"],
            "naive_max_passing_len": naive_pass,
            "naive_first_failing_len": naive_fail,
            "wrong_first_failing_len": wrong_fail,
        }
    doc = {
        "rule": f"time_limit_s = max({floor_s}, {factor} x median wall time of REFERENCE on "
        f"the largest input, {repeats} runs, python start included)",
        "seed": seed,
        "target_lengths": list(TARGET_LENGTHS),
        "python": sys.version.split()[0],
        "problems": dict(sorted(old.items())),
    }
    write_json_atomic(LIMITS_FILE, doc)
    return doc


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "show"
    if cmd == "calibrate":
        doc = calibrate(sys.argv[2:] or None)
    elif cmd == "show":
        doc = read_json(LIMITS_FILE)
    else:
        raise SystemExit("usage: python -m recode_lib.data.microbench [calibrate [NAME...]|show]")
    for name, rec in doc["problems"].items():
        print(f"{name:20s} {json.dumps(rec)}")
