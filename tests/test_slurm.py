"""The Slurm route for multi-node GRPO (recode_lib.training.slurm): the sbatch script's hosts,
ranks, ports and server URL, checked on CPU — and run with stand-in scontrol/srun/curl/
accelerate/trl commands, so the shell logic itself is exercised, not only its text."""

import os
import shlex
import stat
import subprocess
import textwrap

import pytest

from recode_lib.training.grpo import load_recipe
from recode_lib.training.launch import check_grpo_config
from recode_lib.training.launch_configs import LaunchConfigError
from recode_lib.training.slurm import SlurmShape, check_script, sbatch_script, submit

MODEL = "Qwen/Qwen2.5-Coder-7B-Instruct"


def script_for(shape, tmp_path):
    return sbatch_script(
        shape,
        recipe=tmp_path / "recipe.yaml",
        output_dir=tmp_path,
        problems=tmp_path / "train_problems.jsonl",
        model=MODEL,
    )


def test_two_nodes_of_eight_gpus_train_on_one_and_serve_on_the_other(tmp_path):
    shape = SlurmShape(nodes=2, gpus_per_node=8)
    found = check_script(script_for(shape, tmp_path), shape)
    assert found == {
        "num_machines": 1,
        "num_processes": 8,
        "port": 8000,
        "serve_port": 8000,
        "dp": 8,
        "tp": 1,
    }


def test_three_nodes_with_tensor_parallel_vllm(tmp_path):
    shape = SlurmShape(nodes=3, gpus_per_node=4, vllm_tensor_parallel=2, vllm_port=8123)
    found = check_script(script_for(shape, tmp_path), shape)
    assert (found["num_machines"], found["num_processes"], found["tp"], found["dp"]) == (2, 8, 2, 2)
    assert found["port"] == found["serve_port"] == 8123


def test_a_script_whose_counts_do_not_add_up_is_refused(tmp_path):
    shape = SlurmShape(nodes=2, gpus_per_node=8)
    text = script_for(shape, tmp_path).replace("--num_processes 8", "--num_processes 16")
    with pytest.raises(LaunchConfigError, match="num_processes is 16, the shape needs 8"):
        check_script(text, shape)


@pytest.mark.parametrize("kw", [{"nodes": 1}, {"gpus_per_node": 6, "vllm_tensor_parallel": 4}])
def test_shapes_that_cannot_work_are_refused(kw):
    with pytest.raises(ValueError, match="SlurmShape"):
        SlurmShape(**kw)


def test_the_server_url_reaches_the_trainers_grpo_config(tmp_path):
    # the overrides the script passes to the trainer, applied to the real paper recipe
    text = script_for(SlurmShape(nodes=2, gpus_per_node=8, vllm_port=8011), tmp_path)
    sets = [
        s.split("=", 1)
        for s in shlex.split(text.split("bash -c ", 1)[1])[0].split()
        if s.startswith("vllm_")
    ]
    overrides = {k: (v.replace("$VLLM_HOST", "node-b")) for k, v in sets}
    recipe = load_recipe(
        "cg_grpo_paper", **{k: int(v) if v.isdigit() else v for k, v in overrides.items()}
    )
    cfg = check_grpo_config(recipe, tmp_path / "run")
    assert (cfg.vllm_mode, cfg.vllm_server_host, cfg.vllm_server_port) == ("server", "node-b", 8011)


def _fake(bin_dir, name, body):
    path = bin_dir / name
    path.write_text("#!/bin/bash\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_the_script_runs_the_server_and_the_trainers_on_the_right_nodes(tmp_path):
    """Stand-ins record what srun would start; SLURM_PROCID gives each training task its rank."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    _fake(bin_dir, "scontrol", 'printf "node-a\\nnode-b\\nnode-c\\n"\n')
    _fake(bin_dir, "curl", "exit 0\n")
    _fake(bin_dir, "trl", f'echo "trl $* on $SRUN_HOST" >> {log}\nsleep 2\n')
    _fake(bin_dir, "accelerate", f'echo "accelerate $* on $SRUN_HOST" >> {log}\n')
    # srun -w HOSTS CMD...: run CMD once per host, with SLURM_PROCID = its index (the real one)
    _fake(
        bin_dir,
        "srun",
        """
        hosts=""; args=()
        while [ $# -gt 0 ]; do
          case "$1" in -w) hosts="$2"; shift 2;; --*) shift;; *) args=("$@"); break;; esac
        done
        i=0; pids=()
        for h in ${hosts//,/ }; do
          SRUN_HOST=$h SLURM_PROCID=$i "${args[@]}" & pids+=($!); i=$((i+1))
        done
        for p in "${pids[@]}"; do wait $p; done
        """,
    )
    shape = SlurmShape(nodes=3, gpus_per_node=4, vllm_port=8099)
    script = tmp_path / "sbatch.sh"
    script.write_text(script_for(shape, tmp_path))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "x"}
    res = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    calls = log.read_text().splitlines()
    serve = [c for c in calls if c.startswith("trl vllm-serve")]
    train = sorted(c for c in calls if c.startswith("accelerate launch"))
    assert len(serve) == 1 and serve[0].endswith("on node-c") and "--port 8099" in serve[0]
    assert len(train) == 2
    for rank, host in enumerate(["node-a", "node-b"]):
        (line,) = [c for c in train if c.endswith(f"on {host}")]
        assert f"--machine_rank {rank} " in line and "--main_process_ip node-a " in line
        assert "vllm_server_host=node-c" in line and "vllm_server_port=8099" in line
        assert "--num_machines 2 --num_processes 8 " in line


def test_submit_without_sbatch_says_how_to_submit(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="sbatch --wait .*sbatch.sh"):
        submit(tmp_path / "sbatch.sh")


def test_a_notebook_run_takes_its_shape_from_the_environment():
    env = {
        "RECODE_SLURM_NODES": "3",
        "RECODE_SLURM_GPUS_PER_NODE": "4",
        "RECODE_SLURM_PARTITION": "gpu",
        "RECODE_SLURM_TIME": "02:00:00",
    }
    shape = SlurmShape.from_env(env)
    assert (shape.nodes, shape.gpus_per_node, shape.partition, shape.time) == (
        3,
        4,
        "gpu",
        "02:00:00",
    )
    assert SlurmShape.from_env({}) == SlurmShape()
    with pytest.raises(ValueError, match="RECODE_SLURM_NODES must be an integer"):
        SlurmShape.from_env({"RECODE_SLURM_NODES": "two"})
