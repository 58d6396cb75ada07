"""The run guard every evaluation goes through: one output folder holds one configuration.

    guard_run(out_dir, {"model": str(model), "model_stamp": model_stamp(model), ...},
              on_change="set_aside")

    guard_run(out_dir, cfg, on_change="set_aside", problems=[p.id for p in problems])
    recorded_problem_ids(out_dir)      # the ids a folder's results were evaluated on (or None)

The first call writes out_dir/run.json with what the results depend on; a later call with a
different configuration raises ValueError ("raise") or moves the old folder aside to
<out_dir>.stale-<k> and starts clean ("set_aside", what re-run notebooks use), so cached
generations of another model, sampling or prompt style are never reused.
`recode_lib.core.models.model_stamp` makes a local model folder that was retrained or re-merged in
place count as another model.
With `problems` the problem set is part of what must match: run.json records
`problem_set` ({"n", "sha256"}: a hash of the sorted problem ids, compared) and `problem_ids`
(the sorted ids, for readers), so a folder evaluated on another problem set (e.g. before a
difficulty filter) is re-evaluated or refused with an error naming the folder and both sets,
never silently reused; a folder recorded before problem sets were (no `problem_set`) counts as
another configuration. Readers (recode_lib.analysis.frontier.load_alpha_samples) keep only the
records of the recorded problem set.
`adopt_evaluation(earlier, out_dir)` starts an empty folder from an earlier evaluation of the
same model (notebook 07 re-evaluating 06's runs with 06's spec): its run.json and samples are
copied, and the guard then decides as for any folder (equal configuration and problem set: the
samples count as done; else set aside).
It does not generate or score anything.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from recode_lib.core.jsonl import read_json, write_json_atomic
from recode_lib.core.paths import set_aside

ON_CHANGE = ("raise", "set_aside")
ADOPTED_FILES = ("run.json", "samples.jsonl", "generations.jsonl")  # what a resumed run reads


def precision_field(precision: str) -> dict:
    """What a generation precision adds to a guard's configuration: {} for "native" (so folders
    recorded before precisions existed still match), else {"precision": precision}."""
    return {} if precision == "native" else {"precision": str(precision)}


def problem_set(ids) -> dict:
    """{"n", "sha256"} of a problem set: its size and a hash of the sorted, distinct ids (the
    order problems are evaluated in does not matter; which problems do)."""
    ids = sorted({str(i) for i in ids})
    return {"n": len(ids), "sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]}


def describe_problem_sets(old_ids, new_ids, old_set: dict | None = None) -> str:
    """Both problem sets in words: sizes, hashes, and a few ids only one of them has."""
    new_set = problem_set(new_ids)
    if old_ids is None:
        old = f"{old_set or 'no recorded problem set'}"
        return f"recorded {old}, this call {new_set['n']} problems (sha256 {new_set['sha256']})"
    old_set = problem_set(old_ids)
    only_old = sorted(set(map(str, old_ids)) - set(map(str, new_ids)))
    only_new = sorted(set(map(str, new_ids)) - set(map(str, old_ids)))
    return (
        f"recorded {old_set['n']} problems (sha256 {old_set['sha256']}), this call "
        f"{new_set['n']} (sha256 {new_set['sha256']}); only recorded: {only_old[:5]}"
        f"{' ...' if len(only_old) > 5 else ''}, only in this call: {only_new[:5]}"
        f"{' ...' if len(only_new) > 5 else ''}"
    )


def recorded_problem_ids(out_dir) -> list[str] | None:
    """The sorted problem ids out_dir/run.json records (None: no run.json, or one written
    before problem sets were recorded)."""
    path = Path(out_dir) / "run.json"
    if not path.is_file():
        return None
    ids = read_json(path).get("problem_ids")
    return None if ids is None else list(ids)


def guard_run(out_dir: str | Path, cfg: dict, on_change: str = "raise", problems=None) -> Path:
    """Check (or record) out_dir/run.json against `cfg` (and, with `problems`, an iterable of
    problem ids, against their problem set); returns out_dir, created if needed."""
    if on_change not in ON_CHANGE:
        raise ValueError(f"on_config_change must be 'raise' or 'set_aside', got {on_change!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    ids = None
    if problems is not None:
        ids = sorted({str(i) for i in problems})
        cfg = {**cfg, "problem_set": problem_set(ids)}
    record = {**cfg, "problem_ids": ids} if ids is not None else cfg
    if not path.exists():
        write_json_atomic(path, record)
        return out
    old = read_json(path)
    diff = sorted(k for k in cfg if old.get(k) != cfg[k])
    if diff:
        shown = [k for k in diff if k != "problem_set"]
        what = (
            f"{path}: this folder holds results for another configuration (differs in "
            f"{', '.join(diff)}"
        )
        what += f": {[old.get(k) for k in shown]} vs {[cfg[k] for k in shown]}" if shown else ""
        if "problem_set" in diff:
            what += (
                f"; problem sets differ: "
                f"{describe_problem_sets(old.get('problem_ids'), ids, old.get('problem_set'))}"
            )
        what += ")"
        if on_change != "set_aside":
            raise ValueError(f"{what}; use another output folder")
        moved = set_aside(out)
        print(f"{what}: moved the old results to {moved}", file=sys.stderr)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, record)
    return out


def adopt_evaluation(earlier, out_dir) -> bool:
    """Start out_dir from `earlier`, a finished evaluation folder of the same model (its
    ADOPTED_FILES copied), so that an evaluation into out_dir with the same configuration and
    problem set finds its samples done instead of generating them again. Only a folder that
    does not exist yet or is empty is started (a folder with results of its own is never
    touched); the copy lands whole or not at all (a temporary folder renamed). The guard still
    decides when the evaluation runs: another model, sampling, prompt style or problem set sets
    the adopted results aside ("set_aside") or raises ("raise"), as for any folder. Returns
    whether it copied."""
    src, out = Path(earlier), Path(out_dir)
    if not (src / "run.json").is_file() or (out.exists() and any(out.iterdir())):
        return False
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.adopt-", dir=out.parent))
    try:
        for name in ADOPTED_FILES:
            if (src / name).is_file():
                shutil.copy2(src / name, tmp / name)
        if out.exists():
            out.rmdir()  # empty (checked above)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return True
