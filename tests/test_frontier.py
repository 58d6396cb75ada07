"""recode_lib.analysis.frontier and recode_lib.analysis.ensemble on small synthetic per-sample
records."""

from __future__ import annotations

import json
import math

import pytest

from recode_lib.analysis import ensemble as E
from recode_lib.analysis import frontier as F
from recode_lib.core.jsonl import write_jsonl_atomic
from recode_lib.metrics import pass_at_k


def _recs(outcomes_by_problem: dict[str, list[str]], tokens: int = 10) -> list[dict]:
    return [
        {
            "id": f"{pid}#{i}",
            "problem_id": pid,
            "sample": i,
            "status": "x",
            "outcome": o,
            "n_tokens": tokens,
        }
        for pid, outs in outcomes_by_problem.items()
        for i, o in enumerate(outs)
    ]


C, OF, CF, FE = "correct", "optimization_failure", "correctness_failure", "format_error"
# three alphas over problems p1..p3, 4 samples each: lenient endpoint fails by slowness,
# strict endpoint fails by wrong answers, the extrapolated point solves p3 uniquely
SAMPLES = {
    0.0: _recs({"p1": [C, OF, OF, OF], "p2": [OF, OF, OF, CF], "p3": [OF, OF, OF, OF]}),
    1.0: _recs({"p1": [CF, CF, CF, CF], "p2": [C, C, CF, CF], "p3": [CF, CF, CF, CF]}),
    1.5: _recs({"p1": [CF, CF, CF, FE], "p2": [C, CF, CF, CF], "p3": [C, CF, CF, FE]}),
    3.0: _recs({"p1": [FE, FE, FE, FE], "p2": [FE, FE, FE, CF], "p3": [FE, FE, FE, FE]}, 99),
}


def test_frontier_rows_rates_and_solve_rate():
    rows = F.frontier_table(SAMPLES)
    assert [r["alpha"] for r in rows] == [0.0, 1.0, 1.5, 3.0]
    r0 = rows[0]
    assert r0[OF] == pytest.approx(10 / 12) and r0[C] == pytest.approx(1 / 12)
    assert r0[CF] == pytest.approx(1 / 12) and r0[FE] == 0
    assert all(math.isclose(sum(r[o] for o in F.OUTCOMES), 1.0) for r in rows)
    assert rows[1]["pass@1"] == pytest.approx((0 + 0.5 + 0) / 3)
    assert rows[1]["solve_rate"] == pytest.approx(1 / 3) and rows[2]["n_solved"] == 2
    assert rows[3]["mean_tokens"] == 99
    # the trade-off: lenient fails by optimization, strict by correctness
    assert rows[0]["opt_share_of_failures"] > 0.8 and rows[1]["opt_share_of_failures"] == 0


def test_turnover_between_neighbours():
    turn = F.turnover_table(SAMPLES)
    assert [(t["alpha_a"], t["alpha_b"]) for t in turn] == [(0.0, 1.0), (1.0, 1.5), (1.5, 3.0)]
    assert turn[0]["only_a"] == 1 and turn[0]["only_b"] == 1 and turn[0]["turnover"] == 1.0
    assert turn[1]["both"] == 1 and turn[1]["only_b"] == 1


def test_format_error_rise_beyond_threshold():
    rise = F.format_error_rise(F.frontier_table(SAMPLES), threshold=2.0)
    assert rise["n_outside"] == 1 and rise["outside"] == pytest.approx(11 / 12)
    assert rise["inside"] == pytest.approx((0 + 0 + 2 / 12) / 3)


def test_problem_subset_and_coverage_check():
    # problems are restricted when records are read (load_alpha_samples); the tables take
    # the records they are given and have no subset option of their own
    only_p3 = {a: [r for r in recs if r["problem_id"] == "p3"] for a, recs in SAMPLES.items()}
    rows = F.frontier_table(only_p3)
    assert rows[0]["n_problems"] == 1 and rows[2][C] == 0.25
    with pytest.raises(TypeError):
        F.frontier_table(SAMPLES, problems=["p3"])
    bad = dict(SAMPLES)
    bad[2.0] = _recs({"p1": [C], "p2": [C]})
    with pytest.raises(F.FrontierError, match="different problems"):
        F.frontier_table(bad)


def test_bad_records_raise_naming_the_record():
    with pytest.raises(F.FrontierError, match="unknown outcome 'passed'"):
        F.frontier_table({0.0: [{"problem_id": "p", "sample": 0, "outcome": "passed"}]})
    with pytest.raises(F.FrontierError, match="no 'outcome'"):
        F.frontier_table({0.0: [{"problem_id": "p", "sample": 0}]})


def test_load_and_write_round_trip(tmp_path):
    for a, recs in SAMPLES.items():
        write_jsonl_atomic(tmp_path / "eval" / f"alpha_{a!r}" / "samples.jsonl", recs)
    loaded = F.load_alpha_samples(tmp_path / "eval")
    assert list(loaded) == [0.0, 1.0, 1.5, 3.0] and loaded[1.5] == SAMPLES[1.5]
    payload = F.write_frontier(tmp_path, loaded)
    disk = json.loads((tmp_path / "frontier.json").read_text())
    assert disk["rows"] == json.loads(json.dumps(payload["rows"]))
    assert disk["solved"]["1.5"] == ["p2", "p3"]
    assert (tmp_path / "frontier.csv").read_text().startswith("alpha,")
    with pytest.raises(F.FrontierError, match="no alpha_"):
        F.load_alpha_samples(tmp_path / "nothing")


def test_ensemble_matched_budget_and_pools():
    counts = E.counts_by_alpha(SAMPLES)
    # a single-member pool is plain pass@k
    assert E.problem_values(counts, [1.0], 2) == [pass_at_k(4, c, 2) for c in (0, 2, 0)]
    # two members, budget 2: one draw each -> 1 - (1 - c1/n)(1 - c2/n)
    vals = E.problem_values(counts, [0.0, 1.0], 2)
    assert vals == pytest.approx([1 - 0.75 * 1.0, 1 - 1.0 * 0.5, 0.0])
    # odd budget over two members: the extra draw is averaged over both members
    v3 = E.problem_values(counts, [0.0, 1.0], 3)[0]
    want = 0.5 * (1 - (1 - pass_at_k(4, 1, 2))) + 0.5 * (1 - (1 - pass_at_k(4, 1, 1)))
    assert v3 == pytest.approx(want)
    pools = E.default_pools(counts, budget=4, stable=(-0.5, 1.5))
    assert pools["interpolation"] == [0.0, 1.0] and pools["interp+extrap"] == [0.0, 1.0, 1.5]
    assert pools["best_single"] == [1.5]  # solves 2 of 3 at pass@4
    rows = E.ensemble_curves(counts, pools, ks=(1, 3, 4), n_boot=200)
    by = {(r["pool"], r["k"]): r for r in rows}
    # k = 3 over three members: one draw each
    assert by[("interp+extrap", 3)]["pass"] == pytest.approx((0.25 + 0.625 + 0.25) / 3)
    assert by[("best_single", 4)]["pass"] == pytest.approx(2 / 3)
    assert all(r["lo"] <= r["pass"] <= r["hi"] for r in rows)


def test_unique_extrapolated_solves_and_write(tmp_path):
    counts = E.counts_by_alpha(SAMPLES)
    u = E.extrapolated_unique_solves(counts, stable=(-0.5, 1.5), n_boot=100)
    raw = u["unmatched"]  # all draws, not budget-matched: for reference only
    assert raw["problems"] == ["p3"] and raw["by_alpha"] == {"1.5": ["p3"], "3.0": []}
    assert u["extrapolated"] == [1.5] and u["interpolation"] == [0.0, 1.0] and u["budget"] == 2
    # 2 draws a side: alpha 1.5 has pass@2 = 0, 1/2, 1/2 on p1..p3; the interpolation pool
    # (one draw from each of 0.0 and 1.0) solves p1, p2, p3 with 1/4, 1/2, 0
    assert u["rate"] == pytest.approx((0 + 0.5 * (1 - 0.5) + 0.5 * 1) / 3)
    payload = E.write_ensemble(tmp_path, counts, ks=(1, 2, 4), stable=(-0.5, 1.5), n_boot=100)
    disk = json.loads((tmp_path / "passk.json").read_text())
    assert (
        disk["pools"] == payload["pools"]
        and disk["extrapolated_unique"]["unmatched"]["n_unique"] == 1
    )
    assert disk["gain_extended_vs_best"]["k"] == 4


def test_ensemble_raises_when_samples_are_too_few():
    counts = E.counts_by_alpha(SAMPLES)
    with pytest.raises(ValueError):
        E.problem_values(counts, [0.0], 5)


def test_every_point_carries_its_spec_fingerprint_and_overlay_checks_them(tmp_path):
    from recode_lib.evaluation.spec import EvalSpec

    spec = EvalSpec(temperature=1.0, top_p=1.0, max_new_tokens=8192, n=4)
    merged = F.write_frontier(tmp_path / "07", SAMPLES, spec=spec)
    assert {r["spec_fingerprint"] for r in merged["rows"]} == {spec.fingerprint()}
    assert merged["protocol"] == spec.protocol() and merged["eval_spec"]["n"] == 4
    summ = {
        "k1": {
            "pass@1": 0.5,
            "outcomes": {o: 0.25 for o in F.OUTCOMES},
            "n_problems": 2,
            "n_samples": 8,
            "tokens": {"mean": 5.0, "truncated_rate": 0.0},
        }
    }
    sweep = F.write_sweep_frontier(
        tmp_path / "06", summ, {"k1": 1}, spec=spec.replace(n=8, seed=1, temperature=1)
    )
    assert F.check_overlay({"07": merged, "06": sweep}) == spec.fingerprint()
    other = F.write_sweep_frontier(
        tmp_path / "06b", summ, {"k1": 1}, spec=spec.replace(temperature=0.8, max_new_tokens=4096)
    )
    with pytest.raises(F.FrontierError, match="sampled differently") as exc:
        F.check_overlay({"07": merged, "06b": other})
    assert "07" in str(exc.value) and "06b" in str(exc.value)
    assert "'temperature': (1.0, 0.8)" in str(exc.value)
    mixed = {"rows": merged["rows"][:1] + other["rows"]}
    with pytest.raises(F.FrontierError, match="mixes points"):
        F.check_overlay({"mixed": mixed})


def test_spec_fingerprint_is_the_sampling_protocol_only():
    from recode_lib.evaluation.spec import EvalSpec

    base = EvalSpec(temperature=1, max_new_tokens=64)
    same = base.replace(
        temperature=1.0, n=8, seed=5, backend="vllm", batch_size=3, workers=4, k=(1, 2)
    )
    assert base.fingerprint() == same.fingerprint()
    for change in (
        {"temperature": 0.8},
        {"top_p": 0.95},
        {"max_new_tokens": 32},
        {"reasoning": False},
        {"early_stop": True},
    ):
        assert base.replace(**change).fingerprint() != base.fingerprint(), change
    assert EvalSpec.from_dict(base.to_dict(), n=3) == base.replace(n=3)
    with pytest.raises(ValueError, match="no field"):
        EvalSpec.from_dict(base.to_dict(), temprature=1.0)


def test_partial_credit_runs_sit_on_the_sweep_frontier_as_their_own_rows(tmp_path):
    """Paper B finding 5: static partial-credit runs are evaluated and drawn with the R_k runs."""

    def summ(p):
        return {
            "pass@1": p,
            "outcomes": {o: 0.25 for o in F.OUTCOMES},
            "n_problems": 2,
            "n_samples": 8,
            "tokens": {"mean": 5.0, "truncated_rate": 0.0},
        }

    runs = {
        "kinf": summ(0.2),
        "partial_continuous": summ(0.3),
        "k1": summ(0.1),
        "partial_discrete": summ(0.4),
    }
    payload = F.write_sweep_frontier(
        tmp_path,
        runs,
        {"k1": 1, "kinf": "inf"},
        partial={
            "partial_discrete": "partial_discrete",
            "partial_continuous": "partial_continuous",
        },
    )
    rows = [(r["run"], r["k"], r["reward"]) for r in payload["rows"]]
    assert rows == [
        ("k1", "1", "strict_1"),
        ("kinf", "inf", "strict_inf"),
        ("partial_continuous", None, "partial_continuous"),
        ("partial_discrete", None, "partial_discrete"),
    ]
    with pytest.raises(ValueError, match="no strictness k or partial reward"):
        F.write_sweep_frontier(tmp_path, runs, {"k1": 1, "kinf": "inf"})
    with pytest.raises(ValueError, match="both a k and a partial reward"):
        F.write_sweep_frontier(
            tmp_path, {"k1": summ(0.1)}, {"k1": 1}, partial={"k1": "partial_discrete"}
        )
    from recode_lib.analysis import plots

    assert plots.fig_frontier(None, sweep=tmp_path / "frontier.json", out_dir=tmp_path)
