"""R_proc's scale for every GRPO run that uses it: one rule, applied per policy and RM pair.

    runs = proc_runs(profile_parameters("paper"))      # every R_proc run of a profile, resolved
    {(r["notebook"], r["run"]): r["rule"] for r in runs}  # process_reward.scale.scale_rule each
    opts, prov = pair_scale(PROC_SCALE, policy, problems, spec, rm_path, out_dir, recipe)

ReCode's gated and additive runs, its cross-model transfer run (another policy, the same RM)
and its math run all train on R_proc = sigmoid((score - centre) / temperature). The centre and
temperature depend on the policy and RM pair, so each pair gets its own statistics
(`pair_scale`: process_reward.scale.start_scale at the run's training sampling), while the rule
that produces them (`scale_rule`) is the same for all: `proc_runs` lists each run of a
profile that uses R_proc with the rule its notebook parameters and recipe give it, read from
the parameters alone (nothing is trained, sampled or loaded beyond the recipe files), so a
test can check that the paper profile scales every R_proc run the same way. Runs whose
rewards need no reward model are not listed.
"""

from __future__ import annotations

from recode_lib.process_reward.scale import provenance_of, scale_record, scale_rule, start_scale
from recode_lib.rewards import Need, reward_needs
from recode_lib.runner.pipeline import parse_list
from recode_lib.training.grpo import load_recipe
from recode_lib.training.launch import TRANSFER
from recode_lib.training.recipe_check import recipe_fields

__all__ = ["proc_runs", "pair_scale"]


def uses_rm(reward: str) -> bool:
    return Need.REWARD_MODEL in reward_needs(reward)


def run_recipe(name: str, p: dict, model: str):
    """The recipe a notebook's run trains with (its RECIPE_FIELDS applied, the model its own)."""
    return load_recipe(name, **recipe_fields(p.get("RECIPE_FIELDS"), model=model))


def proc_runs(profile_params: dict) -> list[dict]:
    """Every GRPO run of a profile (profile_parameters' {notebook: parameters}) whose reward
    needs the reward model: [{"notebook", "run", "policy", "recipe", "reward", "rule"}], rule
    being process_reward.scale.scale_rule(its notebook's PROC_SCALE, its recipe). Covers 04's
    variants and its cross-model transfer run, 10's math variants, and any other notebook
    whose VARIANTS or recipe rewards need the RM (a notebook without PROC_SCALE: mode "")."""
    out = []
    for nb, p in profile_params.items():
        if not p.get("RECIPE") or "{" in str(p["RECIPE"]):
            continue
        mode = p.get("PROC_SCALE", "")
        recipe = run_recipe(p["RECIPE"], p, p.get("MODEL", ""))
        rewards = parse_list(p.get("VARIANTS", "")) or [r["name"] for r in recipe.rewards]
        for reward in rewards:
            if uses_rm(reward):
                out.append(
                    {
                        "notebook": nb,
                        "run": reward,
                        "policy": p.get("MODEL"),
                        "recipe": p["RECIPE"],
                        "reward": reward,
                        "rule": scale_rule(mode, recipe),
                    }
                )
        if nb.startswith("04") and p.get("TRANSFER_MODEL"):
            name = p.get("TRANSFER_RECIPE") or p["RECIPE"]
            t_recipe = run_recipe(name, p, p["TRANSFER_MODEL"])
            out.append(
                {
                    "notebook": nb,
                    "run": TRANSFER,
                    "policy": p["TRANSFER_MODEL"],
                    "recipe": name,
                    "reward": "gated",
                    "rule": scale_rule(mode, t_recipe),
                }
            )
    return out


def pair_scale(
    mode: str,
    policy,
    problems,
    spec,
    rm_path,
    out_dir,
    recipe,
    placement=None,
    domain: str = "code",
) -> tuple[dict, dict | None]:
    """(rm_options, provenance) of one policy/RM pair: start_scale's reward options (the
    centre and temperature; {} for mode "") and what each run of that pair records as its
    `rproc_scale` recipe field (provenance_of the out_dir/proc_scale.json it wrote)."""
    opts = start_scale(
        mode, policy, problems, spec, rm_path, out_dir, placement, recipe=recipe, domain=domain
    )
    return opts, provenance_of(scale_record(out_dir))
