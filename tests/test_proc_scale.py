"""R_proc's scale from the RM's scores of a policy's samples, and R_proc on held-out samples."""

import dataclasses
import json
import math
import types

import pytest

from recode_lib.data.schema import Problem
from recode_lib.metrics import sigmoid
from recode_lib.process_reward.scale import (
    ScaleError,
    proc_scale,
    proc_summary,
    score_models,
    score_samples,
)


class NumberScorer:
    """Scores a trace by the number it holds; records the prompts it was given."""

    def __init__(self):
        self.prompts = []

    def score(self, prompts, traces):
        self.prompts += list(prompts)
        return [float(t.split()[-1]) for t in traces]


def _problem(pid):
    return Problem(
        id=pid,
        source="easy",
        prompt=f"Solve {pid}.",
        tests={"kind": "call", "cases": []},
        entry_point="solve",
    )


def _samples(folder, rows):
    """Evaluation samples as recode_lib.evaluation writes them: `passed` counts passed tests."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "samples.jsonl", "w") as f:
        for i, (pid, score, correct) in enumerate(rows):
            f.write(
                json.dumps(
                    {
                        "id": f"{pid}#{i}",
                        "problem_id": pid,
                        "response": f"code {score}",
                        "passed": 7 if correct else 3,
                        "total": 7,
                        "outcome": "correct" if correct else "correctness_failure",
                    }
                )
                + "\n"
            )


def test_scores_each_sample_with_its_own_problem_prompt(tmp_path):
    _samples(tmp_path / "m", [("p/1", 1.0, True), ("p/2", 3.0, False)])
    scorer = NumberScorer()
    rows = score_samples(scorer, [_problem("p/1"), _problem("p/2")], tmp_path / "m")
    assert [(r["problem_id"], r["score"], r["passed"]) for r in rows] == [
        ("p/1", 1.0, True),
        ("p/2", 3.0, False),
    ]
    assert scorer.prompts == ["Solve p/1.", "Solve p/2."]


def test_r_out_is_every_test_passing_not_some(tmp_path):
    _samples(tmp_path / "m", [("p/1", 1.0, False)])  # 3 of 7 tests passed
    rows = score_samples(NumberScorer(), [_problem("p/1")], tmp_path / "m")
    assert rows[0]["passed"] is False and rows[0]["outcome"] == "correctness_failure"


def test_a_sample_without_an_outcome_is_named(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "samples.jsonl").write_text(
        json.dumps({"id": "p/1#0", "problem_id": "p/1", "response": "code 1", "passed": 7}) + "\n"
    )
    with pytest.raises(ScaleError, match=r"without an outcome: \['p/1#0'\]"):
        score_samples(NumberScorer(), [_problem("p/1")], tmp_path / "m")


def test_a_sample_of_a_problem_not_given_is_named_not_skipped(tmp_path):
    _samples(tmp_path / "m", [("p/1", 1.0, True), ("p/9", 3.0, False)])
    with pytest.raises(ScaleError, match=r"p/9"):
        score_samples(NumberScorer(), [_problem("p/1")], tmp_path / "m")


def test_missing_samples_are_an_error_naming_the_file(tmp_path):
    with pytest.raises(ScaleError, match="samples.jsonl: no evaluation samples"):
        score_samples(NumberScorer(), [], tmp_path / "nothing")


def test_scale_is_the_mean_and_spread_of_the_scores():
    rows = [{"score": s} for s in (1.0, 2.0, 3.0)]
    s = proc_scale(rows)
    assert s["proc_center"] == pytest.approx(2.0)
    assert s["proc_temperature"] == pytest.approx(math.sqrt(2 / 3))
    assert s["n"] == 3


@pytest.mark.parametrize("scores, match", [([1.0], "at least 2"), ([1.5, 1.5, 1.5], "no spread")])
def test_scale_refuses_what_cannot_scale(scores, match):
    with pytest.raises(ScaleError, match=match):
        proc_scale([{"score": s} for s in scores])


def test_scaled_r_proc_spreads_where_the_unscaled_one_is_squashed():
    rows = [
        {"problem_id": f"p/{i}", "score": s, "passed": False}
        for i, s in enumerate((1.2, 1.4, 1.6, 1.8, 2.0))
    ]
    raw = [proc_summary([r])["proc"] for r in rows]
    opts = proc_scale(rows)
    scaled = [
        proc_summary([r], opts["proc_center"], opts["proc_temperature"])["proc"] for r in rows
    ]
    assert max(raw) - min(raw) < 0.15  # sigmoid(1.2..2.0): 0.77..0.88
    assert max(scaled) - min(scaled) > 0.6  # the same scores over most of (0, 1)


def test_summary_splits_r_proc_by_outcome_and_gives_cis_over_problems():
    rows = [
        {"problem_id": "a", "score": 0.0, "passed": True},
        {"problem_id": "a", "score": 2.0, "passed": False},
        {"problem_id": "b", "score": 4.0, "passed": False},
    ]
    s = proc_summary(rows, center=2.0, temperature=1.0)
    assert s["proc"] == pytest.approx((sigmoid(-2) + sigmoid(0) + sigmoid(2)) / 3)
    assert s["proc_passed"] == pytest.approx(sigmoid(-2))
    assert s["proc_failed"] == pytest.approx((sigmoid(0) + sigmoid(2)) / 2)
    assert s["out"] == pytest.approx(1 / 3) and s["raw"] == pytest.approx(2.0)
    lo, hi = s["proc_ci"]
    assert lo <= s["proc"] <= hi and lo < hi
    assert proc_summary([], 0.0, 1.0)["proc"] is None


def test_score_models_writes_per_sample_scores_for_each_model(tmp_path):
    _samples(tmp_path / "start", [("p/1", 1.0, False)])
    _samples(tmp_path / "gated", [("p/1", 3.0, True)])
    out = score_models(NumberScorer(), [_problem("p/1")], tmp_path, ["start", "gated"], center=2.0)
    assert out["start"]["proc"] == pytest.approx(sigmoid(-1)) and out["gated"][
        "proc"
    ] == pytest.approx(sigmoid(1))
    saved = [
        json.loads(x) for x in (tmp_path / "gated" / "rm_scores.jsonl").read_text().splitlines()
    ]
    assert saved[0]["score"] == 3.0 and saved[0]["passed"] is True


def test_paired_difference_cancels_problem_difficulty():
    from recode_lib.process_reward.scale import paired_difference

    # problem p/0 is easy for both models, p/1..p/4 hard for both; b is always 0.1 lower
    a = [{"problem_id": f"p/{i}", "score": (0.9 if i == 0 else 0.2) + 0.01 * i} for i in range(5)]
    b = [{"problem_id": r["problem_id"], "score": r["score"] - 0.1} for r in a]
    b.append({"problem_id": "p/only_b", "score": 5.0})  # not shared: left out
    d = paired_difference(a, b, lambda r: r["score"])
    assert d["mean"] == pytest.approx(0.1) and d["n_problems"] == 5
    assert d["ci"][0] == pytest.approx(0.1) and d["ci"][1] == pytest.approx(0.1)
    assert paired_difference(a, [{"problem_id": "x", "score": 0}], lambda r: r["score"]) is None


def test_start_scale_is_off_by_default_and_names_an_unknown_mode(tmp_path):
    from recode_lib.process_reward.scale import start_scale

    assert (
        start_scale("", "m", [], None, tmp_path / "rm", tmp_path) == {}
    )  # nothing sampled or loaded
    with pytest.raises(ScaleError, match=r"PROC_SCALE must be one of \('', 'start'\), got 'mean'"):
        start_scale("mean", "m", [], None, tmp_path / "rm", tmp_path)


def test_held_out_scores_say_why_they_were_skipped_without_a_reward_model(tmp_path):
    from recode_lib.process_reward.scale import held_out_proc

    out = held_out_proc(tmp_path / "no_rm", [], tmp_path, ["start"])
    assert out == {"skipped": f"no reward model at {tmp_path / 'no_rm'}"}


@dataclasses.dataclass(frozen=True)
class FakeSpec:
    """Stands in for an EvalSpec (greedy, one sample, 64 tokens, as 04's evaluation spec):
    "samples" the start policy by writing fixed samples, and remembers the sampling it was
    asked to sample with."""

    rows: list
    calls: list = dataclasses.field(default_factory=list)
    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 64
    reasoning: bool = True
    n: int = 1
    seed: int = 0

    def evaluate(self, model, problems, out_dir):
        self.calls.append(
            {
                "model": model,
                "temperature": self.temperature,
                "top_p": self.top_p,
                "max_new_tokens": self.max_new_tokens,
                "reasoning": self.reasoning,
            }
        )
        _samples(out_dir, self.rows)

    def evaluate_math(self, model, problems, out_dir):
        self.calls.append({"model": model, "math": True, "temperature": self.temperature})
        _samples(out_dir, self.rows)


# a run's recipe: GRPO rollouts at temperature 1.0, 512 tokens (TRL's default temperature)
RECIPE = types.SimpleNamespace(
    temperature=1.0, top_p=0.95, max_completion_length=512, reasoning=False
)


def _rm(folder, untrained=None):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / "rm_config.json").write_text(
        json.dumps({"untrained": untrained} if untrained else {})
    )
    return folder


def test_start_scale_of_a_trained_rm_is_used_and_recorded(tmp_path, monkeypatch):
    """Scores near 1.6 +- 0.4 (the laptop RM's): sigmoid(raw) would give 0.77-0.88."""
    from recode_lib.process_reward import scale as scale_mod

    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: NumberScorer())
    spec = FakeSpec([("p/1", 1.2, True), ("p/1", 1.6, False), ("p/2", 2.0, True)])
    opts = scale_mod.start_scale(
        "start",
        "m",
        [_problem("p/1"), _problem("p/2")],
        spec,
        _rm(tmp_path / "rm"),
        tmp_path / "out",
        recipe=RECIPE,
    )
    assert len(spec.calls) == 1 and opts["proc_center"] == pytest.approx(1.6)
    assert opts["proc_temperature"] == pytest.approx(math.sqrt(0.32 / 3))
    rec = scale_mod.scale_record(tmp_path / "out")
    assert (
        rec["mode"] == "start"
        and rec["used"] == "start"
        and rec["fallback"] is None
        and rec["n"] == 3
    )


def test_an_untrained_rm_without_spread_falls_back_to_sigmoid_and_says_why(tmp_path, monkeypatch):
    """The dry run's RM (no training pairs, a random head) gives every sample one score: the
    run goes on with sigmoid(raw), and the record names the fallback and its reason."""
    from recode_lib.process_reward import scale as scale_mod

    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: NumberScorer())
    spec = FakeSpec([("p/1", -0.1982, True), ("p/1", -0.1982, False), ("p/2", -0.1982, True)])
    opts = scale_mod.start_scale(
        "start",
        "m",
        [_problem("p/1"), _problem("p/2")],
        spec,
        _rm(tmp_path / "rm", "no training pairs"),
        tmp_path / "out",
        recipe=RECIPE,
    )
    assert opts == {} and len(spec.calls) == 1
    rec = scale_mod.scale_record(tmp_path / "out")
    assert rec["mode"] == "start" and rec["used"] == "sigmoid" and rec["n"] == 3
    assert "untrained (no training pairs)" in rec["fallback"] and "floor" in rec["fallback"]
    assert (rec["proc_center"], rec["proc_temperature"]) == (0.0, 1.0)


def test_an_untrained_rm_that_spreads_is_scaled_and_flagged(tmp_path, monkeypatch):
    from recode_lib.process_reward import scale as scale_mod

    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: NumberScorer())
    spec = FakeSpec([("p/1", 0.1, True), ("p/1", 0.3, False)])
    opts = scale_mod.start_scale(
        "start",
        "m",
        [_problem("p/1")],
        spec,
        _rm(tmp_path / "rm", "no training pairs"),
        tmp_path / "out",
        recipe=RECIPE,
    )
    assert opts["proc_center"] == pytest.approx(0.2)
    rec = scale_mod.scale_record(tmp_path / "out")
    assert (
        rec["used"] == "start"
        and rec["fallback"] is None
        and rec["rm_untrained"] == "no training pairs"
    )


def test_a_trained_rm_without_spread_still_raises(tmp_path, monkeypatch):
    from recode_lib.process_reward import scale as scale_mod

    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: NumberScorer())
    spec = FakeSpec([("p/1", 1.5, True), ("p/1", 1.50000001, False)])  # below SPREAD_FLOOR
    with pytest.raises(ScaleError, match="floor"):
        scale_mod.start_scale(
            "start",
            "m",
            [_problem("p/1")],
            spec,
            _rm(tmp_path / "rm"),
            tmp_path / "out",
            recipe=RECIPE,
        )


def test_the_paper_profile_and_its_dry_run_use_the_start_scale():
    from recode_lib.runner.dryrun import dryrun_profile
    from recode_lib.runner.pipeline import load_profile

    assert load_profile("paper")["04_cg_grpo"]["PROC_SCALE"] == "start"
    assert dryrun_profile("/tiny")["04_cg_grpo"]["PROC_SCALE"] == "start"


# ---- one rule for every R_proc run (issue 41) ------------------------------------------------


def test_the_start_policy_is_sampled_at_the_training_temperature_and_length(tmp_path, monkeypatch):
    """Not 04's greedy evaluation spec (temperature 0, 64 tokens): the rollouts R_proc scores."""
    from recode_lib.process_reward import scale as scale_mod

    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: NumberScorer())
    spec = FakeSpec([("p/1", 1.2, True), ("p/1", 1.6, False)])
    scale_mod.start_scale(
        "start",
        "pol",
        [_problem("p/1")],
        spec,
        _rm(tmp_path / "rm"),
        tmp_path / "out",
        recipe=RECIPE,
    )
    assert spec.calls == [
        {
            "model": "pol",
            "temperature": 1.0,
            "top_p": 0.95,
            "max_new_tokens": 512,
            "reasoning": False,
        }
    ]
    rec = scale_mod.scale_record(tmp_path / "out")
    assert rec["sampling"] == {
        "temperature": 1.0,
        "top_p": 0.95,
        "max_new_tokens": 512,
        "n": 1,
        "seed": 0,
    }
    assert rec["rule"] == scale_mod.START_RULE and rec["rm_path"] == str(tmp_path / "rm")
    assert scale_mod.provenance_of(rec)["model"] == "pol"


def test_the_start_scale_needs_the_runs_recipe(tmp_path):
    from recode_lib.process_reward.scale import start_scale

    with pytest.raises(ScaleError, match="recipe"):
        start_scale("start", "m", [_problem("p/1")], FakeSpec([]), tmp_path / "rm", tmp_path)


def test_a_math_start_scale_reads_the_math_samples(tmp_path, monkeypatch):
    from recode_lib.process_reward import scale as scale_mod

    scorer = NumberScorer()
    monkeypatch.setattr(scale_mod, "load_eval_scorer", lambda path, placement=None: scorer)

    class MathSpec(FakeSpec):
        def evaluate_math(self, model, problems, out_dir):
            self.calls.append({"math": True, "temperature": self.temperature})
            out_dir.mkdir(parents=True, exist_ok=True)
            rows = [
                {"problem_id": "p/1", "sample": i, "response": f"x {v}", "correct": c}
                for i, (v, c) in enumerate([(0.5, True), (1.5, False)])
            ]
            (out_dir / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    spec = MathSpec([])
    opts = scale_mod.start_scale(
        "start",
        "m",
        [_problem("p/1")],
        spec,
        _rm(tmp_path / "rm"),
        tmp_path / "out",
        recipe=RECIPE,
        domain="math",
    )
    assert spec.calls == [{"math": True, "temperature": 1.0}] and opts["proc_center"] == 1.0
    assert scorer.prompts == ["Solve p/1."] * 2  # the statement, as the math reward's RM reads it


def test_every_rproc_run_of_the_paper_profile_has_the_same_scaling_rule():
    """gated, additive, the Qwen3-4B transfer run and the math run: one rule, each at its own
    recipe's training sampling (today: transfer and math trained on sigmoid(raw score))."""
    from recode_lib.orchestration.proc_scale import proc_runs, run_recipe
    from recode_lib.process_reward.scale import START_RULE, training_sampling
    from recode_lib.runner.pipeline import profile_parameters

    pp = profile_parameters("paper")
    runs = proc_runs(pp)
    assert {(r["notebook"], r["run"]) for r in runs} >= {
        ("04_cg_grpo", "gated"),
        ("04_cg_grpo", "additive"),
        ("04_cg_grpo", "transfer"),
        ("10_math_domain", "math_gated"),
    }
    assert {(r["rule"]["mode"], r["rule"]["rule"]) for r in runs} == {("start", START_RULE)}
    for r in runs:
        recipe = run_recipe(r["recipe"], pp[r["notebook"]], r["policy"])
        assert r["rule"]["sampling"] == training_sampling(recipe)


def test_each_transfer_run_carries_its_own_policys_scale():
    from recode_lib.training.launch import TRANSFER, TRANSFER_BASELINE, transfer_variants

    prov = {"mode": "start", "model": "other/4B"}
    runs = transfer_variants(
        "other/4B", rm_options={"proc_center": 0.3, "proc_temperature": 2.0}, proc_scale=prov
    )
    assert runs[TRANSFER]["rewards"] == [
        {"name": "gated", "proc_center": 0.3, "proc_temperature": 2.0}
    ]
    assert runs[TRANSFER]["rproc_scale"] == prov and "rproc_scale" not in runs[TRANSFER_BASELINE]
    assert runs[TRANSFER_BASELINE]["rewards"] == [{"name": "outcome_only"}]


def test_a_runs_recipe_records_its_proc_scale():
    from recode_lib.training.grpo import load_recipe, recipe_dict
    from recode_lib.training.launch import reward_variants

    prov = {"mode": "start", "rule": "r", "proc_center": 0.1}
    own = reward_variants(["gated", "outcome_only"], {"proc_center": 0.1}, prov)
    assert "rproc_scale" not in own["outcome_only"]
    recipe = load_recipe("cg_grpo_smoke", **own["gated"])
    assert recipe_dict(recipe)["rproc_scale"] == prov  # what run.json and the fingerprint carry
    assert "rproc_scale" not in recipe_dict(
        load_recipe("cg_grpo_smoke")
    )  # unset: old fingerprints kept
