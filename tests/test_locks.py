"""One writer per output, with real processes: refused at once naming the holder, taken over
with a message after kill -9, re-entrant within one process."""

import os
import signal
import subprocess
import sys
import time

import pytest

from recode_lib.core.locks import OutputLock, OutputLocked, lock_path
from recode_lib.core.paths import PROJECT_ROOT

HOLD = """
import sys, time
from recode_lib.core.locks import OutputLock
lock = OutputLock(sys.argv[1], folder=True).acquire()
print("held", flush=True)
time.sleep(60)
"""


def holder(target):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(target)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_is_refused_at_once_naming_the_holder(tmp_path):
    proc = holder(tmp_path / "run")
    try:
        t0 = time.monotonic()
        with pytest.raises(OutputLocked) as err:
            OutputLock(tmp_path / "run", folder=True).acquire()
        assert time.monotonic() - t0 < 2
        assert f"PID {proc.pid}" in str(err.value) and "-c" in str(err.value)
        assert "\n" not in str(err.value)
    finally:
        proc.kill()
        proc.wait()


def test_a_lock_left_by_a_killed_process_is_taken_over_with_a_message(tmp_path):
    proc = holder(tmp_path / "run")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    said = []
    with OutputLock(tmp_path / "run", folder=True, say=said.append):
        pass
    assert len(said) == 1 and f"PID {proc.pid}" in said[0] and "taking over" in said[0]
    said.clear()
    with OutputLock(tmp_path / "run", folder=True, say=said.append):  # released cleanly: silent
        pass
    assert said == []


def test_the_lock_is_reentrant_within_one_process(tmp_path):
    with OutputLock(tmp_path / "run", folder=True):
        with OutputLock(tmp_path / "run", folder=True):
            pass
        other = subprocess.run(
            [sys.executable, "-c", HOLD, str(tmp_path / "run")],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=PROJECT_ROOT,
            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        )
        assert other.returncode != 0 and "OutputLocked" in other.stderr  # the outer one holds it
    # released: another process can take it now
    proc = holder(tmp_path / "run")
    proc.kill()
    proc.wait()


def test_lock_files_sit_in_the_folder_or_beside_the_file(tmp_path):
    (tmp_path / "d").mkdir()
    assert lock_path(tmp_path / "d") == tmp_path / "d" / ".lock"
    assert lock_path(tmp_path / "out.jsonl") == tmp_path / ".out.jsonl.lock"
    assert lock_path(tmp_path / "new", folder=True) == tmp_path / "new" / ".lock"


def test_a_waiting_writer_blocks_until_the_holder_ends_then_takes_the_lock(tmp_path):
    """wait=True (a shared cache): no OutputLocked; one line says whose lock it waits for."""
    proc = holder(tmp_path / "cache")
    said = []
    try:
        lock = OutputLock(tmp_path / "cache", folder=True, wait=True, say=said.append)
        t0 = time.monotonic()
        killer = subprocess.Popen(["sh", "-c", f"sleep 0.5; kill {proc.pid}"])
        with lock:
            waited = time.monotonic() - t0
            assert lock.fd is not None
        killer.wait()
    finally:
        proc.kill()
        proc.wait()
    assert waited >= 0.4
    assert "waiting for" in said[0] and str(proc.pid) in said[0]
