"""`recode eval --model M --benchmark B [--n N] [--k K] [--backend hf|vllm|openai]
[--setting single|tool|agentic] [--ray ADDRESS] ...`.

The argument half of recode_lib.evaluation: the options are generated from EvalSpec's fields
(recode_lib.evaluation.spec: name, type, default, choices and help from each field's metadata;
the sandbox's from SandboxConfig's fields that EvalSpec.sandbox lists), so the CLI and the
library share one set of defaults; `--model`, `--benchmark`, `--limit`, `--out` and
`--data-dir` say what to evaluate and where. It builds the EvalSpec, loads the benchmark, prints
pass@k with its CI, the outcome classes and where the results are (default
runs/cli/eval/<benchmark>/<model>). `--ray ADDRESS` executes the samples on a Ray cluster
(recode_lib.sandbox.fanout; single setting).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from recode_lib.cli import CliError
from recode_lib.cli.sandbox import check_ray_arguments
from recode_lib.core.jsonl import JsonlError
from recode_lib.core.models import ModelError
from recode_lib.core.paths import runs_dir
from recode_lib.data import load_benchmark
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import GenerationError
from recode_lib.sandbox import RayFanoutError
from recode_lib.sandbox.config import SandboxConfig

# option names users have typed since before the options were generated (kept as aliases)
ALIASES = {
    "tool_time_limit_s": ("--tool-time-limit",),
    "tool_max_output_chars": ("--tool-max-output",),
}


def spec_options() -> list[dict]:
    """One entry per `recode eval` option that sets an EvalSpec field: {"dest", "flags", "kind"
    (the value type), "default", "choices", "metavar", "help", "sandbox" (True: a field of
    EvalSpec.sandbox)}. Every field of EvalSpec has one
    (sandbox: the SandboxConfig fields its metadata lists)."""
    out = []
    hints = typing.get_type_hints(EvalSpec)
    for f in dataclasses.fields(EvalSpec):
        if f.name == "sandbox":
            sandbox_hints = typing.get_type_hints(SandboxConfig)
            default = f.default_factory()
            for name, help_ in f.metadata["options"].items():
                out.append(
                    _entry(
                        name,
                        sandbox_hints[name],
                        getattr(default, name),
                        help_,
                        f.metadata.get("choices", {}).get(name),
                        None,
                        True,
                    )
                )
            continue
        entry = _entry(
            f.name,
            hints[f.name],
            f.default,
            f.metadata["help"],
            f.metadata.get("choices"),
            f.metadata.get("metavar"),
            False,
        )
        out.append(entry | {"off_help": f.metadata.get("off_help")})
    return out


MIN_CI_PROBLEMS = 5  # below this a bootstrap over problems says nothing


def ci_text(lo: float, hi: float, n_problems: int) -> str:
    """The bootstrap interval as printed, or why there is none: with fewer than MIN_CI_PROBLEMS
    problems, or every problem scoring the same, the percentile bootstrap collapses to a point
    (`0.0000-0.0000` for two failed problems), which reads as certainty it does not have."""
    if n_problems < MIN_CI_PROBLEMS:
        return f"no 95% CI: {n_problems} problem(s), a bootstrap needs >= {MIN_CI_PROBLEMS}"
    if lo == hi:
        return f"no 95% CI: all {n_problems} problems scored the same"
    return f"95% CI {lo:.4f}-{hi:.4f}"


def _entry(name, hint, default, help_, choices, metavar, sandbox) -> dict:
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    kind = hint
    if typing.get_origin(hint) is tuple:
        kind = tuple
    elif args:
        kind = args[0]
    if kind is bool:
        flags = (f"--no-{name}" if default else f"--{name}").replace("_", "-")
    else:
        flags = "--" + name.replace("_", "-")
    return {
        "dest": name,
        "flags": (flags, *ALIASES.get(name, ())),
        "kind": kind,
        "default": default,
        "choices": choices,
        "metavar": metavar,
        "help": help_,
        "sandbox": sandbox,
    }


def add_arguments(parser) -> None:
    parser.add_argument(
        "--model",
        required=True,
        help="smollm2, a checkpoint folder or hub id (for --backend openai: the served model name)",
    )
    parser.add_argument(
        "--benchmark", required=True, help="e.g. humanevalplus, mbppplus, microbench"
    )
    parser.add_argument("--limit", type=int, help="first L problems only")
    parser.add_argument("--out", help="output folder (default runs/cli/eval/<benchmark>/<model>)")
    parser.add_argument(
        "--data-dir", help="benchmark files (default RECODE_DATA_DIR or ../shared/data)"
    )
    group = parser.add_argument_group(
        "evaluation spec (EvalSpec's fields; the sandbox's: SandboxConfig's)"
    )
    for o in spec_options():  # default None: not given (EvalSpec's own default applies)
        shown = "" if o["default"] is None else f" (default: {_shown(o['default'])})"
        help_ = o["help"]
        if o["kind"] is bool and o["default"]:  # a --no-X flag: say what the flag does
            help_ = (o.get("off_help") or f"turn off: {help_}") + f" (default: {help_})"
        elif o["kind"] is bool:
            help_ += " (off by default)"
        else:
            help_ += shown
        common = {"dest": o["dest"], "default": None, "help": help_}
        if o["kind"] is bool:
            group.add_argument(
                *o["flags"], action="store_false" if o["default"] else "store_true", **common
            )
        elif o["kind"] is tuple:
            group.add_argument(*o["flags"], type=int, action="append", metavar="K", **common)
        else:
            group.add_argument(
                *o["flags"],
                type=o["kind"],
                choices=o["choices"],
                metavar=o["metavar"] or (None if o["choices"] else o["dest"].upper()),
                **common,
            )


def _shown(value) -> str:
    if isinstance(value, tuple):
        return " ".join(map(str, value))
    return str(value)


def spec_from_args(args) -> EvalSpec:
    """The EvalSpec of the given options (the ones not given keep EvalSpec's defaults)."""
    fields, sandbox = {}, {}
    for o in spec_options():
        value = getattr(args, o["dest"], None)
        if value is not None:
            (sandbox if o["sandbox"] else fields)[o["dest"]] = (
                tuple(value) if o["kind"] is tuple else value
            )
    if sandbox:
        fields["sandbox"] = SandboxConfig(**sandbox)
    return EvalSpec(**fields)


def run(args) -> int:
    check_ray_arguments(args)
    try:
        spec = spec_from_args(args)
        sampling = spec.sampling()
        problems = load_benchmark(args.benchmark, limit=args.limit, data_dir=args.data_dir)
    except (ValueError, KeyError, OSError) as exc:
        raise CliError(str(exc)) from None
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(args.model).strip("/"))[-80:]
    out = Path(args.out) if args.out else runs_dir("cli") / "eval" / args.benchmark / slug
    try:
        s = spec.evaluate(args.model, problems, out, benchmark=args.benchmark)
    except (ValueError, JsonlError, ModelError, GenerationError, RayFanoutError) as exc:
        raise CliError(str(exc)) from None
    print(
        f"{args.benchmark} ({s['setting']} setting): "
        f"{s['n_problems']} problems x {sampling.n} samples "
        f"(temperature {sampling.temperature}, max_new_tokens {sampling.max_new_tokens})"
    )
    for kk in s["k"]:
        if s[f"pass@{kk}"] is None:
            print(f"  pass@{kk} = undefined (no problem could be judged here)")
            continue
        print(
            f"  pass@{kk} = {s[f'pass@{kk}']:.4f}  "
            f"({ci_text(*s[f'pass@{kk}_ci'], s['n_problems'])})"
        )
    nc = s.get("not_counted") or {}
    if nc.get("samples"):
        print(
            f"  not counted (env_missing, left out of pass@k): {nc['samples']} samples of "
            f"{nc['problems']} problems; missing modules: "
            + ", ".join(f"{m} {n}" for m, n in nc["modules"].items())
        )
    print("  outcomes: " + ", ".join(f"{o} {v:.3f}" for o, v in s["outcomes"].items()))
    print(
        f"  tokens/response: mean {s['tokens']['mean']:.1f}, truncated "
        f"{s['tokens']['truncated_rate']:.3f}; no code block {s['format']['no_code_rate']:.3f}"
    )
    if "episodes" in s:
        e = s["episodes"]
        print(
            f"  episodes: {e['mean_turns']:.2f} turns, {e['mean_tool_calls']:.2f} tool calls "
            f"({e['tool_error_rate']:.3f} errors), no answer {e['no_answer_rate']:.3f}"
        )
    if s["timing"]["problems_per_minute"]:
        print(f"  throughput: {s['timing']['problems_per_minute']:.2f} problems/minute")
    print(f"  results: {out}/samples.jsonl, {out}/summary.json")
    return 0
