"""Connecting to Ray: the one place recode joins or starts a cluster, shared by the sandbox's
fan-out (recode_lib.sandbox.fanout) and the data-parallel vLLM engines
(recode_lib.generation.data_parallel).

    ray = connect("local")        # a cluster on this machine (ray.init, retried), or
    ray = connect("auto")         # the `ray start` cluster here; "ray://host:port": a remote head
    ray = start_local(num_cpus=2)

When Ray is already initialized in this process (a notebook, a test), that connection is used
as is. Ray is optional (`pip install 'recode[scale]'`) and imported only when asked for. It does
not place work (the callers do) and starts nothing on other machines.
"""

from __future__ import annotations

START_ATTEMPTS = 3            # local cluster starts tried (see start_local)


def import_ray():
    """The ray module, or ImportError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError("the Ray fan-out needs ray: pip install 'recode[scale]' "
                          "(or pip install 'ray>=2.40,<3')") from None
    return ray


def connect(address: str):
    """Initialize Ray for `address` ("local", "auto", "ray://host:port" or a GCS host:port),
    unless this process is already connected; returns the ray module."""
    ray = import_ray()
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"ray address must be 'local', 'auto' or 'ray://host:port', got {address!r}")
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


__all__ = ["START_ATTEMPTS", "connect", "import_ray", "start_local"]
