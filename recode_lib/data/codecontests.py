"""CodeContests+ (ByteDance-Seed/Code-Contests-Plus): stdin/stdout problems with 1x..5x test sets.

    load_codecontests_plus(data_dir=None, limit=None, config="1x", time_scale=1.0,
                           min_tests=1) -> list[Problem]

Local layout (the hub repo's): <data dir>/Code-Contests-Plus/ccplus_<config>/*.parquet (also
*.jsonl / *.jsonl.gz with the same columns); otherwise datasets.load_dataset(
"ByteDance-Seed/Code-Contests-Plus", <config>, split="train") (streamed when a limit is given:
the 1x config alone is tens of GB). Configs 1x..5x hold the same problems with progressively
larger generated test suites. Fields used: id, title, description, time_limit (milliseconds),
memory_limit (MB), test_cases [{input, output}], checker (testlib C++ source),
correct_submissions [{code, language}] (the first Python 3 one becomes the reference).
Each test records input_len (characters of stdin) for the nested strictness rewards R_k.

Checkers: a problem whose checker is a testlib program (includes "testlib.h" and defines main)
is judged by it — tests["checker"] = the source, compiled once and run by the sandbox's judge
(recode_lib.sandbox.checker; exact comparison with a counted warning when no C++ compiler is
present) — because many problems accept several answers. Anything else in the field (empty,
a placeholder comment) means exact comparison; the raw field stays in metadata["checker"].

Time limits: the contest's limits are calibrated for C++. One factor for every problem,
PYTHON_TIME_SCALE = 3.0 (the default `time_scale`), turns them into Python limits: a Python
solution of the intended complexity fits (CPython is typically 2-5x slower than C++ on
contest workloads once I/O is buffered), a worse complexity still does not. Pass
time_scale=1.0 for the raw contest limit.
"""

from __future__ import annotations

from pathlib import Path

from recode_lib.data._io import DataError, hf_rows, read_records, require, resolve_data_dir
from recode_lib.data.schema import Problem

HUB_ID = "ByteDance-Seed/Code-Contests-Plus"
CONFIGS = ("1x", "2x", "3x", "4x", "5x")
PY3 = ("py3", "python3", "python", "py")
PYTHON_TIME_SCALE = 3.0  # C++-calibrated contest limits -> Python (module docstring)


def is_testlib_checker(source) -> bool:
    """True for a testlib checker program (includes testlib.h and defines main)."""
    return isinstance(source, str) and "testlib.h" in source and "main" in source


def _local_files(data_dir, config: str) -> list[Path]:
    root = resolve_data_dir(data_dir)
    if root is None:
        return []
    for base in (root / "Code-Contests-Plus", root / "code_contests_plus", root):
        d = base / f"ccplus_{config}"
        if d.is_dir():
            files = sorted(
                p for p in d.iterdir() if p.name.endswith((".parquet", ".jsonl", ".jsonl.gz"))
            )
            if files:
                return files
    return []


def load_codecontests_plus(
    data_dir=None,
    limit: int | None = None,
    config: str = "1x",
    time_scale: float = PYTHON_TIME_SCALE,
    min_tests: int = 1,
    download: bool = True,
) -> list[Problem]:
    if config not in CONFIGS:
        raise ValueError(f"codecontests_plus: unknown config {config!r}; choose from {CONFIGS}")
    files = _local_files(data_dir, config)
    if files:
        rows = ((f"{p} record {i}", r) for p in files for i, r in enumerate(read_records(p)))
    elif download:
        rows = (
            (f"{HUB_ID}:{config} row {i}", r)
            for i, r in enumerate(hf_rows(HUB_ID, config, "train", limit=limit))
        )
    else:
        raise DataError(
            f"CodeContests+ {config} not found under {resolve_data_dir(data_dir)} "
            f"(expected Code-Contests-Plus/ccplus_{config}/*.parquet)"
        )
    out = []
    for where, rec in rows:
        pid = require(rec, "id", where, (str, int))
        where = f"{where} (id {pid})"
        cases = require(rec, "test_cases", where, list)
        tests = []
        for j, t in enumerate(cases):
            w = f"{where} test_cases[{j}]"
            inp = require(t, "input", w, str)
            tests.append(
                {"input": inp, "output": require(t, "output", w, str), "input_len": len(inp)}
            )
        if len(tests) < min_tests:
            raise DataError(
                f"{where}: field 'test_cases' has {len(tests)} tests (min_tests={min_tests})"
            )
        tl_ms = require(rec, "time_limit", where, (int, float))
        mem = require(rec, "memory_limit", where, (int, float))
        subs = rec.get("correct_submissions") or []
        ref = next(
            (
                s.get("code")
                for s in subs
                if isinstance(s, dict) and str(s.get("language", "")).lower() in PY3
            ),
            None,
        )
        title = rec.get("title") or ""
        desc = require(rec, "description", where, str)
        spec = {"kind": "stdio", "cases": tests}
        if is_testlib_checker(rec.get("checker")):
            spec["checker"] = rec["checker"]
        out.append(
            Problem.from_dict(
                dict(
                    id=f"codecontests_plus/{pid}",
                    source="codecontests_plus",
                    prompt=(f"{title}\n\n{desc}" if title else desc),
                    tests=spec,
                    time_limit_s=round(tl_ms / 1000.0 * time_scale, 3),
                    memory_mb=int(mem),
                    reference_solution=ref,
                    metadata={
                        "config": config,
                        "title": title,
                        "source": rec.get("source"),
                        "checker": rec.get("checker"),
                        "n_tests": len(tests),
                        "time_scale": time_scale,
                        "max_input_len": max((t["input_len"] for t in tests), default=0),
                    },
                ),
                where,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out
