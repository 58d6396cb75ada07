"""docs/architecture.md's tree is the library's: every package and every root module of
recode_lib is named in it, and every package it names exists (so the map cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "recode_lib"


def tree_block() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"```\nrecode_lib/\n(.*?)```", text, re.S)
    assert m, "docs/architecture.md has no ```recode_lib/ ...``` tree block"
    return m.group(1)


def packages() -> set[str]:
    return {p.parent.name for p in LIB.glob("*/__init__.py")}


def root_modules() -> set[str]:
    return {p.stem for p in LIB.glob("*.py")} - {"__init__", "__main__"}


def test_every_package_is_in_the_tree():
    block = tree_block()
    missing = sorted(p for p in packages() if not re.search(rf"(?m)^\s*{p}/|\b{p}/", block))
    assert not missing, f"docs/architecture.md does not name the packages {missing}"


def test_every_root_module_is_in_the_tree():
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", tree_block()))
    missing = sorted(root_modules() - words)
    assert not missing, f"docs/architecture.md does not name the root modules {missing}"


def test_every_package_the_tree_names_exists():
    named = set(re.findall(r"(?m)^\s{2}([a-z_]+)/", tree_block()))
    gone = sorted(named - packages())
    assert not gone, f"docs/architecture.md names packages that do not exist: {gone}"
