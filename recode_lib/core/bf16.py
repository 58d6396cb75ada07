"""Whether this machine computes in bfloat16 natively, and what a recipe's `bf16: auto` becomes.

    from recode_lib.core.bf16 import resolve_bf16
    resolve_bf16("auto", use_cpu=True)    # True on a CPU with bf16 instructions, else False
    resolve_bf16(True, use_cpu=True)      # True / False pass through unchanged

`bf16: true` in a training recipe is bf16 autocast over fp32 master weights
(recode_lib.core.models.training_dtype): the forward and backward matmuls run in bfloat16, the
optimizer updates float32 weights, and checkpoints are written in float32. On a GPU with bf16
(Ampere and later) that is the paper profile's setting. On a CPU it pays only where the CPU has
bfloat16 instructions: x86 `avx512_bf16` (AMD Zen 4, Intel Cooper Lake and later) or `amx_bf16`
(Intel Sapphire Rapids), ARM `bf16` (ARMv8.6: Graviton 3, Apple M2 and later). Without them
bf16 matmuls go through float32 conversions (emulated), which costs time (decoding: 2x slower
than float32 on an AVX2-only Zen 3 CPU, below), so auto keeps float32 there.
Measured on a 2-core AVX-512-bf16 machine (docs/measured.md, "bf16 autocast on CPU").

`auto` is what a recipe asks for when it wants the faster of the two wherever it runs: on CUDA,
`torch.cuda.is_bf16_supported()`; on a CPU run (use_cpu, or no CUDA), the CPU flags above read
from /proc/cpuinfo (Linux; elsewhere False: no flags to read, float32 is the safe choice). It
does not change what is saved.

`precision: auto` (`resolve_precision`) is the same choice for a model that only generates
(recode_lib.core.models.PRECISIONS: 04's held-out samples, 00's calibration, a GRPO recipe's
`generation_precision`): bfloat16 weights where the machine computes bf16 natively, else the
float32 it loads on a CPU. On a CPU without bf16 instructions bfloat16 weights decode ~2x
*slower* than float32 (SmolLM2-135M, batch 16, 2 Zen 3 cores: 27.4 vs 56.0 tokens/s; with
avx512_bf16 they were 1.3-1.5x faster: docs/measured.md), so a fixed `bfloat16` is a choice for
one kind of machine, `auto` for any.
"""

from __future__ import annotations

import os
from pathlib import Path

X86_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
ARM_BF16_FEATURES = frozenset({"bf16"})
AUTO = "auto"
VALUES = (True, False, AUTO)


def cpuinfo_fields(cpuinfo_path: str | Path = "/proc/cpuinfo") -> dict[str, str]:
    """/proc/cpuinfo's fields, keys lowercased, each the first CPU's value (the first occurrence);
    {} when the file cannot be read (not Linux, a restricted /proc). Read once per call."""
    try:
        text = Path(cpuinfo_path).read_text(errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip().lower(), value.strip())
    return fields


def flags_of(fields: dict[str, str]) -> frozenset[str]:
    """The instruction-set flags (x86 `flags`, ARM `Features`) among cpuinfo_fields."""
    return frozenset((fields.get("flags") or fields.get("features") or "").split())


def cpu_flags(cpuinfo_path: str | Path = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's instruction-set flags (x86 `flags`, ARM `Features`) from /proc/cpuinfo;
    empty when the file cannot be read (not Linux, a restricted /proc)."""
    return flags_of(cpuinfo_fields(cpuinfo_path))


# what decides a CPU run's speed here: vector width and bf16/int8 arithmetic (cpu_summary)
SPEED_FLAGS = (
    "avx2",
    "avx512f",
    "avx512_bf16",
    "avx512_vnni",
    "amx_bf16",
    "amx_int8",
    "asimd",
    "sve",
    "bf16",
    "i8mm",
)


def cpu_summary(cpuinfo_path: str | Path = "/proc/cpuinfo") -> dict:
    """What a wall time measured on this machine depends on, for a result's provenance: the CPU's
    model name, the CPUs this process may use, the speed-relevant instruction sets it has
    (SPEED_FLAGS) and whether bf16 is native. The same notebook took 2x longer on an AVX2-only
    Zen 3 than on an avx512_bf16 Zen 4, both "2 cores" (docs/measured.md)."""
    fields = cpuinfo_fields(cpuinfo_path)
    model = next((fields[k] for k in ("model name", "cpu model", "hardware") if k in fields), None)
    flags = flags_of(fields)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    return {
        "model": model,
        "cpus": cpus,
        "isa": [f for f in SPEED_FLAGS if f in flags],
        "native_bf16": cpu_has_native_bf16(flags),
    }


def cpu_has_native_bf16(flags: frozenset[str] | None = None) -> bool:
    """True when the CPU has bfloat16 arithmetic instructions (see the module docstring)."""
    flags = cpu_flags() if flags is None else flags
    return bool(flags & (X86_BF16_FLAGS | ARM_BF16_FEATURES))


def cuda_bf16() -> bool | None:
    """CUDA's bf16 support (None: no CUDA device, so a run computes on the CPU)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return bool(torch.cuda.is_bf16_supported())


def resolve_bf16(value, *, use_cpu: bool, flags: frozenset[str] | None = None) -> bool:
    """A recipe's `bf16` as the bool TRL takes: True/False unchanged (None: False, TRL's
    default), "auto" by the machine (CUDA's bf16 support, or on a CPU run the CPU's flags).
    ValueError for anything else, naming the value."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return native_bf16(use_cpu=use_cpu, flags=flags)
    raise ValueError(f"bf16 must be true, false or auto, got {value!r}")


def native_bf16(*, use_cpu: bool | None = None, flags: frozenset[str] | None = None) -> bool:
    """Whether a run computes bf16 natively here: on CUDA (use_cpu False, or None with a CUDA
    device) its bf16 support, else the CPU's flags."""
    on_cuda = None if use_cpu else cuda_bf16()
    return cpu_has_native_bf16(flags) if on_cuda is None else on_cuda


def resolve_precision(
    value: str,
    *,
    copy: bool = False,
    use_cpu: bool | None = None,
    flags: frozenset[str] | None = None,
) -> str:
    """A generation precision with "auto" made concrete (any other value unchanged: the
    caller checks it against recode_lib.core.models.PRECISIONS). auto = "bfloat16" where the
    machine computes bf16 natively (native_bf16), else "native" (a generator keeps the dtype it
    loads: float32 on a CPU) or, for a GRPO sampling copy (`copy=True`: a merged copy of a LoRA
    policy, rebuilt each step), "float32" (a merged float32 copy: no adapter matmuls while
    sampling, 1.04-1.2x faster than the live peft policy; a bf16 copy there was 0.78x,
    docs/measured.md)."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        if native_bf16(use_cpu=use_cpu, flags=flags):
            return "bfloat16"
        return "float32" if copy else "native"
    return value
