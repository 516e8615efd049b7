"""Why a verdict came out: the banner names the failing check, the verdict links to the questions.

The demo's fmha_v2 + fp8_e4m3 cell loses 6 points on the simulated server: its "Questions that
changed" view lists the questions it got wrong more often than fa3, each with its text, options
and right answer, and both sides' answers repeat by repeat. Samples written before the questions
were recorded still show, by hash id; markup in a question or a reply stays text.
"""

from __future__ import annotations

import csv
import html
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from evals.gpqa import COLUMNS
from tests.helpers.cells import REPO, console_script
from tests.helpers.sample_rewrites import INJECTED, rewritten_report, with_markup, without_question
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


def _view(page: str, cell: str = "fmha_v2/fp8_e4m3") -> str:
    """The part of the questions view of ``cell`` (the NO-GO one by default)."""
    view = page.split('<h2 id="changed-questions">', 1)[1]
    return view.split(cell, 1)[1].split("<h3", 1)[0]


def _dataset() -> dict[str, list[str]]:
    """The bundled questions: text -> [right answer, three wrong ones]."""
    with (REPO / "evals" / "data" / "mcq_sample.csv").open(encoding="utf-8") as fh:
        return {row["Question"]: [row[c] for c in COLUMNS[1:]] for row in csv.DictReader(fh)}


def test_the_samples_keep_each_question_once(demo_report: DemoReport):
    dataset = _dataset()
    for path in sorted(demo_report.sweep.glob("*/samples/mcq_sample.jsonl")):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        carriers = [r for r in records if "question" in r]
        # Once per question, on its repeat-0 line: the other repeats show the same question.
        assert sorted(r["question_id"] for r in carriers) == sorted(
            {r["question_id"] for r in records}
        )
        assert {r["repeat"] for r in carriers} == {0}
        for record in carriers:
            shown = record["question"]
            choices = dataset[shown["text"]]
            assert shown == {"text": shown["text"], "options": choices, "gold": choices[0],
                             "permuted": True}  # fmt: skip
        size = sum(len(json.dumps(r["question"])) for r in carriers)
        assert size < 0.05 * path.stat().st_size, (size, path.stat().st_size)


def test_the_questions_view_shows_the_questions_and_both_sides_answers(
    demo_report: DemoReport,
):
    page = (demo_report.out / "report.html").read_text()
    view = page.split('<h2 id="changed-questions">', 1)[1]
    parts = re.findall(r'<h3 id="(changed-[^"]+)">([^<]+)</h3>', view)
    titles = [t for _, t in parts]
    # fmha_v2 at each KV dtype, against fa3 at the same KV dtype, on mcq_sample.
    assert len(parts) == 2 and all(" vs tiny-sim/fa3/" in t for t in titles), titles
    worse = _view(page)
    assert re.search(r"<th>question</th><th>gold</th><th>repeat</th><th>baseline</th>"
                     r"<th>candidate</th>", worse)  # fmt: skip
    questions = worse.split('<tr class="first">')[1:]
    assert questions, "the NO-GO candidate has questions that changed"
    dataset = {html.escape(q): c for q, c in _dataset().items()}
    moved = []
    for question in questions:
        text = re.search(r'<div class="qtext">([^<]+)</div>', question)
        assert text and text.group(1) in dataset, "the question's own text is shown"
        choices = [html.escape(c) for c in dataset[text.group(1)]]
        assert f'<li class="gold">{choices[0]} ✓</li>' in question  # the right option marked
        assert all(f"<li>{c}</li>" in question for c in choices[1:])
        rights = re.findall(r'class="num">(\d)/8</td>', question)
        assert len(rights) == 2
        moved.append(int(rights[1]) - int(rights[0]))
        # One row per repeat, each side's answer in its own cell, naming the option it chose.
        answers = re.findall(
            r'<td class="(?:right|wrong)"><b>([A-D]) = ([^<]+)</b> ([✓✗])', question
        )
        assert len(answers) == 16 and all(a in choices for _, a, _ in answers)
        assert all((a == choices[0]) == (mark == "✓") for _, a, mark in answers)
        assert question.count("<details><summary>response</summary><pre>") == 16
    assert moved[0] < 0 and moved == sorted(moved, key=abs, reverse=True)
    assert "hash id" not in worse  # every question has its text
    # The accuracy table's verdict of that candidate links to its view.
    verdict_link = re.search(
        r'<a href="#(changed-[^"]+)" title="questions that changed">NO-GO', page
    )
    assert verdict_link and verdict_link.group(1) in dict(parts)


def test_old_samples_show_hash_ids_with_a_note(demo_report: DemoReport, tmp_path: Path):
    out = rewritten_report(demo_report.sweep, tmp_path / "moved", without_question)
    worse = _view((out / "report.html").read_text())
    ids = re.findall(r'<div class="qid">id <code>([0-9a-f]{16})</code></div>', worse)
    rows = worse.count('<tr class="first">')
    assert rows and len(ids) == rows  # every question still listed, by its id
    assert "qtext" not in worse and "<li" not in worse
    assert "hold no question text" in worse and "<code>question_id</code>" in worse
    # The answers and responses stay as they were: the letters, graded per repeat.
    assert len(re.findall(r"<b>[A-D]</b> [✓✗]", worse)) == 16 * rows


def test_a_moved_sweep_shows_markup_in_questions_and_replies_as_text(
    demo_report: DemoReport, tmp_path: Path
):
    out = rewritten_report(demo_report.sweep, tmp_path / "moved", with_markup)
    page = (out / "report.html").read_text()
    assert "<script" not in page and INJECTED not in page
    worse = _view(page)
    escaped = html.escape(INJECTED)
    assert worse.count(f'<div class="qtext">{escaped} ') == worse.count('<tr class="first">') > 0
    assert f"<pre>{escaped}\n" in worse
    assert "&lt;b&gt;" in worse  # an option's markup, shown as text


@pytest.fixture(scope="module")
def harness_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """fmha_v2 vs fa3 on an lm-eval task and two-turn conversations; fmha_v2 told to do worse."""
    sweep = tmp_path_factory.mktemp("harness") / "sweep"
    run = subprocess.run(
        [console_script("mtp-eval"), "-m", "model=tiny_sim", "server=simulated",
         "backend=fmha_v2,fa3", "evals=[lm_eval_sample,mtbench_sample]", "client.progress=false",
         f"hydra.sweep.dir={sweep}", "server.simulated.startup_delay_s=0.1",
         "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},"
         "accuracy_delta:-0.5}]"],
        cwd=REPO, capture_output=True, text=True, timeout=280, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    out = sweep / "report"
    report = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert report.returncode in (0, 1, 2), report.stderr
    return sweep, (out / "report.html").read_text()


def test_an_lm_eval_task_shows_its_documents_questions(harness_sweep: tuple[Path, str]):
    _, page = harness_sweep
    worse = _view(page, "fmha_v2/auto")
    assert "lm_eval_sample vs tiny-sim/fa3/auto" in page
    task = REPO / "evals" / "lm_eval_tasks" / "mtp_arith_sample" / "mtp_arith_sample.jsonl"
    docs = {json.loads(line)["question"]: json.loads(line)["answer"]
            for line in task.read_text().splitlines()}  # fmt: skip
    questions = worse.split('<tr class="first">')[1:]
    assert questions, "the worse candidate has questions that changed"
    for question in questions:
        # lm-eval's prompt as the task renders it (doc_to_text), and its target as the gold.
        found = re.search(r'<div class="qtext">Question: ([^\n]+)\n', question)
        assert found and found.group(1) in docs
        assert f'<td rowspan="1">{docs[found.group(1)]}</td>' in question
        assert re.search(r'<td class="(right|wrong)"><b>-?\d+</b> [✓✗]', question)


def test_each_turn_of_a_conversation_keeps_its_text(harness_sweep: tuple[Path, str]):
    sweep, page = harness_sweep
    dataset = REPO / "evals" / "data" / "mtbench_sample.jsonl"
    turns = {t for line in dataset.read_text().splitlines() for t in json.loads(line)["prompt"]}
    for path in sweep.glob("*/samples/mtbench_sample.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:  # one repeat: every line is a repeat-0 line
            turn = record["meta"]["turn"]
            text = record["question"]["text"]
            assert text.startswith(f"Turn {turn}: ") and text.split(": ", 1)[1] in turns
    # Not graded: no accuracy check, so no part of the view (its figures are accept rates).
    assert "mtbench_sample vs" not in page.split('<h2 id="changed-questions">', 1)[1]
