"""The lint that CI runs is the one contributors run: `make lint` checks ruff's rules and ruff's
formatting and the notebooks, CI runs it before the tests, and the pre-commit hooks use the
ruff version the dev extra pins (a formatter of another version formats differently)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_make_lint_checks_rules_formatting_and_notebooks():
    recipe = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "ruff check $(LINT_PATHS)" in recipe and "ruff format --check $(LINT_PATHS)" in recipe
    assert "nbtools check notebooks/*.ipynb" in recipe
    assert re.search(
        r"^LINT_PATHS := recode_lib tests benchmarks$", (ROOT / "Makefile").read_text(), re.M
    )


def test_ci_lints_before_the_tests():
    assert "time make lint\ntime make test\n" in (ROOT / ".ci" / "run").read_text()


def test_pre_commit_uses_the_pinned_ruff():
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    [pin] = [d for d in dev["dev"] if d.startswith("ruff")]
    repos = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"]
    [ruff] = [r for r in repos if r["repo"].endswith("/ruff-pre-commit")]
    assert pin == f"ruff=={ruff['rev'].removeprefix('v')}"
    assert {h["id"] for h in ruff["hooks"]} == {"ruff-check", "ruff-format"}
    [local] = [r for r in repos if r["repo"] == "local"]
    assert local["hooks"][0]["entry"] == "python -m recode_lib.runner.nbtools check"


def test_no_module_docstring_runs_over_30_lines():
    """A module docstring says what the module does and does not in a few lines; long
    explanations live in docs/ (docs/modules/<package>.md holds those moved out)."""
    long = {}
    for path in sorted((ROOT / "recode_lib").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if doc and doc.count("\n") + 1 > 30:
            long[str(path.relative_to(ROOT))] = doc.count("\n") + 1
    assert not long, f"module docstrings over 30 lines (move the detail to docs/): {long}"
