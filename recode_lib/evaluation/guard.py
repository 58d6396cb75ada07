"""The run guard every evaluation goes through: one output folder holds one configuration.

    guard_run(out_dir, {"model": str(model), "model_stamp": model_stamp(model), ...},
              on_change="set_aside")

The first call writes out_dir/run.json with what the results depend on; a later call with a
different configuration raises ValueError ("raise") or moves the old folder aside to
<out_dir>.stale-<k> and starts clean ("set_aside", what re-run notebooks use), so cached
generations of another model, sampling or prompt style are never reused. `model_stamp` makes a
local model folder that was retrained or re-merged in place count as another model.
It does not generate or score anything.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from recode_lib.jsonl import read_json, write_json_atomic
from recode_lib.paths import set_aside

ON_CHANGE = ("raise", "set_aside")


def model_stamp(model) -> str | None:
    """For a local model folder, a stamp of its weight and config files (names, sizes, mtimes):
    a folder retrained or re-merged in place gets a new stamp. None for hub ids / aliases."""
    folder = Path(str(model))
    if not folder.is_dir():
        return None
    files = sorted(f for f in folder.iterdir()
                   if f.suffix in (".safetensors", ".bin", ".json") and f.is_file())
    text = "|".join(f"{f.name}:{f.stat().st_size}:{f.stat().st_mtime_ns}" for f in files)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def guard_run(out_dir: str | Path, cfg: dict, on_change: str = "raise") -> Path:
    """Check (or record) out_dir/run.json against `cfg`; returns out_dir, created if needed."""
    if on_change not in ON_CHANGE:
        raise ValueError(f"on_config_change must be 'raise' or 'set_aside', got {on_change!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    if not path.exists():
        write_json_atomic(path, cfg)
        return out
    old = read_json(path)
    diff = sorted(k for k in cfg if old.get(k) != cfg[k])
    if diff:
        what = (f"{path}: this folder holds results for another configuration (differs in "
                f"{', '.join(diff)}: {[old.get(k) for k in diff]} vs {[cfg[k] for k in diff]})")
        if on_change != "set_aside":
            raise ValueError(f"{what}; use another output folder")
        moved = set_aside(out)
        print(f"{what}: moved the old results to {moved}", file=sys.stderr)
        out.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, cfg)
    return out
