"""Why a verdict came out: the banner names the failing check, the verdict links to the questions.

The demo's fmha_v2 + fp8_e4m3 cell loses 6 points on the simulated server: its "Questions that
changed" view lists the questions it got wrong more often than fa3, with both sides' answers.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.integration.conftest import DemoReport

pytestmark = pytest.mark.integration


class Anchors(HTMLParser):
    """The ids and the in-page links of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if found.get("id"):
            self.ids.add(str(found["id"]))
        href = found.get("href") or ""
        if tag == "a" and href.startswith("#"):
            self.links.append(href[1:])


def test_the_banner_names_the_failing_check_and_links_its_questions(demo_report: DemoReport):
    page = (demo_report.out / "report.html").read_text()
    anchors = Anchors()
    anchors.feed(page)
    assert anchors.links and set(anchors.links) <= anchors.ids  # every in-page link resolves
    banner = page.split('id="verdict"', 1)[1].split("</div>", 1)[0]
    assert "Verdict: NO-GO" in banner
    assert re.search(r"fmha_v2/fp8_e4m3\S* @ [^<]*: mcq_sample: accuracy vs fa3 NO-GO", banner)
    assert "questions that changed" in banner
    assert "fmha_v2/auto" not in banner  # the GO cell is not why the verdict came out


def test_the_questions_view_shows_both_sides_answers(demo_report: DemoReport):
    page = (demo_report.out / "report.html").read_text()
    view = page.split('<h2 id="changed-questions">', 1)[1]
    parts = re.findall(r'<h3 id="(changed-[^"]+)">([^<]+)</h3>', view)
    titles = [t for _, t in parts]
    # fmha_v2 at each KV dtype, against fa3 at the same KV dtype, on mcq_sample.
    assert len(parts) == 2 and all(" vs tiny-sim/fa3/" in t for t in titles), titles
    worse = view.split("fmha_v2/fp8_e4m3", 1)[1].split("<h3", 1)[0]
    rows = re.findall(r"<tr><td>[^<]+</td><td>[^<]*</td><td>(\d)/8</td><td>(\d)/8</td>", worse)
    assert rows, "the NO-GO candidate has questions that changed"
    moved = [int(c) - int(b) for b, c in rows]
    assert moved[0] < 0 and moved == sorted(moved, key=abs, reverse=True)
    assert worse.count("<details><summary>responses</summary>") == len(rows)
    assert "baseline, repeat 0" in worse and "candidate, repeat 7" in worse
    # The accuracy table's verdict of that candidate links to its view.
    verdict_link = re.search(
        r'<a href="#(changed-[^"]+)" title="questions that changed">NO-GO', page
    )
    assert verdict_link and verdict_link.group(1) in dict(parts)
