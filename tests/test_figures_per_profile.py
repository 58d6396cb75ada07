"""Figures per profile: each profile's figures in figures/<profile>/, never mixed with another's.

The path function (recode_lib.core.paths.figures_dir), the plotting entry point (plots.rebuild_all,
what notebook 99 and `make figures PROFILE=...` run) on tiny result files of two profiles, and
the removal of a figure that a rebuild now skips.
"""

from __future__ import annotations

import pytest

from recode_lib.analysis import frontier as F
from recode_lib.analysis import plots
from recode_lib.core import paths
from recode_lib.core.jsonl import write_jsonl_atomic


def test_each_profile_has_its_own_figures_folder(tmp_path):
    smoke, paper = paths.figures_dir("smoke"), paths.figures_dir("paper")
    assert smoke == paths.PROJECT_ROOT / "figures" / "smoke" and smoke != paper
    assert smoke.parent == paper.parent == paths.FIGURES_ROOT
    assert not smoke.is_relative_to(paper) and not paper.is_relative_to(smoke)
    assert paths.figures_dir("laptop", tmp_path) == tmp_path / "laptop"
    assert not (tmp_path / "laptop").exists()
    assert paths.figures_dir("laptop", tmp_path, create=True).is_dir()
    for bad in ("", ".", "..", "a/b", "../paper"):
        with pytest.raises(ValueError, match="not a profile name"):
            paths.figures_dir(bad)


def _frontier(run):
    samples = {
        a: [{"problem_id": "p", "sample": 0, "outcome": o}]
        for a, o in ((0.0, "correct"), (1.0, "optimization_failure"))
    }
    F.write_frontier(run / "07_weight_averaging", samples)


def _curves(run):
    write_jsonl_atomic(
        run / "04_cg_grpo" / "gated" / "metrics.jsonl",
        [{"step": s, "reward": 0.1 * s, "gated/out": 0.1 * s} for s in (1, 2, 3)],
    )


def _files(folder):
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def test_two_profiles_figures_do_not_mix_and_a_skipped_figure_leaves_no_old_file(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(paths, "FIGURES_ROOT", tmp_path / "figures")  # not the checkout's
    runs = tmp_path / "runs"
    _frontier(runs / "smoke")  # smoke: frontier + outcome classes, no curves
    _curves(runs / "paper")  # paper: reward curves only

    smoke = plots.rebuild_all(runs / "smoke")  # default: figures/<run folder name>/
    paper = plots.rebuild_all(runs / "paper")
    assert smoke["out_dir"] == str(tmp_path / "figures" / "smoke")
    assert paper["out_dir"] == str(tmp_path / "figures" / "paper")
    assert set(smoke["made"]) == {"frontier", "outcome_classes"}
    assert set(paper["made"]) == {"reward_curves"}
    assert _files(tmp_path / "figures" / "smoke") == {
        "frontier.pdf",
        "frontier.png",
        "outcome_classes.pdf",
        "outcome_classes.png",
    }
    assert _files(tmp_path / "figures" / "paper") == {"reward_curves.pdf", "reward_curves.png"}
    assert _files(tmp_path / "figures") == {"smoke", "paper"}  # nothing loose beside them

    # the paper run loses its curves and gains a frontier: the rebuild holds exactly that
    (runs / "paper" / "04_cg_grpo" / "gated" / "metrics.jsonl").unlink()
    _frontier(runs / "paper")
    again = plots.rebuild_all(runs / "paper")
    assert set(again["made"]) == {"frontier", "outcome_classes"}
    assert "reward_curves" in again["skipped"]
    assert {p.rsplit("/", 1)[1] for p in again["removed"]} == {
        "reward_curves.pdf",
        "reward_curves.png",
    }
    assert _files(tmp_path / "figures" / "paper") == _files(tmp_path / "figures" / "smoke")
    assert plots.rebuild_all(runs / "smoke")["removed"] == []  # smoke untouched by paper's


def test_a_figure_drawn_by_hand_goes_to_scratch_not_beside_the_profiles(tmp_path, monkeypatch):
    _frontier(tmp_path / "run")
    monkeypatch.setattr(plots, "SCRATCH_DIR", tmp_path / "figures" / "scratch")
    files = plots.fig_outcome_classes(tmp_path / "run" / "07_weight_averaging" / "frontier.json")
    assert {p.parent for p in files} == {tmp_path / "figures" / "scratch"}
    assert plots.SCRATCH_DIR.parent.name == "figures" and plots.SCRATCH_DIR.name == "scratch"


def test_notebook_99_writes_into_the_profiles_folder():
    """The notebook builds its folder with figures_dir(PROFILE, ...) unless FIGURES_DIR is 'run',
    and every shipped profile that writes to figures/ gets its own subfolder."""
    import json

    import yaml

    nb = json.loads((paths.PROJECT_ROOT / "notebooks" / "99_paper_figures.ipynb").read_text())
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "paths.figures_dir(PROFILE, paths.PROJECT_ROOT / FIGURES_DIR)" in code
    for profile in ("smoke", "laptop", "paper"):
        params = yaml.safe_load(
            (paths.PROJECT_ROOT / "notebooks" / "params" / f"{profile}.yaml").read_text()
        )
        assert params["99_paper_figures"]["FIGURES_DIR"] == "figures", profile
