"""HumanEval (original tests, `script` kind) and HumanEval+ (EvalPlus inputs, `call` kind).

    load_humaneval(data_dir=None, limit=None) -> list[Problem]
    load_humanevalplus(data_dir=None, limit=None, tests="plus") -> list[Problem]   # or "base"
    load_humanevalplus(ids=["humanevalplus/32"])  # just these problems (only their references run)

Files: HumanEval.jsonl.gz (openai/human-eval) and HumanEvalPlus.jsonl.gz (EvalPlus v0.1.10)
in the data dir; when missing they are downloaded from the upstream releases. The prompt is the
function signature + docstring (also the starter code); the reference is prompt + canonical
solution. HumanEval+ expected outputs come from running the reference (recode_lib.data.evalplus,
cached); HumanEval/32 gets a script test with the tolerance oracle. It does not execute
submissions.
"""

from __future__ import annotations

from recode_lib.data import evalplus
from recode_lib.data._io import find_file, read_records, require, take
from recode_lib.data.schema import Problem

HUMANEVAL_URL = "https://github.com/openai/human-eval/raw/master/data/HumanEval.jsonl.gz"
HUMANEVALPLUS_URL = (
    "https://github.com/evalplus/humanevalplus_release/releases/download/"
    "v0.1.10/HumanEvalPlus.jsonl.gz"
)


def _base_problem(rec: dict, where: str, source: str) -> dict:
    tid = require(rec, "task_id", where, str)
    prompt = require(rec, "prompt", where, str)
    return dict(
        id=f"{source}/{tid.split('/')[-1]}",
        source=source,
        prompt=prompt,
        starter_code=prompt,
        entry_point=require(rec, "entry_point", where, str),
        reference_solution=prompt + require(rec, "canonical_solution", where, str),
        metadata={"task_id": tid},
    )


def load_humaneval(data_dir=None, limit: int | None = None, download: bool = True) -> list[Problem]:
    path = find_file(
        data_dir,
        ["HumanEval.jsonl.gz", "HumanEval.jsonl"],
        fetch_url=HUMANEVAL_URL,
        download=download,
    )
    out = []
    for i, rec in enumerate(take(read_records(path), limit)):
        where = f"{path} record {i} ({rec.get('task_id', '?')})"
        d = _base_problem(rec, where, "humaneval")
        test = require(rec, "test", where, str)
        # helpers: the prompt's own definitions (HumanEval/38's encode_cyclic, /50's
        # encode_shift, /32's poly) reach the tests from the problem, never from the answer
        d["tests"] = {
            "kind": "script",
            "script": f"{test}\n\ncheck({d['entry_point']})\n",
            "entry_point": d["entry_point"],
            "helpers": d["prompt"],
        }
        out.append(Problem.from_dict(d, where))
    return out


def load_humanevalplus(
    data_dir=None,
    limit: int | None = None,
    tests: str = "plus",
    download: bool = True,
    workers: int = 2,
    ids: list[str] | None = None,
) -> list[Problem]:
    if tests not in ("plus", "base"):
        raise ValueError(f"humanevalplus: tests must be 'plus' or 'base', got {tests!r}")
    path = find_file(
        data_dir,
        ["HumanEvalPlus.jsonl.gz", "HumanEvalPlus.jsonl"],
        fetch_url=HUMANEVALPLUS_URL,
        download=download,
    )
    rows = read_records(path)
    if ids is not None:
        want = set(ids)
        rows = [
            r for r in rows if f"humanevalplus/{str(r.get('task_id', '')).split('/')[-1]}" in want
        ]
        missing = want - {f"humanevalplus/{r['task_id'].split('/')[-1]}" for r in rows}
        if missing:
            raise ValueError(f"humanevalplus: unknown problem id(s) {sorted(missing)}")
    rows = take(rows, limit)
    dicts, jobs = [], []
    for i, rec in enumerate(rows):
        where = f"{path} record {i} ({rec.get('task_id', '?')})"
        d = _base_problem(rec, where, "humanevalplus")
        inputs = list(require(rec, "base_input", where, list))
        if tests == "plus":
            inputs += require(rec, "plus_input", where, list)
        d["metadata"].update(
            atol=float(require(rec, "atol", where, (int, float))),
            n_base=len(rec["base_input"]),
            tests=tests,
        )
        dicts.append((d, inputs, where))
        jobs.append(
            {
                "id": rec["task_id"],
                "code": d["reference_solution"],
                "entry_point": d["entry_point"],
                "inputs": inputs,
            }
        )
    return evalplus.problems_with_tests(
        "humaneval", dicts, jobs, f"HumanEvalPlus-{tests}-{evalplus.file_digest(path)}", workers
    )
