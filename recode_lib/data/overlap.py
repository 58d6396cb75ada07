"""Which training problems share a task with held-out problems: ids across a benchmark family, and
the statement itself.

    from recode_lib.data.overlap import drop_overlap, overlap
    kept, dropped = drop_overlap(train, held_out)     # dropped: {problem id: why}
    overlap(train, held_out)                          # the same reasons; {} when disjoint

Two problems are the same task when
- they carry the same native id in the same benchmark family (recode_lib.data.benchmark_family of
  their `source`: "mbpp/602" and "mbppplus/602" are MBPP task 602, "humaneval/3" and
  "humanevalplus/3" HumanEval/3), or
- their statements open with the same prose line (statement_key: the first line that is not
  code, quotes or an example, lower-cased, spaces collapsed, at least MIN_KEY characters): MBPP
  repeats a few statements under other task ids across its splits ("mbpp/704" and "mbpp/872" of
  the train split have a twin in the test split, "mbpp/928" one in MBPP+).
It compares what the problems say, not what their solutions do, and does not load anything
(the caller passes the held-out problems: every benchmark its evaluations read).
"""

from __future__ import annotations

import re

from recode_lib.data import benchmark_family

MIN_KEY = 16  # shorter opening lines ("Examples:") say nothing about the task
CODE_STARTS = ("from ", "import ", "def ", "class ", "@", "#", ">>>", "assert ", "```")


def task_key(problem) -> tuple[str, str]:
    """(benchmark family of the problem's source, its native id): one task across a family."""
    native = str(problem.id).split("/", 1)[-1]
    return benchmark_family(problem.source), native


def statement_key(problem) -> str | None:
    """The statement's first prose line, normalised (module docstring); None when it has none."""
    for line in str(problem.prompt or "").splitlines():
        text = line.strip().strip("\"'").strip()
        if not text or text.startswith(CODE_STARTS):
            continue
        text = re.sub(r"\s+", " ", text.lower()).rstrip(".:;,!? ")
        return text if len(text) >= MIN_KEY else None
    return None


def overlap(problems, held_out) -> dict[str, str]:
    """{id of a problem in `problems`: why it is a held-out task} (module docstring)."""
    tasks = {task_key(p): p.id for p in held_out}
    statements = {}
    for p in held_out:
        key = statement_key(p)
        if key is not None:
            statements.setdefault(key, p.id)
    out = {}
    for p in problems:
        if task_key(p) in tasks:
            out[p.id] = f"same task as held-out {tasks[task_key(p)]}"
        elif statement_key(p) in statements:
            out[p.id] = f"same statement as held-out {statements[statement_key(p)]}"
    return out


def drop_overlap(problems, held_out) -> tuple[list, dict[str, str]]:
    """(the problems that share no task with `held_out`, in order; {dropped id: why})."""
    dropped = overlap(problems, held_out)
    return [p for p in problems if p.id not in dropped], dropped
