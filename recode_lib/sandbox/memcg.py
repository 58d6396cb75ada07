"""A memory cgroup per worker: one bound on the memory of all of a child's processes together.

    group = memcg.open_group()        # in the worker (root mode); None when no memory cgroup
    group.limit(mb)                   # in the worker, before forking a child
    group.join()                      # in the child, before it drops root (limits.confine)
    group.oom_kills()                 # cumulative: more after a child = its processes hit it
    group.close()                     # the worker exits: the (empty) group is removed

Why: RLIMIT_AS (memory_mb) bounds one process's address space, so a submission that forks
could hold max_processes x memory_mb at once (forked children each under the limit). With a
memory cgroup the kernel charges every page of every process in it, the child's private /tmp
(tmpfs pages) included, and reclaims or OOM-kills inside the group when the sum reaches the
limit. The worker sets the limit to the job's memory_mb plus its tmp size, so a record's
processes together hold at most that; RLIMIT_AS still bounds each one.

Where: cgroup v1's memory hierarchy (a directory with memory.limit_in_bytes; memsw limited too
when swap is accounted), else cgroup v2 (memory.max, memory.swap.max = 0) at a mount whose
root delegates the memory controller. The group is made under the worker's own cgroup when
that directory is writable (its limits then still apply), else at the hierarchy's root, named
recode-sbx-<worker pid>-<random>; groups of dead workers left behind (a SIGKILLed worker) are
removed when the next worker opens its own. Needs write access to the hierarchy, i.e. root
(the sandbox's root mode): in userns and plain mode `open_group` is not called and memory_mb
stays a per-process bound (limits.py's docstring). Only the standard library is imported (the
worker loads it by path, as harness.py and limits.py).
"""

import os
import secrets

V1_ROOTS = ("/sys/fs/cgroup/memory",)
V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
PREFIX = "recode-sbx-"


def _read(path):
    with open(path) as fh:
        return fh.read()


def _write(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def _own_path(version):
    """This process's cgroup path in the v1 memory hierarchy or the v2 one ('' if unknown)."""
    try:
        for line in _read("/proc/self/cgroup").splitlines():
            _, controllers, path = line.split(":", 2)
            if (version == 1 and "memory" in controllers.split(",")) or (
                version == 2 and controllers == ""
            ):
                return path.strip("/")
    except (OSError, ValueError):
        pass
    return ""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _sweep(parent):
    """Remove groups of workers that are gone (empty directories; rmdir fails on a busy one)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not name.startswith(PREFIX):
            continue
        try:
            pid = int(name[len(PREFIX) :].split("-", 1)[0])
        except ValueError:
            continue
        if pid != os.getpid() and not _alive(pid):
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass


class Group:
    """One memory cgroup (a directory of a v1 or v2 hierarchy) that a worker's children join."""

    def __init__(self, path, version):
        self.path, self.version = path, version
        self.procs = os.path.join(path, "cgroup.procs")  # what join writes (in each child)
        self.mb = None

    def limit(self, mb):
        """Bound the group's memory (and swap) at mb megabytes; raises OSError on failure."""
        mb = int(mb)
        if mb == self.mb:
            return
        n = str(mb << 20)
        if self.version == 1:
            memsw = os.path.join(self.path, "memory.memsw.limit_in_bytes")
            has_swap = os.path.exists(memsw)
            if has_swap:  # memsw >= limit at every moment: lift it first
                _write(memsw, "-1")
            _write(os.path.join(self.path, "memory.limit_in_bytes"), n)
            if has_swap:
                _write(memsw, n)
        else:
            _write(os.path.join(self.path, "memory.max"), n)
            swap = os.path.join(self.path, "memory.swap.max")
            if os.path.exists(swap):
                _write(swap, "0")
        self.mb = mb

    def join(self):
        """Move the calling process into the group (its later children are born in it)."""
        fd = os.open(self.procs, os.O_WRONLY)  # no file object: fewer pages touched
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def oom_kills(self):
        """How many processes the kernel killed in this group for its limit, so far."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        try:
            for line in _read(os.path.join(self.path, name)).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def close(self):
        try:
            os.rmdir(self.path)
        except OSError:
            pass


def _make(parent, version):
    _sweep(parent)
    path = os.path.join(parent, "%s%d-%s" % (PREFIX, os.getpid(), secrets.token_hex(4)))
    os.mkdir(path)
    group = Group(path, version)
    try:
        group.limit(64)  # proves the limit can be written
    except OSError:
        group.close()
        raise
    return group


def open_group():
    """A fresh memory cgroup for this worker's children, or None when no hierarchy is writable
    (not root, no memory controller, a read-only /sys/fs/cgroup)."""
    for root in V1_ROOTS:
        if not os.path.exists(os.path.join(root, "memory.limit_in_bytes")):
            continue
        own = os.path.join(root, _own_path(1))
        for parent in dict.fromkeys((own, root)):
            try:
                return _make(parent, 1)
            except OSError:
                continue
    for root in V2_ROOTS:
        try:
            if "memory" not in _read(os.path.join(root, "cgroup.controllers")).split():
                continue
            if "memory" not in _read(os.path.join(root, "cgroup.subtree_control")).split():
                _write(os.path.join(root, "cgroup.subtree_control"), "+memory")
            return _make(root, 2)
        except OSError:
            continue
    return None
