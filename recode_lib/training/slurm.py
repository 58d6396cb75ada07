"""The multi-node route for GRPO on a Slurm cluster: one sbatch script, vLLM in server mode on
its own node, accelerate + DeepSpeed ZeRO-3 across the other nodes.

    from recode_lib.training.slurm import SlurmShape, sbatch_script, check_script
    shape = SlurmShape(nodes=2, gpus_per_node=8, partition="gpu", time="24:00:00")
    text = sbatch_script(shape, recipe="runs/paper/04_cg_grpo/gated/recipe.yaml",
                         output_dir="runs/paper/04_cg_grpo/gated",
                         problems="runs/paper/04_cg_grpo/gated/train_problems.jsonl",
                         model="Qwen/Qwen2.5-Coder-7B-Instruct")
    check_script(text, shape)          # the invariants below, as a LaunchConfigError

    launch(recipe, problems, out, launcher="slurm", slurm=shape)   # writes out/sbatch.sh and
                                       # submits it with `sbatch --wait` (blocks until done)
    SlurmShape.from_env()              # a notebook's LAUNCHER = "slurm": RECODE_SLURM_NODES, ...

The layout (TRL's documented multi-node GRPO: `trl vllm-serve` on dedicated GPUs, the trainers
reaching it with vllm_mode=server): the allocation's last `vllm_nodes` node(s) run
`trl vllm-serve --tensor-parallel-size TP --data-parallel-size GPUS/TP` (one node serves, so
GPUS/TP engines); the first `nodes - vllm_nodes` nodes run one `accelerate launch` each, with
--num_machines M, --num_processes M * gpus_per_node, --machine_rank $SLURM_PROCID (one task
per node in that step), --main_process_ip the first training node, --main_process_port, and
the recipe overrides vllm_mode=server, vllm_server_host=<the vLLM node>,
vllm_server_port=<port>, so the trainer's recipe reaches the server the script started. The
script waits for the server's /health/ before training and stops it afterwards.

It builds text and checks it; it does not talk to Slurm except in `submit` (sbatch), and it
does not install vLLM or DeepSpeed on the cluster (environment.yml does).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from recode_lib.training.launch_configs import (
    DEFAULT_ACCELERATE_CONFIG,
    ENTRY_POINT,
    LaunchConfigError,
)


@dataclass(frozen=True)
class SlurmShape:
    """The cluster shape and scheduler options of one GRPO job."""

    nodes: int = 2  # nodes in the allocation, vLLM's included
    gpus_per_node: int = 8
    vllm_nodes: int = 1  # the last node(s) serve generation (trl vllm-serve)
    vllm_tensor_parallel: int = 1  # TP of each vLLM engine (recode plan chooses it)
    partition: str | None = None  # #SBATCH --partition
    account: str | None = None  # #SBATCH --account
    time: str = "24:00:00"  # #SBATCH --time
    cpus_per_task: int = 32  # per node: sandbox workers + data loading
    main_port: int = 29500  # accelerate's rendezvous port on the first training node
    vllm_port: int = 8000  # trl vllm-serve's HTTP port
    health_timeout_s: int = 1800  # how long the script waits for the server to come up

    def __post_init__(self):
        if self.nodes < 2 or not 1 <= self.vllm_nodes < self.nodes:
            raise ValueError(
                f"SlurmShape: nodes ({self.nodes}) must exceed vllm_nodes "
                f"({self.vllm_nodes}) >= 1: vLLM serves on its own node(s)"
            )
        if self.gpus_per_node < 1 or self.gpus_per_node % self.vllm_tensor_parallel:
            raise ValueError(
                f"SlurmShape: gpus_per_node ({self.gpus_per_node}) must be a "
                f"multiple of vllm_tensor_parallel ({self.vllm_tensor_parallel})"
            )
        if self.vllm_nodes != 1:
            raise ValueError(
                "SlurmShape: one vLLM node is supported (trl vllm-serve serves "
                "one node; a multi-node server needs its Ray cluster)"
            )

    @classmethod
    def from_env(cls, env=None) -> SlurmShape:
        """The shape a notebook run gets (LAUNCHER = "slurm" reaches launch() without one):
        RECODE_SLURM_NODES, _GPUS_PER_NODE, _VLLM_TP, _PARTITION, _ACCOUNT, _TIME, _CPUS from
        the environment, the defaults for the rest."""
        env = os.environ if env is None else env
        ints = {
            "nodes": "NODES",
            "gpus_per_node": "GPUS_PER_NODE",
            "vllm_tensor_parallel": "VLLM_TP",
            "cpus_per_task": "CPUS",
        }
        strs = {"partition": "PARTITION", "account": "ACCOUNT", "time": "TIME"}
        kw = {}
        for field_, key in {**ints, **strs}.items():
            v = env.get("RECODE_SLURM_" + key)
            if v:
                try:
                    kw[field_] = int(v) if field_ in ints else v
                except ValueError:
                    raise ValueError(f"RECODE_SLURM_{key} must be an integer, got {v!r}") from None
        return cls(**kw)

    @property
    def train_nodes(self) -> int:
        return self.nodes - self.vllm_nodes

    @property
    def train_processes(self) -> int:
        return self.train_nodes * self.gpus_per_node


def _q(x) -> str:
    return shlex.quote(str(x))


def sbatch_script(
    shape: SlurmShape,
    *,
    recipe,
    output_dir,
    problems,
    model: str,
    accelerate_config=None,
    job_name: str = "recode-grpo",
    setup: str = "",
) -> str:
    """The sbatch script for one GRPO run (module docstring). `setup` (optional) is shell run
    on every node first, e.g. `source ~/miniconda3/bin/activate recode`."""
    cfg = Path(accelerate_config or DEFAULT_ACCELERATE_CONFIG)
    out = Path(output_dir)
    m, g, tp = shape.train_nodes, shape.gpus_per_node, shape.vllm_tensor_parallel
    head = [
        "#!/bin/bash",
        f"#SBATCH --job-name={job_name}",
        f"#SBATCH --nodes={shape.nodes}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --gpus-per-node={g}",
        f"#SBATCH --cpus-per-task={shape.cpus_per_task}",
        "#SBATCH --exclusive",
        f"#SBATCH --time={shape.time}",
        f"#SBATCH --output={out}/slurm-%j.out",
    ]
    if shape.partition:
        head.append(f"#SBATCH --partition={shape.partition}")
    if shape.account:
        head.append(f"#SBATCH --account={shape.account}")
    train = (
        f"accelerate launch --config_file {_q(cfg)} --num_machines {m} "
        f"--num_processes {shape.train_processes} --machine_rank $SLURM_PROCID "
        f"--main_process_ip $MAIN_HOST --main_process_port {shape.main_port} "
        f"--rdzv_backend static --same_network -m {ENTRY_POINT} --recipe {_q(recipe)} "
        f"--output-dir {_q(out)} --problems {_q(problems)} --set vllm_mode=server "
        f"--set vllm_server_host=$VLLM_HOST --set vllm_server_port={shape.vllm_port}"
    )
    serve = (
        f"trl vllm-serve --model {_q(model)} --tensor-parallel-size {tp} "
        f"--data-parallel-size {g // tp} --host 0.0.0.0 --port {shape.vllm_port}"
    )
    body = f"""
set -euo pipefail
{setup}
mapfile -t NODES < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
TRAIN_NODES=$(IFS=,; echo "${{NODES[*]:0:{m}}}")
MAIN_HOST=${{NODES[0]}}
VLLM_HOST=${{NODES[{m}]}}
export MAIN_HOST VLLM_HOST
echo "recode: training on $TRAIN_NODES ({shape.train_processes} processes), vLLM on $VLLM_HOST"
srun --nodes=1 --ntasks=1 -w "$VLLM_HOST" {serve} &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq {max(1, shape.health_timeout_s // 10)}); do
  curl -sf "http://$VLLM_HOST:{shape.vllm_port}/health/" >/dev/null && break
  kill -0 $SERVER 2>/dev/null || {{ echo "recode: trl vllm-serve exited" >&2; exit 1; }}
  sleep 10
done
curl -sf "http://$VLLM_HOST:{shape.vllm_port}/health/" >/dev/null \\
  || {{ echo "recode: the vLLM server on $VLLM_HOST did not come up" >&2; exit 1; }}
srun --nodes={m} --ntasks={m} --ntasks-per-node=1 -w "$TRAIN_NODES" \\
  bash -c {_q(train)}
"""
    return "\n".join(head) + "\n" + body


_NUM = {
    "num_machines": r"--num_machines (\d+)",
    "num_processes": r"--num_processes (\d+)",
    "port": r"vllm_server_port=(\d+)",
    "serve_port": r"vllm-serve .*--port (\d+)",
    "dp": r"--data-parallel-size (\d+)",
    "tp": r"--tensor-parallel-size (\d+)",
}


def check_script(text: str, shape: SlurmShape) -> dict:
    """Check what would otherwise fail only on the cluster: the ranks and process counts add
    up to the allocation, the trainer's recipe reaches the server the script starts (same
    host variable and port), the server uses its node's GPUs exactly, ranks come from the
    step's task id; and `bash -n` accepts the script when bash is present. Returns the
    numbers found; raises LaunchConfigError naming the problem."""
    found = {}
    for key, pat in _NUM.items():
        mt = re.search(pat, text)
        if mt is None:
            raise LaunchConfigError(f"sbatch script: no {key} ({pat})")
        found[key] = int(mt.group(1))
    want = {
        "num_machines": shape.train_nodes,
        "num_processes": shape.train_processes,
        "port": shape.vllm_port,
        "serve_port": shape.vllm_port,
        "tp": shape.vllm_tensor_parallel,
    }
    for key, v in want.items():
        if found[key] != v:
            raise LaunchConfigError(f"sbatch script: {key} is {found[key]}, the shape needs {v}")
    if found["tp"] * found["dp"] != shape.gpus_per_node:
        raise LaunchConfigError(
            f"sbatch script: vLLM uses {found['tp']} x {found['dp']} GPUs "
            f"of its node's {shape.gpus_per_node}"
        )
    if "--machine_rank $SLURM_PROCID" not in text or "vllm_server_host=$VLLM_HOST" not in text:
        raise LaunchConfigError("sbatch script: ranks or the server host are not the step's")
    if f"#SBATCH --nodes={shape.nodes}" not in text:
        raise LaunchConfigError("sbatch script: the allocation's node count differs")
    error = bash_syntax_error(text)
    if error:
        raise LaunchConfigError(f"sbatch script: bash -n: {error}")
    return found


def bash_syntax_error(text: str) -> str | None:
    """What `bash -n` says against a script (its first 300 characters); None when bash
    accepts it, or when there is no bash here to ask."""
    bash = shutil.which("bash")
    if not bash:
        return None
    res = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True)
    return res.stderr.strip()[:300] or "rejected" if res.returncode != 0 else None


def submit(script_path, wait: bool = True) -> int:
    """`sbatch [--wait] script` (blocks until the job ends with wait); returns sbatch's exit
    code. A machine without sbatch gets a RuntimeError saying how to submit by hand."""
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise RuntimeError(
            f"no `sbatch` on this machine: submit {script_path} from a Slurm "
            "login node (`sbatch --wait " + str(script_path) + "`), then re-run "
            "this step: a finished run is skipped"
        )
    return subprocess.run([sbatch] + (["--wait"] if wait else []) + [str(script_path)]).returncode
