"""The demo's report.html opened in a real headless Chromium, as a reader reads it.

Debian's ``chromium`` (``.ci/run`` installs it) driven through Playwright with
``executable_path``: no browser is downloaded. Outside CI a machine without chromium skips; in
CI (``CI`` set) it fails, so a missing browser can never pass silently.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, sync_playwright

from tests.helpers.sample_rewrites import INJECTED, rewritten_report, with_markup
from tests.integration.conftest import DemoReport

pytestmark = [pytest.mark.integration, pytest.mark.browser]  # `make test-services`
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _opened(report: Path) -> Iterator[tuple[Page, list[str]]]:
    """``report`` open in headless Chromium, with every console error, page error and dialog."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on PATH: .ci/run installs Debian's chromium")
        pytest.skip("no chromium on PATH (apt-get install chromium); CI fails here instead")
    errors: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
            tab.goto((report / "report.html").as_uri(), wait_until="load")
            yield tab, errors
        finally:
            browser.close()


@pytest.fixture
def page(demo_report: DemoReport) -> Iterator[tuple[Page, list[str]]]:
    """The demo's report open in headless Chromium."""
    yield from _opened(demo_report.out)


@pytest.fixture
def marked_up_page(demo_report: DemoReport, tmp_path: Path) -> Iterator[tuple[Page, list[str]]]:
    """The demo moved elsewhere, markup in its questions and replies, reported and opened."""
    yield from _opened(rewritten_report(demo_report.sweep, tmp_path / "moved", with_markup))


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
    first = tab.locator("table.changed td.right details, table.changed td.wrong details").first
    response = first.locator("pre").first
    assert not response.is_visible()  # folded until asked for
    first.locator("summary").click()
    assert response.is_visible() and "Answer:" in response.inner_text()
    assert errors == []


SCREENSHOT = Path("/tmp/mtp-eval-questions-view.png")  # for a person to look at after a run


def test_a_changed_question_reads_as_a_reader_needs(page: tuple[Page, list[str]]) -> None:
    tab, errors = page
    view = tab.locator("h3", has_text="fmha_v2/fp8_e4m3").locator(
        "xpath=following-sibling::table[1]"
    )
    headers = view.locator("th").all_inner_texts()
    assert headers[:5] == ["question", "gold", "repeat", "baseline", "candidate"], headers
    first = view.locator("tr.first").first
    first.scroll_into_view_if_needed()
    text = first.locator(".qtext")
    assert text.is_visible() and text.inner_text().endswith("?")  # the question itself
    options = first.locator("ul li").all_inner_texts()
    gold = first.locator("td").nth(1).inner_text()
    assert len(options) == 4 and f"{gold} ✓" in options  # the right option, marked
    # Repeat 0: each side's letter and the option it names, in a cell of its own.
    baseline, candidate = (first.locator("td").nth(i).inner_text() for i in (3, 4))
    for said in (baseline, candidate):
        letter, _, option = said.split("\n")[0].partition(" = ")
        assert letter in "ABCD" and option.rstrip(" ✓✗") in [o.rstrip(" ✓") for o in options]
    # The table fits the page: a reader scrolls down, never sideways.
    assert tab.evaluate("document.documentElement.scrollWidth <= innerWidth")
    tab.screenshot(path=str(SCREENSHOT))
    assert errors == []


def test_markup_in_questions_and_replies_stays_text(
    marked_up_page: tuple[Page, list[str]],
) -> None:
    tab, errors = marked_up_page
    assert tab.evaluate("window.injected === undefined")
    assert tab.evaluate("document.scripts.length") == 0
    view = tab.locator("table.changed").last
    shown = view.locator(".qtext").first.inner_text()
    assert shown.startswith(INJECTED)  # read as the dataset wrote it
    first = view.locator("td.right details, td.wrong details").first
    first.locator("summary").click()
    assert first.locator("pre").inner_text().startswith(INJECTED)
    # Nothing broke out of its cell: every question still has its rows and tallies.
    rows = view.locator("tr.first").count()
    assert rows > 0 and view.locator("td.num").count() == 3 * rows
    tab.screenshot(path=str(SCREENSHOT.with_name("mtp-eval-questions-markup.png")))
    assert errors == []
