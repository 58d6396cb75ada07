"""The LCB-RB adjudication widget in a real JupyterLab, clicked by a headless browser.

Marker `browser` (`make test-browser`; CI installs Debian's chromium and Playwright for Python).
A JupyterLab server starts on a free localhost port with a token; chromium opens a small notebook
that shows recode_lib.process_reward.lcbrb.adjudication.adjudication_widget on a three-pair
LCB-RB fixture; the test clicks Accept and Swap, checks each decision is in the decisions file at
once, restarts the kernel and reloads the page (both decisions still there, the widget resumes at
the third, undecided pair), decides it, and builds the benchmark: all three pairs are counted as
human-verified and the file gets the verified name. Skips, naming what is missing, without
chromium or playwright. Playwright's own browser download is never used: it launches
/usr/bin/chromium (or $RECODE_CHROMIUM).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 90_000


def _chromium() -> str:
    exe = (
        os.environ.get("RECODE_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not exe:
        pytest.skip(
            "chromium not installed (Debian: apt-get install -y chromium; or set RECODE_CHROMIUM)"
        )
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip(
            "playwright not installed (pip install -e '.[browser]'; do not run "
            "`playwright install`: the test uses the system chromium)"
        )
    return exe


def _kept_pairs() -> list[dict]:
    """Three candidate pairs as dual_consistency stores them (status kept)."""
    out = []
    for i in range(3):
        out.append(
            {
                "id": f"fx/{i}|fx/{i}#0|fx/{i}#1",
                "problem_id": f"fx/{i}",
                "source": "fx",
                "prompt": f"Problem {i}: add two numbers.",
                "better": f"Reasoning {i}: add a and b.\n"
                "```python\ndef f(a, b):\n    return a + b\n```",
                "worse": f"Reasoning {i}: subtract.\n"
                "```python\ndef f(a, b):\n    return a - b\n```",
                "better_code": "",
                "worse_code": "",
                "better_verdict": {"outcome": "correct", "passed": 3, "total": 3},
                "worse_verdict": {"outcome": "correctness_failure", "passed": 1, "total": 3},
                "status": "kept",
                "reason": "",
                "consistency": {"better": True, "worse": True, "verified": True},
            }
        )
    return out


NOTEBOOK_CODE = """from IPython.display import display
from recode_lib.core.jsonl import read_jsonl
from recode_lib.process_reward.lcbrb.adjudication import DecisionStore, adjudication_widget
kept = read_jsonl("kept.jsonl")
display(adjudication_widget(kept, DecisionStore("adjudication.jsonl")))"""


def _write_notebook(path: Path) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(NOTEBOOK_CODE)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server in tmp_path: (base url, token, folder); stopped afterwards."""
    exe = _chromium()
    work = tmp_path / "work"
    work.mkdir()
    (work / "kept.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _kept_pairs()))
    _write_notebook(work / "adjudicate.ipynb")
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
        JUPYTER_CONFIG_DIR=str(tmp_path / "jcfg"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "jrt"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "jsettings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "jws"),
    )
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--expose-app-in-browser",
            f"--port={port}",
            "--ip=127.0.0.1",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={work}",
            "--ServerApp.port_retries=0",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
        ]
        + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        cwd=work,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(
                        "JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:]
                    )
                time.sleep(0.5)
        yield base, token, work, exe
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _decisions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait_for(cond, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _run_notebook(page, base, token):
    """Open the notebook, run its cell, return the widget's header locator once it shows."""
    page.goto(f"{base}/lab/tree/adjudicate.ipynb?token={token}", wait_until="domcontentloaded")
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
        "window.jupyterapp.shell.currentWidget.sessionContext && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session && "
        "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
        timeout=WAIT_MS,
    )
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext"
        ".session.kernel.status === 'idle'",
        timeout=WAIT_MS,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".jp-OutputArea button", has_text="Accept").wait_for(timeout=WAIT_MS)


def _header(page) -> str:
    return page.locator(".jp-OutputArea .widget-html-content").first.inner_text()


def test_widget_decisions_are_saved_resumable_and_verified(lab):
    from playwright.sync_api import sync_playwright

    from recode_lib.core.jsonl import read_jsonl
    from recode_lib.process_reward.lcbrb.adjudication import DecisionStore
    from recode_lib.process_reward.lcbrb.benchmark import benchmark_rows, write_benchmark

    base, token, work, exe = lab
    ids = [p["id"] for p in _kept_pairs()]
    store_file = work / "adjudication.jsonl"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            _run_notebook(page, base, token)
            assert _header(page).startswith(f"1/3 {ids[0]}")
            button = {
                n: page.locator(".jp-OutputArea button", has_text=n)
                for n in ("Accept", "Reject", "Swap", "Skip")
            }
            # each click is in the file at once
            button["Accept"].click()
            _wait_for(lambda: len(_decisions(store_file)) == 1, "the first decision on disk")
            _wait_for(lambda: _header(page).startswith(f"2/3 {ids[1]}"), "the second pair")
            button["Swap"].click()
            recs = _wait_for(
                lambda: (r := _decisions(store_file)) and len(r) == 2 and r,
                "the second decision on disk",
            )
            assert [(r["pair_id"], r["decision"], r["by"]) for r in recs] == [
                (ids[0], "accept", "human"),
                (ids[1], "swap", "human"),
            ]
            # restart the kernel, reload the page: the widget resumes at the undecided pair
            page.evaluate(
                "() => window.jupyterapp.shell.currentWidget.sessionContext"
                ".session.kernel.restart()"
            )
            page.reload(wait_until="domcontentloaded")
            _run_notebook(page, base, token)
            _wait_for(lambda: _header(page).startswith(f"1/1 {ids[2]}"), "the resumed widget")
            page.locator(".jp-OutputArea button", has_text="Accept").click()
            _wait_for(lambda: len(_decisions(store_file)) == 3, "the third decision on disk")
            _wait_for(lambda: _header(page).startswith("Done"), "the widget to finish")
        finally:
            browser.close()
    # the benchmark build counts all three as human-verified; the swap exchanged the sides
    decisions = DecisionStore(store_file).decisions()
    rows, counts = benchmark_rows(read_jsonl(work / "kept.jsonl"), decisions)
    assert counts == {"adjudication:accept:human": 2, "adjudication:swap:human": 1}
    path, meta = write_benchmark(rows, work, version="t")
    assert path.name == "lcb_rb-vt.jsonl" and meta["verified"] is True
    assert meta["human_verified"] == 3 and meta["consistency_only"] == 0
    swapped = next(r for r in rows if r["id"] == ids[1])
    assert (
        swapped["better"].startswith("Reasoning 1: subtract") and swapped["verification"] == "human"
    )
