"""The papermill pipeline runner on small synthetic notebooks (real kernels, real papermill)."""

import json

import pytest
import yaml

from recode_lib.core.paths import PROJECT_ROOT, runs_dir
from recode_lib.runner.nbtools import new_notebook, write_notebook
from recode_lib.runner.pipeline import PipelineError, declared_parameters, run_pipeline


def _nb(path, body="print(X)", params='PROFILE = "smoke"\nX = 1'):
    write_notebook(new_notebook([("params", params), ("code", body)]), path)
    return path


@pytest.fixture
def book(tmp_path):
    d = tmp_path / "nbs"
    d.mkdir()
    a = _nb(
        d / "00_a.ipynb",
        body=(
            "from recode_lib.core.paths import PROJECT_ROOT, runs_dir\n"
            "(runs_dir(PROFILE) / 'a.txt').write_text(str(X))"
        ),
    )
    b = _nb(d / "01_b.ipynb", params='PROFILE = "smoke"\nX = 1\nONLY_B = 0')
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump({"common": {"X": 5, "ONLY_B": 1}, "01_b": {"X": 7}}))
    return [a, b], params


def test_runs_in_order_with_parameters_and_manifest(book):
    nbs, params = book
    results = run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    assert [r.status for r in results] == ["completed", "completed"]
    assert (runs_dir("t") / "a.txt").read_text() == "5"  # common value reached 00
    manifest = json.loads((runs_dir("t") / "manifest.json").read_text())
    assert manifest["01_b"]["parameters"] == {
        "X": 7,
        "ONLY_B": 1,
        "PROFILE": "t",
    }  # own section wins
    assert "ONLY_B" not in manifest["00_a"]["parameters"]  # a common key 00_a lacks
    assert manifest["00_a"]["status"] == "completed" and manifest["00_a"]["wall_s"] > 0
    assert "versions" in manifest["00_a"] and "git" in manifest["00_a"]
    executed = json.loads((runs_dir("t") / "notebooks" / "01_b.ipynb").read_text())
    assert any(o.get("text") == ["7\n"] for c in executed["cells"] for o in c.get("outputs", []))


def test_completed_notebooks_are_skipped_unless_forced(book):
    nbs, params = book
    run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    again = run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    assert [r.status for r in again] == ["skipped", "skipped"]
    forced = run_pipeline(
        "t", notebooks=nbs, params_file=params, force=True, only="01", log=lambda *_: None
    )
    assert [(r.stem, r.status) for r in forced] == [("01_b", "completed")]


def test_changed_parameters_rerun(book):
    nbs, params = book
    run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    said = []
    res = run_pipeline("t", notebooks=nbs, params_file=params, overrides={"X": 9}, log=said.append)
    assert [r.status for r in res] == ["completed", "completed"]
    # the re-keyed step says why it runs again
    assert any(
        "00_a: completed before with other inputs (parameters changed: X)" in s for s in said
    ), said


def test_failure_names_notebook_cell_and_error_and_is_not_complete(book, tmp_path):
    nbs, params = book
    bad = _nb(nbs[0].parent / "02_bad.ipynb", body="raise ValueError('boom here')")
    with pytest.raises(
        PipelineError,
        match=r"02_bad.ipynb failed in cell 2 \(`raise ValueError.*ValueError: boom here",
    ):
        run_pipeline("t", notebooks=nbs + [bad], params_file=params, log=lambda *_: None)
    manifest = json.loads((runs_dir("t") / "manifest.json").read_text())
    assert manifest["02_bad"]["status"] == "failed"
    assert manifest["00_a"]["status"] == "completed"
    assert not (runs_dir("t") / "notebooks" / "02_bad.ipynb").exists()
    assert (runs_dir("t") / "notebooks" / "02_bad.failed.ipynb").exists()


def test_unknown_profile_is_named():
    with pytest.raises(PipelineError, match="unknown profile 'nosuch'.*known profiles: .*smoke"):
        run_pipeline("nosuch", log=lambda *_: None)


def test_missing_parameter_file_is_named(tmp_path):
    with pytest.raises(PipelineError, match="parameter file .*missing.yaml"):
        run_pipeline("t", params_file=tmp_path / "missing.yaml", log=lambda *_: None)


def test_section_key_the_notebook_does_not_declare_is_an_error(book, tmp_path):
    nbs, _ = book
    params = tmp_path / "typo.yaml"
    params.write_text(yaml.safe_dump({"01_b": {"XX": 1}}))
    with pytest.raises(
        PipelineError, match=r"01_b: XX is not a parameter of this step; nearest: X"
    ):
        run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)


def test_declared_parameters_reads_the_tagged_cell(book):
    nbs, _ = book
    assert declared_parameters(nbs[0]) == {"PROFILE": "smoke", "X": 1}


def test_cli_exit_status_on_unknown_profile(capsys):
    from recode_lib.cli import main

    assert main(["reproduce", "--profile", "nosuch"]) == 2
    assert "unknown profile 'nosuch'" in capsys.readouterr().err


def test_cli_help_lists_subcommands(capsys):
    from recode_lib.cli import COMMANDS, main

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_rerunning_an_earlier_notebook_invalidates_later_ones(book):
    nbs, params = book
    run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    run_pipeline("t", notebooks=nbs, params_file=params, only="00", force=True, log=lambda *_: None)
    again = run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    assert [(r.stem, r.status) for r in again] == [("00_a", "skipped"), ("01_b", "completed")]


def test_a_profile_can_leave_a_notebook_out_with_a_reason(book, tmp_path):
    nbs, _ = book
    params = tmp_path / "skip.yaml"
    params.write_text(
        yaml.safe_dump(
            {"common": {"X": 5}, "00_a": {"skip": "not at this scale"}, "01_b": {"X": 7}}
        )
    )
    lines = []
    results = run_pipeline("t", notebooks=nbs, params_file=params, log=lines.append)
    assert [(r.stem, r.status) for r in results] == [("00_a", "excluded"), ("01_b", "completed")]
    assert not (runs_dir("t") / "a.txt").exists()  # 00_a never executed
    assert not (runs_dir("t") / "notebooks" / "00_a.ipynb").exists()
    manifest = json.loads((runs_dir("t") / "manifest.json").read_text())
    assert (
        manifest["00_a"]["status"] == "excluded"
        and manifest["00_a"]["reason"] == "not at this scale"
    )
    assert any("00_a: left out by the t profile: not at this scale" in ln for ln in lines)


def test_only_does_not_run_a_notebook_the_profile_leaves_out(book, tmp_path):
    nbs, _ = book
    params = tmp_path / "skip.yaml"
    params.write_text(yaml.safe_dump({"00_a": {"skip": "no"}}))
    results = run_pipeline("t", notebooks=nbs, params_file=params, only="00", log=lambda *_: None)
    assert [r.status for r in results] == ["excluded"]
    assert not (runs_dir("t") / "a.txt").exists()


@pytest.mark.parametrize("reason", ["", "  ", True, None])
def test_a_skip_without_a_reason_is_an_error_before_anything_runs(book, tmp_path, reason):
    nbs, _ = book
    params = tmp_path / "skip.yaml"
    params.write_text(yaml.safe_dump({"01_b": {"skip": reason}}))
    with pytest.raises(PipelineError, match=r"section '01_b': `skip` must be the reason"):
        run_pipeline("t", notebooks=nbs, params_file=params, log=lambda *_: None)
    assert not (runs_dir("t") / "a.txt").exists()  # 00_a did not run either


RUNNER = """
import sys
from pathlib import Path
import signal
from recode_lib.cli import raise_terminated
from recode_lib.runner.pipeline import RunInterrupted, run_pipeline
signal.signal(signal.SIGTERM, raise_terminated)     # what the CLI's run_guarded installs
nbs = sorted(Path(sys.argv[1]).glob("*.ipynb"))
try:
    run_pipeline("t", notebooks=nbs, params_file=sys.argv[2], log=print)
except RunInterrupted as exc:
    print("INTERRUPTED", exc, flush=True)
    sys.exit(exc.exit_status)
"""


def slow_book(tmp_path):
    import os

    d = tmp_path / "slow"
    d.mkdir()
    _nb(d / "00_fast.ipynb", body="print(1)")
    _nb(d / "01_slow.ipynb", body="import time\nprint('started', flush=True)\ntime.sleep(120)")
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump({"common": {"X": 1}}))
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return d, params, env


def start_runner(d, params, env):
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(d), str(params)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    manifest = runs_dir("t") / "manifest.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until 01 is running in its kernel
        if (
            manifest.exists()
            and json.loads(manifest.read_text()).get("01_slow", {}).get("status") == "running"
        ):
            time.sleep(3)
            return proc, manifest
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(proc.communicate()[0])


@pytest.mark.parametrize("sig, status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_an_interrupted_step_is_recorded_interrupted_and_resumes(tmp_path, sig, status):
    import signal

    d, params, env = slow_book(tmp_path)
    proc, manifest = start_runner(d, params, env)
    proc.send_signal(getattr(signal, sig))
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == status, out
    assert "INTERRUPTED" in out and "01_slow" in out and "resume with" in out
    m = json.loads(manifest.read_text())
    assert m["00_fast"]["status"] == "completed" and m["01_slow"]["status"] == "interrupted"
    assert not list((runs_dir("t") / "notebooks").glob(".*.running.ipynb"))


def test_a_step_killed_with_sigkill_is_reported_interrupted_on_the_next_run(tmp_path):
    import os
    import signal

    d, params, env = slow_book(tmp_path)
    proc, manifest = start_runner(d, params, env)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert json.loads(manifest.read_text())["01_slow"]["status"] == "running"
    (d / "01_slow.ipynb").unlink()  # the re-run: only the fast step is left
    lines = []
    run_pipeline("t", notebooks=sorted(d.glob("*.ipynb")), params_file=params, log=lines.append)
    said = [line for line in lines if "01_slow" in line]
    assert said and "stopped without finishing" in said[0]
    assert json.loads(manifest.read_text())["01_slow"]["status"] == "interrupted"


def test_a_second_reproduce_on_the_same_run_folder_is_refused(tmp_path):
    import os
    import signal

    from recode_lib.core.locks import OutputLocked

    d, params, env = slow_book(tmp_path)
    proc, manifest = start_runner(d, params, env)
    try:
        with pytest.raises(OutputLocked, match=f"PID {proc.pid}"):
            run_pipeline(
                "t", notebooks=sorted(d.glob("*.ipynb")), params_file=params, log=lambda *_: None
            )
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_vllm_backend_profile_runs_on_vllms_cpu_build_without_a_gpu_plan(monkeypatch):
    import recode_lib.runner.pipeline as P

    monkeypatch.setattr(P, "detect_cluster", lambda: None)
    monkeypatch.setattr(P.vllm_cpu, "installed", lambda: True)
    said = []
    params = {"05_codegen_eval": {"BACKEND": "vllm"}, "01_crpl": {"GENERATOR_BACKEND": "vllm"}}
    assert P.check_resources("smoke", params, log=said.append) is None
    assert "vLLM's CPU build" in said[0]
    with pytest.raises(PipelineError, match="no CUDA device"):  # training on GPUs still needs one
        P.check_resources("smoke", {**params, "04_cg_grpo": {"LAUNCHER": "accelerate"}})
    monkeypatch.setattr(P.vllm_cpu, "installed", lambda: False)
    with pytest.raises(PipelineError, match="no CUDA device"):
        P.check_resources("smoke", params)


def test_a_kernel_that_cannot_start_leaves_no_hidden_notebook(book):
    nbs, params = book
    with pytest.raises(PipelineError, match="could not run"):
        run_pipeline(
            "t",
            notebooks=nbs,
            params_file=params,
            kernel_name="no-such-kernel",
            log=lambda *_: None,
        )
    out = runs_dir("t") / "notebooks"
    assert not list(out.glob(".*.running.ipynb"))
    manifest = json.loads((runs_dir("t") / "manifest.json").read_text())
    assert manifest["00_a"]["status"] == "failed" and "no-such-kernel" in manifest["00_a"]["error"]
