"""Root mode's uid ranges are claimed per worker (sandbox.limits.claim_uid_base): two live
workers never share one, since reap kills every process of a child's uid."""

from __future__ import annotations

import os

from recode_lib.sandbox import limits


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


def test_the_claim_folder_is_private(tmp_path, monkeypatch):
    path = limits.uid_claim_dir()
    assert os.path.isdir(path) and os.stat(path).st_mode & 0o077 == 0
