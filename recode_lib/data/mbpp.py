"""MBPP (original, assert `script` tests) and MBPP+ (EvalPlus v0.2.0, expected outputs computed).

    load_mbpp(data_dir=None, limit=None, split="test", challenge=False) -> list[Problem]
    load_mbppplus(data_dir=None, limit=None, tests="plus") -> list[Problem]
    load_mbpp_train(data_dir=None, limit=None) -> list[Problem]   # train split minus MBPP+'s tasks

MBPP splits follow the original paper by task id: prompt 1-10, test 11-510, validation 511-600,
train 601-974 ("all" for every task). The MBPP prompt is the task text plus its test asserts (the
standard format, which fixes the function name). MBPP+ (378 tasks of sanitized MBPP's test split)
uses the release's docstring prompt; tests as in recode_lib.data.evalplus. MBPP+ takes tasks from
every split of MBPP (108 of its 378 task ids lie in the train split, 601-974), so
`load_mbpp_train` is the train split without any task MBPP+ holds (266 tasks): training data
(e.g. CRPL's traces) that no MBPP/MBPP+ evaluation contains. It does not execute submissions.
"""

from __future__ import annotations

import ast
import warnings

from recode_lib.data import evalplus
from recode_lib.data._io import DataError, find_file, read_records, require, take
from recode_lib.data.schema import Problem

MBPP_URL = (
    "https://raw.githubusercontent.com/google-research/google-research/master/mbpp/mbpp.jsonl"
)
MBPPPLUS_URL = (
    "https://github.com/evalplus/mbppplus_release/releases/download/v0.2.0/MbppPlus.jsonl.gz"
)
SPLITS = {
    "prompt": (1, 10),
    "test": (11, 510),
    "validation": (511, 600),
    "train": (601, 974),
    "all": (1, 10**9),
}


def _entry_point(code: str, tests: list[str]) -> str | None:
    """The function the asserts call that the reference defines."""
    with warnings.catch_warnings():  # old MBPP code has invalid escape sequences
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            defined = [n.name for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)]
        except SyntaxError:
            return None
        called = set()
        for t in tests:
            try:
                called |= {
                    n.func.id
                    for n in ast.walk(ast.parse(t))
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                }
            except SyntaxError:
                continue
    hits = [d for d in defined if d in called]
    return hits[0] if hits else None


def load_mbpp(
    data_dir=None,
    limit: int | None = None,
    split: str = "test",
    challenge: bool = False,
    download: bool = True,
) -> list[Problem]:
    if split not in SPLITS:
        raise ValueError(f"mbpp: unknown split {split!r}; choose from {sorted(SPLITS)}")
    lo, hi = SPLITS[split]
    path = find_file(data_dir, ["mbpp.jsonl"], fetch_url=MBPP_URL, download=download)
    out = []
    for i, rec in enumerate(read_records(path)):
        where = f"{path} record {i} (task_id {rec.get('task_id', '?')})"
        tid = require(rec, "task_id", where, int)
        if not lo <= tid <= hi:
            continue
        tests = list(require(rec, "test_list", where, list))
        if challenge:
            tests += require(rec, "challenge_test_list", where, list)
        code = require(rec, "code", where, str).replace("\r\n", "\n")
        text = require(rec, "text", where, str)
        setup = require(rec, "test_setup_code", where, str)
        prompt = f"{text}\nYour code should pass these tests:\n\n" + "\n".join(rec["test_list"])
        entry = _entry_point(code, tests)
        script = {"kind": "script", "script": setup + "\n" + "\n".join(tests) + "\n"}
        if entry:  # the one name the tests may take from the submission even if a builtin's
            script["entry_point"] = entry
        out.append(
            Problem.from_dict(
                dict(
                    id=f"mbpp/{tid}",
                    source="mbpp",
                    prompt=prompt,
                    tests=script,
                    entry_point=entry,
                    reference_solution=code,
                    metadata={"task_id": tid, "split": split},
                ),
                where,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out


def load_mbppplus(
    data_dir=None,
    limit: int | None = None,
    tests: str = "plus",
    download: bool = True,
    workers: int = 2,
) -> list[Problem]:
    if tests not in ("plus", "base"):
        raise ValueError(f"mbppplus: tests must be 'plus' or 'base', got {tests!r}")
    path = find_file(
        data_dir, ["MbppPlus.jsonl.gz", "MbppPlus.jsonl"], fetch_url=MBPPPLUS_URL, download=download
    )
    items, jobs = [], []
    for i, rec in enumerate(take(read_records(path), limit)):
        where = f"{path} record {i} ({rec.get('task_id', '?')})"
        tid = require(rec, "task_id", where, str)
        entry = require(rec, "entry_point", where, str)
        raw = list(require(rec, "base_input", where, list))
        if tests == "plus":
            plus = require(rec, "plus_input", where, (list, dict))
            if isinstance(plus, dict) and plus:  # upstream writes {} for "no plus inputs"
                raise DataError(f"{where}: field 'plus_input' is a non-empty object")
            raw += list(plus) if isinstance(plus, list) else []
        try:
            inputs = evalplus.mbpp_inputs(tid, raw)
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise DataError(
                f"{where}: field 'base_input'/'plus_input' does not have the shape "
                f"EvalPlus expects for this task: {exc}"
            ) from None
        d = dict(
            id=f"mbppplus/{tid.split('/')[-1]}",
            source="mbppplus",
            prompt=require(rec, "prompt", where, str),
            entry_point=entry,
            reference_solution=require(rec, "canonical_solution", where, str),
            metadata={
                "task_id": tid,
                "tests": tests,
                "n_base": len(rec["base_input"]),
                "atol": float(require(rec, "atol", where, (int, float))),
            },
        )
        items.append((d, inputs, where))
        jobs.append(
            {
                "id": tid,
                "code": d["reference_solution"],
                "entry_point": entry,
                "inputs": inputs,
                "output_not_none": entry in evalplus.MBPP_NOT_NONE,
            }
        )
    return evalplus.problems_with_tests(
        "mbpp", items, jobs, f"MbppPlus-{tests}-{evalplus.file_digest(path)}", workers
    )


def mbppplus_task_ids(data_dir=None, download: bool = True) -> set[int]:
    """The MBPP task ids the MBPP+ release holds (its "Mbpp/<id>" task_ids), read without
    building its tests."""
    path = find_file(
        data_dir, ["MbppPlus.jsonl.gz", "MbppPlus.jsonl"], fetch_url=MBPPPLUS_URL, download=download
    )
    out = set()
    for i, rec in enumerate(read_records(path)):
        tid = require(rec, "task_id", f"{path} record {i}", str)
        out.add(int(tid.split("/")[-1]))
    return out


def load_mbpp_train(
    data_dir=None, limit: int | None = None, download: bool = True
) -> list[Problem]:
    """MBPP's train split (task ids 601-974) without the tasks MBPP+ holds (mbppplus_task_ids):
    problems to train on that an MBPP or MBPP+ evaluation never asks."""
    held = mbppplus_task_ids(data_dir, download)
    out = [
        p
        for p in load_mbpp(data_dir, split="train", download=download)
        if p.metadata["task_id"] not in held
    ]
    return out if limit is None else out[:limit]
