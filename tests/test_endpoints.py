"""recode_lib.orchestration.endpoints: picking the sweep's lenient/strict runs; stand-in
fine-tunes."""

from __future__ import annotations

import pytest

from recode_lib.orchestration import endpoints as EP
from recode_lib.weights.merge import MergeConfig, merge_grid


@pytest.mark.parametrize(
    "name, k",
    [
        ("r_k1", 1.0),
        ("R_k2", 2.0),
        ("strict_inf", float("inf")),
        ("r_inf", float("inf")),
        ("k3", 3.0),
        ("kinf", float("inf")),
        ("gated", None),
        ("kinkiness", None),
    ],
)
def test_run_strictness(name, k):
    assert EP.run_strictness(name) == k


def test_sweep_endpoints_pick_lowest_k_and_inf(tmp_path):
    for name, done in (("r_k2", True), ("r_k1", True), ("r_inf", True), ("r_k0", False)):
        (tmp_path / name / "final").mkdir(parents=True)
        if done:
            (tmp_path / name / "final" / ".complete").write_text("ok")
    low, high = EP.sweep_endpoints(tmp_path)
    assert low == tmp_path / "r_k1" / "final" and high == tmp_path / "r_inf" / "final"


def test_sweep_endpoints_read_k_from_the_sweep_metrics(tmp_path):
    import json

    for name in ("lenient", "strict", "middle"):
        (tmp_path / name / "final").mkdir(parents=True)
        (tmp_path / name / "final" / ".complete").write_text("ok")
    (tmp_path / "metrics.json").write_text(
        json.dumps({"runs": {"lenient": {"k": "1"}, "strict": {"k": "inf"}, "middle": {"k": "3"}}})
    )
    low, high = EP.sweep_endpoints(tmp_path)
    assert (low.parent.name, high.parent.name) == ("lenient", "strict")


def test_sweep_endpoints_missing_raise(tmp_path):
    with pytest.raises(EP.EndpointError, match="need two finished runs"):
        EP.sweep_endpoints(tmp_path / "absent")


def test_finetune_endpoints_are_mergeable(tiny_model_dir, tmp_path):
    from recode_lib.data.schema import Problem

    probs = [
        Problem(
            id=f"t/{i}",
            source="t",
            prompt=f"Return {i}.",
            tests={"kind": "script", "script": "pass"},
            reference_solution=f"def f():\n    return {i}\n",
        )
        for i in range(4)
    ]
    low, high = EP.finetune_endpoints(
        str(tiny_model_dir), probs, tmp_path / "ep", steps=1, max_length=64
    )
    assert (low / "config.json").is_file() and (high / "tokenizer_config.json").is_file()
    assert (low / "model.safetensors").read_bytes() != (high / "model.safetensors").read_bytes()
    again = EP.finetune_endpoints(str(tiny_model_dir), probs, tmp_path / "ep", steps=1)
    assert again == (low, high)  # reused, not retrained
    done = merge_grid(MergeConfig(str(low), str(high), (0.5,), str(tmp_path / "m"), progress=False))
    assert (done[0.5] / "model.safetensors").is_file()


def test_a_sweep_of_several_seeds_gives_each_seeds_endpoints(tmp_path):
    import json

    runs = {}
    for s in (1, 2):
        for k in ("1", "inf"):
            name = f"k{k}_seed{s}"
            (tmp_path / name / "final").mkdir(parents=True)
            (tmp_path / name / "final" / ".complete").write_text("ok")
            runs[name] = {"k": k, "seed": s}
    (tmp_path / "metrics.json").write_text(json.dumps({"runs": runs, "seeds": [2, 1]}))
    assert EP.sweep_seeds(tmp_path) == [2, 1]
    low, high = EP.sweep_endpoints(tmp_path)  # the first seed's
    assert (low.parent.name, high.parent.name) == ("k1_seed2", "kinf_seed2")
    low, high = EP.sweep_endpoints(tmp_path, seed=1)
    assert (low.parent.name, high.parent.name) == ("k1_seed1", "kinf_seed1")
    with pytest.raises(ValueError, match="not 3"):
        EP.sweep_endpoints(tmp_path, seed=3)
    (tmp_path / "kinf_seed1" / "final" / ".complete").unlink()  # seed 1's strict run unfinished
    with pytest.raises(EP.EndpointError, match="of seed 1"):
        EP.sweep_endpoints(tmp_path, seed=1)


def test_runs_the_sweep_metrics_do_not_list_are_not_its_runs(tmp_path):
    import json

    for name in ("k1", "kinf", "k1_seed0", "kinf_seed0"):  # k1, kinf: an earlier SEEDS
        (tmp_path / name / "final").mkdir(parents=True)
        (tmp_path / name / "final" / ".complete").write_text("ok")
    (tmp_path / "metrics.json").write_text(
        json.dumps(
            {
                "runs": {"k1_seed0": {"k": "1", "seed": 0}, "kinf_seed0": {"k": "inf", "seed": 0}},
                "seeds": [0],
            }
        )
    )
    assert set(EP.strictness_runs(tmp_path)) == {"k1_seed0", "kinf_seed0"}
    assert set(EP.sweep_runs(tmp_path)) == {"k1_seed0", "kinf_seed0"}
