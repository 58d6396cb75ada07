"""The dated LeetCode contest set (Jul 2023 - Jan 2024, 180 problems, DeepSeek-Coder's eval set).

    load_leetcode(data_dir=None, limit=None, start_date=None, end_date=None,
                  difficulty=None) -> list[Problem]

File: leetcode-2023-07-to-2024-01.jsonl in the data dir (else downloaded from the
DeepSeek-Coder repository). Each problem is a `class Solution` stub; the test is the record's
assert script (`my_solution = Solution()` then asserts), kind `script`. release_date is the
contest start (UTC date) for contamination windows; dates are inclusive ISO strings.
metadata["prelude"] holds the imports LeetCode code assumes (typing, collections, ...): the
evaluation harness prepends it to submissions, as LiveCodeBench's runner does. No reference
solutions exist in this file.
"""

from __future__ import annotations

import datetime as _dt

from recode_lib.data._io import DataError, find_file, read_records, require
from recode_lib.data.schema import Problem

FILE = "leetcode-2023-07-to-2024-01.jsonl"
URL = (
    "https://raw.githubusercontent.com/deepseek-ai/DeepSeek-Coder/main/Evaluation/LeetCode/"
    "data/20240121-Jul.jsonl"
)
PRELUDE = (
    "from typing import *\nfrom collections import *\nfrom functools import *\n"
    "from itertools import *\nfrom heapq import *\nfrom bisect import *\n"
    "import math\nimport string\nimport re\n"
)


def parse_date(value: str | None, what: str) -> _dt.date | None:
    if value is None:
        return None
    try:
        return _dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        raise ValueError(f"{what} must be an ISO date (YYYY-MM-DD), got {value!r}") from None


def load_leetcode(
    data_dir=None,
    limit: int | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    difficulty: str | None = None,
    download: bool = True,
) -> list[Problem]:
    lo, hi = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    path = find_file(data_dir, [FILE], fetch_url=URL, download=download)
    out = []
    for i, rec in enumerate(read_records(path)):
        where = f"{path} record {i} ({rec.get('task_id', '?')})"
        tid = require(rec, "task_id", where, str)
        prompt = require(rec, "prompt", where, str)
        meta = require(rec, "meta", where, dict)
        start = require(rec, "start_time", where, int)
        date = _dt.datetime.fromtimestamp(start, _dt.UTC).date()
        diff = require(meta, "difficulty", f"{where} meta", str).lower()
        if (lo and date < lo) or (hi and date > hi) or (difficulty and diff != difficulty):
            continue
        if '"""' not in prompt or "class Solution" not in prompt:
            raise DataError(f"{where}: field 'prompt' has no docstring + class Solution stub")
        stub = prompt[prompt.rindex('"""') + 3 :].strip("\n")
        method = stub.split("def ", 1)[1].split("(", 1)[0].strip() if "def " in stub else None
        out.append(
            Problem.from_dict(
                dict(
                    id=f"leetcode/{tid}",
                    source="leetcode",
                    prompt=require(rec, "prompt_sft", where, str),
                    starter_code=stub,
                    entry_point=method,
                    difficulty=diff,
                    release_date=date.isoformat(),
                    tests={"kind": "script", "script": require(rec, "test", where, str)},
                    metadata={
                        "task_id": tid,
                        "url": rec.get("url"),
                        "prelude": PRELUDE,
                        "title": meta.get("title"),
                    },
                ),
                where,
            )
        )
        if limit is not None and len(out) >= limit:
            break
    return out
