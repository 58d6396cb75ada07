"""The OpenMP wait policy chosen at import: PASSIVE on a busy machine, OpenMP's default on a
quiet one, the environment's own value kept."""

import os
import subprocess
import sys
import time

import pytest

from recode_lib.core import openmp

CODE = "import recode_lib, os; print(os.environ.get('OMP_WAIT_POLICY', 'unset'))"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(extra)
    return env


def test_a_busy_machine_gets_passive_threads():
    env = {}
    assert openmp.choose_wait_policy(env, busy_cores=1.0) == "PASSIVE"
    assert env == {"OMP_WAIT_POLICY": "PASSIVE"}


def test_a_quiet_machine_keeps_openmps_default():
    env = {}
    assert openmp.choose_wait_policy(env, busy_cores=0.1) is None
    assert env == {}


def test_a_policy_already_in_the_environment_is_kept():
    env = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert openmp.choose_wait_policy(env, busy_cores=2.0) is None
    assert env == {"OMP_WAIT_POLICY": "ACTIVE"}
    out = subprocess.run(
        [sys.executable, "-c", CODE],
        env=_env(OMP_WAIT_POLICY="ACTIVE"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "ACTIVE"


def test_an_unreadable_proc_stat_measures_nothing(tmp_path):
    assert openmp.cpu_jiffies(str(tmp_path / "missing")) is None
    (tmp_path / "stat").write_text("intr 1 2 3\n")
    assert openmp.cpu_jiffies(str(tmp_path / "stat")) is None
    assert openmp.others_busy_cores(0.0, str(tmp_path / "missing")) is None


def test_proc_stat_busy_excludes_idle_and_iowait(tmp_path):
    (tmp_path / "stat").write_text("cpu  100 5 20 700 30 1 2 0 0 0\ncpu0 50 2 10 350 15 0 1 0\n")
    assert openmp.cpu_jiffies(str(tmp_path / "stat")) == (128, 858)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/stat")
def test_importing_the_library_while_another_process_spins_sets_passive():
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        out = subprocess.run(
            [sys.executable, "-c", CODE], env=_env(), capture_output=True, text=True, check=True
        ).stdout.strip()
    finally:
        hog.kill()
        hog.wait()
    assert out == "PASSIVE"


def test_this_process_own_work_is_not_counted_as_others(monkeypatch):
    hz = os.sysconf("SC_CLK_TCK")
    ticks = iter([(1000, 5000), (1000 + hz // 2, 5000 + 2 * hz // 2)])  # 0.5 s busy in the window
    own = iter([3.0, 3.5])  # ... all of it this process's
    monkeypatch.setattr(openmp, "cpu_jiffies", lambda path="/proc/stat": next(ticks))
    monkeypatch.setattr(openmp, "own_cpu_seconds", lambda: next(own))
    assert openmp.others_busy_cores(0.0) < 0.05


def test_results_record_the_wait_policy_they_ran_with():
    from recode_lib.core.stamps import provenance

    stamp = provenance(seed=0)["openmp"]
    assert stamp["wait_policy"] == (os.environ.get("OMP_WAIT_POLICY") or "default")
    assert stamp["chosen_at_import"] == (openmp.CHOSEN is not None)


def test_a_test_environment_leaves_this_process_record_alone():
    before = openmp.CHOSEN
    assert openmp.choose_wait_policy({}, busy_cores=2.0) == "PASSIVE"
    assert openmp.CHOSEN == before  # only os.environ's choice is this process's


def test_nothing_is_measured_once_torch_is_loaded(monkeypatch):
    import torch  # noqa: F401

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setattr(openmp, "others_busy_cores", lambda *a, **k: pytest.fail("measured"))
    assert openmp.choose_wait_policy() is None
