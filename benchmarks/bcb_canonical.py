"""BigCodeBench's canonical solutions through the project's record builder and sandbox: pass rate
and every failure with its reason, grouped (network, version, time, data, harness, system, other).

    PYTHONPATH=$PWD python benchmarks/bcb_canonical.py [--workers 2] [--limit N] [--json OUT]
        [--python PATH | --no-env]     # default: BigCodeBench's env when built (make bcb-env)

Each task's reference solution (code_prompt + canonical_solution) becomes a record through
sandbox.sandbox_record (so it carries BigCodeBench's interpreter when built, exactly
as an evaluation would) and is judged by sandbox.execute_many. --python judges with another
interpreter (records rebuilt with it); --no-env judges with the project's own interpreter
(the "before" figure). Groups are decided from the verdict's status and reason text only:
  time     status timeout (the task's 240 s per test)
  network  the reason names a connection/DNS/socket/HTTP failure (the sandbox has no network)
  version  AttributeError / TypeError / ImportError-from / deprecation wording that points at an
           API the installed library version lacks or changed (a heuristic: read the reasons)
  data     a resource a library fetches at run time (nltk's corpora, textblob's)
  harness  the sandbox's in-process tier differs from BigCodeBench's harness: the tests run in a
           namespace of their own (NameError for a name only the test script imports), values
           crossing the guard are plain copies or opaque stand-ins (a tuple subclass becomes a
           tuple, an identity check fails, an object the tests call is Opaque), introspection
           the guard refuses (gc.get_referents, sys._current_frames, reading the tests' code),
           and a success that cannot be verified (a native thread still running at the end)
  system   a program the task calls that is not installed (tesseract)
  env_missing  not judged: a module the interpreter lacks (not counted)
  other    everything else (the reason is printed)
BigCodeBench's own harness is the reference (its Docker image passes all but a few canonical
solutions); differences here are the versions (docs/sandbox.md) and the sandbox (no network,
tests run in their own namespace: data/bigcodebench.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time

from recode_lib.core.bench_env import bcb_python
from recode_lib.core.paths import data_dir
from recode_lib.data.bigcodebench import load_bigcodebench
from recode_lib.sandbox import SandboxConfig, execute_many, isolation_mode, sandbox_record

NETWORK = re.compile(
    r"connect|network|resolv|name or service|nodename|socket|urlopen|"
    r"http(s)?connectionpool|max retries|urlerror|gaierror|unreachable|"
    r"remote end|ssl",
    re.I,
)
DATA = re.compile(
    r"resource \w+ not found|nltk_data|nltk\.download|LookupError|"
    r"MissingCorpusError",
    re.I,
)
HARNESS = re.compile(
    r"NameError: name '\w+' is not defined|Opaque|refused in the sandbox|"
    r"cannot be read by the submission|could not be verified|"
    r"'tuple' object has no attribute|\) is not \{|\} is not \{",
    re.I,
)
SYSTEM = re.compile(
    r"tesseract|not installed or it's not in your path|No such file or "
    r"directory: '(ffmpeg|tesseract)",
    re.I,
)
VERSION = re.compile(
    r"has no attribute|unexpected keyword|got an unexpected|cannot import name|"
    r"deprecat|removed in|no longer|positional argument|is not supported|"
    r"FutureWarning|takes \d+ positional",
    re.I,
)


def group(res: dict) -> str:
    status, reason = res.get("status"), str(res.get("reason") or "")
    if status == "env_missing":
        return "env_missing"
    if status == "timeout":
        return "time"
    if NETWORK.search(reason):
        return "network"
    if DATA.search(reason):
        return "data"
    if HARNESS.search(reason):
        return "harness"
    if SYSTEM.search(reason):
        return "system"
    if VERSION.search(reason):
        return "version"
    return "other"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--ids", default="", help="comma-separated task ids (bigcodebench/N) only")
    ap.add_argument("--json", default=None, help="write every verdict here (jsonl)")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--python", default=None, help="judge with this interpreter")
    which.add_argument(
        "--no-env",
        action="store_true",
        help="judge with the project's own interpreter (no BigCodeBench env)",
    )
    args = ap.parse_args(argv)
    if data_dir() is None:
        print(
            "needs the benchmark data directory (RECODE_DATA_DIR or ../shared/data)",
            file=sys.stderr,
        )
        return 2
    problems = load_bigcodebench(data_dir(), limit=args.limit, download=False)
    if args.ids:
        wanted = {x.strip() for x in args.ids.split(",")}
        problems = [p for p in problems if p.id in wanted]
    records = []
    for p in problems:
        rec = sandbox_record(p.id, p.reference_solution, p)
        if args.no_env:
            rec.pop("python", None)
        elif args.python:
            rec["python"] = args.python
        records.append(rec)
    python = args.python or (None if args.no_env else bcb_python()) or sys.executable
    cfg = SandboxConfig(workers=args.workers)
    print(
        f"{len(records)} canonical solutions; interpreter {python}; "
        f"isolation {isolation_mode(cfg.replace(python=python))}; workers {args.workers}",
        flush=True,
    )
    t0 = time.monotonic()
    results = execute_many(records, config=cfg, progress=sys.stderr.isatty())
    wall = time.monotonic() - t0
    if args.json:
        with open(args.json, "w") as fh:
            for r in results:
                fh.write(
                    json.dumps(
                        {
                            k: r.get(k)
                            for k in (
                                "id",
                                "status",
                                "outcome",
                                "passed",
                                "total",
                                "time_s",
                                "reason",
                            )
                        }
                    )
                    + "\n"
                )
    passed = sum(r["outcome"] == "correct" for r in results)
    counted = [r for r in results if r["outcome"] != "not_counted"]
    groups = collections.defaultdict(list)
    for r in results:
        if r["outcome"] != "correct":
            groups[group(r)].append(r)
    print(
        f"\npassed {passed} of {len(results)} ({passed / max(1, len(results)):.1%}); "
        f"of the {len(counted)} judged: {passed / max(1, len(counted)):.1%}; "
        f"not counted (env_missing) {len(results) - len(counted)}; wall {wall:.0f} s"
    )
    for name in ("network", "version", "time", "data", "harness", "system", "other", "env_missing"):
        rows = groups.get(name, [])
        if not rows:
            continue
        print(f"\n[{name}] {len(rows)}")
        for r in sorted(rows, key=lambda r: int(str(r["id"]).split("/")[-1])):
            print(f"  {r['id']}: {r['status']}: {str(r.get('reason') or '')[:220]}")
    if groups.get("env_missing"):
        mods = collections.Counter(
            m
            for r in groups["env_missing"]
            for m in str(r.get("reason") or "").split(": ", 1)[-1].split(", ")
        )
        print(f"\nenv_missing modules: {dict(mods.most_common())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
