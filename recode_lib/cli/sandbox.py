"""`recode sandbox IN.jsonl --out OUT.jsonl [--workers N] [--ray ADDRESS]`: execute submissions from a jsonl file.

Each input line is a record {"id", "code", "tests", "time_limit_s"?, "memory_mb"?} (see
recode_lib/sandbox/records.py); each output line is the result {"id", "status", "outcome",
"passed", "total", "time_s", "memory_mb", "tests"} (+ "strictness", R_k for k = 1..5 and inf,
for call and stdio tests). Resumable: ids already in OUT are skipped
and results are appended (fsynced) as they finish, so an interrupted run loses nothing. Every
record is validated before anything runs; a bad one stops the command with an error naming
the file, line and field. Duplicate ids in IN are an error too. With `--ray ADDRESS` (local,
auto, ray://host:port; the `scale` extra) the records run as Ray tasks of `--chunk-size`
records on the cluster's nodes (recode_lib.sandbox.fanout), each with `--workers` sandbox
workers (default 1); results are appended as each chunk finishes, same verdicts and resume.
"""

from __future__ import annotations

import argparse
import json
import threading

from recode_lib.cli import CliError
from recode_lib.jsonl import JsonlError, JsonlStore, read_jsonl
from recode_lib.linux import LinuxRequired, require_linux
from recode_lib.sandbox import RayFanoutError, SandboxConfig, execute_many
from recode_lib.sandbox.checker import fallback_count
from recode_lib.sandbox import fanout
from recode_lib.sandbox.records import RecordError, parse_record


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="input jsonl: one submission record per line")
    parser.add_argument("--out", required=True, help="output jsonl (appended; resumable)")
    parser.add_argument("--workers", type=int, default=None, help="parallel workers (default: CPUs)")
    parser.add_argument("--early-stop", action="store_true",
                        help="stop a submission at its first failing test")
    parser.add_argument("--time-limit", type=float, default=None,
                        help="default per-test time limit in seconds (a record's own wins)")
    parser.add_argument("--memory-mb", type=int, default=None,
                        help="default memory limit in MiB (a record's own wins)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_ray_arguments(parser)


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    """--ray / --chunk-size (also `recode eval`'s)."""
    parser.add_argument("--ray", metavar="ADDRESS", default=None,
                        help="run the sandbox as Ray tasks: local (a cluster on this machine), "
                        "auto (the `ray start` cluster) or ray://host:port; --workers is then "
                        "per task (default 1). Needs pip install 'recode[scale]'")
    parser.add_argument("--chunk-size", type=int, default=None,
                        help="with --ray: records per Ray task (default: ~4 chunks per task "
                        "slot, at most 64)")


def check_ray_arguments(args) -> None:
    """CliError for --chunk-size without --ray, a bad chunk size, or ray not installed."""
    if args.chunk_size is not None and args.ray is None:
        raise CliError("--chunk-size applies to the Ray fan-out only (add --ray ADDRESS)")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise CliError(f"--chunk-size must be at least 1, got {args.chunk_size}")
    if args.ray is not None:
        try:
            fanout.import_ray()
        except ImportError as exc:
            raise CliError(f"--ray {args.ray}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    if args.ray in (None, "local"):     # a remote Ray cluster runs the sandbox on its own nodes
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
        records = read_jsonl(args.input)
        store = JsonlStore(args.out)
    except (OSError, JsonlError) as exc:
        raise CliError(str(exc)) from None
    seen = set()
    for lineno, rec in _numbered(args.input, records):
        where = f"{args.input}:{lineno}"
        try:
            parse_record(rec, config, where=where)
        except RecordError as exc:
            raise CliError(str(exc)) from None
        key = _key(rec["id"])
        if key in seen:
            raise CliError(f"{where}: duplicate id {rec['id']!r}")
        seen.add(key)
    todo = [r for r in records if r["id"] not in store]
    print(f"sandbox: {len(records)} records, {len(records) - len(todo)} already in {args.out}, "
          f"{len(todo)} to run")
    lock = threading.Lock()

    def save(result: dict) -> None:  # called from worker threads
        with lock:
            store.append(result)

    try:
        execute_many(todo, workers=args.workers, config=config, progress=not args.no_progress,
                     early_stop=args.early_stop, on_result=save, ray=args.ray,
                     chunk_size=args.chunk_size)
    except RayFanoutError as exc:
        raise CliError(f"{exc}\nthe finished chunks are in {args.out}; re-run to do the rest") \
            from None
    rows = [r for r in store.records() if _key(r["id"]) in seen]
    passed = sum(r["status"] == "passed" for r in rows)
    print(f"sandbox: {passed}/{len(rows)} passed; results in {args.out}")
    if fallback_count():
        print(f"sandbox: WARNING {fallback_count()} test(s) with a testlib checker were judged by "
              "exact match instead (no C++ compiler, or the checker does not compile)")
    return 0


def _key(value):
    """An id as a set member (lists/dicts as their sorted JSON, as JsonlStore keys them)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _numbered(path, records):
    """(line number, record) pairs: line numbers of the non-blank lines of the file."""
    with open(path, "rb") as fh:
        linenos = [n for n, raw in enumerate(fh, start=1) if raw.strip()]
    return zip(linenos, records)
