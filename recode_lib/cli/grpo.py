"""`recode grpo --recipe NAME --output-dir DIR [--set FIELD=VALUE ...] [--problems FILE]`.

The argument half of recode_lib.training (load_recipe + train), and the module accelerate runs:
`accelerate launch ... -m recode_lib.cli.grpo --recipe ... --problems ...` (what
recode_lib.training.launch.launch(launcher="accelerate") starts). Problems come from --problems
(jsonl of Problem records) or the recipe's benchmark (first n_problems). Fields: any
trl.GRPOConfig field, or the project's (recode_lib.training.config.RecodeGRPOConfig: model,
rewards, rm_path, rm_placement, ...).
"""

from __future__ import annotations

import sys

from recode_lib.cli import CliError, module_main
from recode_lib.core.jsonl import read_jsonl
from recode_lib.data import load_benchmark
from recode_lib.data.schema import Problem
from recode_lib.training.grpo import load_recipe, train


def add_arguments(parser) -> None:
    """`recode grpo` / `python -m recode_lib.cli.grpo` (the accelerate entry point)."""
    parser.add_argument("--recipe", default="cg_grpo_smoke", help="recipe name or YAML path")
    parser.add_argument(
        "--output-dir",
        required=True,
        help="the run's folder: checkpoints, final/ (the trained model), "
        "metrics.jsonl, run.json; a finished run there is skipped, an "
        "unfinished one resumed, another recipe's moved aside",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a recipe field: any trl.GRPOConfig field or the "
        "project's (recode_lib.training.config.RecodeGRPOConfig, e.g. "
        "rm_placement=trainer); the value is read as YAML",
    )
    parser.add_argument(
        "--problems",
        default=None,
        help="jsonl of Problem records to train on (default: the recipe's "
        "benchmark, first n_problems)",
    )


def run(args) -> int:
    import yaml

    overrides = {}
    for item in args.set:
        if "=" not in item:
            raise CliError(f"--set expects FIELD=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        overrides[k] = yaml.safe_load(v)
    try:
        recipe = load_recipe(args.recipe, **overrides)
    except (ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from None
    if args.problems:
        problems = [
            Problem.from_dict(d, where=f"{args.problems} record {i + 1}")
            for i, d in enumerate(read_jsonl(args.problems))
        ]
    else:
        problems = load_benchmark(recipe.benchmark, limit=recipe.n_problems)
    res = train(recipe, problems, args.output_dir)
    print(f"final checkpoint: {res.final_dir}\nmetrics: {res.metrics_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m recode_lib.cli.grpo` (the entry point accelerate runs)."""
    return module_main(
        sys.modules[__name__], "python -m recode_lib.cli.grpo", "GRPO training from a recipe", argv
    )


if __name__ == "__main__":
    raise SystemExit(main())
