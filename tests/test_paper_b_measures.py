"""Paper B's ensemble and turnover quantities, measured as the paper means them:
unique extrapolated solves and turnover at an equal budget against a split-half null, the best
single checkpoint among every evaluated checkpoint with absolute and relative paired gains, and
cached evaluations that must match the problem set they were evaluated on.

The constructed examples are identical checkpoints: any "unique solve" or turnover they show
is sampling alone, so a statistic that measures the paper's quantity must not tell them apart
from its null. Numbers on the example (seed 0, 400 problems, paper grid, n = 250):
unique extrapolated solves, all draws (the old statistic): 27.5% of problems; budget-matched
(125 draws a side, stable range): 10.0% vs a null of 10.4%, excess -0.3% [-1.8%, +1.0%].
Turnover of two identical checkpoints at p = 0.004: raw 0.52; at 125 draws each 0.751 vs a
null of 0.749, excess +0.002 [-0.031, +0.036].
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from recode_lib.analysis import ensemble as E
from recode_lib.analysis import frontier as F
from recode_lib.core.jsonl import read_jsonl, write_json_atomic, write_jsonl_atomic
from recode_lib.data.schema import Problem
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion, Generator
from recode_lib.metrics import bootstrap_ci, solved_sets, turnover

GRID = [
    -2.5,
    -2.0,
    -1.5,
    -1.0,
    -0.5,
    -0.25,
    0.0,
    0.25,
    0.5,
    0.75,
    1.0,
    1.25,
    1.5,
    2.0,
    2.5,
    3.0,
    3.5,
]  # the paper profile's grid (07 and 11)
STABLE = (-0.5, 1.5)


def _identical(p: float, n: int = 250, problems: int = 400, seed: int = 0, names=GRID) -> dict:
    """Checkpoints that are the same model: every draw correct with probability p."""
    rng = np.random.default_rng(seed)
    return {a: {f"q{i}": (n, int(rng.binomial(n, p))) for i in range(problems)} for a in names}


# --- unique extrapolated solves and turnover, budget-matched, against a null ---------


def test_identical_checkpoints_show_no_unique_extrapolated_solves_beyond_the_null():
    counts = _identical(0.001)
    u = E.extrapolated_unique_solves(counts, stable=STABLE, n_boot=1000)
    # before: all draws of the 12 outside alphas (3000) against the 5 inside (1250): ~27% of
    # problems "unique to extrapolation" by sampling alone (1 - 0.999^3000) * 0.999^1250
    before = u["unmatched"]["n_unique"] / 400
    assert before == pytest.approx((1 - 0.999**3000) * 0.999**1250, abs=0.05)
    # after: the stable range only, 125 draws a side, and the same statistic between two halves
    # of the interpolation pool's own samples
    assert u["extrapolated"] == [-0.5, -0.25, 1.25, 1.5] and u["budget"] == 125
    assert u["interpolation"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert u["null_rate"] > 0.05  # sampling alone makes many
    assert u["excess_rate_lo"] <= 0.0 <= u["excess_rate_hi"]  # ... and nothing beyond it
    assert abs(u["excess_rate"]) < 0.02 and u["rate"] < before / 2
    assert u["expected_unique"] == pytest.approx(400 * u["rate"])


def test_extrapolated_checkpoints_that_do_solve_other_problems_exceed_the_null():
    """The positive control: outside alphas that solve 50 problems the inside ones never do."""
    counts = _identical(0.001)
    rng = np.random.default_rng(1)
    for a in (-0.5, -0.25, 1.25, 1.5):
        for i in range(50):
            counts[a][f"q{i}"] = (250, int(rng.binomial(250, 0.02)))
    for a in (0.0, 0.25, 0.5, 0.75, 1.0):
        for i in range(50):
            counts[a][f"q{i}"] = (250, 0)
    u = E.extrapolated_unique_solves(counts, stable=STABLE, n_boot=1000)
    assert u["excess_rate_lo"] > 0.05


def test_unique_solves_say_why_when_they_cannot_be_measured():
    counts = _identical(0.1, n=1, problems=5, names=[0.0, 1.0, 1.5])
    u = E.extrapolated_unique_solves(counts, stable=STABLE)
    assert u["budget"] is None and u["excess_rate"] is None and "two halves" in u["reason"]
    u = E.extrapolated_unique_solves(_identical(0.1, n=4, problems=5, names=[0.0, 1.0]))
    assert u["rate"] is None and "one side" in u["reason"]


def test_identical_checkpoints_turn_over_only_as_much_as_two_halves_of_one():
    c = _identical(0.004, problems=400, names=["a", "b"])
    sets = solved_sets(c)
    raw = turnover(sets["a"], sets["b"])["turnover"]
    assert raw == pytest.approx(0.54, abs=0.05)  # before: "high turnover" by chance
    m = F.matched_turnover(c["a"], c["b"], n_boot=1000)
    assert m["budget"] == 125 and m["null"] > 0.5
    assert m["excess_lo"] <= 0.0 <= m["excess_hi"] and abs(m["excess"]) < 0.03


def test_checkpoints_that_solve_different_problems_turn_over_beyond_the_null():
    a = {f"q{i}": (250, 20 if i < 100 else 0) for i in range(200)}
    b = {f"q{i}": (250, 0 if i < 100 else 20) for i in range(200)}
    m = F.matched_turnover(a, b, n_boot=500)
    assert m["turnover"] == pytest.approx(1.0) and m["null"] < 0.01 and m["excess_lo"] > 0.9


def test_the_frontier_records_matched_turnover_beside_the_raw_one(tmp_path):
    def recs(outs):
        return [
            {"problem_id": f"p{i}", "sample": j, "outcome": o}
            for i, row in enumerate(outs)
            for j, o in enumerate(row)
        ]

    C, W = "correct", "correctness_failure"
    samples = {0.0: recs([[C, W, W, W], [W, W, W, W]]), 1.0: recs([[W, W, W, W], [C, W, W, W]])}
    payload = F.write_frontier(tmp_path, samples)
    t = payload["turnover"][0]
    assert t["turnover"] == 1.0 and t["matched_budget"] == 2
    for key in ("matched_turnover", "turnover_null", "turnover_excess"):
        assert t[f"{key}_lo"] <= t[key] <= t[f"{key}_hi"]
    assert payload["problem_set"]["n"] == 2 and payload["problem_ids"] == ["p0", "p1"]


# --- the best single checkpoint is the best of every evaluated checkpoint ------------


def _table():
    """Alphas 0, 0.5, 1, 3 and sweep runs k2, partial_discrete on 4 problems, 4 samples each."""

    def row(*cs):
        return {f"p{i}": (4, c) for i, c in enumerate(cs)}

    counts = {
        0.0: row(1, 0, 0, 0),
        0.5: row(1, 1, 0, 0),
        1.0: row(0, 1, 0, 0),
        3.0: row(0, 1, 4, 1),
    }  # unstable, but the best single alpha
    runs = {"k2": row(4, 4, 4, 4), "partial_discrete": row(1, 0, 0, 0)}  # 06: the best of all
    return counts, runs


def test_best_single_is_chosen_among_every_alpha_and_every_sweep_run():
    counts, runs = _table()
    assert E.default_pools(counts, 4, stable=STABLE)["best_single"] == [3.0]  # not only stable
    pools = E.default_pools(counts, 4, stable=STABLE, runs=runs)
    assert pools["best_single"] == ["k2"]
    assert pools["interp+extrap"] == [0.0, 0.5, 1.0]  # pools stay on the alpha axis
    with pytest.raises(ValueError, match="different n"):
        E.default_pools(counts, 2, runs={"k2": {f"p{i}": (8, 1) for i in range(4)}})


def test_gains_are_absolute_and_relative_with_paired_intervals(tmp_path):
    counts, runs = _table()
    table = counts | runs
    g = E.paired_gain(table, [1.0], [0.0, 0.5], 4, n_boot=500)  # 2 draws from each member
    assert g["base"] == pytest.approx(0.25)  # alpha 1 solves p1 only
    assert g["pool"] == pytest.approx((0.75 + 0.5) / 4)  # p0: 1 - 0.5 * 0.5; p1: 0.5
    assert g["gain"] == pytest.approx(0.0625) and g["relative"] == pytest.approx(0.25)
    assert g["lo"] <= g["gain"] <= g["hi"] and g["base_members"] == [1.0]
    assert g["relative_lo"] is None  # some resamples of 4 problems lack p1: base 0, undefined
    many = {
        a: {f"{pid}/{j}": v for pid, v in c.items() for j in range(10)} for a, c in table.items()
    }
    g = E.paired_gain(many, [1.0], [0.0, 0.5], 4, n_boot=500)  # the same on 40 problems
    assert g["relative"] == pytest.approx(0.25) and g["relative_lo"] <= 0.25 <= g["relative_hi"]
    d = [
        y - x
        for x, y in zip(
            E.problem_values(many, [1.0], 4), E.problem_values(many, [0.0, 0.5], 4), strict=True
        )
    ]
    assert (g["lo"], g["hi"]) == bootstrap_ci(d, n_boot=500)[1:]  # paired: per-problem differences
    p = E.write_ensemble(tmp_path, counts, [1, 4], stable=STABLE, runs=runs, n_boot=200)
    disk = json.loads((tmp_path / "passk.json").read_text())
    assert disk["pools"]["best_single"] == ["k2"] and disk["runs"] == ["k2", "partial_discrete"]
    assert disk["best_single_candidates"] == [0.0, 0.5, 1.0, 3.0, "k2", "partial_discrete"]
    gain = p["gain_extended_vs_best"]
    assert gain["base"] == pytest.approx(1.0) and gain["relative"] == pytest.approx(
        gain["pool"] / gain["base"] - 1
    )
    assert {r["pool"] for r in disk["rows"]} == {"best_single", "interpolation", "interp+extrap"}


def test_the_ensemble_figure_names_a_run_as_the_best_single(tmp_path):
    from recode_lib.analysis import plots

    counts, runs = _table()
    E.write_ensemble(tmp_path, counts, [1, 4], stable=STABLE, runs=runs, n_boot=50)
    assert all(
        p.is_file()
        for p in plots.fig_ensemble_passk(tmp_path / "passk.json", out_dir=tmp_path / "fig")
    )


def test_sweep_runs_are_every_finished_run_less_the_endpoints_the_grid_holds(tmp_path):
    from recode_lib.orchestration.endpoints import sweep_runs

    for name in ("k1", "k2", "kinf", "partial_discrete", "k3"):
        (tmp_path / name / "final").mkdir(parents=True)
        if name != "k3":  # k3 unfinished
            (tmp_path / name / "final" / ".complete").write_text("")
    write_json_atomic(
        tmp_path / "metrics.json",
        {
            "runs": {"k1": {"k": "1"}, "k2": {"k": "2"}, "kinf": {"k": "inf"}, "k3": {"k": "3"}},
            "partial_runs": {"partial_discrete": {"reward": "partial_discrete"}},
        },
    )
    assert sorted(sweep_runs(tmp_path, grid=GRID)) == ["k2", "partial_discrete"]
    assert sorted(sweep_runs(tmp_path, grid=[-1.0, 0.5])) == [
        "k1",
        "k2",
        "kinf",
        "partial_discrete",
    ]
    assert sweep_runs(tmp_path)["k2"] == tmp_path / "k2" / "final"


# --- a cached evaluation must match the problem set it was evaluated on --------------


def _problem(i: int, difficulty: str) -> Problem:
    return Problem(
        id=f"t/p{i}",
        source="t",
        prompt=f"Return {i}. def f{i}():",
        entry_point=f"f{i}",
        difficulty=difficulty,
        tests={"kind": "call", "fn_name": f"f{i}", "cases": [{"args": [], "expected": i}]},
    )


PROBLEMS = [_problem(0, "easy"), _problem(1, "hard"), _problem(2, "medium"), _problem(3, "hard")]
HARD = [p for p in PROBLEMS if p.difficulty == "hard"]


class Solver(Generator):
    """Solves the easy and medium problems, fails the hard ones (an unfiltered frontier looks
    much better than the hard one); records what it is asked for."""

    backend = model = "scripted"

    def __init__(self):
        self.asked = []

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for j, r in enumerate(requests):
            p = next(p for p in PROBLEMS if p.prompt in r.messages[-1]["content"])
            self.asked.append(p.id)
            value = int(p.id[-1]) if p.difficulty != "hard" else -1
            text = f"```python\ndef f{p.id[-1]}():\n    return {value}\n```"
            out.append(Completion(text, n_tokens=5, finish_reason="stop"))
            if callback:
                callback(j, out[-1])
        return out


def _eval(folder, problems, on_change="raise"):
    spec = EvalSpec(temperature=1.0, n=2, workers=1, progress=False, on_config_change=on_change)
    return spec.evaluate("alpha-model", problems, folder, generator=Solver())


def test_a_folder_evaluated_on_another_problem_set_is_refused_naming_both(tmp_path):
    folder = tmp_path / "eval" / "alpha_0.5"
    _eval(folder, PROBLEMS)  # before the hard filter
    run = json.loads((folder / "run.json").read_text())
    assert run["problem_set"]["n"] == 4 and run["problem_ids"] == sorted(p.id for p in PROBLEMS)
    with pytest.raises(ValueError) as err:
        _eval(folder, HARD)  # same model, stamp and sampling
    msg = str(err.value)
    assert str(folder) in msg and "problem sets differ" in msg
    assert "recorded 4 problems" in msg and "this call 2" in msg and "t/p0" in msg


def test_a_stale_folder_is_set_aside_and_the_frontier_is_the_hard_one(tmp_path):
    folder = tmp_path / "eval" / "alpha_0.5"
    _eval(folder, PROBLEMS)
    assert F.frontier_table(F.load_alpha_samples(tmp_path / "eval"))[0]["pass@1"] == 0.5
    gen = Solver()
    spec = EvalSpec(temperature=1.0, n=2, workers=1, progress=False, on_config_change="set_aside")
    spec.evaluate("alpha-model", HARD, folder, generator=gen)
    assert sorted(set(gen.asked)) == ["t/p1", "t/p3"]  # re-evaluated, nothing reused
    assert (tmp_path / "eval" / "alpha_0.5.stale-1" / "samples.jsonl").is_file()
    loaded = F.load_alpha_samples(tmp_path / "eval", problems=[p.id for p in HARD], n=2)
    assert {r["problem_id"] for r in loaded[0.5]} == {"t/p1", "t/p3"}
    assert F.frontier_table(loaded)[0]["pass@1"] == 0.0  # the hard frontier, not 0.5


def test_readers_keep_the_recorded_problem_set_and_refuse_another(tmp_path):
    folder = tmp_path / "eval" / "alpha_1.0"
    _eval(folder, HARD)
    # records of other problems in the file (e.g. appended by hand) are not read back
    rows = read_jsonl(folder / "samples.jsonl")
    write_jsonl_atomic(
        folder / "samples.jsonl", rows + [{**rows[0], "id": "t/p0#0", "problem_id": "t/p0"}]
    )
    assert {r["problem_id"] for r in F.load_alpha_samples(tmp_path / "eval")[1.0]} == {
        "t/p1",
        "t/p3",
    }
    with pytest.raises(F.FrontierError) as err:
        F.load_alpha_samples(tmp_path / "eval", problems=[p.id for p in PROBLEMS])
    assert str(folder) in str(err.value) and "recorded 2 problems" in str(err.value)
    assert "this call 4" in str(err.value)
    assert len(F.load_alpha_samples(tmp_path / "eval", n=1)[1.0]) == 2  # n filter
    legacy = json.loads((folder / "run.json").read_text())
    del legacy["problem_set"], legacy["problem_ids"]
    write_json_atomic(folder / "run.json", legacy)  # written before problem sets were
    with pytest.raises(F.FrontierError, match="records no problem set"):
        F.load_alpha_samples(tmp_path / "eval")
    with pytest.raises(ValueError, match="problem_set"):  # and the guard re-evaluates it
        _eval(folder, HARD)


def test_the_evaluation_spec_is_part_of_what_a_cached_evaluation_must_match(tmp_path):
    folder = tmp_path / "ev"
    _eval(folder, HARD)
    with pytest.raises(ValueError, match="early_stop"):
        spec = EvalSpec(temperature=1.0, n=2, workers=1, progress=False, early_stop=True)
        spec.evaluate("alpha-model", HARD, folder, generator=Solver())


def test_a_run_the_sweep_evaluated_alike_is_not_generated_again(tmp_path):
    """07 re-evaluates 06's runs with 06's spec on 06's problems: the samples are adopted."""
    from recode_lib.evaluation.guard import adopt_evaluation

    earlier = tmp_path / "06" / "eval" / "k1"
    first = _eval(earlier, PROBLEMS, on_change="set_aside")
    assert adopt_evaluation(earlier, tmp_path / "07" / "runs" / "k1")
    gen = Solver()
    spec = EvalSpec(temperature=1.0, n=2, workers=1, progress=False, on_config_change="set_aside")
    again = spec.evaluate("alpha-model", PROBLEMS, tmp_path / "07" / "runs" / "k1", generator=gen)
    assert gen.asked == [] and again["pass@1"] == first["pass@1"]


def test_adopted_samples_drawn_otherwise_are_set_aside_and_generated(tmp_path):
    from recode_lib.evaluation.guard import adopt_evaluation

    earlier = tmp_path / "06" / "eval" / "k1"
    _eval(earlier, PROBLEMS, on_change="set_aside")
    folder = tmp_path / "07" / "runs" / "k1"
    assert adopt_evaluation(earlier, folder)
    gen = Solver()
    spec = EvalSpec(temperature=0.5, n=2, workers=1, progress=False, on_config_change="set_aside")
    spec.evaluate("alpha-model", PROBLEMS, folder, generator=gen)
    assert len(gen.asked) == 2 * len(PROBLEMS)  # another temperature: nothing reused
    assert (folder.parent / "k1.stale-1" / "samples.jsonl").is_file()


def test_adoption_never_touches_a_folder_with_results(tmp_path):
    from recode_lib.evaluation.guard import adopt_evaluation

    earlier, own = tmp_path / "a", tmp_path / "b"
    _eval(earlier, PROBLEMS)
    _eval(own, HARD)
    before = (own / "samples.jsonl").read_text()
    assert not adopt_evaluation(earlier, own)
    assert (own / "samples.jsonl").read_text() == before
    assert not adopt_evaluation(tmp_path / "missing", tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_evaluate_models_adopts_only_when_a_mismatch_may_be_set_aside(tmp_path, monkeypatch):
    from recode_lib.evaluation import spec as S

    earlier = tmp_path / "06" / "k1"
    _eval(earlier, PROBLEMS)
    seen = {}

    def evaluate(self, model, problems, folder, benchmark=None):
        seen[self.on_config_change] = (folder / "run.json").is_file()
        return {}

    monkeypatch.setattr(S.EvalSpec, "evaluate", evaluate)
    for mode in ("raise", "set_aside"):
        spec = EvalSpec(workers=1, on_config_change=mode)
        S.evaluate_models({"k1": "m"}, PROBLEMS, spec, tmp_path / mode, earlier={"k1": earlier})
    assert seen == {"raise": False, "set_aside": True}
