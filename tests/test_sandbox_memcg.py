"""The memory cgroup of each sandbox worker (recode_lib/sandbox/memcg.py): made, limited, joined,
counted and removed; groups of dead workers swept; none left behind by a pool. Skipped where no
memory cgroup hierarchy is writable (not root, or /sys/fs/cgroup read-only): the sandbox then
bounds memory per process only (tests/test_sandbox_redteam2.py says which holds)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from recode_lib.sandbox import SandboxConfig, execute, pool

sys.path.insert(0, str(Path(pool.__file__).parent))  # the worker loads memcg by path, as here
import memcg  # noqa: E402


@pytest.fixture
def group():
    g = memcg.open_group()
    if g is None:
        pytest.skip("no writable memory cgroup hierarchy on this machine")
    yield g
    g.close()


def own_memory_cgroup(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if ("memory" in controllers.split(",")) or controllers == "":
            return path
    return ""


def test_a_group_is_a_limited_cgroup_named_for_its_worker(group):
    assert Path(group.path).is_dir()
    assert Path(group.path).name.startswith(f"{memcg.PREFIX}{os.getpid()}-")
    group.limit(300)
    name = "memory.limit_in_bytes" if group.version == 1 else "memory.max"
    assert int(Path(group.path, name).read_text()) == 300 << 20
    assert group.oom_kills() == 0


def test_a_child_that_joins_is_charged_to_the_group_and_its_forks_too(group):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        group.join()
        if os.fork() == 0:
            os.write(w, own_memory_cgroup(os.getpid()).encode())
            os._exit(0)
        os.wait()
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 4096).decode().endswith(Path(group.path).name)


def test_processes_over_the_limit_are_killed_and_counted(group):
    group.limit(64)
    pid = os.fork()
    if pid == 0:
        group.join()
        block = bytearray(200 << 20)
        block[::4096] = b"x" * len(block[::4096])  # touch every page
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == 9
    assert group.oom_kills() == 1


def test_groups_of_dead_workers_are_swept_when_a_worker_opens_its_own(group):
    parent = Path(group.path).parent
    pid = os.fork()  # a pid that is surely dead afterwards
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    stale = parent / f"{memcg.PREFIX}{pid}-dead0000"
    stale.mkdir()
    other = memcg.open_group()
    try:
        assert not stale.exists()
        assert Path(group.path).is_dir()  # a live worker's group stays
    finally:
        other.close()


def test_a_pool_leaves_no_group_behind(group):
    parent = Path(group.path).parent
    before = {p.name for p in parent.glob(f"{memcg.PREFIX}*")}
    res = execute(
        {
            "id": "m",
            "code": "def f():\n    return 1\n",
            "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
        },
        config=SandboxConfig(workers=1, memory_mb=200),
    )
    assert res["status"] == "passed"
    pool.close_all()
    new = {p.name for p in parent.glob(f"{memcg.PREFIX}*")} - before
    # a group is named after the worker that made it: ours are gone; a live one is another
    # test process's pool (pytest -n)
    assert {
        n for n in new if not Path(f"/proc/{n[len(memcg.PREFIX) :].split('-')[0]}").exists()
    } == set()
