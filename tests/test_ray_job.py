"""The Slurm job that runs a profile over several nodes (recode_lib.plan.ray_job): the script's
numbers agree with the plan, a broken script is refused before submission, and under a stand-in
Slurm (scontrol/srun that run on this machine) the script really starts a Ray head, waits for it
and runs the driver inside the cluster with RAY_ADDRESS set."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap

import pytest

from recode_lib.cli import main
from recode_lib.plan.ray_job import RayJob, RayJobError, check_ray_job, ray_job_script, slurm_time


def test_the_script_asks_for_the_nodes_it_waits_for_and_runs_on():
    job = RayJob(profile="paper", nodes=3, gpus_per_node=8, hours=50, partition="gpu")
    text = ray_job_script(job)
    assert check_ray_job(text, job) == {"nodes": 3, "wait": 3, "reproduce": 3, "port": 6379}
    assert "#SBATCH --gpus-per-node=8" in text and "#SBATCH --partition=gpu" in text
    assert "#SBATCH --time=2-02:00:00" in text
    assert text.index("ray_cluster wait") < text.index("reproduce --profile paper")


@pytest.mark.parametrize(
    "edit,why",
    [
        (("#SBATCH --nodes=3", "#SBATCH --nodes=2"), "nodes says 2"),
        (("--nodes 3 --timeout", "--nodes 2 --timeout"), "wait says 2"),
        (('RAY_ADDRESS="$head_ip:6379"', 'RAY_ADDRESS="$head_ip:6380"'), "port"),
        (('-w "$node" ', ""), "does not name its node"),
        (("done\n", "\n"), "bash -n"),
    ],
)
def test_a_script_that_would_fail_on_the_cluster_is_refused(edit, why):
    job = RayJob(nodes=3)
    text = ray_job_script(job).replace(*edit)
    with pytest.raises(RayJobError, match=why):
        check_ray_job(text, job)


def test_slurm_time_rounds_up_to_the_minute():
    assert slurm_time(0.001) == "0-00:01:00"
    assert slurm_time(25.5) == "1-01:30:00"


def test_recode_plan_writes_the_job_of_its_plan(tmp_path, capsys):
    out = tmp_path / "job.sh"
    assert (
        main(
            [
                "plan",
                "--profile",
                "paper",
                "--nodes",
                "2",
                "--slurm-script",
                str(out),
                "--job-hours",
                "72",
                "-p",
                "SEED=1",
            ]
        )
        == 0
    )
    text = out.read_text()
    assert check_ray_job(text, RayJob(nodes=2))["reproduce"] == 2
    assert "#SBATCH --time=3-00:00:00" in text and "-p SEED=1" in text
    assert "Slurm job for 2 node(s)" in capsys.readouterr().out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_under_a_stand_in_slurm_the_driver_runs_inside_the_ray_cluster(tmp_path):
    pytest.importorskip("ray")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text("#!/bin/sh\necho localhost\n")
    # srun: drop its options (up to the command) and run the command here
    (bin_ / "srun").write_text(
        textwrap.dedent("""\
        #!/bin/bash
        while [[ "$1" == -* ]]; do
          case "$1" in -w|--nodelist) shift 2 ;; *) shift ;; esac
        done
        exec "$@"
        """)
    )
    # the job's python: the real interpreter, except that `reproduce` reports the cluster
    driver = (
        'import os, sys, ray; ray.init(address=os.environ["RAY_ADDRESS"]); '
        'print("DRIVER", os.environ["RAY_ADDRESS"], len(ray.nodes()), *sys.argv[1:])'
    )
    (bin_ / "py").write_text(
        textwrap.dedent(f"""\
        #!/bin/bash
        if [[ "$*" == *"recode_lib reproduce"* ]]; then
          exec {sys.executable} -c '{driver}' "$@"
        fi
        exec {sys.executable} "$@"
        """)
    )
    for f in bin_.iterdir():
        f.chmod(0o755)
    port = free_port()
    job = RayJob(
        profile="smoke",
        nodes=1,
        gpus_per_node=0,
        hours=1,
        port=port,
        python=str(bin_ / "py"),
        join_timeout_s=120,
    )
    script = tmp_path / "job.sh"
    script.write_text(ray_job_script(job))
    ray_tmp = tempfile.mkdtemp(prefix="rj-", dir="/tmp")  # AF_UNIX paths: <= 107 bytes
    env = {
        **os.environ,
        "PATH": f"{bin_}:{os.environ['PATH']}",
        "SLURM_JOB_NODELIST": "x",
        "RAY_TMPDIR": ray_tmp,
    }
    log = tmp_path / "job.out"  # a file, not a pipe: the head's `--block` keeps it open
    with open(log, "w") as f:
        proc = subprocess.Popen(
            ["bash", str(script)],
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=240)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the head's `ray start --block` and children
            shutil.rmtree(ray_tmp, ignore_errors=True)
    out = log.read_text()
    assert proc.returncode == 0, out[-2000:]
    ip = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()[0]
    assert f"DRIVER {ip}:{port} 1 -m recode_lib reproduce --profile smoke --nodes 1" in out
