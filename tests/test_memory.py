"""recode_lib.core.memory: a finished stage's memory goes back to the OS (cycles collected, heap
trimmed)."""

import gc
import sys
import weakref

import pytest

from recode_lib.core.memory import release_memory, resident_mib, trim_heap

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, glibc")


class _Stage:
    """A trainer and its callback pointing at each other, as transformers' Trainer does."""


def test_release_memory_collects_a_reference_cycle_the_moment_it_is_called():
    gc.disable()
    try:
        trainer, callback = _Stage(), _Stage()
        trainer.callback, callback.trainer = callback, trainer
        alive = weakref.ref(trainer)
        del trainer, callback
        assert alive() is not None  # refcounting alone keeps a cycle
        release_memory()
        assert alive() is None
    finally:
        gc.enable()


@linux_only
def test_release_memory_returns_freed_heap_memory_that_free_keeps():
    start = resident_mib()
    chunks = [bytearray(64 * 1024) for _ in range(3200)]  # 200 MiB on the heap, touched
    pin = bytearray(64 * 1024)  # a live block above them
    assert resident_mib() - start > 150
    del chunks
    kept = resident_mib()
    assert release_memory() is True  # glibc: malloc_trim ran
    assert kept - resident_mib() > 150  # the freed 200 MiB left the process
    assert len(pin) == 64 * 1024


@linux_only
def test_trim_heap_returns_freed_heap_memory_without_collecting():
    gc.disable()
    try:
        start = resident_mib()
        chunks = [bytearray(64 * 1024) for _ in range(3200)]  # 200 MiB on the heap, touched
        pin = bytearray(64 * 1024)  # a live block above them
        cycle = _Stage()
        cycle.me = cycle
        alive = weakref.ref(cycle)
        del chunks, cycle
        kept = resident_mib()
        assert kept - start > 150
        assert trim_heap() is True
        assert kept - resident_mib() > 150  # the freed 200 MiB left the process
        assert alive() is not None  # and no collection ran (cheap enough for every step)
        assert len(pin) == 64 * 1024
    finally:
        gc.enable()
