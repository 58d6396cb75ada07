"""The math domain's training set (a public one, or the offline generator) kept apart from AIME.

    problems = load_math_train(dataset="DigitalLearningGmbH/MATH-lighteval", split="train")
    problems = load_math_train(dataset="path/to/train.parquet")      # or .jsonl / .json / a folder
    train, held_out, report = math_train_eval("math_synth", n_train=64, n_eval=0)   # smoke
    train, held_out, report = math_train_eval("math_train", 0, 0,
                                              dataset="DigitalLearningGmbH/MATH-lighteval")
    kept, removed = decontaminate(train, held_out)    # drop training problems overlapping AIME
    assert_disjoint(train, held_out)                  # ValueError naming the overlap

ReCode transfers its gated reward to math and evaluates on AIME 2024; the policy must never
train on AIME. `load_math_train` reads a public math training set through Hugging Face
`datasets` (hub id, default DEFAULT_DATASET: the MATH training split, 7,500 competition
problems) or, offline, from local files in the same upstream format: a path to a .parquet /
.jsonl(.gz) / .json file, a folder holding such files (those whose name contains the split are
used, e.g. a hub snapshot's data/train-00000-of-00001.parquet), or such a folder at
<data dir>/<hub id>. Row formats: {"problem", "solution"} with the answer in the solution's last
\\boxed{} (MATH, MATH-lighteval), {"problem", "answer"} (DeepScaleR-style), {"question", "answer"}
with the answer after "####" (GSM8K). A row without an answer raises DataError naming it.

Decontamination (`decontaminate`): a training problem is removed when its id or its
normalised statement (lower case, whitespace collapsed) equals a held-out one, one statement
contains the other, or they share a word 13-gram (the GPT-3 paper's overlap test). `math_train_eval`
loads both sides, decontaminates, takes the first n_train training problems and checks the
result with `assert_disjoint`. It does no generation or grading.
"""

from __future__ import annotations

import re
from pathlib import Path

from recode_lib.data import load_benchmark
from recode_lib.data._io import DataError, hf_rows, read_records, resolve_data_dir
from recode_lib.data.aime import NOT_CODE, extract_boxed, normalize_answer
from recode_lib.data.schema import Problem

DEFAULT_DATASET = "DigitalLearningGmbH/MATH-lighteval"
NGRAM = 13
_EXTS = (".parquet", ".jsonl", ".jsonl.gz", ".json")


def _local_files(path: Path, split: str) -> list[Path]:
    if path.is_file():
        return [path]
    files = sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and p.name.endswith(_EXTS) and not p.name.startswith(".")
    )
    chosen = [p for p in files if split in p.name]
    if not chosen:
        raise DataError(
            f"{path}: no {'/'.join(_EXTS)} file whose name contains split {split!r} "
            f"(found {[p.name for p in files][:10]})"
        )
    return chosen


def _rows(dataset: str, split: str, data_dir, limit: int | None) -> list[tuple[str, dict]]:
    """(where, row) pairs from a local path, a local hub mirror, or the hub."""
    candidates = [Path(dataset).expanduser()]
    root = resolve_data_dir(data_dir)
    if root is not None:
        candidates.append(root / dataset)
    for cand in candidates:
        if cand.exists():
            out = []
            for f in _local_files(cand, split):
                out += [(f"{f} record {i}", r) for i, r in enumerate(read_records(f))]
            return out if limit is None else out[:limit]
    return [
        (f"{dataset}:{split} row {i}", r)
        for i, r in enumerate(hf_rows(dataset, None, split, limit=limit))
    ]


def row_answer(row: dict, where: str) -> str:
    """The gold answer of one row (see the module docstring for the accepted formats)."""
    ans = row.get("answer")
    if isinstance(ans, (int, float)) and not isinstance(ans, bool):
        ans = str(ans)
    if isinstance(ans, str) and ans.strip():
        if "####" in ans:  # GSM8K: "... #### 72"
            ans = ans.rsplit("####", 1)[1]
        boxed = extract_boxed(ans)
        return normalize_answer(boxed if boxed is not None else ans)
    sol = row.get("solution")
    if isinstance(sol, str):
        boxed = extract_boxed(sol)
        if boxed is not None and boxed.strip():
            return normalize_answer(boxed)
    raise DataError(
        f"{where}: no answer (needs a non-empty 'answer', or a 'solution' with a "
        f"\\boxed{{}} answer)"
    )


def load_math_train(
    data_dir=None, limit: int | None = None, dataset: str = DEFAULT_DATASET, split: str = "train"
) -> list[Problem]:
    """Training problems with gold `answer`s; see the module docstring for sources and formats."""
    out = []
    for i, (where, row) in enumerate(_rows(dataset, split, data_dir, limit)):
        text = row.get("problem", row.get("question"))
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"{where}: missing field 'problem' (or 'question')")
        native = row.get("unique_id", row.get("id", i))
        out.append(
            Problem.from_dict(
                dict(
                    id=f"math_train/{native}",
                    source="math_train",
                    prompt=text.strip(),
                    tests=dict(NOT_CODE),
                    answer=row_answer(row, where),
                    difficulty=str(row["level"]) if row.get("level") is not None else None,
                    metadata={
                        "dataset": dataset,
                        "split": split,
                        "row": i,
                        "type": row.get("type", row.get("subject")),
                    },
                ),
                where,
            )
        )
    return out


def normalise_statement(text: str) -> str:
    return re.sub(r"\s+", " ", (text or "").strip().lower())


def _ngrams(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", normalise_statement(text))
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def overlap_reason(a: Problem, b: Problem, n: int = NGRAM) -> str:
    """Why problem a overlaps problem b ("" when it does not)."""
    if a.id == b.id:
        return "same id"
    sa, sb = normalise_statement(a.prompt), normalise_statement(b.prompt)
    if sa == sb:
        return "same statement"
    if sa and sb and (sa in sb or sb in sa):
        return "statement contained in the other"
    if _ngrams(a.prompt, n) & _ngrams(b.prompt, n):
        return f"shares a {n}-gram"
    return ""


def decontaminate(train, held_out, n: int = NGRAM) -> tuple[list[Problem], list[dict]]:
    """(kept training problems, [{"id", "held_out_id", "reason"}] for each one removed)."""
    held = list(held_out)
    grams = {}
    for h in held:
        for g in _ngrams(h.prompt, n):
            grams.setdefault(g, h)
    ids = {h.id: h for h in held}
    stmts = {normalise_statement(h.prompt): h for h in held}
    kept, removed = [], []
    for p in train:
        hit = ids.get(p.id) or stmts.get(normalise_statement(p.prompt))
        if hit is None:
            hit = next((grams[g] for g in _ngrams(p.prompt, n) if g in grams), None)
        if hit is None:
            hit = next((h for h in held if overlap_reason(p, h, n)), None)
        if hit is None:
            kept.append(p)
        else:
            removed.append({"id": p.id, "held_out_id": hit.id, "reason": overlap_reason(p, hit, n)})
    return kept, removed


def assert_disjoint(train, held_out, n: int = NGRAM) -> None:
    """Raise ValueError naming the first training problem that overlaps a held-out one."""
    _, removed = decontaminate(train, held_out, n)
    if removed:
        r = removed[0]
        raise ValueError(
            f"{len(removed)} training problem(s) overlap the held-out set, first: "
            f"{r['id']} vs {r['held_out_id']} ({r['reason']})"
        )


def math_train_eval(
    train_set: str,
    n_train: int,
    n_eval: int,
    *,
    eval_benchmark: str = "aime24",
    data_dir=None,
    **train_options,
) -> tuple[list[Problem], list[Problem], dict]:
    """(training problems, held-out problems, report). n = 0 means all. The training side is
    loaded with `train_options` (e.g. dataset=, split= for math_train; seed= for math_synth),
    decontaminated against the held-out side, then cut to n_train; report counts what was
    removed and why. Raises ValueError when either side ends up empty."""
    if n_train < 0 or n_eval < 0:
        raise ValueError(f"n_train and n_eval must be >= 0, got {n_train}, {n_eval}")
    if train_set == eval_benchmark:
        raise ValueError(
            f"train_set and eval_benchmark are both {train_set!r}: never train on "
            "the evaluation benchmark"
        )
    held_out = load_benchmark(eval_benchmark, limit=n_eval or None, data_dir=data_dir)
    if train_set == "math_synth" and n_train:
        train_options.setdefault("size", n_train)
    pool = load_benchmark(train_set, data_dir=data_dir, **train_options)
    kept, removed = decontaminate(pool, held_out)
    train = kept[:n_train] if n_train else kept
    if not train or not held_out:
        raise ValueError(
            f"no {'training' if not train else 'held-out'} problems: "
            f"train_set={train_set!r} eval_benchmark={eval_benchmark!r} "
            f"n_train={n_train} n_eval={n_eval} (removed as overlapping: {len(removed)})"
        )
    assert_disjoint(train, held_out)
    report = {
        "train_set": train_set,
        "eval_benchmark": eval_benchmark,
        "pool": len(pool),
        "removed_overlapping": removed,
        "n_train": len(train),
        "n_eval": len(held_out),
        "short": max(0, n_train - len(train)) if n_train else 0,
    }
    return train, held_out, report
