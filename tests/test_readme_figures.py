"""The README's measured figures are the project's: every time (minutes, hours, "N min M s")
and every measured memory figure (GiB with a decimal) in a README paragraph that cites
docs/measured.md appears there too, so a figure cannot drift from its measurement (the README
once said ~87 min for a profile docs/measured.md had at 47.0). Budget figures are the plan's
(tests/test_plan.py)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURE = re.compile(r"(?<![\d.,])\d+(?:\.\d+)?(?: min \d+ s| min| h)\b|\d+\.\d+ GiB\b")


def cited_figures() -> list[tuple[str, str]]:
    """(figure, its paragraph's start) for every figure of a paragraph citing measured.md."""
    out = []
    for para in (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n"):
        if "measured.md" in para:
            out += [(m.group(0), para[:60]) for m in FIGURE.finditer(para)]
    return out


def test_the_readme_cites_measured_figures():
    assert len(cited_figures()) >= 5


def test_every_cited_figure_is_in_docs_measured():
    measured = (ROOT / "docs" / "measured.md").read_text(encoding="utf-8")
    missing = [
        f"{fig!r} (paragraph {where!r})" for fig, where in cited_figures() if fig not in measured
    ]
    assert not missing, "README figures not in docs/measured.md: " + "; ".join(missing)
