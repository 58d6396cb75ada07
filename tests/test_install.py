"""The install as the README describes it: the torch wheel choice, one kernel name, `make lab`.

The Makefile is read with `make -n` (commands printed, nothing run or installed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from recode_lib.core.paths import PROJECT_ROOT
from recode_lib.runner.nbtools import KERNELSPEC

NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").glob("*.ipynb"))
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def make_n(*args: str) -> str:
    # an outer `make test ARGS=...` passes its variables down in MAKEFLAGS: not to this make
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "ARGS")}
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def torch_line(text: str) -> str:
    return next(line for line in text.splitlines() if "pip install -q torch==" in line)


@needs_make
def test_torch_comes_from_pypi_by_default_and_from_pytorchs_cpu_index_on_request(tmp_path):
    venv = str(tmp_path / "venv")  # not built: -n only prints the env target's commands
    assert torch_line(make_n("env", f"VENV={venv}", f"PYTHON={venv}/bin/python")).split() == [
        f"{venv}/bin/python",
        "-m",
        "pip",
        "install",
        "-q",
        "torch==2.13.0",
    ]
    assert torch_line(
        make_n("env", f"VENV={venv}", f"PYTHON={venv}/bin/python", "TORCH_INDEX=cpu")
    ).endswith("torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
    assert torch_line(
        make_n("env", f"VENV={venv}", f"PYTHON={venv}/bin/python", "TORCH_INDEX=cu130")
    ).endswith("--index-url https://download.pytorch.org/whl/cu130")
    assert torch_line(
        make_n(
            "env", f"VENV={venv}", f"PYTHON={venv}/bin/python", "TORCH_INDEX=file:///mirror/simple"
        )
    ).endswith("--index-url file:///mirror/simple")
    # the index applies to torch only: the project and its pins come from the usual indexes
    rest = [
        line
        for line in make_n(
            "env", f"VENV={venv}", f"PYTHON={venv}/bin/python", "TORCH_INDEX=cpu"
        ).splitlines()
        if "pip install" in line and "torch==" not in line
    ]
    assert rest and not any("--index-url" in line for line in rest)


def test_one_kernel_name_everywhere():
    assert KERNELSPEC == {"display_name": "Python (recode)", "language": "python", "name": "recode"}
    for nb in NOTEBOOKS:
        assert json.loads(nb.read_text())["metadata"]["kernelspec"] == KERNELSPEC, nb.name
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    assert re.search(r"^KERNEL\s*:= recode$", makefile, re.M)
    assert re.search(r"^KERNEL_DISPLAY := Python \(recode\)$", makefile, re.M)
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert 'kernel "Python (recode)"' in readme and "Python 3 (recode)" not in readme


@needs_make
def test_make_lab_uses_the_chosen_python_and_installs_the_kernel_there():
    lines = make_n("lab", "PYTHON=python", "LAB_UID=1000").splitlines()
    assert lines == [
        'python -m ipykernel install --sys-prefix --name recode --display-name "Python (recode)" '
        ">/dev/null",
        'if [ -n "" ]; then echo "make lab: running as root (a container?), so JupyterLab gets '
        '--allow-root"; fi',
        "python -m jupyter lab  notebooks/",
    ]


@needs_make
def test_make_lab_as_root_passes_allow_root_and_says_so():
    # JupyterLab refuses root without --allow-root ("Running as root is not recommended"), and
    # root is normal in the Docker container the README suggests off Linux
    text = make_n("lab", "PYTHON=python", "LAB_UID=0")
    assert "python -m jupyter lab --allow-root notebooks/" in text
    profile = make_n("lab", "PYTHON=python", "LAB_UID=0", "PROFILE=smoke")
    assert "python -m jupyter lab --allow-root runs/smoke/interactive/" in profile.replace(
        "${RECODE_RUNS_DIR:-runs}", "runs"
    )
    assert 'if [ -n "--allow-root" ]' in text


@needs_make
def test_reproduce_stops_first_off_linux():
    out = subprocess.run(
        ["make", "--no-print-directory", "reproduce", "UNAME=Darwin", "PYTHON=false"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0
    assert "needs Linux (namespaces, memfd_create, prctl), not Darwin" in out.stderr
    assert "model prepare" not in out.stdout  # nothing ran before the check


@needs_make
def test_make_figures_rebuilds_one_profile_without_a_gpu_plan():
    assert [
        line.strip() for line in make_n("figures", "PROFILE=paper", "PYTHON=python").splitlines()
    ] == ["python -m recode_lib reproduce --profile paper --only 99 --force --no-plan"]
