"""Launching GRPO runs: in this process, or through `accelerate launch` (multi-GPU, ZeRO-3).

    from recode_lib.grpo_launch import launch
    res = launch(recipe, problems, out_dir)                                   # in process
    res = launch(recipe, problems, out_dir, launcher="accelerate", num_processes=8)

    recode grpo --recipe cg_grpo_smoke --output-dir runs/smoke/04_cg_grpo/cli [--set k=v ...]
    python -m recode_lib.grpo_launch ...      (the same; the entry point accelerate runs)

With launcher="accelerate" the recipe (output_dir/recipe.yaml) and the problems
(output_dir/train_problems.jsonl) are written next to the run and
`accelerate launch --config_file configs/accelerate/zero3.yaml --num_processes N
-m recode_lib.grpo_launch --recipe ... --problems ...` trains on them; a failed launch raises
and leaves the checkpoints for the next call to resume from. Launch commands of the paper
profile: the docstring of recode_lib.grpo. It does not install vllm or deepspeed.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from recode_lib.grpo import (GRPORecipe, TrainResult, final_complete, load_recipe, retire_stale_run,
                             run_fingerprint, train)


def launch(recipe: GRPORecipe, problems, output_dir: str | Path, *, launcher: str = "inprocess",
           num_processes: int = 1, accelerate_config: str | Path | None = None) -> TrainResult:
    """train() in this process ("inprocess", CPU / one GPU) or through `accelerate launch`
    ("accelerate": multi-GPU, DeepSpeed ZeRO-3 from configs/accelerate/zero3.yaml): the recipe
    and problems are written to output_dir and `python -m recode_lib.grpo` runs on them."""
    import subprocess

    import yaml

    from recode_lib.jsonl import write_jsonl_atomic
    from recode_lib.paths import PROJECT_ROOT

    if launcher == "inprocess":
        return train(recipe, problems, output_dir)
    if launcher != "accelerate":
        raise ValueError(f"launcher must be 'inprocess' or 'accelerate', got {launcher!r}")
    out = Path(output_dir)
    retire_stale_run(out, run_fingerprint(recipe.validate(), problems))
    if not final_complete(out):
        out.mkdir(parents=True, exist_ok=True)
        (out / "recipe.yaml").write_text(yaml.safe_dump(dataclasses.asdict(recipe.validate())))
        write_jsonl_atomic(out / "train_problems.jsonl", [p.to_dict() for p in problems])
        cfg = accelerate_config or PROJECT_ROOT / "configs" / "accelerate" / "zero3.yaml"
        cmd = ["accelerate", "launch", "--config_file", str(cfg), "--num_processes",
               str(num_processes), "-m", "recode_lib.grpo_launch", "--recipe", str(out / "recipe.yaml"),
               "--output-dir", str(out), "--problems", str(out / "train_problems.jsonl")]
        print(" ".join(cmd), flush=True)
        rc = subprocess.run(cmd, cwd=PROJECT_ROOT).returncode
        if rc != 0 or not final_complete(out):
            raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {rc}); checkpoints in {out} "
                               "are kept and the next call resumes from them")
    return TrainResult(out, out / "final", out / "metrics.jsonl", None, False)


def add_arguments(parser) -> None:
    """`recode grpo` / `python -m recode_lib.grpo_launch` (the accelerate entry point)."""
    parser.add_argument("--recipe", default="cg_grpo_smoke", help="recipe name or YAML path")
    parser.add_argument("--output-dir", required=True)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a recipe field (the value is read as YAML)")
    parser.add_argument("--problems", default=None,
                        help="jsonl of Problem records to train on (default: the recipe's "
                             "benchmark, first n_problems)")


def run(args) -> int:
    import yaml

    from recode_lib.cli import CliError

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
        from recode_lib.data.schema import Problem
        from recode_lib.jsonl import read_jsonl

        problems = [Problem.from_dict(d, where=f"{args.problems} record {i + 1}")
                    for i, d in enumerate(read_jsonl(args.problems))]
    else:
        from recode_lib.data import load_benchmark

        problems = load_benchmark(recipe.benchmark, limit=recipe.n_problems)
    res = train(recipe, problems, args.output_dir)
    print(f"final checkpoint: {res.final_dir}\nmetrics: {res.metrics_path}")
    return 0


if __name__ == "__main__":
    import argparse

    _parser = argparse.ArgumentParser(prog="python -m recode_lib.grpo_launch",
                                      description="GRPO training from a recipe")
    add_arguments(_parser)
    from recode_lib.cli import CliError

    try:
        raise SystemExit(run(_parser.parse_args()))
    except CliError as _exc:
        print(f"python -m recode_lib.grpo_launch: error: {_exc}", file=sys.stderr)
        raise SystemExit(2) from None
