"""The report in a real browser: headless Chromium opens it with no console error, every
image decoded, nothing fetched but the file itself, and a screenshot that shows something.

`make test` installs Debian's `chromium` package when it is missing (as root); the tests skip
only where no Chromium can be found (AQMLAB_CHROMIUM may name one)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from chromium_support import Chromium, find_chromium, png_size
from PIL import Image
from report_support import WEB_BASE, WEB_SWEEP, make_study

from aqmlab.report import write_report

WIDTH, HEIGHT = 1280, 900


@pytest.fixture(scope="module")
def browser():
    binary = find_chromium()
    if binary is None:
        pytest.skip("no Chromium found (install Debian's chromium package; `make test` does)")
    b = Chromium(binary)
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    one_rep = WEB_SWEEP.replace("repetitions = 2", "repetitions = 1")
    study = make_study(tmp_path_factory.mktemp("browser"), one_rep, WEB_BASE)
    return write_report(study)


def test_the_report_opens_cleanly_in_chromium(browser, report, tmp_path):
    page = browser.open(report, WIDTH, HEIGHT)
    assert page.console_errors == []
    assert page.failed_requests == []
    assert len(page.images) >= 6
    assert all(complete and w > 0 and h > 0 for complete, w, h in page.images), page.images
    # Only the file itself is loaded; its images are inline data.
    assert {url.split(":", 1)[0] for url in page.requests} <= {"file", "data"}
    assert report.as_uri() in page.requests

    (tmp_path / "screenshot.png").write_bytes(page.screenshot_png)
    assert png_size(page.screenshot_png) == (WIDTH, HEIGHT)
    shot = Image.open(io.BytesIO(page.screenshot_png)).convert("RGB")
    counts = {color: n for n, color in shot.getcolors(maxcolors=WIDTH * HEIGHT)}
    # The first screen holds the title, text and the first response-time CDFs: the curves of
    # both schemes drawn in their colours (tab:blue, tab:orange), and many other shades.
    assert counts.get((31, 119, 180), 0) > 100 and counts.get((255, 127, 14), 0) > 100
    assert len(counts) > 200
    assert counts.get((255, 255, 255), 0) < 0.95 * WIDTH * HEIGHT


def test_the_browser_check_sees_broken_images_and_errors(browser, tmp_path):
    """The same checks fail on a page that has the faults they look for."""
    page_file = tmp_path / "broken.html"
    page_file.write_text(
        '<!DOCTYPE html><html><body><img src="data:image/png;base64,iVBORw0KGgo=">'
        '<img src="missing.png"><script>console.error("boom")</script></body></html>',
        encoding="utf-8",
    )
    page = browser.open(page_file, 400, 300)
    assert any("boom" in e for e in page.console_errors)
    assert page.failed_requests  # missing.png
    assert not any(complete and w > 0 for complete, w, _h in page.images)


def test_the_household_report_opens_cleanly_in_chromium(browser, tmp_path):
    """issue 37: the household pack's report (smoke scale) in a real browser."""
    from aqmlab.reproduce import reproduce

    outcome = reproduce("household", "smoke", tmp_path / "hh", jobs=2, quiet=True)
    page = browser.open(outcome.report, WIDTH, HEIGHT)
    assert page.console_errors == []
    assert page.failed_requests == []
    assert len(page.images) >= 2  # a delay figure per part and plan
    assert all(complete and w > 0 and h > 0 for complete, w, h in page.images), page.images
    assert {url.split(":", 1)[0] for url in page.requests} <= {"file", "data"}
