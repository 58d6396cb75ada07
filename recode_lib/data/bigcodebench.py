"""BigCodeBench: full or hard subset, complete or instruct split; unittest `script` tests.

    load_bigcodebench(data_dir=None, limit=None, subset="full", split="complete",
                      version="v0.1.0") -> list[Problem]

Local files: BigCodeBench-<version>.jsonl(.gz) (full) and BigCodeBench-Hard-<version>.jsonl(.gz)
(hard) in the data dir, same fields as the Hugging Face datasets; otherwise the hub datasets
bigcode/bigcodebench and bigcode/bigcodebench-hard (split "<version>_hf" for v0.1.0, else
"<version>"). complete: the prompt is the function stub with its docstring (also the starter
code); instruct: the natural-language instruction, starter code = code_prompt. The test runs the
task's unittest.TestCase and fails unless every test passes (the failure's reason names how many
tests failed, the first one and its exception line: type and message's first line). It does not
install the libraries the tasks import: metadata["libs"] lists the solution's, metadata["requires"]
adds the test script's own module-level imports (faker, pytz, requests_mock, ...: script_imports);
sandbox.sandbox_record passes "requires" to the sandbox, with BigCodeBench's own
interpreter when built (`make bcb-env`, recode_lib.core.bench_env: its pinned libraries), and a task
needing a module the sandbox's interpreter lacks is judged `env_missing` (not counted;
recode_lib.sandbox.environment). Known difference from BigCodeBench's harness, which runs the
tests in the solution's own module: here the tests run in a namespace of their own (the
sandbox's in-process tier), so a solution using a name only the test script imports (a few
canonical solutions use `np` or `os` without importing them) fails with NameError.
"""

from __future__ import annotations

import ast
import warnings

from recode_lib.data._io import DataError, find_file, hf_rows, read_records, require, take
from recode_lib.data.schema import Problem

SUBSETS = {
    "full": ("BigCodeBench", "bigcode/bigcodebench"),
    "hard": ("BigCodeBench-Hard", "bigcode/bigcodebench-hard"),
}
SPLITS = ("complete", "instruct")
RUNNER = """

import unittest as _unittest
_suite = _unittest.TestLoader().loadTestsFromTestCase(TestCases)
_result = _unittest.TextTestRunner(verbosity=0).run(_suite)
if not _result.wasSuccessful():
    _bad = _result.errors + _result.failures
    _why = "an unexpected success"
    if _bad:
        _tb = _bad[0][1].splitlines()
        _at = max([_i for _i, _l in enumerate(_tb) if _l.startswith("  File ")] or [-1])
        _lines = [_l.strip() for _l in _tb[_at + 1:] if _l.strip() and not _l.startswith(" ")]
        _why = "%s: %s" % (_bad[0][0].id().rsplit(".", 1)[-1], _lines[0] if _lines else "?")
    raise SystemExit("%d of %d tests failed; first %s" % (len(_bad), _result.testsRun, _why))
"""


def _libs(value, where: str) -> list[str] | None:
    """The task's libraries as a list of module names (the files hold the list's repr)."""
    if value is None or isinstance(value, list):
        return value
    try:
        libs = ast.literal_eval(value) if isinstance(value, str) else None
    except (ValueError, SyntaxError):
        libs = None
    if not isinstance(libs, list) or not all(isinstance(x, str) for x in libs):
        raise DataError(f"{where}: field 'libs' is not a list of module names: {value!r:.80}")
    return libs


def script_imports(source: str) -> list[str]:
    """The top-level modules a test script imports at module level (not inside a function or a
    try: an optional import), sorted; [] when it does not parse."""
    try:
        with warnings.catch_warnings():  # the tasks' own invalid escapes are not ours to report
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return sorted(out)


def load_bigcodebench(
    data_dir=None,
    limit: int | None = None,
    subset: str = "full",
    split: str = "complete",
    version: str = "v0.1.0",
    download: bool = True,
) -> list[Problem]:
    if subset not in SUBSETS:
        raise ValueError(f"bigcodebench: unknown subset {subset!r}; choose from {list(SUBSETS)}")
    if split not in SPLITS:
        raise ValueError(f"bigcodebench: unknown split {split!r}; choose from {SPLITS}")
    stem, hub = SUBSETS[subset]
    names = [f"{stem}-{version}.jsonl.gz", f"{stem}-{version}.jsonl"]
    try:
        path = find_file(data_dir, names)
        rows, src = read_records(path), str(path)
    except DataError:
        if not download:
            raise
        hf_split = f"{version}_hf" if version == "v0.1.0" else version
        rows, src = hf_rows(hub, None, hf_split), f"{hub}:{hf_split}"
    out = []
    for i, rec in enumerate(take(rows, limit)):
        where = f"{src} record {i} ({rec.get('task_id', '?') if isinstance(rec, dict) else '?'})"
        tid = require(rec, "task_id", where, str)
        code_prompt = require(rec, "code_prompt", where, str)
        prompt = require(rec, f"{split}_prompt", where, str)
        test = require(rec, "test", where, str)
        libs = _libs(rec.get("libs"), where)
        out.append(
            Problem.from_dict(
                dict(
                    id=f"bigcodebench/{tid.split('/')[-1]}",
                    source="bigcodebench",
                    prompt=prompt,
                    starter_code=prompt if split == "complete" else code_prompt,
                    entry_point=require(rec, "entry_point", where, str),
                    tests={"kind": "script", "script": test + RUNNER},
                    time_limit_s=240.0,
                    memory_mb=4096,
                    reference_solution=code_prompt + require(rec, "canonical_solution", where, str),
                    metadata={
                        "task_id": tid,
                        "subset": subset,
                        "split": split,
                        "version": version,
                        "libs": libs,
                        "requires": sorted(set(libs or ()) | set(script_imports(test))),
                    },
                ),
                where,
            )
        )
    return out
