"""Connecting to Ray: the one place recode joins or starts a cluster, shared by the sandbox's
fan-out (recode_lib.sandbox.fanout) and the data-parallel vLLM engines
(recode_lib.generation.data_parallel).

    ray = connect("local")        # a cluster on this machine (ray.init, retried), or
    ray = connect("auto")         # the `ray start` cluster here; "ray://host:port": a remote head
    ray = start_local(num_cpus=2)

    wait_for_nodes(4, timeout_s=600)   # a job's cluster: until 4 nodes are alive
    python -m recode_lib.core.ray_cluster wait --nodes 4 --timeout 600  # same, for a job

When Ray is already initialized in this process (a notebook, a test), that connection is used
as is. Ray is optional (`pip install 'recode[scale]'`) and imported only when asked for. It does
not place work (the callers do) and starts nothing on other machines.
"""

from __future__ import annotations

import argparse
import sys
import time

START_ATTEMPTS = 3  # local cluster starts tried (see start_local)


def import_ray():
    """The ray module, or ImportError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            "the Ray fan-out needs ray: pip install 'recode[scale]' (or pip install 'ray>=2.40,<3')"
        ) from None
    return ray


def connect(address: str):
    """Initialize Ray for `address` ("local", "auto", "ray://host:port" or a GCS host:port),
    unless this process is already connected; returns the ray module."""
    ray = import_ray()
    if not isinstance(address, str) or not address.strip():
        raise ValueError(
            f"ray address must be 'local', 'auto' or 'ray://host:port', got {address!r}"
        )
    if ray.is_initialized():
        return ray
    if address == "local":
        start_local()
    else:
        ray.init(address=address)
    return ray


def start_local(num_cpus: int | None = None, attempts: int = START_ATTEMPTS):
    """ray.init() a cluster on this machine (no dashboard), retried: on a loaded machine the
    raylet can give up on its dashboard agent's port file after a hard-coded 15 s (ray issue
    #65983: "The current node timed out during startup"). Returns the ray module."""
    ray = import_ray()
    for attempt in range(attempts):
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
            return ray
        except Exception as exc:
            ray.shutdown()
            if attempt + 1 == attempts or "timed out during startup" not in str(exc):
                raise
            print(f"ray: local cluster did not start ({exc}); retrying")
    return ray


def alive_nodes(ray) -> int:
    return sum(1 for n in ray.nodes() if n.get("Alive"))


def wait_for_nodes(
    n: int, timeout_s: float = 600.0, address: str = "auto", poll_s: float = 2.0
) -> int:
    """Join the cluster at `address` and wait until at least `n` nodes are alive; returns how
    many are. TimeoutError names how many joined, so a job fails before its first notebook
    instead of running on fewer nodes than the plan placed."""
    ray = import_ray()
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            connect(address)
            break
        except ConnectionError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"ray: no cluster at {address!r} after {timeout_s:g} s"
                ) from None
            time.sleep(poll_s)
    while (alive := alive_nodes(ray)) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"ray: {alive} of {n} node(s) joined within {timeout_s:g} s "
                "(check the workers' srun steps in the job's output)"
            )
        time.sleep(poll_s)
    return alive


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recode_lib.core.ray_cluster")
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wait", help="wait until the cluster has N alive nodes")
    w.add_argument("--nodes", type=int, required=True, help="nodes that must be alive")
    w.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")
    w.add_argument("--address", default="auto", help="cluster address (default: auto)")
    args = parser.parse_args(argv)
    try:
        alive = wait_for_nodes(args.nodes, args.timeout, args.address)
    except (TimeoutError, ImportError) as exc:
        print(f"recode_lib.core.ray_cluster: error: {exc}", file=sys.stderr)
        return 2
    print(f"ray: {alive} node(s) alive")
    return 0


__all__ = [
    "START_ATTEMPTS",
    "alive_nodes",
    "connect",
    "import_ray",
    "start_local",
    "wait_for_nodes",
]


if __name__ == "__main__":
    sys.exit(main())
