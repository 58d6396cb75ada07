"""Workspace paths as untrusted data: the one check both the workspace and the tool driver's
report go through.

    from recode_lib.sandbox.relpath import check_path, PathError
    check_path("src/main.py")    # "src/main.py"; PathError (a ValueError) for anything else

Relative POSIX paths only: no empty, absolute, `~`, `..`, NUL, control character, backslash or
over-long (MAX_PATH) path; the error names the path. It touches no file system.
"""

from __future__ import annotations

import posixpath

from recode_lib.core.errors import RecodeError

MAX_PATH = 200


class PathError(RecodeError, ValueError):
    """A workspace path that is not a plain relative path inside the workspace."""


def check_path(path) -> str:
    """The normalised relative path, or PathError."""
    if not isinstance(path, str):
        raise PathError(f"path must be a string, got {type(path).__name__}")
    if not path or len(path) > MAX_PATH:
        raise PathError(f"path must have 1 to {MAX_PATH} characters, got {len(path)}")
    if "\x00" in path or "\\" in path or any(ord(c) < 32 for c in path):
        raise PathError(f"path {path[:80]!r} contains a control character or backslash")
    if path.startswith("/") or path.startswith("~"):
        raise PathError(f"path {path[:80]!r} is absolute: use a path inside the workspace")
    parts = path.split("/")
    if ".." in parts:
        raise PathError(f"path {path[:80]!r} leaves the workspace ('..')")
    norm = posixpath.normpath(path)
    if norm in (".", "") or norm.startswith("../") or norm.startswith("/"):
        raise PathError(f"path {path[:80]!r} does not name a file in the workspace")
    return norm
