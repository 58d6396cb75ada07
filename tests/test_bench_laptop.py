"""benchmarks/bench_laptop.py reads a run's manifest (what it counts and what it leaves out) and,
with --run, measures each notebook's wall time and peak memory in its own process."""

import importlib.util
import json
import sys

from recode_lib.core.paths import PROJECT_ROOT


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_laptop", PROJECT_ROOT / "benchmarks" / "bench_laptop.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _run(tmp_path, manifest):
    run = tmp_path / "laptop"
    (run / "notebooks").mkdir(parents=True)
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_an_excluded_notebook_is_not_counted_even_with_a_stale_executed_copy(tmp_path, capsys):
    run = _run(
        tmp_path,
        {
            "00_a": {"status": "completed", "wall_s": 60.0},
            "11_b": {"status": "excluded", "reason": "no claim here"},
        },
    )
    stale = {"metadata": {"papermill": {"duration": 1500.0, "status": "completed"}}, "cells": []}
    (run / "notebooks" / "11_b.ipynb").write_text(json.dumps(stale))  # from an earlier run
    bench = _bench()
    assert bench.notebook_times(run)["11_b"]["status"] == "excluded"
    assert bench.main(["--runs-dir", str(tmp_path), "--budget-min", "2"]) == 0
    out = capsys.readouterr().out
    assert "left out by the profile: no claim here" in out
    assert "total 1.0 min over 1 completed notebooks" in out and "within" in out
    assert "lower bound" not in out


def test_a_notebook_that_did_not_complete_makes_the_total_a_lower_bound(tmp_path, capsys):
    _run(
        tmp_path,
        {
            "00_a": {"status": "completed", "wall_s": 90.0},
            "01_b": {"status": "failed", "wall_s": 5.0},
        },
    )
    assert _bench().main(["--runs-dir", str(tmp_path), "--budget-min", "1"]) == 1  # a failure
    out = capsys.readouterr()
    assert "01_b" in out.out and "failed (not counted)" in out.out
    assert "OVER" in out.out and "the total is a lower bound" in out.out
    assert "failed: 01_b" in out.err


def _fake_notebook(tmp_path, mib):
    """A stand-in for one notebook's pipeline process: it writes the manifest record the
    pipeline would and starts a child that holds `mib` MiB (as a notebook's kernel does)."""
    script = tmp_path / "fake.py"
    script.write_text(
        "import json, os, subprocess, sys, uuid\n"
        "profile, stem, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])\n"
        "subprocess.run([sys.executable, '-c',\n"
        "                f'x = bytearray({mib} * 2**20); x[::4096] = b\"1\" * len(x[::4096])'],\n"
        "               check=True)\n"
        "path = os.path.join(os.environ['RECODE_RUNS_DIR'], profile, 'manifest.json')\n"
        "m = json.load(open(path)) if os.path.exists(path) else {}\n"
        "m[stem] = {'status': 'completed', 'wall_s': 1.5, 'run_id': uuid.uuid4().hex}\n"
        "os.makedirs(os.path.dirname(path), exist_ok=True); json.dump(m, open(path, 'w'))\n"
    )
    return lambda profile, stem, force: [sys.executable, str(script), profile, stem, str(mib)]


def test_run_measures_the_peak_memory_of_each_notebooks_process_tree(tmp_path, monkeypatch, capsys):
    bench = _bench()
    monkeypatch.setattr(bench, "notebook_command", _fake_notebook(tmp_path, 300))
    ballast = bytearray(700 << 20)  # this process large (as pytest is after torch tests):
    ballast[::4096] = b"1" * len(ballast[::4096])  # its pages must not count in a child's peak
    assert (
        bench.main(
            [
                "--profile",
                "smoke",
                "--runs-dir",
                str(tmp_path),
                "--run",
                "--only",
                "00,01",
                "--budget-gib",
                "0.2",
            ]
        )
        == 0
    )
    del ballast
    rec = json.loads((tmp_path / "smoke" / "bench.json").read_text())
    assert set(rec) == {"00_data_and_models", "01_crpl_synthesis"}
    for r in rec.values():
        assert r["rc"] == 0 and r["peak_rss_mib"] >= 300  # the grandchild's memory counts
        assert r["peak_rss_mib"] < 600  # the largest process, not a sum
        assert r["load_start"] >= 0 and r["load_mean"] >= 0
        assert r["cpu"]["cpus"] >= 1 and isinstance(r["cpu"]["native_bf16"], bool)  # the machine
    out = capsys.readouterr().out
    assert "measured on: " in out and "different CPUs" not in out
    assert "01_crpl_synthesis" in out and "budget 30 min" in out  # the smoke profile's budget
    peak = max(r["peak_rss_mib"] for r in rec.values()) / 1024  # the largest, in GiB
    assert f"peak resident memory {peak:.2f} GiB" in out and "budget 0 GiB: OVER" in out


def test_run_does_not_overwrite_a_measurement_with_a_skipped_notebook(tmp_path, monkeypatch):
    bench = _bench()
    monkeypatch.setattr(bench, "notebook_command", _fake_notebook(tmp_path, 200))
    bench.run_profile("smoke", tmp_path, only="00", log=lambda *a: None)
    first = json.loads((tmp_path / "smoke" / "bench.json").read_text())["00_data_and_models"]
    skip = tmp_path / "skip.py"
    skip.write_text("pass\n")  # the pipeline skipping it
    monkeypatch.setattr(bench, "notebook_command", lambda p, s, f: [sys.executable, str(skip)])
    bench.run_profile("smoke", tmp_path, only="00", log=lambda *a: None)
    assert (
        json.loads((tmp_path / "smoke" / "bench.json").read_text())["00_data_and_models"] == first
    )


def test_notebooks_measured_on_different_cpus_are_flagged(tmp_path, capsys):
    run = _run(
        tmp_path,
        {
            "00_data_and_models": {"wall_s": 10.0, "status": "completed"},
            "01_crpl_synthesis": {"wall_s": 20.0, "status": "completed"},
        },
    )
    cpu = {"model": "AMD EPYC", "cpus": 2, "isa": ["avx2"], "native_bf16": False}
    (run / "bench.json").write_text(
        json.dumps(
            {
                "00_data_and_models": {"peak_rss_mib": 100, "cpu": cpu},
                "01_crpl_synthesis": {
                    "peak_rss_mib": 100,
                    "cpu": {**cpu, "isa": ["avx2", "avx512f", "avx512_bf16"], "native_bf16": True},
                },
            }
        )
    )
    assert _bench().main(["--profile", "laptop", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "AMD EPYC, 2 CPUs, avx2, bf16 not native" in out
    assert "avx512_bf16, bf16 native" in out and "different CPUs" in out
