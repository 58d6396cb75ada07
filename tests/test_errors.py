"""Every error class recode defines derives from RecodeError (recode_lib.core.errors) and keeps the
builtin base its callers catch; the CLI prints any RecodeError as one line with exit status 2.

The classes are found by reading the source (ast), so a new error class without the base fails
here; the sandbox harness (standard library only, it runs in the untrusted child) and the bare
GPU check (runs without recode installed) are the documented exceptions."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from recode_lib.core.errors import RecodeError

ROOT = Path(__file__).resolve().parent.parent / "recode_lib"
STANDALONE = {"sandbox/harness.py", "gpu_check_bare.py"}


def defined_error_classes():
    """(module, class name) of every public class whose bases look like exceptions."""
    import builtins

    builtin_exc = {
        n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)
    }
    out = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in STANDALONE:
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            names = {
                b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
            }
            if names & builtin_exc or any(n.endswith("Error") for n in names):
                module = "recode_lib." + rel[:-3].replace("/", ".").removesuffix(".__init__")
                out.append((module, node.name))
    return out


CLASSES = defined_error_classes()
EXEMPT = {
    ("recode_lib.runner.gpu_check", "Skip"),  # a check's "not applicable here", not an error
    ("recode_lib.core.errors", "Terminated"),
}  # SIGTERM as KeyboardInterrupt is SIGINT: control flow


def test_the_source_defines_error_classes():
    assert len(CLASSES) >= 25, CLASSES


@pytest.mark.parametrize(
    "module,name",
    [c for c in CLASSES if c not in EXEMPT],
    ids=[f"{m}.{n}" for m, n in CLASSES if (m, n) not in EXEMPT],
)
def test_every_error_class_is_a_recode_error(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, RecodeError), f"{module}.{name} does not derive from RecodeError"


def test_terminated_is_control_flow_like_keyboardinterrupt():
    from recode_lib.core.errors import Terminated

    assert issubclass(Terminated, BaseException) and not issubclass(Terminated, Exception)


def test_builtin_bases_are_kept():
    from recode_lib.core.jsonl import JsonlError
    from recode_lib.core.linux import LinuxRequired
    from recode_lib.core.plugins import PluginError
    from recode_lib.data.schema import ProblemError

    assert issubclass(JsonlError, ValueError) and issubclass(ProblemError, ValueError)
    assert issubclass(LinuxRequired, RuntimeError) and issubclass(PluginError, ImportError)


def test_cli_prints_a_recode_error_as_one_line(capsys, tmp_path):
    from recode_lib.cli import main

    bad = tmp_path / "params.yaml"
    bad.write_text("00_data_and_models: [not, a, mapping]\n")
    rc = main(["plan", "--profile", "paper", "--params", str(bad)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1 and err[0].startswith("recode plan: error:"), err
