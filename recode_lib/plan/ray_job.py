"""The batch job that runs a profile over several nodes: one Slurm script that starts a Ray
cluster on its allocation (the head on the first node, one worker per other node) and runs
`recode reproduce` inside it with RAY_ADDRESS set, so data-parallel vLLM engines
(recode_lib.generation.data_parallel) and the sandbox fan-out spread over every node.

    text = ray_job_script(RayJob(profile="paper", nodes=4, gpus_per_node=8, hours=400))
    check_ray_job(text, job)                       # counts, ports and `bash -n`
    recode plan --profile paper --nodes 4 --slurm-script job.sh   # writes and checks it
    sbatch job.sh

It follows Ray's own recipe for Slurm (docs.ray.io, "Deploying on Slurm"): `ray start --head`
on the first node through `srun` (at its first non-loopback address, `hostname -I`: `hostname
--ip-address` can answer 127.0.1.1 on Debian-style hosts files), `ray start --address` on the
others, each `--block`ed in the background of the batch script, then the driver; Ray's token
authentication with one token per job (RAY_AUTH_MODE=token, RAY_AUTH_TOKEN: Ray 2.60's default for
clusters started with `ray start`, which a driver without the token cannot join). The job waits
until every node has joined (`python -m recode_lib.core.ray_cluster wait`) before the first notebook
starts. GRPO runs keep their own route (recode_lib.training.slurm: sbatch jobs per run, submitted
from inside this job when a notebook's LAUNCHER is "slurm"). It builds and checks text; it submits
nothing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from recode_lib.core.errors import RecodeError
from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.training.slurm import bash_syntax_error

RAY_PORT = 6379


class RayJobError(RecodeError, ValueError):
    """A Ray-on-Slurm job script that would fail on the cluster (named)."""


@dataclass(frozen=True)
class RayJob:
    """What the batch job asks Slurm for and what it runs."""

    profile: str = "paper"
    nodes: int = 2
    gpus_per_node: int = 8
    cpus_per_node: int | None = None  # --cpus-per-task (None: Slurm's default)
    hours: float = 48.0  # --time
    partition: str | None = None
    account: str | None = None
    port: int = RAY_PORT
    join_timeout_s: int = 600  # every node must have joined by then
    python: str = ".venv/bin/python"  # relative to the project root
    setup: str = ""  # shell run on every node first (modules, conda)
    extra_args: tuple[str, ...] = field(default_factory=tuple)  # more `recode reproduce` args

    def __post_init__(self):
        if self.nodes < 1 or self.gpus_per_node < 0 or self.hours <= 0:
            raise RayJobError(
                f"a Ray job needs nodes >= 1, gpus_per_node >= 0 and hours > 0, "
                f"got nodes={self.nodes}, gpus_per_node={self.gpus_per_node}, "
                f"hours={self.hours}"
            )
        if not 1024 <= self.port <= 65535:
            raise RayJobError(f"Ray port {self.port}: choose one in 1024-65535")


def slurm_time(hours: float) -> str:
    """hours as Slurm's --time D-HH:MM:SS (rounded up to the minute)."""
    minutes = max(1, int(-(-hours * 60 // 1)))
    d, rest = divmod(minutes, 24 * 60)
    h, m = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:00"


def ray_job_script(job: RayJob, root=PROJECT_ROOT) -> str:
    """The sbatch script: Ray over the allocation, then `recode reproduce` with RAY_ADDRESS."""
    q = shlex.quote
    py = q(job.python)
    gpus = f" --num-gpus={job.gpus_per_node}"
    cpus = f" --num-cpus={job.cpus_per_node}" if job.cpus_per_node else ""
    reproduce = " ".join(
        [
            py,
            "-m",
            "recode_lib",
            "reproduce",
            "--profile",
            q(job.profile),
            "--nodes",
            str(job.nodes),
            "--gpus",
            str(job.gpus_per_node),
            *(q(a) for a in job.extra_args),
        ]
    )
    head = [
        "#!/bin/bash",
        f"#SBATCH --job-name=recode-{job.profile}",
        f"#SBATCH --nodes={job.nodes}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --gpus-per-node={job.gpus_per_node}" if job.gpus_per_node else "",
        f"#SBATCH --cpus-per-task={job.cpus_per_node}" if job.cpus_per_node else "",
        "#SBATCH --exclusive",
        f"#SBATCH --time={slurm_time(job.hours)}",
        f"#SBATCH --partition={job.partition}" if job.partition else "",
        f"#SBATCH --account={job.account}" if job.account else "",
        f"#SBATCH --output=recode-{job.profile}-%j.out",
    ]
    new_token = f"{py} -c 'import secrets; print(secrets.token_hex(32))'"
    body = f"""
# written by `recode plan --slurm-script` (recode_lib.plan.ray_job); submit with `sbatch`
set -euo pipefail
cd {q(str(root))}
{job.setup}
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
head_node=${{nodes[0]}}
head_ip=$(srun --nodes=1 --ntasks=1 -w "$head_node" hostname -I | awk '{{print $1}}')
export RAY_ADDRESS="$head_ip:{job.port}"
# Ray's token authentication, one token for this job (srun passes the environment on)
export RAY_AUTH_MODE=token
export RAY_AUTH_TOKEN="${{RAY_AUTH_TOKEN:-$({new_token})}}"
echo "ray: head $head_node ($RAY_ADDRESS), ${{#nodes[@]}} node(s)"
ray_node() {{  # ray_node NODE ARGS...: `ray start ARGS --block` on NODE, in the background;
  # retried: a loaded node can time out at start-up (Ray's raylet gives its agents 15 s)
  local node=$1; shift
  srun --nodes=1 --ntasks=1 -w "$node" bash -c \\
    'for i in 1 2 3; do "$@" --block && exit 0; sleep 5; done; exit 1' ray_node \\
    {py} -m ray.scripts.scripts start "$@" --disable-usage-stats{gpus}{cpus} &
}}
ray_node "$head_node" --head --node-ip-address="$head_ip" --port={job.port}
sleep 5
for node in "${{nodes[@]:1}}"; do
  ray_node "$node" --address="$RAY_ADDRESS"
done
{py} -m recode_lib.core.ray_cluster wait --nodes {job.nodes} --timeout {job.join_timeout_s} \\
    --address "$RAY_ADDRESS"
{reproduce}
"""
    return "\n".join(line for line in head if line) + "\n" + body


NUMBERS = {
    "nodes": r"#SBATCH --nodes=(\d+)",
    "wait": r"ray_cluster wait --nodes (\d+)",
    "reproduce": r"reproduce --profile \S+ --nodes (\d+)",
    "port": r"--head .*--port=(\d+)",
}


def check_ray_job(text: str, job: RayJob) -> dict:
    """What would otherwise fail only on the cluster: the allocation, the join wait and the
    run agree on the node count; the workers join the port the head opens; every srun names
    its node; `bash -n` accepts the script (when bash is present). Returns the numbers found;
    raises RayJobError naming the problem."""
    found = {}
    for key, pat in NUMBERS.items():
        m = re.search(pat, text)
        if m is None:
            raise RayJobError(f"Ray job script: no {key} ({pat})")
        found[key] = int(m.group(1))
    for key in ("nodes", "wait", "reproduce"):
        if found[key] != job.nodes:
            raise RayJobError(
                f"Ray job script: {key} says {found[key]} node(s), the job {job.nodes}"
            )
    if found["port"] != job.port or f'RAY_ADDRESS="$head_ip:{job.port}"' not in text:
        raise RayJobError(f"Ray job script: the workers do not join the head's port {job.port}")
    if any(" -w " not in line for line in text.splitlines() if line.lstrip().startswith("srun")):
        raise RayJobError("Ray job script: an srun step does not name its node (-w)")
    error = bash_syntax_error(text)
    if error:
        raise RayJobError(f"Ray job script: bash -n: {error}")
    return found


__all__ = ["RAY_PORT", "RayJob", "RayJobError", "check_ray_job", "ray_job_script", "slurm_time"]
