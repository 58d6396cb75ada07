"""The run report (recode_lib.report) on a constructed tiny run folder: the page holds the
headline numbers, embeds the figures, marks what did not run with its path, and the comparison
shows deltas and overlays frontiers only under one evaluation spec."""

from __future__ import annotations

import json
import re

from report_helpers import make_run

from recode_lib.report import write_comparison, write_report
from recode_lib.report.run_view import read_run


def external_resources(html: str) -> list[str]:
    """src/href values that would load something from outside the file."""
    return [
        u
        for u in re.findall(r'(?:src|href)="([^"]+)"', html)
        if not (
            u.startswith("data:image/png;base64,")
            or u.startswith("#")
            or not re.match(r"^[a-z]+:", u)
        )
    ]


def test_the_page_holds_the_headline_numbers_figures_and_status(tmp_path):
    run = make_run(tmp_path, "smoke")
    path = write_report(run)
    assert path == run / "report.html"
    html = path.read_text()
    # ReCode's table: pass@1 with its CI, the average and the gain over outcome-only
    assert "0.625 [0.425, 0.825]" in html and "+25.0%" in html
    # paper B: sweep pass@1 with the CI from its eval summary, alpha rows with CI and Wilson
    assert "0.400 [0.300, 0.500]" in html  # 06 k1
    assert "0.400 [0.350, 0.450]" in html  # 07 alpha 0.0
    assert "0.600 [" in html  # 07 alpha 2.5 format errors, Wilson
    assert "0.550 [0.400, 0.700]" in html and "0.100 [0.020, 0.180]" in html  # 08 pool, gain
    # notebook status and time, the human step spelled out
    assert "awaiting_human" in html and "recode adjudicate X" in html
    assert "no claim at this scale" in html and "12.5" in html
    # figures: the profile's and the run folder's, embedded
    assert html.count("data:image/png;base64,") == 2
    assert "frontier.png" in html and "headline.png" in html
    # the tracker log folder is linked relative to the page, with the command to open it
    assert 'href="04_cg_grpo/gated/runs/Dec01_10-00-00_host"' in html
    assert f"tensorboard --logdir {run}" in html
    # provenance and claims
    assert "abc123" in html and "2.13.0" in html
    assert re.search(r"<td>extrapolation</td><td>[^<]*</td><td><b class=\"ok\">observed</b>", html)
    assert '<b class="muted">not measured</b>' in html  # learning: 04 did not run
    # what did not run: "not run" with the path looked for
    assert "not run" in html and str(run / "11_settings_sweep") in html
    assert "<script" not in html and external_resources(html) == []


def test_a_run_folder_with_nothing_finished_is_all_not_run_never_a_crash(tmp_path):
    run = tmp_path / "bare"
    (run / "00_data_and_models").mkdir(parents=True)  # a step started, nothing written
    html = write_report(run).read_text()
    for what in (
        "05_codegen_eval/headline.json",
        "06_strictness_sweep/frontier.json",
        "07_weight_averaging/frontier.json",
        "08_ensemble_passk/passk.json",
        "manifest.json",
    ):
        assert str(run / what) in html, what
    assert "no figures" in html and "no tracker logs" in html


def test_a_folder_that_is_not_a_run_folder_is_refused_with_the_reason(tmp_path, capsys):
    from recode_lib.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["report", str(empty)]) == 2
    assert "is not a run folder" in capsys.readouterr().err
    assert not (empty / "report.html").exists()
    parent = tmp_path / "runs"  # `recode report runs`: names the runs inside
    make_run(parent, "smoke")
    assert main(["report", str(parent)]) == 2
    err = capsys.readouterr().err
    assert "is not a run folder" in err and str(parent / "smoke") in err


def test_a_corrupt_manifest_is_named_as_corrupt(tmp_path, capsys):
    from recode_lib.cli import main

    run = make_run(tmp_path, "smoke")
    (run / "manifest.json").write_text('{"00_data_and_models": {"status": ')
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"{run / 'manifest.json'} is corrupt" in err and err.count("\n") == 1


def test_a_step_whose_latest_run_failed_shows_the_failure_not_its_old_numbers(tmp_path):
    run = make_run(tmp_path, "smoke")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["05_codegen_eval"] = {
        **manifest.get("05_codegen_eval", {}),
        "status": "failed",
        "error": "notebook 05 failed in cell 7: OOM",
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    view = read_run(run)
    assert "missing" in view["headline"] and "latest run is failed" in view["headline"]["why"]
    assert "cell 7: OOM" in view["headline"]["why"]
    html = write_report(run).read_text()
    assert "latest run is failed" in html


def test_the_comparison_headers_tell_two_runs_of_one_profile_apart(tmp_path):
    a = make_run(tmp_path / "mine", "smoke")
    b = make_run(tmp_path / "theirs", "smoke", shift=0.1)
    html = write_comparison(a, b, tmp_path / "c.html").read_text()
    assert "mine/smoke" in html and "theirs/smoke" in html


def test_an_unreadable_result_file_says_why(tmp_path):
    run = make_run(tmp_path, "smoke")
    (run / "08_ensemble_passk" / "passk.json").write_text("{not json")
    (run / "07_weight_averaging" / "frontier.json").write_text(json.dumps({"rows": [{"x": 1}]}))
    html = write_report(run).read_text()
    assert "unreadable" in html and "could not be read: KeyError" in html


def test_the_comparison_shows_deltas_and_overlays_matching_frontiers(tmp_path):
    a = make_run(tmp_path, "smoke")
    b = make_run(tmp_path / "other", "laptop", shift=0.125)
    path = write_comparison(a, b)
    assert path == a / "compare-laptop.html"
    html = path.read_text()
    assert "+0.125" in html  # every pass@1 moved by 0.125
    assert "both evaluated under one protocol" in html
    assert "same evaluation spec (fingerprint fp-a): overlaid" in html
    assert html.count("data:image/png;base64,") == 2  # the 06 and 07 overlays
    assert "refused:" not in html
    assert re.search(r"07_weight_averaging: \d+ numbers in both", html)  # other steps' deltas
    assert "06_strictness_sweep: no numbers in both" in html  # its latest run failed
    assert "latest run is failed" in html
    assert external_resources(html) == []


def test_a_mismatching_evaluation_spec_is_refused_with_its_reason(tmp_path):
    a = make_run(tmp_path, "smoke")
    b = make_run(tmp_path / "other", "paper", fingerprint="fp-b", temperature=1.0)
    html = write_comparison(a, b).read_text()
    assert "refusing to overlay frontier points sampled differently" in html
    assert "fp-a" in html and "fp-b" in html and "temperature" in html
    assert "data:image/png;base64," not in html  # nothing overlaid
    assert "each delta mixes the change of sampling protocol" in html  # 05 protocols differ
    assert "+0.000" in html  # the deltas are still shown


def test_a_missing_side_of_the_comparison_is_not_run_with_its_path(tmp_path):
    a = make_run(tmp_path, "smoke")
    b = tmp_path / "empty"
    (b / "00_data_and_models").mkdir(parents=True)  # a run that has only begun
    html = write_comparison(a, b).read_text()
    assert str(b / "07_weight_averaging" / "frontier.json") in html
    assert str(b / "05_codegen_eval" / "headline.json") in html


def test_read_run_reads_the_manifest_protocols_and_trackers(tmp_path):
    view = read_run(make_run(tmp_path, "smoke"))
    status = {r["notebook"]: r["status"] for r in view["notebooks"]}
    assert status["00_data_and_models"] == "completed" and status["03_lcb_rb"] == "awaiting_human"
    assert status["10_math_domain"] == "not run"
    assert (
        len(set(view["headline_protocols"].values())) == 1 and len(view["headline_protocols"]) == 2
    )
    assert [t["relative"] for t in view["trackers"]] == [
        "04_cg_grpo/gated/runs/Dec01_10-00-00_host"
    ]


def test_recode_report_cli(tmp_path, capsys):
    from recode_lib.cli import main

    run = make_run(tmp_path, "smoke")
    assert main(["report", str(run), "--out", str(tmp_path / "r.html")]) == 0
    assert capsys.readouterr().out.strip() == f"report: {tmp_path / 'r.html'}"
    assert main(["report", str(tmp_path / "nosuch")]) == 2
    assert "no run folder" in capsys.readouterr().err
