"""Where things live: the benchmark data directory, the runs directory, the model cache.

- data_dir(): `$RECODE_DATA_DIR`, else `../shared/data` next to the project when it exists,
  else None (loaders then fetch from the canonical source, or raise naming what is missing).
- runs_dir(profile): `$RECODE_RUNS_DIR/<profile>` or `<project>/runs/<profile>`.
- figures_dir(profile): `<project>/figures/<profile>` (or `<root>/<profile>`): each profile's
  figures in their own folder, so a figure one profile skips never shows another profile's file.
- cache_dir(): `$RECODE_CACHE_DIR`, else `$XDG_CACHE_HOME/recode`, else `~/.cache/recode`.
- set_aside(folder): rename a folder holding results of another configuration to
  `<folder>.stale-<k>` (never deletes), so a re-run with new settings starts clean.
It does not create anything except where a function says so.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path | None:
    env = os.environ.get("RECODE_DATA_DIR")
    if env:
        return Path(env)
    shared = PROJECT_ROOT.parent / "shared" / "data"
    return shared if shared.is_dir() else None


def runs_dir(profile: str, create: bool = True) -> Path:
    root = Path(os.environ.get("RECODE_RUNS_DIR", PROJECT_ROOT / "runs"))
    path = root / profile
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


FIGURES_ROOT = PROJECT_ROOT / "figures"


def figures_dir(profile: str, root=None, create: bool = False) -> Path:
    """Where profile `profile`'s figures go: `<root>/<profile>` (root: `<project>/figures`).
    `profile` is a profile (or run folder) name, never a path."""
    name = str(profile)
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"figures_dir: {profile!r} is not a profile name")
    path = (Path(root) if root is not None else FIGURES_ROOT) / name
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir(create: bool = True) -> Path:
    env = os.environ.get("RECODE_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        path = (Path(xdg) if xdg else Path.home() / ".cache") / "recode"
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def set_aside(folder) -> Path:
    """Rename `folder` to the first free `<folder>.stale-<k>` and return the new path."""
    folder = Path(folder)
    k = 1
    while (target := folder.with_name(f"{folder.name}.stale-{k}")).exists():
        k += 1
    folder.rename(target)
    return target
