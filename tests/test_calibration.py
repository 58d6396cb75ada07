"""Calibration keeps the problems the model solves sometimes, records every rate, and resumes."""

from __future__ import annotations

import json

import pytest

from recode_lib.data.easy_tasks import generate_easy_tasks
from recode_lib.evaluation.calibration import (
    Calibration,
    calibrate,
    candidate_problems,
    easiest,
    write_calibrated,
)
from recode_lib.evaluation.spec import EvalSpec
from recode_lib.generation import Completion, Generator

PROBS = generate_easy_tasks(3, seed=0, kinds=("call",))


class ByIndex(Generator):
    """Problem 0: sample 0 right, others wrong; problem 1: always right; problem 2: never."""

    backend = "scripted"
    model = "scripted"

    def __init__(self):
        self.asked = 0

    def generate_samples(self, requests, sampling, callback=None, progress=False):
        out = []
        for j, r in enumerate(requests):
            i = next(i for i, p in enumerate(PROBS) if p.prompt in r.messages[-1]["content"])
            p = PROBS[i]
            right = (i == 0 and r.index == 0) or i == 1
            code = p.reference_solution if right else f"def {p.entry_point}(*a):\n    return None\n"
            comp = Completion(f"```python\n{code}```", n_tokens=10, finish_reason="stop")
            self.asked += 1
            out.append(comp)
            if callback:
                callback(j, comp)
        return out


def test_keeps_sometimes_solved_records_rates_and_resumes(tmp_path):
    gen = ByIndex()
    cal = calibrate(
        "scripted",
        PROBS,
        out_dir=tmp_path / "cal",
        generator=gen,
        spec=EvalSpec(temperature=0.8, n=4, max_new_tokens=16, workers=2, reasoning=False),
    )
    assert [p.id for p in cal.kept] == [PROBS[0].id]
    assert cal.rates == {PROBS[0].id: 0.25, PROBS[1].id: 1.0, PROBS[2].id: 0.0}
    rows = [
        json.loads(line) for line in (tmp_path / "cal" / "rates.jsonl").read_text().splitlines()
    ]
    assert [(r["id"], r["passed"], r["n"], r["kept"]) for r in rows] == [
        (PROBS[0].id, 1, 4, True),
        (PROBS[1].id, 4, 4, False),
        (PROBS[2].id, 0, 4, False),
    ]
    asked = gen.asked
    again = calibrate(
        "scripted",
        PROBS,
        out_dir=tmp_path / "cal",
        generator=gen,
        spec=EvalSpec(temperature=0.8, n=4, max_new_tokens=16, workers=2, reasoning=False),
    )
    assert gen.asked == asked == 12 and again.rates == cal.rates  # nothing sampled twice
    path = write_calibrated(cal, tmp_path / "calibrated.jsonl")
    [row] = [json.loads(line) for line in path.read_text().splitlines()]
    assert row["id"] == PROBS[0].id and row["metadata"]["start_pass_rate"] == 0.25


def test_one_sample_cannot_measure_a_rate(tmp_path):
    with pytest.raises(ValueError, match="n must be >= 2"):
        calibrate("scripted", PROBS, out_dir=tmp_path, generator=ByIndex(), spec=EvalSpec(n=1))


def test_calibrated_benchmark_loads_what_was_written(tmp_path, monkeypatch):
    from recode_lib.data import load_benchmark
    from recode_lib.data._io import DataError

    monkeypatch.setenv("RECODE_RUNS_DIR", str(tmp_path))
    with pytest.raises(DataError, match="CALIBRATE"):
        load_benchmark("calibrated:lap")
    cal = Calibration(kept=PROBS, rates={p.id: 0.5 for p in PROBS})
    write_calibrated(cal, tmp_path / "lap" / "00_data_and_models" / "calibrated.jsonl", seed=1)
    got = load_benchmark("calibrated:lap")
    assert sorted(p.id for p in got) == sorted(p.id for p in PROBS)
    assert len(load_benchmark("calibrated:lap", limit=2)) == 2
    with pytest.raises(DataError, match="differing start pass rates"):
        load_benchmark("calibrated:lap:disagree")  # no lenient rates were recorded
    with pytest.raises(DataError, match="unknown order"):
        load_benchmark("calibrated:lap:sideways")
    rates_k = {p.id: {"1": 0.5, "inf": 0.5} for p in PROBS} | {PROBS[2].id: {"1": 0.5, "inf": 0.0}}
    cal = Calibration(kept=PROBS, rates={p.id: 0.5 for p in PROBS}, rates_k=rates_k)
    write_calibrated(cal, tmp_path / "lap" / "00_data_and_models" / "calibrated.jsonl", seed=1)
    written = [p.id for p in load_benchmark("calibrated:lap")]
    first = [p.id for p in load_benchmark("calibrated:lap:disagree")]
    assert first == [PROBS[2].id] + [i for i in written if i != PROBS[2].id]


def test_candidates_and_easiest(shared_data_dir):
    c = candidate_problems(
        4,
        n_easiest=2,
        easiest_from=("mbppplus", "no_such_benchmark"),
        n_efficiency=3,
        log=lambda *_: None,
    )
    assert [p.source for p in c] == ["easy"] * 7 + ["mbppplus"] * 2
    from recode_lib.data.easy_tasks import EFFICIENCY

    assert {p.metadata["template"] for p in c[4:7]} <= {t.name for t in EFFICIENCY}
    assert len({p.id for p in c}) == len(c)
    from recode_lib.data import load_benchmark

    mb = load_benchmark("mbppplus")
    e = easiest(mb, 3)
    assert max(len(p.reference_solution) for p in e) <= min(
        len(p.reference_solution) for p in mb if p not in e
    )


def test_lenient_keep_ks_keeps_a_problem_solved_only_on_small_inputs(tmp_path):
    """A quadratic answer passes R_2 (tests with input_len < 100) and times out on the 50 000
    element test: strict rate 0 (dropped by default), lenient rate 1/2 (kept with keep_ks 2,inf)."""
    from recode_lib.data.easy_tasks import EFFICIENCY

    [mode] = generate_easy_tasks(1, seed=0, kinds=("call",), templates=EFFICIENCY[:1])
    naive = f"def {mode.entry_point}(nums):\n{EFFICIENCY[0].naive}\n"

    class Naive(Generator):
        backend = model = "scripted"

        def generate_samples(self, requests, sampling, callback=None, progress=False):
            out = []
            for j, r in enumerate(requests):
                code = naive if r.index == 0 else f"def {mode.entry_point}(*a):\n    return None\n"
                out.append(Completion(f"```python\n{code}```", n_tokens=10, finish_reason="stop"))
                if callback:
                    callback(j, out[-1])
            return out

    kw = dict(
        generator=Naive(),
        spec=EvalSpec(temperature=0.8, n=2, max_new_tokens=16, workers=2, reasoning=False),
    )
    strict = calibrate("scripted", [mode], out_dir=tmp_path / "cal", **kw)
    assert strict.rates == {mode.id: 0.0} and strict.kept == []
    lenient = calibrate("scripted", [mode], out_dir=tmp_path / "cal", keep_ks=("2", "inf"), **kw)
    assert [p.id for p in lenient.kept] == [mode.id]
    assert lenient.rates == {mode.id: 0.0} and lenient.rates_k[mode.id] == {"2": 0.5, "inf": 0.0}
    [row] = [
        json.loads(line) for line in (tmp_path / "cal" / "rates.jsonl").read_text().splitlines()
    ]
    assert row["kept"] and row["rates_k"] == {"2": 0.5, "inf": 0.0}
    [meta] = [
        json.loads(line)["metadata"]
        for line in write_calibrated(lenient, tmp_path / "c.jsonl").read_text().splitlines()
    ]
    assert meta["start_pass_rate"] == 0.0 and meta["start_pass_rate_k"]["2"] == 0.5
    with pytest.raises(ValueError, match="keep_ks"):
        calibrate("scripted", [mode], out_dir=tmp_path / "cal", keep_ks=(), **kw)
