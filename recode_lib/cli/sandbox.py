"""`recode sandbox IN.jsonl --out OUT.jsonl [--workers N] [--strict] [--ray ADDRESS]`: execute
submissions from a jsonl file.

Each input line is a record {"id", "code", "tests", "time_limit_s"?, "memory_mb"?} (see
recode_lib/sandbox/records.py); each output line is the result {"id", "status", "outcome",
"passed", "total", "time_s", "memory_mb", "tests"} (+ "strictness", R_k for k = 1..5 and inf,
for call and stdio tests). Resumable: ids already in OUT are skipped
and results are appended (fsynced) as they finish, so an interrupted run loses nothing.
Every line is validated before anything runs. A bad one — not JSON or not UTF-8, nested too
deeply to parse, a field of the wrong type or one the format does not have, an id that cannot
be written back as strict JSON (NaN, infinity, a lone surrogate, null), an id given on several
lines (ids compare as JSON values: 1, 1.0 and true are three ids) — gets an output line
{"id", "status": "invalid_record", "outcome": "format_error", "reason": "IN:LINE: ...",
"line": LINE, ...} and the rest are judged; its id is the record's
when usable, else null (such lines are keyed by their input line on resume). Output lines are
always strict JSON. `--strict` instead stops at the first bad line with an error naming the
file, line and field, before anything runs. With `--ray ADDRESS` (local,
auto, ray://host:port; the `scale` extra) the records run as Ray tasks of `--chunk-size`
records on the cluster's nodes (recode_lib.sandbox.fanout), each with `--workers` sandbox
workers (default 1); results are appended as each chunk finishes, same verdicts and resume.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from dataclasses import dataclass

from recode_lib.cli import CliError
from recode_lib.core import ray_cluster
from recode_lib.core.jsonl import JsonlError, JsonlStore
from recode_lib.core.linux import LinuxRequired, require_linux
from recode_lib.core.locks import OutputLock
from recode_lib.sandbox import RayFanoutError, SandboxConfig, execute_many
from recode_lib.sandbox.checker import fallback_count
from recode_lib.sandbox.records import (
    RecordError,
    check_fields,
    check_id,
    parse_record,
    runs_in_process,
)
from recode_lib.sandbox.result import IN_PROCESS, INVALID_RECORD, ISOLATED, Outcome


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input jsonl: one submission record per line")
    parser.add_argument("--out", required=True, help="output jsonl (appended; resumable)")
    parser.add_argument(
        "--workers", type=int, default=None, help="parallel workers (default: CPUs)"
    )
    parser.add_argument(
        "--early-stop", action="store_true", help="stop a submission at its first failing test"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="default per-test time limit in seconds (a record's own wins)",
    )
    parser.add_argument(
        "--memory-mb",
        type=int,
        default=None,
        help="default memory limit in MiB (a record's own wins)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first bad input line (default: write it as an "
        "invalid_record result and judge the rest)",
    )
    add_ray_arguments(parser)


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """--ray / --chunk-size (also `recode eval`'s)."""
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="run the sandbox as Ray tasks: local (a cluster on this machine), "
        "auto (the `ray start` cluster) or ray://host:port; --workers is then "
        "per task (default 1). Needs pip install 'recode[scale]'",
    )
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=None,
        help="with --ray: records per Ray task (default: ~4 chunks per task slot, at most 64)",
    )


def check_ray_arguments(args) -> None:
    """CliError for --chunk-size without --ray, a bad chunk size, or ray not installed."""
    if args.chunk_size is not None and args.ray is None:
        raise CliError("--chunk-size applies to the Ray fan-out only (add --ray ADDRESS)")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise CliError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    if args.ray is not None:
        try:
            ray_cluster.import_ray()
        except ImportError as exc:
            raise CliError(f"--ray {args.ray}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    if args.ray in (None, "local"):  # a remote Ray cluster runs the sandbox on its own nodes
        try:
            require_linux("`recode sandbox`")
        except LinuxRequired as exc:
            raise CliError(str(exc)) from None
    if args.workers is not None and args.workers < 1:
        raise CliError(f"--workers must be at least 1, got {args.workers}")
    check_ray_arguments(args)
    changes = {}
    if args.time_limit is not None:
        changes["time_limit_s"] = args.time_limit
    if args.memory_mb is not None:
        changes["memory_mb"] = args.memory_mb
    try:
        config = SandboxConfig(**changes)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        lines = read_records(args.input, config)
    except (OSError, JsonlError) as exc:
        raise CliError(str(exc)) from None
    with OutputLock(args.out):  # one writer per output file (a second is refused)
        return run_locked(args, config, lines)


def run_locked(args: argparse.Namespace, config: SandboxConfig, lines: list) -> int:
    """The rest of `run`, while this process holds the output's writer lock: the stored
    results are read after the lock is taken, so nothing another writer finished is redone."""
    try:
        store = JsonlStore(args.out, key_of=_stored_key)
    except (OSError, JsonlError) as exc:
        raise CliError(str(exc)) from None
    bad = [ln for ln in lines if ln.reason is not None]
    if args.strict and bad:
        raise CliError(bad[0].reason)
    invalid = [invalid_result(ln) for ln in bad]
    n_new = store.extend(invalid)  # not twice on a re-run, nor over a stored result
    records = [ln.record for ln in lines if ln.reason is None]
    seen = {_key(r["id"]) for r in records} | {_stored_key(r) for r in invalid}
    stored = store.ids()  # _stored_key's keys: ids as JSON values
    todo = [r for r in records if _key(r["id"]) not in stored]
    print(
        f"sandbox: {len(lines)} records, {len(bad)} invalid, "
        f"{len(records) - len(todo)} already in {args.out}, {len(todo)} to run"
    )
    if bad:
        print(
            f"sandbox: {len(bad)} invalid record(s) written as status {INVALID_RECORD!r} "
            f"({n_new} new), first: {bad[0].reason}",
            file=sys.stderr,
        )
    lock = threading.Lock()

    def save(result: dict) -> None:  # called from worker threads
        with lock:
            store.append(strict_json(result))

    try:
        execute_many(
            todo,
            workers=args.workers,
            config=config,
            progress=not args.no_progress,
            early_stop=args.early_stop,
            on_result=save,
            ray=args.ray,
            chunk_size=args.chunk_size,
        )
    except RayFanoutError as exc:
        raise CliError(
            f"{exc}\nthe finished chunks are in {args.out}; re-run to do the rest"
        ) from None
    rows = [r for r in store.records() if _stored_key(r) in seen]
    passed = sum(r["status"] == "passed" for r in rows)
    print(f"sandbox: {passed}/{len(rows)} passed; results in {args.out}")
    if fallback_count():
        print(
            f"sandbox: WARNING {fallback_count()} test(s) with a testlib checker were judged by "
            "exact match instead (no C++ compiler, or the checker does not compile)"
        )
    return 0


@dataclass
class Line:
    """One non-blank input line: its record when valid, else why not (one line, naming
    IN:LINE) and its id when that id is usable as an output id (else None)."""

    lineno: int
    record: object  # the parsed JSON (None when the line is not JSON)
    id: object = None
    reason: str | None = None


def read_records(path, config) -> list[Line]:
    """Every non-blank line of `path`, validated (records.check_fields, parse_record); a bad
    line is a Line with its reason, never an exception. Lines sharing an id: the first one is
    a Line with a reason naming all of them, the others are dropped (one output line per id)."""
    with open(path, "rb") as fh:
        data = fh.read()
    lines: list[Line] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            lines.append(_read_line(raw, f"{path}:{lineno}", lineno, config))
    first: dict = {}
    for ln in lines:
        if ln.id is not None:
            first.setdefault(_key(ln.id), []).append(ln)
    out = []
    for ln in lines:
        same = first.get(_key(ln.id), []) if ln.id is not None else [ln]
        if len(same) > 1:
            if same[0] is not ln:
                continue
            others = ", ".join(str(o.lineno) for o in same[1:])
            ln.reason = (
                f"{path}:{ln.lineno}: duplicate id {ln.id!r:.80} "
                f"(also on line(s) {others}); none of them is run"
            )
        out.append(ln)
    for ln in out:
        if ln.reason is not None:
            ln.reason = _one_line(ln.reason)
    return out


def _read_line(raw: bytes, where: str, lineno: int, config) -> Line:
    try:
        rec = json.loads(raw)
    except RecursionError:
        return Line(lineno, None, reason=f"{where}: not valid JSON (nested too deeply to parse)")
    except UnicodeDecodeError:
        return Line(lineno, None, reason=f"{where}: not valid JSON (not UTF-8)")
    except ValueError as exc:  # JSONDecodeError, an integer beyond the digit limit
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return Line(lineno, None, reason=f"{where}: not valid JSON ({why})")
    rid = None
    if isinstance(rec, dict) and "id" in rec:
        try:
            check_id(rec["id"], where)
            rid = rec["id"]
        except RecordError:
            pass  # parse_record below says why
    try:
        check_fields(rec, where)
        parse_record(rec, config, where=where)
    except RecordError as exc:
        return Line(lineno, rec, rid, str(exc))
    except Exception as exc:  # any failure of one line is that line's verdict, not the run's
        return Line(
            lineno,
            rec,
            rid,
            f"{where}: {type(exc).__name__} while validating the record ({str(exc):.200})",
        )
    return Line(lineno, rec, rid)


def invalid_result(line: Line) -> dict:
    """The output line of a bad input line: status invalid_record, outcome format_error (the
    record is not a well-formed submission: nothing ran, it scores 0 on every R_k)."""
    tests = line.record.get("tests") if isinstance(line.record, dict) else None
    return {
        "id": line.id,
        "status": INVALID_RECORD,
        "outcome": Outcome.FORMAT_ERROR.value,
        "passed": 0,
        "total": 0,
        "time_s": 0.0,
        "memory_mb": None,
        "tests": [],
        "trust": IN_PROCESS if runs_in_process(tests) else ISOLATED,
        "reason": line.reason,
        "line": line.lineno,
    }


def strict_json(value):
    """`value` unchanged when it is strict JSON in UTF-8 (every result the judge builds is),
    else a copy with lone surrogates escaped and non-finite numbers as null: a last guard so an
    output line can never be NaN-JSON or stop the run with UnicodeEncodeError."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
        return value
    except (ValueError, UnicodeError):
        return _strict(value)


def _strict(value):
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict):
        return {_strict(k) if isinstance(k, str) else k: _strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strict(v) for v in value]
    return value


def _one_line(text: str) -> str:
    """`text` on one line and encodable as UTF-8 (a lone surrogate of a file name escaped)."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return (
        text.replace("\r", "\\r")
        .replace("\n", "\\n")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
        .replace("\x85", "\\x85")
    )


def _key(value) -> str:
    """An id as a set member: its JSON text (keys sorted), so ids compare as the JSON values
    they are — 1, 1.0 and true are three ids (as Python values 1 == 1.0 == True), "1" a fourth;
    [1,{"a":2}] written with or without spaces is one."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _stored_key(result: dict):
    """The resume key of an output line: its id, or ("line", N) for an invalid_record line
    whose input had no usable id (id null)."""
    if result.get("id") is None and result.get("status") == INVALID_RECORD:
        return ("line", result.get("line"))
    return _key(result.get("id"))
