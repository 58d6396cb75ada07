"""The micro-benchmark: reference passes all, naive is an optimization failure only at large
sizes, wrong is a correctness failure — judged by the sandbox. Full sweep: -m slow."""

import pytest

from recode_lib.data import load_benchmark
from recode_lib.data import microbench as mb

FAST = ["pair_sum", "valid_parens", "dedupe"]
SMALL = 1000  # naive solutions must pass every test shorter than this


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECODE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def test_problem_files_and_lengths():
    names = mb.problem_names()
    assert len(names) == 20
    probs = load_benchmark("microbench")
    assert [p.id for p in probs] == [f"microbench/{n}" for n in names]
    limits = mb.read_limits()
    for p in probs:
        lens = [c["input_len"] for c in p.tests["cases"]]
        assert min(lens) < 100 and max(lens) >= 10**5, p.id  # decades 10^1 .. 10^5
        assert all(any(10 ** (k - 1) <= n < 10**k for n in lens) for k in range(2, 7)), p.id
        assert p.time_limit_s == limits[p.id.split("/")[1]]["time_limit_s"] >= 1.0
        assert p.metadata["naive"] and p.metadata["wrong"] and p.reference_solution
        assert len(str(p.tests)) < 5_000_000


def test_generation_is_seeded():
    spec = mb.load_spec("pair_sum")
    assert mb.make_inputs(spec, seed=0) == mb.make_inputs(spec, seed=0)
    assert mb.make_inputs(spec, seed=0) != mb.make_inputs(spec, seed=1)
    assert load_benchmark("microbench", names=["pair_sum"], seed=3)[0].metadata["seed"] == 3


def _judge(probs):
    sandbox = pytest.importorskip("recode_lib.sandbox")
    recs = []
    for p in probs:
        for role, code in (
            ("reference", p.reference_solution),
            ("naive", p.metadata["naive"]),
            ("wrong", p.metadata["wrong"]),
        ):
            recs.append(
                {
                    "id": f"{p.id}:{role}",
                    "code": code,
                    "tests": p.tests,
                    "time_limit_s": p.time_limit_s,
                    "memory_mb": p.memory_mb,
                }
            )
    res = sandbox.execute_many(recs, workers=2)
    return {r["id"]: r for r in res}


def _check(probs):
    res = _judge(probs)
    for p in probs:
        ref, naive, wrong = (res[f"{p.id}:{r}"] for r in ("reference", "naive", "wrong"))
        assert ref["status"] == "passed", (p.id, ref)
        assert naive["outcome"] == "optimization_failure", (p.id, naive["status"])
        small = [t for t in naive["tests"] if t["input_len"] < SMALL]
        assert small and all(t["status"] == "passed" for t in small), p.id
        largest = max(naive["tests"], key=lambda t: t["input_len"])
        assert largest["status"] == "time_limit", (p.id, largest)
        assert wrong["outcome"] == "correctness_failure", (p.id, wrong["status"])


def test_fast_subset_through_sandbox():
    _check(load_benchmark("microbench", names=FAST))


@pytest.mark.slow
def test_full_sweep_through_sandbox():
    _check(load_benchmark("microbench"))
