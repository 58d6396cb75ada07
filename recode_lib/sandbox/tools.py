"""Run one command in the sandbox and get its status, stdout, stderr (and files) back: the
backend of the tool-use settings (a model's `run_python` call, a terminal command).

    from recode_lib.sandbox.tools import ToolLimits, run_command
    res = run_command(["python", "main.py"], files={"main.py": b"print(input())"}, stdin="hi",
                      limits=ToolLimits(time_limit_s=5, max_output_chars=2000))
    res.status, res.exit_code, res.stdout, res.stderr, res.files, res.reason
    res.text()      # what a model sees: status, exit code, stdout and stderr, truncated

How: the command runs under the execution sandbox's own isolation, not a second mechanism.
A small driver program (DRIVER, standard library only) is submitted as a one-case stdio job
to a warm worker of the sandbox pool (pool.py), which forks a confined child (limits.confine:
network namespace, read-only system view, private size-capped /tmp, private uid, rlimits) as
for any submission. The driver materialises `files` under its private /tmp, runs the command
there in its own session with the time limit, kills that session, reads back at most
`max_output_chars` bytes of stdout/stderr and (when asked) the regular files left in the
working folder, and prints one JSON report as its stdout. When the job ends the worker reaps
every process the command left (limits.reap), so no process outlives a call.

Everything in the report is untrusted (the command shares the driver's uid and could forge it):
`parse_report` bounds and type-checks each field, decodes bytes with replacement, re-truncates
outputs and re-validates every returned path (relpath.check_path) and size, and anything
malformed becomes status "sandbox_error" with a reason. run_command never raises because of
what the command does. Statuses: ok | error (non-zero exit) | timeout | output_limit | memory
(the sandbox's memory verdict) | sandbox_error. It does not keep state between calls
(workspace.py does) nor judge answers (the rewards do).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from recode_lib.sandbox.config import SandboxConfig
from recode_lib.sandbox.limits import ALLOCATOR_ENV
from recode_lib.sandbox.pool import WorkerDied, get_pool
from recode_lib.sandbox.protocol import ProtocolError, load_json
from recode_lib.sandbox.records import parse_record
from recode_lib.sandbox.relpath import PathError, check_path

STATUSES = ("ok", "error", "timeout", "output_limit", "memory", "sandbox_error")


@dataclass(frozen=True)
class ToolLimits:
    """Limits of one tool call (every field documented; defaults suit the smoke profile)."""

    time_limit_s: float = 10.0  # wall clock of the command
    memory_mb: int = 1024  # address space of each process (RLIMIT_AS)
    max_output_chars: int = 4096  # stdout and stderr each, as returned to the model
    max_file_bytes: int = 1 << 20  # one file of the workspace (larger ones are not kept)
    max_files: int = 256  # files kept in a workspace
    max_workspace_bytes: int = 4 << 20  # all files of a workspace together
    workers: int | None = None  # sandbox pool size (None: grows on demand)

    def __post_init__(self):
        for name in (
            "time_limit_s",
            "memory_mb",
            "max_output_chars",
            "max_file_bytes",
            "max_files",
            "max_workspace_bytes",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"ToolLimits.{name} must be a positive number, got {v!r}")

    def sandbox_config(self):
        """The SandboxConfig of the pool that runs these calls (one pool per limits)."""
        report = 4 * (self.max_workspace_bytes + 2 * self.max_output_chars) // 3 + (1 << 16)
        return SandboxConfig(
            time_limit_s=float(self.time_limit_s) + 10.0,
            memory_mb=int(self.memory_mb),
            max_output_bytes=int(report),
            tmp_size_mb=max(64, 3 * self.max_workspace_bytes // (1 << 20) + 16),
            workers=self.workers,
        )


@dataclass
class ToolRun:
    """One command's result as the judge validated it."""

    status: str
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0  # the full sizes, before truncation
    stderr_bytes: int = 0
    files: dict | None = None  # {path: bytes} when files were collected
    dropped: list = field(default_factory=list)  # paths not kept (links, too large, over caps)
    reason: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def text(self) -> str:
        """The result as the model reads it."""
        lines = [
            f"status: {self.status}"
            + (f" (exit code {self.exit_code})" if self.exit_code not in (None, 0) else "")
        ]
        if self.reason:
            lines.append(f"note: {self.reason}")
        for name, body, size in (
            ("stdout", self.stdout, self.stdout_bytes),
            ("stderr", self.stderr, self.stderr_bytes),
        ):
            if body or size:
                more = len(body.encode("utf-8", "replace"))
                cut = f"\n[... truncated: {size} bytes in all]" if size > more else ""
                lines.append(f"{name}:\n{body}{cut}")
        return "\n".join(lines)


# The program the sandbox runs (standard library only; its stdout is the report).
DRIVER = (
    "ALLOCATOR_ENV = %r\n" % ALLOCATOR_ENV
    + r"""
import base64, json, os, signal, stat, subprocess, sys, time
req = json.loads(sys.stdin.read())
base = os.getcwd()
ws = os.path.join(base, "ws")
os.mkdir(ws)
for rel, data in req["files"]:
    full = os.path.join(ws, rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(base64.b64decode(data))
with open(os.path.join(base, ".stdin"), "wb") as fh:
    fh.write(req["stdin"].encode("utf-8", "surrogateescape"))
env = {"PATH": os.path.dirname(sys.executable) + ":/usr/local/bin:/usr/bin:/bin",
       "HOME": ws, "TMPDIR": ws, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
       "PYTHONHASHSEED": "0", **ALLOCATOR_ENV}
fi = open(os.path.join(base, ".stdin"), "rb")
fo = open(os.path.join(base, ".stdout"), "wb")
fe = open(os.path.join(base, ".stderr"), "wb")
t0 = time.monotonic()
status, code = "ok", None
try:
    p = subprocess.Popen(req["argv"], cwd=ws, stdin=fi, stdout=fo, stderr=fe, env=env,
                         start_new_session=True, close_fds=True)
except OSError as exc:
    p = None
    status = "error"
    fe.write(("cannot start: %s\n" % exc).encode())
if p is not None:
    try:
        code = p.wait(timeout=req["timeout"])
    except subprocess.TimeoutExpired:
        status = "timeout"
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    if code is None:
        p.wait()
    if status == "ok" and code != 0:
        status = "output_limit" if code == -signal.SIGXFSZ else "error"
seconds = time.monotonic() - t0
for f in (fi, fo, fe):
    f.close()
def head(name, n):
    path = os.path.join(base, name)
    with open(path, "rb") as fh:
        return base64.b64encode(fh.read(n)).decode(), os.path.getsize(path)
out, nout = head(".stdout", req["max_output"])
err, nerr = head(".stderr", req["max_output"])
files, dropped, total = [], [], 0
if req["collect"]:
    for root, dirs, names in os.walk(ws, followlinks=False):
        dirs.sort()
        for d in list(dirs):
            if os.path.islink(os.path.join(root, d)):
                dropped.append(os.path.relpath(os.path.join(root, d), ws))
                dirs.remove(d)
        for name in sorted(names):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, ws)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size > req["max_file"] \
                    or len(files) >= req["max_files"] or total + st.st_size > req["max_total"]:
                dropped.append(rel)
                continue
            try:
                with open(full, "rb") as fh:
                    data = fh.read(req["max_file"] + 1)
            except OSError:
                dropped.append(rel)
                continue
            total += len(data)
            files.append([rel, base64.b64encode(data).decode()])
sys.stdout.write(json.dumps({"status": status, "exit_code": code, "stdout": out,
                             "stdout_bytes": nout, "stderr": err, "stderr_bytes": nerr,
                             "files": files if req["collect"] else None,
                             "dropped": dropped[:1000], "seconds": seconds}))
"""
)


def _b64(value, limit: int) -> bytes:
    if not isinstance(value, str) or len(value) > 4 * limit // 3 + 8:
        raise ValueError("bad encoded field")
    try:
        return base64.b64decode(value, validate=True)[:limit]
    except (binascii.Error, ValueError):
        raise ValueError("bad base64") from None


def _size(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("bad size")
    return value


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters of text."""
    return text if len(text) <= limit else text[:limit]


def parse_report(out, limits: ToolLimits) -> ToolRun:
    """The driver's report (untrusted text) as a validated ToolRun; never raises."""
    try:
        if not isinstance(out, str) or len(out) > limits.sandbox_config().max_output_bytes:
            raise ValueError("report missing or too large")
        # bounded as every line from the sandbox is (depth, containers, elements, strings),
        # though the command cannot reach the driver's stdout (its /proc/<pid>/fd is refused):
        # plain json.loads of a few MB of `[],` would hold ~20x their size in the trainer
        rep = load_json(out.encode("utf-8", "surrogatepass"))
        if not isinstance(rep, dict):
            raise ValueError("report is not an object")
        status = rep.get("status")
        if status not in ("ok", "error", "timeout", "output_limit"):
            raise ValueError(f"bad status {str(status)[:40]!r}")
        code = rep.get("exit_code")
        if code is not None and (
            isinstance(code, bool) or not isinstance(code, int) or not -256 <= code <= 1 << 16
        ):
            raise ValueError("bad exit code")
        n = int(limits.max_output_chars)
        stdout = _b64(rep.get("stdout"), n).decode("utf-8", "replace")
        stderr = _b64(rep.get("stderr"), n).decode("utf-8", "replace")
        seconds = rep.get("seconds")
        seconds = (
            float(seconds)
            if isinstance(seconds, (int, float))
            and not isinstance(seconds, bool)
            and 0 <= seconds < 1e6
            else 0.0
        )
        dropped = rep.get("dropped") or []
        if not isinstance(dropped, list):
            raise ValueError("bad dropped list")
        dropped = [str(d)[:200] for d in dropped[:1000]]
        files = rep.get("files")
        if files is not None:
            if not isinstance(files, list) or len(files) > limits.max_files:
                raise ValueError("bad file list")
            kept, total = {}, 0
            for item in files:
                if not (isinstance(item, list) and len(item) == 2):
                    raise ValueError("bad file entry")
                try:
                    path = check_path(item[0])
                except PathError as exc:
                    raise ValueError(f"bad file path: {exc}") from None
                data = _b64(item[1], limits.max_file_bytes + 1)
                if (
                    len(data) > limits.max_file_bytes
                    or total + len(data) > limits.max_workspace_bytes
                ):
                    dropped.append(path)
                    continue
                total += len(data)
                kept[path] = data
            files = kept
        return ToolRun(
            status=status,
            exit_code=code,
            stdout=truncate(stdout, n),
            stderr=truncate(stderr, n),
            stdout_bytes=_size(rep.get("stdout_bytes")),
            stderr_bytes=_size(rep.get("stderr_bytes")),
            files=files,
            dropped=dropped,
            seconds=seconds,
        )
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:
        return ToolRun(
            status="sandbox_error", reason=f"invalid report from the sandbox: {exc}"[:300]
        )


def run_command(
    argv: list[str],
    files: dict | None = None,
    stdin: str = "",
    limits: ToolLimits | None = None,
    collect_files: bool = False,
) -> ToolRun:
    """Run `argv` in a fresh confined process with `files` ({relative path: bytes | str}) in its
    working folder and `stdin` as input; returns the validated ToolRun (never raises because
    of the command; raises ValueError for a bad argv/files/stdin from the caller)."""
    limits = limits or ToolLimits()
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError(f"argv must be a non-empty list of strings, got {argv!r:.80}")
    if not isinstance(stdin, str):
        raise ValueError(f"stdin must be a string, got {type(stdin).__name__}")
    payload_files = []
    for path, data in (files or {}).items():
        data = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
        if not isinstance(data, (bytes, bytearray)):
            raise ValueError(f"file {path!r}: content must be bytes or text")
        payload_files.append([check_path(path), base64.b64encode(bytes(data)).decode()])
    payload = json.dumps(
        {
            "argv": argv,
            "files": payload_files,
            "stdin": stdin,
            "timeout": float(limits.time_limit_s),
            "max_output": int(limits.max_output_chars),
            "collect": bool(collect_files),
            "max_file": int(limits.max_file_bytes),
            "max_files": int(limits.max_files),
            "max_total": int(limits.max_workspace_bytes),
        }
    )
    config = limits.sandbox_config()
    spec = parse_record(
        {
            "id": "tool",
            "code": DRIVER,
            "tests": {"kind": "stdio", "cases": [{"input": payload, "output": ""}]},
        },
        config,
        where="tool call",
    )
    pool = get_pool(config)
    got: dict = {}

    def on_message(msg):
        if msg.tag == "T":
            got["t"] = msg.body
        elif msg.tag == "X":
            got["x"] = msg.body
        return False

    with pool.worker() as slot:
        clean = False
        try:
            slot[0].run(dict(spec.job, early_stop=False), 1, on_message)
            clean = True
        except (WorkerDied, ProtocolError) as exc:
            return ToolRun(status="sandbox_error", reason=f"sandbox: {exc}"[:300])
        except Exception as exc:  # a judge-side bug: this call fails, the next is unaffected
            return ToolRun(
                status="sandbox_error", reason=f"judge error: {type(exc).__name__}: {exc}"[:300]
            )
        finally:
            if not clean:
                pool.replace(slot)
    body = got.get("t") or got.get("x") or {}
    st = body.get("st")
    if st == "ok":
        return parse_report(body.get("out"), limits)
    if st == "timeout":
        return ToolRun(status="timeout", reason="the sandbox's wall-clock limit")
    if st == "memory":
        return ToolRun(status="memory", reason="the sandbox's memory limit")
    if st == "output":
        return ToolRun(status="output_limit", reason="the sandbox's output limit")
    if st in ("error", "crash") and got.get("t"):
        # the driver itself ended abnormally (the command killed it, say): the command's
        # failure, named with its signal, not the sandbox's and never a memory verdict
        return ToolRun(status="error", reason=f"the command's driver {str(body.get('e'))[:200]}")
    return ToolRun(status="sandbox_error", reason=f"sandbox: {str(body.get('e'))[:200]}")
