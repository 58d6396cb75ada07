"""The README's measured figures are the project's: every time (minutes, hours, "N min M s")
and every measured memory figure (GiB with a decimal) in a README paragraph that cites
docs/measured.md appears there too, so a figure cannot drift from its measurement (the README
once said ~87 min for a profile docs/measured.md had at 47.0). Where a figure comes from is
explicit for the quickstart (QUICKSTART_ROWS: each line's figures are in the row it quotes) and
for the laptop run (LAPTOP_RUN: its per-notebook minutes, total and largest process are computed
from that table). Budget figures are the plan's (tests/test_plan.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


# --- explicit mappings: which measured.md row each README figure comes from, and how ------------

MEASURED = ROOT / "docs" / "measured.md"
# the measured.md table behind the README's laptop figures (47.0 min, per notebook, 5.96 GiB)
LAPTOP_RUN = "**Cold, with the shown + hidden SFT start**"
# a README quickstart line (its command) -> the measured.md row its figures come from (the row's
# first cell starts so); each figure on the line must be in that row
QUICKSTART_ROWS = {
    "make env TORCH_INDEX=cpu": "| `make env` (fresh clone",
    "make test": "| `make test` on 2 pytest-xdist workers",
    "make reproduce": "| `make reproduce` (smoke), all 13 notebooks, cold",
}


def table_after(marker: str) -> dict[str, list[str]]:
    """The first markdown table after `marker` in docs/measured.md: {first cell: other cells}
    (header and rule rows dropped)."""
    text = MEASURED.read_text(encoding="utf-8")
    assert marker in text, f"docs/measured.md: {marker!r} not found"
    rows, started = {}, False
    for line in text[text.index(marker) :].splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set(cells[0]) <= set("-: ") and not cells[0].startswith("notebook"):
                rows[cells[0]] = cells[1:]
        elif started:
            break
    return rows


def quickstart_line(command: str) -> str:
    block = re.search(r"## Quickstart: a CPU laptop\n\n```bash\n(.*?)```", readme_text(), re.S)
    lines = [ln for ln in block.group(1).splitlines() if ln.split(" #")[0].strip() == command]
    assert len(lines) == 1, f"README quickstart: no single `{command}` line"
    return lines[0]


def readme_text() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", sorted(QUICKSTART_ROWS))
def test_each_quickstart_figure_is_in_the_measured_row_it_quotes(command):
    figures = FIGURE.findall(quickstart_line(command).split(" #", 1)[1])
    rows = [
        ln
        for ln in MEASURED.read_text(encoding="utf-8").splitlines()
        if ln.startswith(QUICKSTART_ROWS[command])
    ]
    assert len(rows) == 1, f"docs/measured.md: no single row {QUICKSTART_ROWS[command]!r}"
    assert figures, f"README: `{command}` quotes no figure"
    missing = [f for f in figures if f not in rows[0]]
    assert not missing, f"README `{command}`: {missing} not in its measured.md row"


def test_the_readme_laptop_times_per_notebook_are_the_measured_run_in_minutes():
    """The laptop paragraph's "47.0 min ... (04 13 min, 00 10 min, 06 9 min, 11 8 min; ...)"
    and "largest process 5.96 GiB": the LAPTOP_RUN table's wall seconds per notebook rounded
    to minutes, the longest notebooks longest first, their sum, and the largest peak."""
    readme = readme_text()
    m = re.search(
        r"\*\*(\d+\.\d) min\*\* on 2 cores[^(]*\(((?:\d\d \d+ min, )*\d\d \d+ min);", readme
    )
    assert m, "README: the laptop paragraph's per-notebook times not found"
    total, listed = m.group(1), re.findall(r"(\d\d) (\d+) min", m.group(2))
    rows = table_after(LAPTOP_RUN)
    wall = {nb: float(cells[0]) for nb, cells in rows.items()}
    peak = max(float(cells[1].strip("*")) for cells in rows.values())
    assert len(listed) >= 3
    for nb, minutes in listed:
        assert int(minutes) == round(wall[nb] / 60), (
            f"README: {nb} {minutes} min, measured {wall[nb]} s"
        )
    assert [nb for nb, _ in listed] == sorted(wall, key=wall.get, reverse=True)[: len(listed)]
    assert total == f"{sum(wall.values()) / 60:.1f}", (total, sum(wall.values()))
    assert f"largest process {peak:.2f} GiB" in readme[m.start() : m.start() + 1500]
    assert f"{total} min" in quickstart_line("make reproduce PROFILE=laptop")
    measured = MEASURED.read_text(encoding="utf-8")
    after = measured[measured.index(LAPTOP_RUN) :]
    assert f"**{total} min**" in after[:3000], "measured.md states another total under the table"
