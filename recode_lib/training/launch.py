"""Launching GRPO runs: in this process, or through `accelerate launch` (multi-GPU, ZeRO-3).

    from recode_lib.training.launch import launch
    res = launch(recipe, problems, out_dir)                                   # in process
    res = launch(recipe, problems, out_dir, launcher="accelerate", num_processes=8)

    recode grpo --recipe cg_grpo_smoke --output-dir runs/smoke/04_cg_grpo/cli [--set k=v ...]
    python -m recode_lib.cli.grpo ...      (the same; the entry point accelerate runs; the CLI
                                            half lives in recode_lib.cli.grpo)

With launcher="accelerate" the recipe (output_dir/recipe.yaml) and the problems
(output_dir/train_problems.jsonl) are written next to the run and
`accelerate launch --config_file configs/accelerate/zero3.yaml --num_processes N
-m recode_lib.cli.grpo --recipe ... --problems ...` trains on them; a failed launch raises
and leaves the checkpoints for the next call to resume from. Launch commands of the paper
profile: the docstring of recode_lib.training.grpo. It does not install vllm or deepspeed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from recode_lib.training.grpo import (GRPORecipe, TrainResult, final_complete, retire_stale_run,
                                      run_fingerprint, train)


def launch(recipe: GRPORecipe, problems, output_dir: str | Path, *, launcher: str = "inprocess",
           num_processes: int = 1, accelerate_config: str | Path | None = None) -> TrainResult:
    """train() in this process ("inprocess", CPU / one GPU) or through `accelerate launch`
    ("accelerate": multi-GPU, DeepSpeed ZeRO-3 from configs/accelerate/zero3.yaml): the recipe
    and problems are written to output_dir and `python -m recode_lib.training.grpo` runs on them."""
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
               str(num_processes), "-m", "recode_lib.cli.grpo", "--recipe",
               str(out / "recipe.yaml"),
               "--output-dir", str(out), "--problems", str(out / "train_problems.jsonl")]
        print(" ".join(cmd), flush=True)
        rc = subprocess.run(cmd, cwd=PROJECT_ROOT).returncode
        if rc != 0 or not final_complete(out):
            raise RuntimeError(f"`{' '.join(cmd)}` failed (exit {rc}); checkpoints in {out} "
                               "are kept and the next call resumes from them")
    return TrainResult(out, out / "final", out / "metrics.jsonl", None, False)
