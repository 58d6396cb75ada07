"""Root mode's uid ranges are claimed per worker (sandbox.limits.claim_uid_base): two live
workers never share one, since reap kills every process of a child's uid; and a record's uid
leaves no kernel key behind (reap creates no keyrings to clear them); the claim folder stays
bounded however many workers start and stop, and no sweep removes a live claim."""

from __future__ import annotations

import os

import pytest

from recode_lib.sandbox import SandboxConfig, execute, execute_many, limits
from recode_lib.sandbox.pool import get_pool


class Fixed:
    """A SystemRandom stand-in that always draws the same range first, then the next ones."""

    def __init__(self):
        self.n = 0

    def randrange(self, lo, hi):
        self.n += 1
        return lo + (0 if self.n <= 2 else self.n)


def test_a_range_held_by_a_live_worker_is_not_handed_out_again(monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "uid_claim_dir", lambda: str(tmp_path))
    rng = Fixed()
    monkeypatch.setattr(limits.random, "SystemRandom", lambda: rng)
    first, fd1 = limits.claim_uid_base()
    second, fd2 = limits.claim_uid_base()
    try:
        assert first != second
    finally:
        os.close(fd1)
        os.close(fd2)


def test_a_range_is_free_again_once_its_worker_is_gone(monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "uid_claim_dir", lambda: str(tmp_path))
    monkeypatch.setattr(limits.random, "SystemRandom", lambda: Fixed())
    first, fd1 = limits.claim_uid_base()
    os.close(fd1)  # the worker exits: its flock goes with it
    again, fd2 = limits.claim_uid_base()
    os.close(fd2)
    assert again == first


def test_the_claim_folder_stays_bounded_as_workers_start_and_stop(monkeypatch, tmp_path):
    """Each claim sweeps the files no live worker holds: 300 workers one after another leave
    one file (the last one's), not 300."""
    monkeypatch.setattr(limits, "uid_claim_dir", lambda: str(tmp_path))
    most = 0
    for _ in range(300):
        _, fd = limits.claim_uid_base()
        most = max(most, len(os.listdir(tmp_path)))
        os.close(fd)  # the worker ends
    assert most <= 2 and len(os.listdir(tmp_path)) <= 1, (most, len(os.listdir(tmp_path)))


def test_a_sweep_leaves_a_live_workers_claim_file(monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "uid_claim_dir", lambda: str(tmp_path))
    held, fd1 = limits.claim_uid_base()
    try:
        for _ in range(5):
            _, fd = limits.claim_uid_base()  # each claim sweeps first
            os.close(fd)
        limits.sweep_uid_claims(str(tmp_path))
        assert str(held) in os.listdir(tmp_path)
    finally:
        os.close(fd1)


def test_a_claim_whose_file_was_swept_before_its_lock_is_not_kept(monkeypatch, tmp_path):
    """The race: a sweep unlinks the file between a claimant's open and its flock. The lock
    the claimant then gets is on a file no one else can see: it must draw again, and the
    claim it returns is the file at its path (another worker would create and lock that)."""
    monkeypatch.setattr(limits, "uid_claim_dir", lambda: str(tmp_path))
    real_flock, raced = limits.fcntl.flock, []

    def flock(fd, op):
        if not raced:  # a sweeper ran between open and flock
            raced.append(os.readlink(f"/proc/self/fd/{fd}"))
            limits.sweep_uid_claims(str(tmp_path))
        return real_flock(fd, op)

    monkeypatch.setattr(limits.fcntl, "flock", flock)
    base, fd = limits.claim_uid_base()
    try:
        path = os.path.join(tmp_path, str(base))
        assert raced and os.path.exists(path)
        assert os.fstat(fd).st_ino == os.stat(path).st_ino
    finally:
        os.close(fd)


def test_the_claim_folder_is_private(tmp_path, monkeypatch):
    path = limits.uid_claim_dir()
    assert os.path.isdir(path) and os.stat(path).st_mode & 0o077 == 0


def _key_users():
    with open("/proc/key-users", "rb") as fh:
        return {int(line.split(b":", 1)[0]) for line in fh.read().splitlines() if b":" in line}


@pytest.mark.skipif(not os.path.exists("/proc/key-users"), reason="a kernel without keys")
def test_a_record_leaves_no_keyring_of_its_uid_in_the_kernel():
    """Root mode: a record's fresh uid owns no key in the kernel after its reap (clearing a uid's
    user keyrings creates them: two per record would pile up in kernel memory)."""
    cfg = SandboxConfig(time_limit_s=2.0, memory_mb=300, workers=1)  # a pool of its own
    rec = {
        "id": "k",
        "code": "def f():\n    return 1\n",
        "tests": {"kind": "call", "fn_name": "f", "cases": [{"args": [], "expected": 1}]},
    }
    assert execute(rec, config=cfg)["status"] == "passed"
    (w,) = get_pool(cfg).workers()
    if w.info["mode"] != "root":
        pytest.skip("root mode only: a private uid per record")
    base, span = w.info["uid"], w.info["uid_span"]
    before = _key_users()
    assert execute_many([rec] * 3, config=cfg, workers=1)[2]["status"] == "passed"
    new = [u for u in _key_users() - before if base <= u < base + span]
    assert new == [], f"keys left for the records' uids {new}"
