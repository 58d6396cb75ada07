"""Benchmark: wall time and peak memory of each notebook of a profile's reproduce run, vs budgets.

    python benchmarks/bench_laptop.py [--profile laptop] [--budget-min 60] [--runs-dir runs]
    python benchmarks/bench_laptop.py --profile smoke --run [--force] [--only 03,05]

Without --run it reads what `make reproduce PROFILE=<profile>` left behind and runs nothing: per
notebook the wall time from runs/<profile>/manifest.json (recode_lib.runner.pipeline writes it),
else from the executed notebook's papermill metadata (runs/<profile>/notebooks/NN_*.ipynb:
metadata.papermill.duration), and the peak memory when a --run measured it. Prints one row per
notebook (seconds, share of the total, peak resident memory, load average, source), the total in
minutes and whether it fits the budget (the smoke profile's target: 30 minutes on 2 CPU cores,
the laptop profile's: 75, issue #25's, with the SFT start and notebook 11), and the largest peak vs
the memory budget (6 GiB: a 16 GB laptop with room to spare). Notebooks that did not complete are
listed with their status and not counted; notebooks the profile leaves out (`skip` in its section:
status `excluded`) are listed with the reason and are not part of the run.

--run executes the profile's notebooks in order, each in its own `python -m recode_lib reproduce
--profile P --only NN` process (so a notebook's kernel and everything it starts are that
process's descendants), and records per notebook in runs/<profile>/bench.json: wall seconds,
peak resident memory (ru_maxrss of the notebook's process tree, read by a small launcher process:
the largest single process among it, as `/usr/bin/time -v` reports it, not a sum) and the 1-minute
load average at the start, the end and its mean over the run (wall time on a shared machine is
inflated by the load; memory is not) and the CPU (model, CPUs, speed-relevant instruction sets,
native bf16: recode_lib.core.bf16.cpu_summary; the report names it, and says when notebooks were
measured
on different CPUs: "2 cores" of an AVX2-only CPU ran the laptop profile's SFT ~2x slower than 2
cores with avx512_bf16). RECODE_RUNS_DIR is set to --runs-dir for the children. It stops at the
first notebook that fails. It does not measure GPU memory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_MIN = {"smoke": 30.0, "laptop": 75.0}  # per profile; others: 60
BUDGET_GIB = 6.0
BENCH_FILE = "bench.json"
# Starts argv[2:], exits with its status and writes {"maxrss_kib": ...} of its descendants to
# argv[1]. Linux keeps a forked child's pre-exec resident high-water mark in that child's peak,
# so the command must be forked from a small process, not from this (possibly large) one.
PEAK_LAUNCHER = (
    "import json, resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[2:])\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "open(sys.argv[1], 'w').write(json.dumps({'maxrss_kib': ru.ru_maxrss}))\n"
    "sys.exit(rc if rc >= 0 else 128 - rc)\n"
)


def notebook_command(profile: str, stem: str, force: bool) -> list[str]:
    """The command that runs one notebook of `profile` (the pipeline's own CLI)."""
    cmd = [
        sys.executable,
        "-m",
        "recode_lib",
        "reproduce",
        "--profile",
        profile,
        "--only",
        stem[:2],
    ]
    return cmd + (["--force"] if force else [])


def measure(cmd: list[str], env: dict | None = None, sample_s: float = 5.0) -> dict:
    """Run `cmd`; {"rc", "wall_s", "peak_rss_mib", "load_start", "load_end", "load_mean"}.
    peak_rss_mib is ru_maxrss of cmd's process tree (the largest process among cmd and its
    reaped descendants), read by a small launcher (PEAK_LAUNCHER) that starts cmd: a process
    forked from this one would count this process's own pages in its peak."""
    loads = [os.getloadavg()[0]]
    t0 = time.perf_counter()
    fd, peak_file = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    proc = subprocess.Popen(
        [sys.executable, "-c", PEAK_LAUNCHER, peak_file, *cmd], env=env, cwd=ROOT
    )
    done = threading.Event()

    def sample():
        while not done.wait(sample_s):
            loads.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    end = os.getloadavg()[0]
    try:
        peak_kib = json.loads(Path(peak_file).read_text())["maxrss_kib"]
    except (OSError, ValueError, KeyError):  # the launcher died before writing it
        peak_kib = usage.ru_maxrss
    finally:
        Path(peak_file).unlink(missing_ok=True)
    return {
        "rc": proc.returncode,
        "wall_s": round(wall, 2),
        "peak_rss_mib": round(peak_kib / 1024, 1),  # Linux: kilobytes
        "load_start": round(loads[0], 2),
        "load_end": round(end, 2),
        "load_mean": round(sum(loads + [end]) / (len(loads) + 1), 2),
    }


def run_profile(
    profile: str, runs_dir: Path, *, force: bool = False, only: str | None = None, log=print
) -> dict:
    """Run the profile's notebooks one process each; bench.json under runs_dir/profile."""
    from recode_lib.core.bf16 import cpu_summary
    from recode_lib.runner.pipeline import excluded_reason, list_notebooks, load_profile, select

    spec = load_profile(profile)
    chosen = [nb for nb in select(list_notebooks(), only) if excluded_reason(nb, spec) is None]
    env = {**os.environ, "RECODE_RUNS_DIR": str(runs_dir)}
    out_file = Path(runs_dir) / profile / BENCH_FILE
    out_file.parent.mkdir(parents=True, exist_ok=True)
    bench = json.loads(out_file.read_text()) if out_file.is_file() else {}
    manifest = Path(runs_dir) / profile / "manifest.json"

    def run_id(stem):
        return (
            json.loads(manifest.read_text()).get(stem, {}).get("run_id")
            if manifest.is_file()
            else None
        )

    machine = cpu_summary()
    for nb in chosen:
        before = run_id(nb.stem)
        rec = {**measure(notebook_command(profile, nb.stem, force), env=env), "cpu": machine}
        if rec["rc"] == 0 and before is not None and run_id(nb.stem) == before:
            log(f"{nb.stem}: completed before, not rerun (--force reruns): not measured")
            continue
        bench[nb.stem] = {**rec, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        out_file.write_text(json.dumps(bench, indent=1, sort_keys=True))
        log(
            f"{nb.stem}: rc {rec['rc']}, {rec['wall_s']:.0f} s, "
            f"peak {rec['peak_rss_mib']:.0f} MiB, "
            f"load {rec['load_start']:.1f} -> {rec['load_end']:.1f} (mean {rec['load_mean']:.1f})"
        )
        if rec["rc"] != 0:
            log(f"{nb.stem} failed (exit {rec['rc']}): stopped")
            break
    return bench


def notebook_times(run: Path) -> dict[str, dict]:
    """{notebook stem: {"wall_s", "status", "source"}} from the manifest, else papermill's."""
    out: dict[str, dict] = {}
    manifest = run / "manifest.json"
    if manifest.is_file():
        for stem, rec in json.loads(manifest.read_text()).items():
            out[stem] = {
                "wall_s": rec.get("wall_s"),
                "status": rec.get("status"),
                "source": "manifest",
                "reason": rec.get("reason"),
            }
    for nb in sorted((run / "notebooks").glob("[0-9]*.ipynb")):
        stem = nb.stem
        if stem.endswith(".failed") or (
            stem in out and (out[stem]["wall_s"] is not None or out[stem]["status"] == "excluded")
        ):
            continue
        pm = json.loads(nb.read_text()).get("metadata", {}).get("papermill", {})
        if pm.get("duration") is not None:
            out[stem] = {
                "wall_s": float(pm["duration"]),
                "status": pm.get("status", "completed"),
                "source": "papermill",
            }
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="laptop")
    ap.add_argument(
        "--budget-min", type=float, default=None, help=f"default: {BUDGET_MIN} by profile, else 60"
    )
    ap.add_argument(
        "--budget-gib",
        type=float,
        default=BUDGET_GIB,
        help="peak resident memory budget of the largest process",
    )
    ap.add_argument("--runs-dir", default=os.environ.get("RECODE_RUNS_DIR", str(ROOT / "runs")))
    ap.add_argument(
        "--run",
        action="store_true",
        help="execute the notebooks (one process each) and measure them first",
    )
    ap.add_argument("--force", action="store_true", help="with --run: rerun completed notebooks")
    ap.add_argument("--only", default=None, help="with --run: these notebook numbers, e.g. 03,05")
    a = ap.parse_args(argv)
    if a.budget_min is None:
        a.budget_min = BUDGET_MIN.get(a.profile, 60.0)
    if a.run:
        run_profile(a.profile, Path(a.runs_dir), force=a.force, only=a.only)
    run = Path(a.runs_dir) / a.profile
    times = notebook_times(run)
    bench_file = run / BENCH_FILE
    bench = json.loads(bench_file.read_text()) if bench_file.is_file() else {}
    if not times:
        print(
            f"no executed notebooks under {run}: run `make reproduce PROFILE={a.profile}` first",
            file=sys.stderr,
        )
        return 2
    done = {
        k: v for k, v in times.items() if v["status"] == "completed" and v["wall_s"] is not None
    }
    total = sum(v["wall_s"] for v in done.values())
    print(f"{'notebook':28s} {'wall s':>9s} {'share':>7s} {'peak GiB':>9s} {'load':>5s}  source")
    for stem, v in times.items():
        if stem in done:
            b = bench.get(stem, {})
            rss = f"{b['peak_rss_mib'] / 1024:9.2f}" if b.get("peak_rss_mib") else f"{'-':>9s}"
            load = f"{b['load_mean']:5.1f}" if b.get("load_mean") is not None else f"{'-':>5s}"
            print(
                f"{stem:28s} {v['wall_s']:9.1f} {v['wall_s'] / total:7.1%} {rss} {load}  "
                f"{v['source']}"
            )
        elif v["status"] == "excluded":
            print(f"{stem:28s} {'-':>9s} {'-':>7s}  left out by the profile: {v.get('reason')}")
        else:
            print(f"{stem:28s} {'-':>9s} {'-':>7s}  {v['status']} (not counted)")
    fits = total <= a.budget_min * 60
    print(
        f"total {total / 60:.1f} min over {len(done)} completed notebooks; budget "
        f"{a.budget_min:.0f} min: {'within' if fits else 'OVER'} "
        f"({total / 60 / a.budget_min:.0%} of it)"
    )
    peaks = {k: b["peak_rss_mib"] for k, b in bench.items() if k in done and b.get("peak_rss_mib")}
    if peaks:
        worst = max(peaks, key=peaks.get)
        gib = peaks[worst] / 1024
        print(
            f"peak resident memory {gib:.2f} GiB ({worst}); budget {a.budget_gib:.0f} GiB: "
            f"{'within' if gib <= a.budget_gib else 'OVER'}"
            + (
                f" ({len(peaks)} of {len(done)} notebooks measured)"
                if len(peaks) < len(done)
                else ""
            )
        )
    else:
        print("peak resident memory: not measured (run with --run)")
    cpus = {
        json.dumps(b["cpu"], sort_keys=True) for k, b in bench.items() if k in done and b.get("cpu")
    }
    for c in map(json.loads, sorted(cpus)):
        print(
            f"measured on: {c['model']}, {c['cpus']} CPUs, "
            f"{' '.join(c['isa']) or 'no vector flags read'}, "
            f"bf16 {'native' if c['native_bf16'] else 'not native (float32 where auto)'}"
        )
    if len(cpus) > 1:
        print("the notebooks were measured on different CPUs: the total mixes machines")
    missing = [k for k, v in times.items() if k not in done and v["status"] != "excluded"]
    if missing:
        print(f"{len(missing)} notebook(s) not completed: the total is a lower bound")
    failed = [k for k in missing if times[k]["status"] == "failed"]
    if failed:  # a script around the benchmark must not read a lower bound as a measurement
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
