"""Whether this machine computes in bfloat16 natively, and what a recipe's `bf16: auto` becomes.

    from recode_lib.bf16 import resolve_bf16
    resolve_bf16("auto", use_cpu=True)    # True on a CPU with bf16 instructions, else False
    resolve_bf16(True, use_cpu=True)      # True / False pass through unchanged

`bf16: true` in a training recipe is bf16 autocast over fp32 master weights
(recode_lib.models.training_dtype): the forward and backward matmuls run in bfloat16, the
optimizer updates float32 weights, and checkpoints are written in float32. On a GPU with bf16
(Ampere and later) that is the paper profile's setting. On a CPU it pays only where the CPU has
bfloat16 instructions: x86 `avx512_bf16` (AMD Zen 4, Intel Cooper Lake and later) or `amx_bf16`
(Intel Sapphire Rapids), ARM `bf16` (ARMv8.6: Graviton 3, Apple M2 and later). Without them
bf16 matmuls go through float32 conversions (emulated), which gains nothing and may cost time
(not measured here: every machine at hand has avx512_bf16), so auto keeps float32 there.
Measured on a 2-core AVX-512-bf16 machine (docs/measured.md, "bf16 autocast on CPU").

`auto` is what a recipe asks for when it wants the faster of the two wherever it runs: on CUDA,
`torch.cuda.is_bf16_supported()`; on a CPU run (use_cpu, or no CUDA), the CPU flags above read
from /proc/cpuinfo (Linux; elsewhere False: no flags to read, float32 is the safe choice). It
does not decide inference precision (recode_lib.models.PRECISIONS: evaluation and sampling) and
does not change what is saved.
"""

from __future__ import annotations

from pathlib import Path

X86_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})
ARM_BF16_FEATURES = frozenset({"bf16"})
VALUES = (True, False, "auto")


def cpu_flags(cpuinfo_path: str | Path = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's instruction-set flags (x86 `flags`, ARM `Features`) from /proc/cpuinfo;
    empty when the file cannot be read (not Linux, a restricted /proc)."""
    try:
        text = Path(cpuinfo_path).read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() in ("flags", "features"):
            return frozenset(value.split())
    return frozenset()


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
    if isinstance(value, str) and value.strip().lower() == "auto":
        on_cuda = None if use_cpu else cuda_bf16()
        return cpu_has_native_bf16(flags) if on_cuda is None else on_cuda
    raise ValueError(f"bf16 must be true, false or auto, got {value!r}")
