"""Notebook 06/07's protocol: the alpha grid, one evaluation spec, the difficulty filter kept."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from recode_lib.evaluation.spec import EvalSpec
from recode_lib.orchestration import endpoints as EP
from recode_lib.runner.pipeline import (
    declared_parameters,
    load_profile,
    notebooks_dir,
    parse_list,
    resolve_parameters,
)
from recode_lib.weights.merge import parse_alphas

NB07 = notebooks_dir() / "07_weight_averaging.ipynb"
NB06 = notebooks_dir() / "06_strictness_sweep.ipynb"


def _params(notebook, profile: str) -> dict:
    """What papermill would run the notebook with: its defaults, then the profile's values."""
    return {
        **declared_parameters(notebook),
        **resolve_parameters(notebook, profile, load_profile(profile)),
    }


def _grid(profile: str) -> list[float]:
    params = _params(NB07, profile)
    return sorted(parse_alphas([params["ALPHAS"]]))


def test_paper_grid_extrapolates_beyond_two_on_both_sides():
    grid = _grid("paper")
    assert min(grid) < -2 and max(grid) > 2, grid  # format errors tested left and right
    assert {0.0, 1.0} <= set(grid)  # both endpoints are points
    assert any(0 < a < 1 for a in grid)  # and interpolation


def test_smoke_grid_is_small_but_still_reaches_beyond_two_on_each_side():
    grid = _grid("smoke")
    assert len(grid) <= 7 and min(grid) < -2 and max(grid) > 2, grid


def test_saved_alphas_are_grid_points_in_every_profile():
    for profile in ("smoke", "paper"):
        params = _params(NB07, profile)
        saved = parse_alphas([params["SAVE_ALPHAS"]]) if params.get("SAVE_ALPHAS") else []
        assert set(saved) <= set(_grid(profile)), profile


def test_paper_06_and_07_use_one_sampling_protocol():
    p06 = _params(NB06, "paper")
    p07 = _params(NB07, "paper")
    s06 = EvalSpec(
        temperature=p06["EVAL_TEMPERATURE"],
        top_p=p06["EVAL_TOP_P"],
        max_new_tokens=p06["EVAL_MAX_NEW_TOKENS"],
        reasoning=p06["REASONING"],
    )
    s07 = EvalSpec(
        temperature=p07["TEMPERATURE"],
        top_p=p07["TOP_P"],
        max_new_tokens=p07["MAX_NEW_TOKENS"],
        reasoning=p07["REASONING"],
    )
    assert s06.fingerprint() == s07.fingerprint()
    assert p07["SPEC_FROM_SWEEP"] is True  # and 07 takes 06's record anyway
    assert p06["EVAL_DIFFICULTY"] == p07["DIFFICULTY"] == "hard"
    assert parse_list(p07["PASS_K"], int)[-1] <= p07["N_SAMPLES"]


def _fake_benchmark(monkeypatch, problems):
    import recode_lib.data as D

    monkeypatch.setattr(
        D, "load_benchmark", lambda name, limit=None, **kw: problems[: limit or None]
    )


PROBLEMS = [
    SimpleNamespace(id=f"p{i}", difficulty=d)
    for i, d in enumerate(["easy", "hard", "medium", "hard", "hard"])
]


def test_sweep_problems_keep_the_difficulty_filter(tmp_path, monkeypatch):
    _fake_benchmark(monkeypatch, PROBLEMS)
    (tmp_path / "frontier.json").write_text(
        json.dumps({"eval_benchmark": "lcb", "eval_problems": ["p0", "p1", "p2", "p3", "p4"]})
    )
    bench, got = EP.sweep_eval_problems(tmp_path, None, difficulty="hard")
    assert bench == "lcb" and [p.id for p in got] == ["p1", "p3", "p4"]
    _, got = EP.sweep_eval_problems(tmp_path, 2, difficulty="hard")  # limit after the filter
    assert [p.id for p in got] == ["p1", "p3"]
    _, got = EP.sweep_eval_problems(tmp_path, None)
    assert len(got) == 5
    with pytest.raises(ValueError, match="difficulty 'impossible'.*EVAL_DIFFICULTY"):
        EP.sweep_eval_problems(tmp_path, None, difficulty="impossible")


def test_train_eval_split_filters_held_out_by_difficulty_before_the_cut(monkeypatch):
    from recode_lib.data import split

    monkeypatch.setattr(
        split, "load_benchmark", lambda name, limit=None, **kw: PROBLEMS[: limit or None]
    )
    train, held = split.train_eval_split("a", 1, 2, eval_benchmark="b", eval_difficulty="hard")
    assert [p.id for p in train] == ["p0"] and [p.id for p in held] == ["p1", "p3"]
    train, held = split.train_eval_split("a", 2, 5, eval_difficulty="hard")  # same benchmark
    assert [p.id for p in train] == ["p0", "p1"] and [p.id for p in held] == ["p3", "p4"]
    with pytest.raises(ValueError, match="eval_difficulty='expert'"):
        split.train_eval_split("a", 1, 2, eval_benchmark="b", eval_difficulty="expert")


def test_07_takes_the_protocol_recorded_by_06(tmp_path):
    from recode_lib.analysis.frontier import write_sweep_frontier

    s06 = EvalSpec(temperature=1.0, top_p=0.9, max_new_tokens=77, n=8, seed=4, early_stop=True)
    summ = {
        "k1": {
            "pass@1": 0.5,
            "outcomes": {},
            "n_problems": 1,
            "n_samples": 8,
            "tokens": {"mean": 1.0, "truncated_rate": 0.0},
        }
    }
    write_sweep_frontier(tmp_path, summ, {"k1": 1}, spec=s06)
    mine = EvalSpec(
        backend="vllm",
        temperature=0.8,
        top_p=0.95,
        max_new_tokens=192,
        n=250,
        k=(1, 10),
        seed=0,
        tensor_parallel_size=2,
    )
    shared = EP.sweep_protocol_spec(mine, tmp_path)
    assert shared.fingerprint() == s06.fingerprint()
    assert (shared.n, shared.k, shared.seed, shared.backend, shared.tensor_parallel_size) == (
        250,
        (1, 10),
        0,
        "vllm",
        2,
    )
    (tmp_path / "frontier.json").write_text(json.dumps({"rows": []}))
    with pytest.raises(EP.EndpointError, match="no recorded eval_spec.*SPEC_FROM_SWEEP"):
        EP.sweep_protocol_spec(mine, tmp_path)


def test_smoke_06_and_07_use_one_sampling_protocol():
    p06 = _params(NB06, "smoke")
    p07 = _params(NB07, "smoke")
    s06 = EvalSpec(
        temperature=p06["EVAL_TEMPERATURE"],
        top_p=p06["EVAL_TOP_P"],
        max_new_tokens=p06["EVAL_MAX_NEW_TOKENS"],
        reasoning=p06["REASONING"],
    )
    s07 = EvalSpec(
        temperature=p07["TEMPERATURE"],
        top_p=p07["TOP_P"],
        max_new_tokens=p07["MAX_NEW_TOKENS"],
        reasoning=p07["REASONING"],
    )
    assert s06.fingerprint() == s07.fingerprint() and p07["SPEC_FROM_SWEEP"] is True


NB11 = notebooks_dir() / "11_settings_sweep.ipynb"


def test_paper_11_measures_what_06_and_07_measure():
    """Notebook 11 (paper B per setting) on LCB-hard, with 07's alpha grid and 06's protocol."""
    p06, p07, p11 = (_params(nb, "paper") for nb in (NB06, NB07, NB11))
    assert p11["EVAL_DIFFICULTY"] == p06["EVAL_DIFFICULTY"] == p07["DIFFICULTY"] == "hard"
    assert sorted(parse_alphas([p11["ALPHAS"]])) == _grid("paper")  # -0.25, 1.25, 3.0 too
    s06 = EvalSpec(
        temperature=p06["EVAL_TEMPERATURE"],
        top_p=p06["EVAL_TOP_P"],
        max_new_tokens=p06["EVAL_MAX_NEW_TOKENS"],
    )
    s11 = EvalSpec(
        temperature=p11["EVAL_TEMPERATURE"],
        top_p=p11["EVAL_TOP_P"],
        max_new_tokens=p11["EVAL_MAX_NEW_TOKENS"],
    )
    assert s11.fingerprint() == s06.fingerprint()  # T 1.0 / 8192 tokens
    assert parse_list(p11["PASS_K"], int)[-1] <= p11["ALPHA_N_SAMPLES"]


def test_paper_profile_defines_the_protocol_and_grid_once():
    """One definition, not copied numbers: 11's grid and protocol are the same YAML nodes as
    07's grid and 06's protocol (an edit to one cannot leave the other behind)."""
    import yaml

    root = yaml.compose((notebooks_dir() / "params" / "paper.yaml").read_text())

    def section(name):
        return next(v for k, v in root.value if k.value == name)

    def node(sec, key):
        for k, v in sec.value:
            if k.value == key:
                return v
            if k.value == "<<":  # a merged mapping
                for kk, vv in v.value:
                    if kk.value == key:
                        return vv
        raise KeyError(key)

    s06, s07, s11 = (
        section(n) for n in ("06_strictness_sweep", "07_weight_averaging", "11_settings_sweep")
    )
    assert node(s11, "ALPHAS") is node(s07, "ALPHAS")
    for key in ("EVAL_TEMPERATURE", "EVAL_TOP_P", "EVAL_MAX_NEW_TOKENS", "EVAL_DIFFICULTY"):
        assert node(s11, key) is node(s06, key), key
    assert node(s07, "DIFFICULTY") is node(s06, "EVAL_DIFFICULTY")
    assert node(s07, "TEMPERATURE") is node(s06, "EVAL_TEMPERATURE")


def test_notebook_11_keeps_its_held_out_problems_to_the_difficulty():
    """The parameter is used where the split is made (notebooks orchestrate: the filter itself
    is train_eval_split's, tested above)."""
    import nbformat

    src = "\n".join(
        c.source for c in nbformat.read(NB11, as_version=4).cells if c.cell_type == "code"
    )
    assert "EVAL_DIFFICULTY" in declared_parameters(NB11)
    assert "eval_difficulty=EVAL_DIFFICULTY" in src.replace(" ", "")
