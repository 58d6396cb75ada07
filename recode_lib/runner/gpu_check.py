"""`make gpu-check`: what a GPU owner runs first. A handful of short end-to-end steps on the
paper profile's machinery, each timed, printed as one table (step, seconds, ok/fail/skipped,
reason), in under 10 minutes on one GPU.

    python -m recode_lib.runner.gpu_check [--model smollm2] [--json out.json] [--work DIR]
                                   [--throughputs FILE | --no-throughputs]
    rows = run_checks(model="smollm2", work=Path("/tmp/gpu_check"))   # list of CheckRow
    parse_table(text) -> [{"step", "seconds", "result", "reason"}]    # what tests read back
    python -m recode_lib.runner.gpu_check_bare ...   # a bare CUDA machine: no venv, no vLLM

CPU-only figures are never written: they say nothing about a GPU.
More: docs/modules/core_and_runner.md (recode_lib.runner.gpu_check).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

from recode_lib.core.models import resolve_model
from recode_lib.core.paths import data_dir, runs_dir
from recode_lib.core.prompts import build_messages
from recode_lib.core.run_files import read_metrics
from recode_lib.data import load_benchmark
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import DataParallelGenerator, SamplingConfig, get_generator
from recode_lib.generation.data_parallel import visible_devices
from recode_lib.plan import ArchitectureError, model_arch
from recode_lib.plan.architectures import ALIASES
from recode_lib.plan.budget import MEASURED_NAME, SIZE_CLASSES, size_class
from recode_lib.process_reward.model import RMConfig, train_or_reuse
from recode_lib.training.grpo import load_recipe
from recode_lib.training.launch import launch
from recode_lib.weights.merge import MergeConfig, merge_grid

CODE_MODELS = (
    "Qwen/Qwen2.5-Coder-0.5B-Instruct",
    "Qwen/Qwen2.5-Coder-1.5B-Instruct",
    "Qwen/Qwen2.5-Coder-3B-Instruct",
    "Qwen/Qwen2.5-Coder-7B-Instruct",
)
N_PROBLEMS = 4
HEADER = ("step", "seconds", "result", "reason")


@dataclass
class CheckRow:
    step: str
    seconds: float
    result: str  # ok | fail | skipped
    reason: str = ""


class Skip(Exception):
    """A step that cannot run here; the message is the reason."""


@dataclass
class Measured:
    """Throughputs measured on this machine's GPU (tokens/s per GPU), keyed by hub id."""

    generation: dict = field(default_factory=dict)  # vLLM decode
    train: dict = field(default_factory=dict)  # GRPO forward + backward + optimizer
    hf_generation: dict = field(default_factory=dict)  # transformers generate (not the plan's)
    rm_train: dict = field(default_factory=dict)  # Bradley-Terry RM training
    sandbox: dict | None = None  # records/s against workers
    data_parallel: dict | None = None  # k engines against one (vLLM)

    def __bool__(self) -> bool:
        return bool(
            self.generation
            or self.train
            or self.hf_generation
            or self.rm_train
            or self.sandbox
            or self.data_parallel
        )


def hub_id(model: str) -> str:
    """The id the plan knows a model by: an alias's hub id, a cache snapshot's repo id
    (.../models--Owner--Name/snapshots/<rev>), else the name as given."""
    model = str(model)
    if model in ALIASES:
        return ALIASES[model]
    for part in Path(model).parts:
        if part.startswith("models--"):
            return part[len("models--") :].replace("--", "/", 1)
    return model


def class_key(model: str) -> str | None:
    """The plan's size class of `model` when it is at least half the class's bound (a 0.5B
    model's rate says nothing about a 7B's), else None."""
    try:
        arch = model_arch(model)
    except ArchitectureError:
        return None
    name = size_class(arch)[0]
    bounds = [0.0] + [b for _, b, _, _ in SIZE_CLASSES]
    i = [c for c, _, _, _ in SIZE_CLASSES].index(name) + 1
    return name if arch.params / 1e9 >= max(bounds[i] / 2, bounds[i - 1]) else None


def record_rate(table: dict, model: str, rate: float) -> None:
    if rate > 0:
        table[hub_id(model)] = round(rate, 1)
        key = class_key(model)
        if key:
            table[key] = round(rate, 1)


def grpo_train_rate(records: list[dict], processes: int = 1) -> float | None:
    """Training tokens/s per GPU of the last logged GRPO step: its tokens (the increase of
    TRL's cumulative num_tokens) over its time/optimizer_s; None without both."""
    rows = [r for r in records if r.get("num_tokens") and r.get("time/optimizer_s")]
    if not rows:
        return None
    last = rows[-1]
    before = [r["num_tokens"] for r in records if r.get("num_tokens") and r["step"] < last["step"]]
    tokens = last["num_tokens"] - (before[-1] if before else 0)
    steps = last.get("time/steps_averaged") or 1
    return tokens / (last["time/optimizer_s"] * steps) / max(1, processes)


def throughput_file(path=None) -> Path:
    return Path(path) if path else runs_dir("gpu_check") / MEASURED_NAME


def write_throughputs(measured: Measured, path=None, gpu: str | None = None) -> Path | None:
    """Merge the measured rates into the plan's throughput file (see the module docstring);
    None (nothing written) when no figure was measured on a GPU."""
    if not (
        measured.generation
        or measured.train
        or measured.hf_generation
        or measured.rm_train
        or measured.data_parallel
    ):
        return None
    out = throughput_file(path)
    try:
        data = json.loads(out.read_text()) if out.is_file() else {}
    except ValueError:
        data = {}
    data = data if isinstance(data, dict) else {}
    for key, table in (
        ("generation_tokens_per_s", measured.generation),
        ("train_tokens_per_s", measured.train),
        ("hf_generation_tokens_per_s", measured.hf_generation),
        ("rm_train_tokens_per_s", measured.rm_train),
    ):
        if table:
            data[key] = {**(data.get(key) or {}), **table}
    if measured.sandbox:
        data["sandbox"] = measured.sandbox
    if measured.data_parallel:
        data["data_parallel"] = measured.data_parallel
        # the plan's factor on the engines' speed-up; a super-linear figure (one engine not
        # saturating its GPU at this small batch) is not credited
        data["data_parallel_efficiency"] = min(1.0, measured.data_parallel["efficiency"])
    if gpu:
        data["gpu"] = gpu
    data["source"] = "make gpu-check (recode_lib.runner.gpu_check) " + time.strftime(
        "%Y-%m-%d %H:%M:%S"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(out)
    return out


def gpu_name() -> str | None:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception:
        return None


def gpu_status() -> str | None:
    """None when CUDA and vllm are usable, else why not."""
    import importlib.util

    import torch

    if not torch.cuda.is_available():
        return "no CUDA device"
    if importlib.util.find_spec("vllm") is None:
        return "vllm not installed (pip install -e .[gpu])"
    return None


def cached_code_model() -> str | None:
    """The first CODE_MODELS entry present in the local Hugging Face cache (no download): its
    snapshot folder (hub_id() gives the repo id back)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    for repo in CODE_MODELS:
        try:
            return snapshot_download(repo, local_files_only=True)
        except Exception:
            continue
    return None


def humaneval_problems(n: int = N_PROBLEMS):
    if data_dir() is None:
        raise Skip("no data directory with HumanEval+ (RECODE_DATA_DIR)")
    return load_benchmark("humanevalplus", limit=n)


def generation_prompts(prompts: int) -> list:
    return [
        build_messages(f"Write a Python function f{i}(x) that returns x + {i}.")
        for i in range(prompts)
    ]


def timed_generation(gen, prompts: int, n: int, max_new_tokens: int) -> tuple[int, float]:
    """(generated tokens, seconds) of `prompts` x `n` samples (T 0.8) on `gen`; RuntimeError
    when a completion is missing or nothing was generated."""
    t0 = time.perf_counter()
    outs = gen.generate(
        generation_prompts(prompts),
        SamplingConfig(temperature=0.8, n=n, max_new_tokens=max_new_tokens, seed=0),
    )
    wall = time.perf_counter() - t0
    tokens = sum(c.n_tokens for o in outs for c in o)
    if len(outs) != prompts or any(len(o) != n for o in outs) or tokens == 0:
        raise RuntimeError(
            f"expected {prompts} x {n} completions with tokens, got {[len(o) for o in outs]}"
        )
    return tokens, wall


def step_generate(
    model: str,
    backend: str,
    *,
    prompts: int = 8,
    n: int = 4,
    max_new_tokens: int = 128,
    measured: Measured | None = None,
    **kw,
) -> str:
    gen = get_generator(backend, model, **kw)
    try:
        tokens, wall = timed_generation(gen, prompts, n, max_new_tokens)
    finally:
        close = getattr(gen, "close", None)
        if close:
            close()
    if measured is not None and backend in ("vllm", "hf"):
        record_rate(
            measured.generation if backend == "vllm" else measured.hf_generation,
            model,
            tokens / wall,
        )
    return f"{prompts * n} completions, {tokens} tokens, {tokens / wall:.1f} tokens/s"


def step_data_parallel(
    model: str,
    *,
    engines: int | None = None,
    prompts: int = 8,
    n: int = 4,
    max_new_tokens: int = 128,
    measured: Measured | None = None,
    **engine_kwargs,
) -> str:
    """vLLM tokens/s of one engine (one GPU) and of `engines` engines side by side (default:
    one per visible GPU; recode_lib.generation.data_parallel), each engine given the same
    work (`prompts` x `engines` prompts in the second run), the load not timed: the speed-up
    and the efficiency (speed-up / engines) the plan multiplies its engines by. Skip on one
    GPU. Records the per-engine rate like vllm_generate and the speed-up in `measured`."""
    k = engines or len(visible_devices("cuda"))
    if k < 2:
        raise Skip("one GPU: the data-parallel speed-up needs two or more")
    rates = {}
    for size in (1, k):
        gen = get_generator("vllm", model, data_parallel_size=size, **engine_kwargs)
        try:
            if isinstance(gen, DataParallelGenerator):
                gen.pool()  # start the engines (not timed)
            else:
                gen.engine()
            tokens, wall = timed_generation(gen, prompts * size, n, max_new_tokens)
        finally:
            gen.close()
        rates[size] = tokens / wall
    speedup = rates[k] / rates[1]
    if measured is not None:
        record_rate(measured.generation, model, rates[1])
        measured.data_parallel = {
            "engines": k,
            "tokens_per_s_one_engine": round(rates[1], 1),
            "tokens_per_s": round(rates[k], 1),
            "speedup": round(speedup, 2),
            "efficiency": round(speedup / k, 3),
            "model": hub_id(model),
        }
    return (
        f"1 engine {rates[1]:.1f} tokens/s, {k} engines {rates[k]:.1f} tokens/s: "
        f"speed-up {speedup:.2f} ({100 * speedup / k:.0f}% of linear)"
    )


def step_grpo(
    model: str,
    out: Path,
    problems,
    *,
    gpu: bool,
    rewards,
    rm_path=None,
    vllm: bool = True,
    steps: int = 1,
    measured: Measured | None = None,
) -> str:
    """`steps` GRPO steps of the smoke recipe (on the GPU in bf16 when `gpu`, generating with
    colocated vLLM or, `vllm=False`, transformers); with `measured`, a GPU run's training
    tokens/s (last step) is recorded."""
    fields = dict(
        model=model,
        rewards=rewards,
        rm_path=rm_path,
        max_steps=steps,
        num_generations=2,
        per_device_train_batch_size=4,
        max_completion_length=16,
        save_steps=100,
        sandbox_workers=2,
        report_to=["none"],
        logging_steps=1,
        n_problems=len(problems),
    )
    if gpu:
        fields.update(use_cpu=False, bf16=True)
        if vllm:
            fields.update(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.3)
        fields["rm_placement"] = "trainer"
    recipe = load_recipe("cg_grpo_smoke", **fields)
    res = launch(recipe, problems, out)
    done = json.loads((res.final_dir / ".complete").read_text())["global_step"]
    if done != steps:
        raise RuntimeError(f"trained {done} steps, expected {steps}")
    m = read_metrics(res.output_dir)
    where = f", RM placement {recipe.rm_placement}" if rm_path else ""
    msg = f"{steps} step{'s' * (steps > 1)}, reward {m[-1].get('reward') if m else None}{where}"
    rate = grpo_train_rate(m) if gpu else None
    if rate:
        msg += f", train {rate:.0f} tokens/s"
        if measured is not None:
            record_rate(measured.train, model, rate)
    return msg


def step_rm(model: str, out: Path) -> Path:
    """An (untrained) process RM on the model's backbone, as notebook 02 saves without pairs."""
    cfg = RMConfig(backbone=model, output_dir=str(out / "rm"))
    train_or_reuse([], cfg, log=lambda *_: None)
    return out / "rm"


def step_merge(low: str, high: str, out: Path) -> str:
    merged = merge_grid(
        MergeConfig(
            resolve_model(low),
            resolve_model(high),
            (-0.5, 0.5, 1.5),
            str(out),
            force=True,
            progress=False,
        )
    )
    if sorted(merged) != [-0.5, 0.5, 1.5] or not all(
        (p / "config.json").is_file() for p in merged.values()
    ):
        raise RuntimeError(f"merge wrote {merged}")
    return f"3 alphas from {Path(high).name}"


def step_passk(
    model: str,
    backend: str,
    out: Path,
    *,
    n_problems: int = 8,
    n: int = 4,
    max_new_tokens: int = 384,
    early_stop: bool = False,
    **kw,
) -> str:
    problems = humaneval_problems(n_problems)
    ks = tuple(k for k in (1, 2, 4) if k <= n)
    spec = EvalSpec(
        backend=backend,
        temperature=0.8,
        max_new_tokens=max_new_tokens,
        n=n,
        k=ks,
        seed=0,
        batch_size=8,
        workers=2,
        on_config_change="set_aside",
        progress=False,
        early_stop=early_stop,
        **kw,
    )
    s = spec.evaluate(model, problems, out, benchmark="humanevalplus")
    if s["n_problems"] != len(problems):
        raise RuntimeError(f"evaluated {s['n_problems']} of {len(problems)} problems")
    return f"{len(problems)} problems x {n}, " + ", ".join(
        f"pass@{k} {s[f'pass@{k}']:.3f}" for k in ks
    )


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_checks(
    model: str = "smollm2", work: Path | None = None, log=progress, measured: Measured | None = None
) -> list[CheckRow]:
    """Every step in turn (the table's rows); GPU figures go into `measured` when given."""
    import tempfile

    work = Path(work or tempfile.mkdtemp(prefix="gpu_check_"))
    work.mkdir(parents=True, exist_ok=True)
    no_gpu = gpu_status()
    rows: list[CheckRow] = []
    state: dict = {}

    def run(step: str, fn, gpu: bool = False):
        t0 = time.perf_counter()
        if gpu and no_gpu:
            row = CheckRow(step, 0.0, "skipped", f"GPU step: {no_gpu}")
        else:
            try:
                row = CheckRow(step, 0.0, "ok", fn() or "")
            except Skip as exc:
                row = CheckRow(step, 0.0, "skipped", str(exc))
            except Exception as exc:
                traceback.print_exc(file=sys.stderr)
                row = CheckRow(step, 0.0, "fail", f"{type(exc).__name__}: {exc}"[:200])
        row.seconds = round(time.perf_counter() - t0, 1)
        rows.append(row)
        if log:
            log(f"[gpu-check] {row.step}: {row.result} ({row.seconds} s) {row.reason}")

    def train_problems():
        if "train" not in state:
            state["train"] = load_benchmark("microbench", limit=2)
        return state["train"]

    def grpo_cpu():
        msg = step_grpo(
            model,
            work / "grpo_cpu",
            train_problems(),
            gpu=False,
            rewards=[{"name": "outcome_only"}],
        )
        state["trained"] = str(work / "grpo_cpu" / "final")
        return msg

    def code_model():
        path = cached_code_model()
        if path is None:
            raise Skip(f"none of {', '.join(m.split('/')[1] for m in CODE_MODELS)} in the HF cache")
        return step_generate(path, "vllm", measured=measured)

    run("vllm_generate", lambda: step_generate(model, "vllm", measured=measured), gpu=True)
    run("vllm_generate_code", code_model, gpu=True)
    run("vllm_data_parallel", lambda: step_data_parallel(model, measured=measured), gpu=True)
    run(
        "vllm_request_path",
        lambda: step_generate(model, "vllm_standin", prompts=2, n=1, max_new_tokens=8),
    )
    run(
        "grpo_vllm_colocate",
        lambda: step_grpo(
            model,
            work / "grpo_vllm",
            train_problems(),
            gpu=True,
            rewards=[{"name": "outcome_only"}],
            steps=2,
            measured=measured,
        ),
        gpu=True,
    )
    run(
        "grpo_rm_gpu",
        lambda: step_grpo(
            model,
            work / "grpo_rm",
            train_problems(),
            gpu=True,
            rewards=[{"name": "gated"}],
            rm_path=str(step_rm(model, work)),
        ),
        gpu=True,
    )
    run("grpo_cpu", grpo_cpu)
    run("merge", lambda: step_merge(model, state.get("trained", model), work / "merged"))
    run("passk_vllm", lambda: step_passk(model, "vllm", work / "passk_vllm"), gpu=True)
    run(
        "passk_cpu",
        lambda: step_passk(
            model, "hf", work / "passk_cpu", n_problems=2, n=2, max_new_tokens=48, early_stop=True
        ),
    )
    return rows


def format_table(rows: list[CheckRow]) -> str:
    cells = [HEADER] + [(r.step, f"{r.seconds:.1f}", r.result, r.reason) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = []
    for c in cells:
        lines.append(
            "  ".join(
                [c[0].ljust(widths[0]), c[1].rjust(widths[1]), c[2].ljust(widths[2]), c[3]]
            ).rstrip()
        )
        if c is cells[0]:
            lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 6)
    return "\n".join(lines)


def parse_table(text: str) -> list[dict]:
    """The rows of a printed table (the lines after the header's rule)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.split()[:4] == list(HEADER))
    out = []
    for ln in lines[start + 2 :]:
        parts = ln.split(None, 3)
        if len(parts) < 3 or parts[2] not in ("ok", "fail", "skipped"):
            break
        out.append(
            {
                "step": parts[0],
                "seconds": float(parts[1]),
                "result": parts[2],
                "reason": parts[3] if len(parts) > 3 else "",
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m recode_lib.runner.gpu_check",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--model",
        default="smollm2",
        help="policy for every step (default: the embedded SmolLM2-135M-Instruct)",
    )
    ap.add_argument("--work", default=None, help="scratch folder (default: a new temp folder)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    add_throughput_arguments(ap)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    measured = Measured()
    rows = run_checks(args.model, Path(args.work) if args.work else None, measured=measured)
    mode = "GPU" if gpu_status() is None else f"degraded, CPU only ({gpu_status()})"
    print(f"\ngpu-check ({mode}), {time.perf_counter() - t0:.0f} s in all\n")
    print(format_table(rows), flush=True)
    report_throughputs(measured, args)
    sys.stdout.flush()
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if any(r.result == "fail" for r in rows) else 0


def add_throughput_arguments(ap) -> None:
    ap.add_argument(
        "--throughputs",
        default=None,
        metavar="FILE",
        help="write the measured throughputs here (default runs/gpu_check/"
        "throughput.json, which `recode plan` reads)",
    )
    ap.add_argument(
        "--no-throughputs", action="store_true", help="do not write the throughput file"
    )


def report_throughputs(measured: Measured, args) -> Path | None:
    """Write (unless --no-throughputs) and print where the plan's rates now come from."""
    if args.no_throughputs:
        return None
    out = write_throughputs(measured, args.throughputs, gpu=gpu_name())
    if out is None:
        print("\nno GPU throughput measured: the plan keeps its default rates")
    else:
        figures = {
            k: v
            for k, v in (
                ("generation tokens/s", measured.generation),
                ("train tokens/s", measured.train),
                ("data-parallel", measured.data_parallel),
            )
            if v
        }
        print(
            f"\nthroughputs for `recode plan` written to {out}: "
            + ("; ".join(f"{k} {v}" for k, v in figures.items()) or "none the plan reads")
        )
    return out


if __name__ == "__main__":
    sys.exit(main())
