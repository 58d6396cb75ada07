"""The run identities of the shipped recipes are pinned. A finished GRPO run is reused by its
fingerprint (recode_lib.training.grpo.run_fingerprint: the recipe's recorded fields, the problems,
the local models' stamps), so a change to how recipes are read, defaulted or recorded must not
move them: every trained run would silently retrain. Each shipped recipe is fingerprinted as
loaded and with the overrides the notebooks pass (model, seed, rewards, counts, LoRA, R_proc's
scale, the opt-in fields), with `auto` precisions resolved as on a machine without native bf16.
After a deliberate change (a recipe edited, a field added with a recorded default), rewrite the
table with `python tests/test_recipe_identity.py` and say in the commit that those runs retrain.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import recode_lib.training.grpo as grpo

TABLE = Path(__file__).parent / "fixtures" / "recipe_fingerprints.json"
PROBLEMS = [{"id": f"p{i}", "prompt": "x"} for i in range(3)]
OVERRIDES = {
    "model": "x/y",
    "seed": 3,
    "n_problems": 7,
    "rewards": [{"name": "outcome_only", "weight": 2.0}],
    "max_steps": 2,
    "lora": {"r": 4, "alpha": 8},
    "rproc_scale": {"rule": "start"},
    "keep_checkpoints": True,
    "checker_fallback": True,
    "allow_in_process_tests": True,
    "generation_precision": "bfloat16",
}


def fingerprints() -> dict[str, str]:
    """{case: fingerprint} of every shipped recipe, loaded and with OVERRIDES."""
    out = {}
    for path in sorted(grpo.RECIPES_DIR.glob("*.yaml")):
        out[path.stem] = grpo.run_fingerprint(grpo.load_recipe(path.stem), PROBLEMS)
        over = dict(OVERRIDES)
        if grpo.load_recipe(path.stem).use_vllm:
            over.pop("generation_precision")  # vLLM samples itself
        out[f"{path.stem}+overrides"] = grpo.run_fingerprint(
            grpo.load_recipe(path.stem, **over), PROBLEMS
        )
    return out


def no_native_bf16(value, **kw):
    return False if value == "auto" else bool(value)


def float32_copy(value, **kw):
    return "float32"


@pytest.fixture
def machine_without_bf16(monkeypatch):
    monkeypatch.setattr(grpo, "resolve_bf16", no_native_bf16)
    monkeypatch.setattr(grpo, "resolve_precision", float32_copy)


def test_the_shipped_recipes_keep_their_run_identities(machine_without_bf16):
    want = json.loads(TABLE.read_text())
    got = fingerprints()
    assert len(got) >= 30
    moved = sorted(k for k in want if got.get(k) != want[k])
    assert moved == [], f"run fingerprints moved (trained runs would retrain): {moved}"
    assert sorted(got) == sorted(want), "recipes added or removed: rewrite the table"


if __name__ == "__main__":  # rewrite the table (a deliberate change of run identities)
    grpo.resolve_bf16, grpo.resolve_precision = no_native_bf16, float32_copy
    TABLE.write_text(json.dumps(fingerprints(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {TABLE}", file=sys.stderr)
