"""07's replication of the alpha grid on a sweep's other seeds (orchestration.alpha.seed_replicas):
each seed's grid lies between that seed's own endpoints, in OUT/seed<s>/."""

from __future__ import annotations

import json

import pytest

from recode_lib.evaluation.spec import EvalSpec
from recode_lib.orchestration.alpha import seed_replicas


@pytest.fixture(scope="module")
def seeded_sweep(perturbed_checkpoint, tmp_path_factory):
    """A finished sweep of two seeds (k1 and kinf per seed), each run the tiny model perturbed."""
    root = tmp_path_factory.mktemp("seeded_sweep")
    runs = {}
    for i, (seed, k) in enumerate([(0, "1"), (0, "inf"), (1, "1"), (1, "inf")]):
        name = f"k{k}_seed{seed}"
        perturbed_checkpoint(root / name / "final", i)
        runs[name] = {"k": k, "seed": seed}
    (root / "metrics.json").write_text(json.dumps({"runs": runs, "seeds": [0, 1]}))
    return root


def test_each_other_seed_gets_its_own_grid_between_its_own_endpoints(seeded_sweep, tmp_path):
    from recode_lib.data import load_benchmark

    spec = EvalSpec(
        backend="hf",
        temperature=1.0,
        max_new_tokens=6,
        n=2,
        batch_size=4,
        workers=1,
        progress=False,
    )
    problems = load_benchmark("microbench", limit=1)
    reps = seed_replicas(
        seeded_sweep, [0.5, 3.0], problems, spec, tmp_path, benchmark="microbench", log=None
    )
    assert list(reps) == [1]  # the first seed is alpha_grid's own
    g = reps[1]
    assert (g.endpoints.low, g.endpoints.high) == (
        seeded_sweep / "k1_seed1" / "final",
        seeded_sweep / "kinf_seed1" / "final",
    )
    front = json.loads((tmp_path / "seed1" / "frontier.json").read_text())
    assert [r["alpha"] for r in front["rows"]] == [0.5, 3.0] and front["seed"] == 1
    assert front["endpoints"]["low"] == str(seeded_sweep / "k1_seed1" / "final")
    assert not (tmp_path / "seed0").exists()
    assert all(r["n_samples"] == 2 for r in front["rows"])


def test_a_sweep_of_one_seed_has_no_replicas(tmp_path):
    (tmp_path / "metrics.json").write_text(json.dumps({"runs": {}, "seeds": [0]}))
    assert seed_replicas(tmp_path, [0.5], [], None, tmp_path / "out") == {}
