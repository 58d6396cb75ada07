"""Benchmark: one-pass merge of a 9-alpha grid vs 9 mergekit runs vs a plain copy (I/O floor).

    python benchmarks/bench_merge.py [--dtype bfloat16] [--repeats 3] [--workdir /tmp/bench_merge]
                                     [--mergekit /tmp/mergekit-venv/bin/mergekit-yaml]

Checkpoints: the embedded SmolLM2-135M (recode_lib.core.models.resolve_model("smollm2")) cast to
--dtype, and a perturbed copy (every float tensor + 1% of its std in Gaussian noise). A second,
twice-as-deep model (60 layers: the 30 real layers each used twice, same largest tensor) shows
that peak memory follows the largest tensor, not the model size.

Every measurement runs in its own subprocess (peak RSS from os.wait4) after os.sync(), with the
sources already in the page cache; outputs are deleted between runs. Reported per method:
process wall time (interpreter + imports included), the in-process work time, peak RSS.
  one-pass  `recode merge` with all 9 alphas (our implementation)
  mergekit  9 x `mergekit-yaml` task_arithmetic (base=low, weight=alpha, normalize false,
            float32 math, out_dtype = source dtype); installed in a SEPARATE venv
            (pip install mergekit==0.1.5 into /tmp/mergekit-venv), skipped when absent
  copy      the I/O floor: 9 plain copies (shutil.copyfile) of the low checkpoint folder
Targets: one-pass >= 4x faster than mergekit; within 1.5x of the copy floor; peak memory the
same on both model sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ALPHAS = (-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)

MERGE_CHILD = """
import sys, time, json
t0 = time.perf_counter()
import torch  # noqa: F401  (merge_grid imports it lazily: keep the import out of the work time)
from recode_lib.weights.merge import MergeConfig, merge_grid
t1 = time.perf_counter()
merge_grid(MergeConfig(sys.argv[1], sys.argv[2], tuple(json.loads(sys.argv[3])), sys.argv[4],
                       progress=False))
print(json.dumps({"work_s": time.perf_counter() - t1, "import_s": t1 - t0}))
"""

IMPORT_CHILD = """
import json, time
t0 = time.perf_counter()
import torch, recode_lib.weights.merge
print(json.dumps({"work_s": time.perf_counter() - t0}))
"""

COPY_CHILD = """
import sys, time, json, shutil, pathlib
t0 = time.perf_counter()
src, out, n = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    dst = out / f"copy_{i}"
    dst.mkdir(parents=True)
    for p in src.iterdir():
        if p.is_file():
            shutil.copyfile(p, dst / p.name)
print(json.dumps({"work_s": time.perf_counter() - t0}))
"""


def run_child_rss(cmd: list[str]) -> dict:
    """Run cmd after os.sync(); wall time, peak RSS (MiB) and the child's last JSON line."""
    os.sync()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    line = [ln for ln in out.decode().splitlines() if ln.startswith("{")]
    res = json.loads(line[-1]) if line else {}
    res.update(wall_s=wall, peak_mib=usage.ru_maxrss / 1024)
    return res


def prepare(workdir: Path, dtype: str) -> dict[str, tuple[Path, Path]]:
    """Build (low, high) for the 135M model and its 2x-deep variant, once."""
    import torch
    from safetensors.torch import load_file, save_file

    from recode_lib.core.models import resolve_model

    src = Path(resolve_model("smollm2"))
    pairs = {}
    state = {
        k: v.to(getattr(torch, dtype)) for k, v in load_file(src / "model.safetensors").items()
    }
    cfg = json.loads((src / "config.json").read_text())
    n_layers = cfg["num_hidden_layers"]
    deep = {}
    for k, v in state.items():
        if k.startswith("model.layers."):
            i, rest = k[len("model.layers.") :].split(".", 1)
            deep[f"model.layers.{i}.{rest}"] = v
            deep[f"model.layers.{int(i) + n_layers}.{rest}"] = v.clone()
        else:
            deep[k] = v
    for name, sd, layers in (("135M", state, n_layers), ("2x-deep", deep, 2 * n_layers)):
        low, high = workdir / name / "low", workdir / name / "high"
        if (high / "model.safetensors").exists() and json.loads(
            (low / "config.json").read_text()
        ).get("torch_dtype") == dtype:
            pairs[name] = (low, high)
            continue
        gen = torch.Generator().manual_seed(0)
        for folder, tensors in ((low, sd), (high, None)):
            folder.mkdir(parents=True, exist_ok=True)
            for p in src.iterdir():
                if p.is_file() and p.suffix != ".safetensors" and not p.name.startswith("."):
                    shutil.copyfile(p, folder / p.name)
            c = dict(cfg, num_hidden_layers=layers, torch_dtype=dtype, dtype=dtype)
            (folder / "config.json").write_text(json.dumps(c, indent=2))
            if tensors is None:
                tensors = {
                    k: (
                        v.float() + 0.01 * v.float().std() * torch.randn(v.shape, generator=gen)
                    ).to(v.dtype)
                    for k, v in sd.items()
                }
            save_file(tensors, folder / "model.safetensors", metadata={"format": "pt"})
        pairs[name] = (low, high)
    return pairs


def mergekit_cmds(mk: str, low: Path, high: Path, out: Path, dtype: str) -> list[list[str]]:
    cmds = []
    for a in ALPHAS:
        cfg = out / f"mk_{a}.yml"
        cfg.write_text(
            f"merge_method: task_arithmetic\nbase_model: {low}\nmodels:\n"
            f"  - model: {high}\n    parameters:\n      weight: {a}\n"
            f"parameters:\n  normalize: false\ndtype: float32\nout_dtype: {dtype}\n"
        )
        cmds.append([mk, str(cfg), str(out / f"mk_alpha_{a}"), "--quiet"])
    return cmds


def largest_mib(folder: Path) -> float:
    from recode_lib.weights.safetensors_io import scan_checkpoint

    return max(t[2] for t in scan_checkpoint(folder).tensors.values()) / 1024**2


def gib(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1024**3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32", "float16"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", default="/tmp/bench_merge")
    ap.add_argument(
        "--mergekit",
        default=os.environ.get("RECODE_MERGEKIT_YAML", "/tmp/mergekit-venv/bin/mergekit-yaml"),
    )
    ap.add_argument("--mergekit-repeats", type=int, default=1)
    ap.add_argument("--prepare-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    workdir = Path(args.workdir)
    if args.prepare_only:  # in a child, so the parent never holds the models
        prepare(workdir, args.dtype)  # (a forked child inherits the parent's peak RSS)
        return 0
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--prepare-only",
            "--dtype",
            args.dtype,
            "--workdir",
            str(workdir),
        ],
        check=True,
    )
    pairs = {
        name: (workdir / name / "low", workdir / name / "high") for name in ("135M", "2x-deep")
    }
    py = sys.executable
    have_mk = Path(args.mergekit).exists()
    if not have_mk:
        print(
            f"NOTE: {args.mergekit} not found: skipping mergekit (install mergekit==0.1.5 "
            "into a separate venv, e.g. /tmp/mergekit-venv)"
        )
    base = run_child_rss([py, "-c", IMPORT_CHILD])
    print(
        "baseline: importing torch + recode_lib.weights.merge alone peaks at "
        f"{base['peak_mib']:.0f} MiB"
    )
    results = {"import_baseline_mib": base["peak_mib"]}
    for name, (low, high) in pairs.items():
        for f in list(low.iterdir()) + list(high.iterdir()):  # warm the page cache
            with open(f, "rb") as fh:  # in small reads: a big buffer here would
                while fh.read(1 << 20):  # count in every child's peak RSS
                    pass
        src_gib = gib(low)
        out = workdir / name / "out"
        rows = {}

        # the helpers below run within this iteration: the loop's values are bound explicitly
        def fresh(out=out):
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)

        def timed(label, fn, n, name=name, rows=rows):
            runs = []
            for _ in range(n):
                fresh()
                runs.append(fn())
            rows[label] = {
                "wall_s": statistics.median(r["wall_s"] for r in runs),
                "work_s": statistics.median(r.get("work_s", r["wall_s"]) for r in runs),
                "peak_mib": max(r["peak_mib"] for r in runs),
            }
            print(
                f"  [{name}] {label:9s} wall {rows[label]['wall_s']:7.2f} s   "
                f"work {rows[label]['work_s']:7.2f} s   peak {rows[label]['peak_mib']:7.0f} MiB",
                flush=True,
            )

        print(
            f"{name}: {src_gib:.3f} GiB per checkpoint ({args.dtype}), {len(ALPHAS)} alphas "
            f"-> {len(ALPHAS) * src_gib:.2f} GiB written"
        )
        timed(
            "one-pass",
            lambda low=low, high=high, out=out: run_child_rss(
                [py, "-c", MERGE_CHILD, str(low), str(high), json.dumps(ALPHAS), str(out)]
            ),
            args.repeats,
        )
        timed(
            "copy",
            lambda low=low, out=out: run_child_rss(
                [py, "-c", COPY_CHILD, str(low), str(out), str(len(ALPHAS))]
            ),
            args.repeats,
        )
        if have_mk and name == "135M":

            def mk_all(low=low, high=high, out=out):
                total, peak = 0.0, 0.0
                for cmd in mergekit_cmds(args.mergekit, low, high, out, args.dtype):
                    r = run_child_rss(cmd)
                    total += r["wall_s"]
                    peak = max(peak, r["peak_mib"])
                return {"wall_s": total, "peak_mib": peak}

            timed("mergekit", mk_all, args.mergekit_repeats)
        results[name] = {"gib": src_gib, **rows}
        shutil.rmtree(out, ignore_errors=True)

    print(f"\nsummary (load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    models = {k: v for k, v in results.items() if isinstance(v, dict)}
    for name, r in models.items():
        one, cp = r["one-pass"], r["copy"]
        print(
            f"  {name}: one-pass / copy floor = {one['work_s'] / cp['work_s']:.2f}x (work), "
            f"{one['wall_s'] / cp['wall_s']:.2f}x (process wall incl. imports); "
            f"peak {one['peak_mib']:.0f} MiB ({one['peak_mib'] - base['peak_mib']:.0f} MiB above "
            f"the import baseline; largest tensor {largest_mib(workdir / name / 'low'):.0f} MiB)"
        )
        floor = one["work_s"] / cp["work_s"]
        print(f"    target <= 1.5x the copy floor: {'met' if floor <= 1.5 else 'MISSED'}")
        if "mergekit" in r:
            mk = r["mergekit"]
            speed = mk["wall_s"] / one["wall_s"]
            print(
                f"  {name}: 9 mergekit runs / one-pass = {speed:.1f}x "
                f"faster (wall); mergekit peak {mk['peak_mib']:.0f} MiB"
            )
            print(f"    target >= 4x faster than mergekit: {'met' if speed >= 4 else 'MISSED'}")
    if len(models) == 2:
        a, b = models.values()
        ratio = b["one-pass"]["peak_mib"] / a["one-pass"]["peak_mib"]
        print(
            f"  peak memory, 2x-deep / 135M: {ratio:.2f}"
            f" (model size ratio {b['gib'] / a['gib']:.2f})"
        )
    Path(workdir / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
