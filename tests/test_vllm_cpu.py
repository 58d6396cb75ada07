"""vLLM's CPU build as part of the CPU environment: where it runs, what `make env` installs."""

import importlib.metadata

import pytest

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.generation import vllm_cpu

AVX512 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx2 avx512f avx512bw\n"
AVX2 = "processor\t: 0\nflags\t\t: fpu sse sse2 avx avx2\n"
OLD = "processor\t: 0\nflags\t\t: fpu sse sse2 sse4_2 avx\n"


def test_runs_on_linux_x86_64_with_avx512_or_avx2_and_cpu_torch():
    for info in (AVX512, AVX2):
        assert vllm_cpu.why_not("Linux", "x86_64", info, "2.13.0+cpu") is None


@pytest.mark.parametrize(
    "system, machine, info, torch, words",
    [
        ("Darwin", "arm64", AVX2, "2.13.0", "Linux, this is Darwin"),
        ("Linux", "aarch64", AVX2, "2.13.0+cpu", "x86_64, this machine is aarch64"),
        ("Linux", "x86_64", OLD, "2.13.0+cpu", "neither AVX-512 nor AVX2"),
        ("Linux", "x86_64", AVX2, "2.13.0", "CUDA build"),
        ("Linux", "x86_64", AVX2, "2.14.0+cpu", "needs torch 2.13.0"),
        ("Linux", "x86_64", AVX2, None, "torch is not installed"),
    ],
)
def test_says_why_not_in_one_sentence(system, machine, info, torch, words):
    reason = vllm_cpu.why_not(system, machine, info, torch)
    assert words in reason and "\n" not in reason


def test_a_cuda_torch_is_never_replaced_by_the_cpu_build():
    # vllm-cpu requires torch==2.13.0+cpu: installing it over PyPI's CUDA torch would swap the
    # GPU build for the CPU one, so a CUDA environment is told to take the CUDA vLLM instead
    assert "pip install -e .[gpu]" in vllm_cpu.why_not("Linux", "x86_64", AVX512, "2.13.0")


def test_cpu_flags_reads_the_first_cpu():
    assert vllm_cpu.cpu_flags(AVX512 + "\nprocessor\t: 1\nflags\t: fpu\n") >= {"avx512f", "avx2"}
    assert vllm_cpu.cpu_flags("nothing here") == set()


def test_requirement_names_are_normalised():
    assert vllm_cpu.requirement_name("Foo_Bar[x]>=1; python_version > '3'") == "foo-bar"
    assert vllm_cpu.requirement_name("torchvision") == "torchvision"
    with pytest.raises(ValueError):
        vllm_cpu.requirement_name("  >=1")


def test_the_wheels_own_requirements_leave_out_the_cuda_vision_audio_builds():
    reqs = [
        "torch==2.13.0+cpu",
        "torchvision; platform_machine != 'riscv64'",
        "torchaudio",
        "torchcodec>=0.14",
        "numba==0.65.0",
        'zentorch==2.13.0.1; extra == "zen"',
    ]
    assert vllm_cpu.wheel_requirements(reqs) == ["torch==2.13.0+cpu", "numba==0.65.0"]


def test_requirements_file_leaves_out_the_excluded_builds():
    names = {
        vllm_cpu.requirement_name(r) for r in vllm_cpu.requirements(PROJECT_ROOT / "vllm-cpu.txt")
    }
    assert not names & set(vllm_cpu.EXCLUDED)
    assert {"transformers", "numba", "intel-openmp"} <= names


def test_requirements_file_is_the_installed_wheels_metadata():
    try:
        requires = importlib.metadata.requires(vllm_cpu.DIST)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{vllm_cpu.DIST} is not installed here ({vllm_cpu.why_not() or 'VLLM_CPU=0'})")
    assert importlib.metadata.version(vllm_cpu.DIST) == vllm_cpu.VERSION
    assert vllm_cpu.requirements(PROJECT_ROOT / "vllm-cpu.txt") == vllm_cpu.wheel_requirements(
        requires
    )


def test_make_env_installs_the_pinned_wheel_without_its_dependencies():
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert f"--no-deps {vllm_cpu.DIST}=={vllm_cpu.VERSION}" in makefile
    assert "-r vllm-cpu.txt -c constraints.txt" in makefile
    assert "recode_lib.generation.vllm_cpu check" in makefile


def test_check_exits_zero_or_prints_the_reason(capsys):
    rc = vllm_cpu.main(["check"])
    out = capsys.readouterr().out
    assert (rc == 0 and out == "") or (rc == 1 and out.strip() == vllm_cpu.why_not())
    assert vllm_cpu.main([]) == 2
