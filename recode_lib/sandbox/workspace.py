"""A per-rollout workspace: files that persist between sandboxed commands, and nothing else.

    from recode_lib.sandbox.workspace import Workspace, check_path
    ws = Workspace(limits=ToolLimits(time_limit_s=5))
    ws.write("statement.md", "...")         # paths are untrusted: check_path validates them
    run = ws.run("python solution.py < examples/1.in")   # a ToolRun (tools.py)
    ws.read("solution.py"), ws.files()      # text / {path: bytes}
    ws.close()                              # forgets every file; later calls raise

The files live here, in the judge process (a dict bounded by ToolLimits: file count, file size,
total size), never on the host file system. Each `run` starts a fresh confined process of the
execution sandbox (tools.run_command) whose private /tmp receives a copy of the files; the
regular files it leaves there come back (validated again) and replace the workspace's. So:
- isolation is the sandbox's (no network, read-only system view, private uid, limits per
  command); writes can only ever reach this dict;
- no process outlives its command (the sandbox reaps them), so none outlives the rollout;
  background servers do not persist between commands (by design);
- symbolic links, devices and files over the caps are not carried back (listed as dropped);
- a command that times out or fails in the sandbox leaves the files as they were.
check_path (relpath.py, re-exported here): relative POSIX paths only. Symlink escapes cannot
happen because no link is ever kept. It does not judge answers nor talk to a model
(recode_lib.environments does).
"""

from __future__ import annotations

from recode_lib.sandbox.relpath import MAX_PATH, PathError, check_path
from recode_lib.sandbox.tools import ToolLimits, ToolRun, run_command

__all__ = ["MAX_PATH", "PathError", "Workspace", "check_path"]


class Workspace:
    """Files of one rollout plus sandboxed commands over them (module docstring)."""

    def __init__(self, limits: ToolLimits | None = None, files: dict | None = None):
        self.limits = limits or ToolLimits()
        self._files: dict[str, bytes] = {}
        self.closed = False
        for path, data in (files or {}).items():
            self.write(path, data)

    def _open(self):
        if self.closed:
            raise RuntimeError("this workspace is closed (its rollout ended)")

    def files(self) -> dict[str, bytes]:
        self._open()
        return dict(self._files)

    def size(self) -> int:
        return sum(len(v) for v in self._files.values())

    def write(self, path, data) -> str:
        """Store a file (text or bytes); returns its normalised path. ValueError when over a cap."""
        self._open()
        path = check_path(path)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"file content must be text, got {type(data).__name__}")
        data = bytes(data)
        lim = self.limits
        if len(data) > lim.max_file_bytes:
            raise ValueError(
                f"{path}: {len(data)} bytes is over the file limit of {lim.max_file_bytes}"
            )
        if self.size() - len(self._files.get(path, b"")) + len(data) > lim.max_workspace_bytes:
            raise ValueError(f"{path}: the workspace would exceed {lim.max_workspace_bytes} bytes")
        if path not in self._files and len(self._files) >= lim.max_files:
            raise ValueError(f"{path}: the workspace already holds {lim.max_files} files")
        if any(p.startswith(path + "/") for p in self._files) or any(
            path.startswith(p + "/") for p in self._files
        ):
            raise ValueError(f"{path}: a file and a folder cannot share a name")
        self._files[path] = data
        return path

    def read(self, path) -> str:
        """A file's text (undecodable bytes replaced); FileNotFoundError when absent."""
        self._open()
        path = check_path(path)
        if path not in self._files:
            raise FileNotFoundError(f"no file {path!r} in the workspace")
        return self._files[path].decode("utf-8", "replace")

    def run(self, command: str) -> ToolRun:
        """Run a shell command (bash -c) over a copy of the files; keep the files it leaves
        when it ran to its end (ok or error), else keep the old ones."""
        self._open()
        if not isinstance(command, str):
            raise ValueError(f"command must be a string, got {type(command).__name__}")
        res = run_command(
            ["/bin/bash", "-c", command], files=self._files, limits=self.limits, collect_files=True
        )
        if res.status in ("ok", "error") and res.files is not None:
            self._files = res.files
            if res.dropped:
                res.reason = (
                    res.reason + "; " if res.reason else ""
                ) + f"not kept (links, special files or over the limits): {res.dropped[:10]}"
        res.files = None  # the caller reads files through the workspace
        return res

    def close(self) -> None:
        self._files = {}
        self.closed = True
