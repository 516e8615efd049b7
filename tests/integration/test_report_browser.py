"""The demo's report.html opened in a real headless Chromium.

Debian's ``chromium`` (``.ci/run`` installs it) driven through Playwright with
``executable_path``: no browser is downloaded. Outside CI a machine without chromium skips; in
CI (``CI`` set) it fails, so a missing browser can never pass silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.integration.conftest import DemoReport

pytestmark = pytest.mark.integration
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def page(demo_report: DemoReport) -> Iterator[tuple[Page, list[str]]]:
    """The report open in headless Chromium, with every console error and page error seen."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on PATH: .ci/run installs Debian's chromium")
        pytest.skip("no chromium on PATH (apt-get install chromium); CI fails here instead")
    errors: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_page()
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.goto((demo_report.out / "report.html").as_uri(), wait_until="load")
            yield tab, errors
        finally:
            browser.close()


def test_the_report_renders_without_errors(page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    banner = tab.locator("#verdict")
    assert banner.is_visible()
    assert "Verdict: NO-GO" in banner.inner_text()
    assert "fmha_v2/fp8_e4m3" in banner.inner_text()
    images: list[Any] = tab.evaluate(
        "Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth,"
        " i.getBoundingClientRect().height])"
    )
    assert len(images) == 4, images  # verdict grid, accuracy, paired change, accept length
    for alt, complete, width, height in images:
        assert complete and width > 100 and height > 50, f"plot {alt!r} did not render"
    assert tab.locator("#changed-questions").is_visible()
    assert errors == []


def test_every_link_resolves_and_the_questions_open(page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    hrefs: list[str] = tab.eval_on_selector_all(
        "a[href]", "as => as.map(a => a.getAttribute('href'))"
    )
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs  # a self-contained page
    missing = [h for h in hrefs if tab.locator(f"[id='{h[1:]}']").count() != 1]
    assert missing == []
    link = tab.locator("td.verdict a").first  # a verdict of the accuracy table
    target = str(link.get_attribute("href"))
    link.click()
    assert tab.evaluate("location.hash") == target
    view = tab.locator(f"[id='{target[1:]}']")
    assert view.is_visible() and tab.evaluate(
        "id => document.getElementById(id).getBoundingClientRect().top < innerHeight", target[1:]
    )
    first = tab.locator("table.changed details").first
    response = first.locator("pre").first
    assert not response.is_visible()  # folded until asked for
    first.locator("summary").click()
    assert response.is_visible() and "Answer:" in response.inner_text()
    assert errors == []
