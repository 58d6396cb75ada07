"""benchmarks/bench_laptop.py reads a run's manifest: what it counts and what it leaves out."""

import importlib.util
import json

from recode_lib.paths import PROJECT_ROOT


def _bench():
    spec = importlib.util.spec_from_file_location("bench_laptop", PROJECT_ROOT / "benchmarks" / "bench_laptop.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tmp_path, manifest):
    run = tmp_path / "laptop"
    (run / "notebooks").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_an_excluded_notebook_is_not_counted_even_with_a_stale_executed_copy(tmp_path, capsys):
    run = _run(tmp_path, {"00_a": {"status": "completed", "wall_s": 60.0},
                          "11_b": {"status": "excluded", "reason": "no claim here"}})
    stale = {"metadata": {"papermill": {"duration": 1500.0, "status": "completed"}}, "cells": []}
    (run / "notebooks" / "11_b.ipynb").write_text(json.dumps(stale))   # from an earlier run
    bench = _bench()
    assert bench.notebook_times(run)["11_b"]["status"] == "excluded"
    assert bench.main(["--runs-dir", str(tmp_path), "--budget-min", "2"]) == 0
    out = capsys.readouterr().out
    assert "left out by the profile: no claim here" in out
    assert "total 1.0 min over 1 completed notebooks" in out and "within" in out
    assert "lower bound" not in out


def test_a_notebook_that_did_not_complete_makes_the_total_a_lower_bound(tmp_path, capsys):
    _run(tmp_path, {"00_a": {"status": "completed", "wall_s": 90.0},
                    "01_b": {"status": "failed", "wall_s": 5.0}})
    assert _bench().main(["--runs-dir", str(tmp_path), "--budget-min", "1"]) == 0
    out = capsys.readouterr().out
    assert "01_b" in out and "failed (not counted)" in out
    assert "OVER" in out and "the total is a lower bound" in out
