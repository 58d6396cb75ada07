"""tests/long_tests.txt and the make targets that split the suite on it: every listed id names
a test that exists, `make test` and `make test-long` together select exactly pyproject's
default selection (so CI, running both, still runs every test), the marking rule, and the
pytest-xdist work units (tests/conftest.py)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import USERNS_FILES, is_listed, long_test_ids, xdist_unit

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("nodeid", long_test_ids())
def test_every_listed_long_test_exists(nodeid):
    path, _, rest = nodeid.partition("::")
    source = (ROOT / path).read_text()  # FileNotFoundError names a moved file
    name = re.sub(r"\[.*$", "", rest.split("::")[-1])
    assert not name or re.search(rf"^\s*(async )?def {re.escape(name)}\(", source, re.M), (
        f"tests/long_tests.txt: {nodeid} names no test in {path}"
    )


def test_a_listed_id_names_its_test_its_parameters_and_its_file():
    ids = ["tests/a.py::test_x", "tests/b.py::test_y[p1]", "tests/c.py"]
    assert is_listed("tests/a.py::test_x", ids) and is_listed("tests/a.py::test_x[q]", ids)
    assert is_listed("tests/b.py::test_y[p1]", ids) and not is_listed("tests/b.py::test_y[p2]", ids)
    assert is_listed("tests/c.py::test_z", ids)
    assert not is_listed("tests/a.py::test_x_other", ids)  # a longer name is another test
    assert not is_listed("tests/a.pyc::test_x", ids)


def test_make_test_and_test_long_split_the_default_selection():
    default = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
        "addopts"
    ]
    base = re.search(r"-m '([^']*)'", default).group(1)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "ARGS")}
    lines = subprocess.run(
        ["make", "-s", "-n", "test", "test-long", "PYTHON=python"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    runs = [ln for ln in lines if "pytest" in ln]
    marks = [re.search(r'-m "([^"]*)"', ln).group(1) for ln in runs]
    assert marks == [f"{base} and not long", f"{base} and long"]
    # as root both run on 2 pytest-xdist workers (`make test` within 3 minutes on 2 cores),
    # as a normal user serially (the userns tests share one user's process count)
    for ln in runs:
        assert ("-n 2 --dist loadfile" in ln) == (os.getuid() == 0), ln
    assert "time make test\ntime make test-long\n" in (ROOT / ".ci" / "run").read_text()


def test_xdist_units_keep_a_file_together_and_every_userns_file_in_one():
    assert {"test_sandbox_userns.py", "test_sandbox_hostile_userns.py"} <= USERNS_FILES
    assert xdist_unit("tests/test_enums.py::test_a[1]", as_root=True) == "tests/test_enums.py"
    assert xdist_unit("tests/test_sandbox_userns.py::test_b", as_root=True) == "userns"
    assert xdist_unit("tests/test_sandbox_hostile_userns.py::test_c", as_root=True) == "userns"
    # a normal user's sandbox is in userns mode everywhere: one unit, so one worker
    assert xdist_unit("tests/test_enums.py::test_a[1]", as_root=False) == "userns"
