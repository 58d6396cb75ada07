"""Provenance stamps for results: seed, resolved config, git hash, package versions, the
OpenMP wait policy (recode_lib.core.openmp), the CPU (recode_lib.core.bf16.cpu_summary: wall times
depend on it).

    stamp = provenance(seed=0, config=cfg)   # a JSON-able dict to store beside results
    fingerprint(cfg, data)                   # 16 hex chars naming what a result depends on

It reads versions from installed package metadata (no heavy imports) and the git hash of the
project checkout (None outside a git checkout; "-dirty" suffix when the tree has changes).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from typing import Any

from recode_lib.core import openmp
from recode_lib.core.bf16 import cpu_summary
from recode_lib.core.paths import PROJECT_ROOT

PACKAGES = (
    "recode",
    "torch",
    "transformers",
    "trl",
    "datasets",
    "accelerate",
    "peft",
    "safetensors",
    "papermill",
    "vllm",
    "deepspeed",
)


def git_hash(root=PROJECT_ROOT) -> str | None:
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        return None


def package_versions(packages=PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _plain(config: Any) -> Any:
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    return config


def provenance(seed: int | None = None, config: Any = None) -> dict[str, Any]:
    return {
        "seed": seed,
        "config": _plain(config),
        "git": git_hash(),
        "versions": package_versions(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "openmp": openmp.describe(),  # how torch's threads waited: wall times depend on it
        "cpu": cpu_summary(),  # and on the CPU's vector width and bf16 arithmetic
        "time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def fingerprint(*parts: Any) -> str:
    """A stable 16-hex-digit hash of JSON-able parts (dataclasses become dicts, keys sorted,
    anything else through str): equal inputs give equal fingerprints across processes."""
    blob = json.dumps([_plain(x) for x in parts], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
