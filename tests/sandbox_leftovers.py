"""Find sandbox processes of this checkout that outlived their worker (a test helper).

    before = leftovers()            # at the start of a session
    assert wait_no_new(before) == [] # at its end: none left but those already there

A leftover runs this checkout's zygote.py (the worker's command line; its pid-namespace init
and its children are forks of it, with the same command line) and is either a member of a
sandbox pid namespace (the init, pid 1 there, or a child) whose parent no longer runs the
zygote — its worker is gone, yet the init's PR_SET_PDEATHSIG should have killed it with the
namespace — or a worker re-parented to pid 1 (its judge is gone and it did not exit at EOF).
Processes of other checkouts (other sessions on a shared machine) are never counted.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

ZYGOTE = str(Path(__file__).resolve().parent.parent / "recode_lib" / "sandbox" / "zygote.py")


def _status(pid: str) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            out[key] = value.split()
    return out


def zygote_processes(zygote: str | None = None) -> dict[int, tuple[int, int]]:
    """{pid: (parent pid, pid-namespace depth)} of the live processes running `zygote`
    (default: ZYGOTE, this checkout's; zombies left out: they run nothing)."""
    want = (zygote or ZYGOTE).encode()
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if want not in fh.read().split(b"\0"):
                    continue
            st = _status(pid)
            if st.get("State", ["?"])[0] in ("Z", "X"):
                continue
            out[int(pid)] = (int(st["PPid"][0]), len(st.get("NSpid", [pid])))
        except (OSError, KeyError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    return out


def leftovers(zygote: str | None = None) -> list[int]:
    """The pids of this checkout's sandbox processes that outlived their worker or judge."""
    procs = zygote_processes(zygote)
    return sorted(
        pid
        for pid, (ppid, depth) in procs.items()
        if (depth > 1 and ppid not in procs) or (depth == 1 and ppid == 1)
    )


def wait_no_new(before, patience_s: float = 5.0, zygote: str | None = None) -> list[int]:
    """The leftovers not in `before` still there after up to patience_s (a worker killed a
    moment ago takes its namespace down asynchronously); [] when none."""
    end = time.monotonic() + patience_s
    while True:
        new = [p for p in leftovers(zygote) if p not in set(before)]
        if not new or time.monotonic() > end:
            return new
        time.sleep(0.05)


def describe(pids) -> str:
    """One line per pid: pid, parent, namespace pids, command line (for a failure message)."""
    lines = []
    for pid in pids:
        try:
            st = _status(str(pid))
            lines.append(f"pid {pid} ppid {st['PPid'][0]} NSpid {' '.join(st.get('NSpid', []))}")
        except OSError:
            lines.append(f"pid {pid} (gone)")
    return "; ".join(lines)
