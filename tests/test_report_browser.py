"""The run report and the comparison page in a real headless chromium.

Marker `browser` (`make test-browser`; CI installs Debian's chromium and Playwright for Python).
Each page of a constructed tiny run (tests/report_helpers.py) is opened from disk (file://):
no console error and no page error, every <img> loaded (complete, naturalWidth > 0), and a
full-page screenshot written to a tmp path. Skips, naming what is missing, without chromium or
playwright; Playwright's own browser download is never used (it launches /usr/bin/chromium or
$RECODE_CHROMIUM).
"""

from __future__ import annotations

import os
import shutil

import pytest
from report_helpers import make_run

from recode_lib.report import write_comparison, write_report

pytestmark = pytest.mark.browser

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


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


def _check_page(browser, path, shot) -> dict:
    """Open path; return console errors, page errors, the images and whether all loaded."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    images = page.evaluate(
        "() => Array.from(document.images).map(i => "
        "({alt: i.alt, complete: i.complete, width: i.naturalWidth}))"
    )
    page.screenshot(path=str(shot), full_page=True)
    title = page.title()
    page.close()
    return {
        "errors": errors,
        "images": images,
        "title": title,
        "external": [u for u in requests if not u.startswith(("file:", "data:"))],
    }


def test_report_and_comparison_load_cleanly_in_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    exe = _chromium()
    a = make_run(tmp_path, "smoke")
    b = make_run(tmp_path / "other", "laptop", shift=0.125)
    pages = {"report": write_report(a), "compare": write_comparison(a, b)}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            seen = {
                name: _check_page(browser, path, tmp_path / f"{name}.png")
                for name, path in pages.items()
            }
        finally:
            browser.close()
    for name, s in seen.items():
        assert s["errors"] == [], f"{name}: console errors {s['errors']}"
        assert s["external"] == [], f"{name}: requests outside the file {s['external']}"
        assert len(s["images"]) == 2, f"{name}: images {s['images']}"
        assert all(i["complete"] and i["width"] > 0 for i in s["images"]), f"{name}: {s['images']}"
        shot = tmp_path / f"{name}.png"
        assert shot.is_file() and shot.stat().st_size > 10_000, f"{name}: screenshot {shot}"
    assert seen["report"]["title"] == "Run report: smoke"
    # the headers name each run by parent/name, its last finished date and git hash
    title = seen["compare"]["title"]
    assert title.startswith("Run comparison: ") and "/smoke (" in title and "/laptop (" in title
    assert title.endswith("(B)") and "git abc123" in title
