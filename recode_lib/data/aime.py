"""AIME 2024 (30 problems) for the math domain, with normalised integer answers.

    load_aime24(data_dir=None, limit=None) -> list[Problem]      # problem.answer == "25", not "025"
    normalize_answer("025") -> "25";  extract_boxed(text) -> str | None
    check_answer(response_text, "25") -> bool   # last \\boxed{...} (else last integer) vs answer

File: aime24.jsonl (Qwen2.5-Math's copy) in the data dir, else downloaded. Problems carry no code
tests: `tests` is a script that always fails, so a math problem can never pass the code sandbox
by accident; grade with check_answer (or math-verify) instead.
"""

from __future__ import annotations

import re

from recode_lib.data._io import DataError, find_file, read_records, require, take
from recode_lib.data.schema import Problem

URL = "https://raw.githubusercontent.com/QwenLM/Qwen2.5-Math/main/evaluation/data/aime24/test.jsonl"
NOT_CODE = {
    "kind": "script",
    "script": "raise SystemExit('math problem: grade with recode_lib.data.aime.check_answer')",
}


def normalize_answer(ans) -> str:
    """Canonical form of an AIME answer: an integer without leading zeros; other strings are
    stripped of spaces, $ and a trailing period."""
    s = str(ans).strip().strip("$").strip().rstrip(".").replace(",", "")
    if re.fullmatch(r"[+-]?\d+", s):
        return str(int(s))
    if re.fullmatch(r"[+-]?\d+\.0+", s):
        return str(int(float(s)))
    return s.replace(" ", "")


def extract_boxed(text: str) -> str | None:
    """Content of the last \\boxed{...} (balanced braces), or None."""
    start = text.rfind("\\boxed")
    if start < 0:
        return None
    i = text.find("{", start)
    if i < 0:
        return None
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    return None


def check_answer(response: str, answer: str) -> bool:
    got = extract_boxed(response or "")
    if got is None:
        nums = re.findall(r"-?\d+", response or "")
        got = nums[-1] if nums else None
    return got is not None and normalize_answer(got) == normalize_answer(answer)


def load_aime24(data_dir=None, limit: int | None = None, download: bool = True) -> list[Problem]:
    path = find_file(data_dir, ["aime24.jsonl"], fetch_url=URL, download=download)
    out = []
    for i, rec in enumerate(take(read_records(path), limit)):
        where = f"{path} record {i} (id {rec.get('id', '?')})"
        pid = require(rec, "id", where, (int, str))
        answer = normalize_answer(require(rec, "answer", where, (str, int)))
        if not answer.isdigit():
            raise DataError(f"{where}: field 'answer' {rec['answer']!r} is not an integer")
        out.append(
            Problem.from_dict(
                dict(
                    id=f"aime24/{pid}",
                    source="aime24",
                    prompt=require(rec, "problem", where, str),
                    tests=dict(NOT_CODE),
                    answer=answer,
                    reference_solution=None,
                    metadata={
                        "solution": rec.get("solution"),
                        "url": rec.get("url"),
                        "raw_answer": rec["answer"],
                    },
                ),
                where,
            )
        )
    return out
