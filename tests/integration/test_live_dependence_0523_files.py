"""The committed live A/As of issue 37 (SGLang 0.5.23, H200) read as the question-level rule says.

Both reports are rebuilt through the installed ``mtp-eval-report`` from the committed cells and
samples and must give the committed verdicts; the greedy A/A's copies are counted once (ICC 1,
one answer per question), the 48 retrieval questions are too few and the report says how many
would do; the sampled A/A is GO with repeats worth less than independent answers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, rebuild_committed_report

RUN = REPO / "benchmarks/results/live-h200/dependence-0.5.23"
EVALS = ("synth_mcq", "synth_arith", "synth_retrieval")

pytestmark = pytest.mark.integration


def accuracy_checks(summary: dict) -> dict[str, dict]:
    (cand,) = [c for c in summary["cells"] if c["variant"] == "fa3_repeat"]
    return {k["eval"]: k for k in cand["checks"] if k["kind"] == "accuracy_vs_baseline"}


def rebuilt(tmp_path: Path, temperature: str) -> tuple[int, dict]:
    run, summary = rebuild_committed_report(
        RUN, tmp_path, keep=lambda name: name.startswith(f"aa-{temperature}-"),
        options=["--baseline-dir", f"aa-{temperature}-a"],
    )  # fmt: skip
    return run.returncode, summary


@pytest.mark.parametrize(("temperature", "code"), [("g0", 2), ("t6", 0)])
def test_the_rebuilt_reports_give_the_committed_verdicts(tmp_path, temperature, code):
    found_code, summary = rebuilt(tmp_path, temperature)
    committed = json.loads((RUN / f"report-{temperature}/summary.json").read_text())
    assert found_code == committed["exit_code"] == code
    mine, theirs = accuracy_checks(summary), accuracy_checks(committed)
    assert {e: k["verdict"] for e, k in mine.items()} == {
        e: k["verdict"] for e, k in theirs.items()
    }
    for name in EVALS:
        for key in ("icc", "effective_answers", "questions_needed", "repeats_vary"):
            assert mine[name]["numbers"][key] == pytest.approx(theirs[name]["numbers"][key])


def test_greedy_copies_count_once_and_too_few_questions_are_named():
    checks = accuracy_checks(json.loads((RUN / "report-g0/summary.json").read_text()))
    verdicts = {e: k["verdict"] for e, k in checks.items()}
    assert verdicts == {"synth_mcq": "GO", "synth_arith": "GO", "synth_retrieval": "INCONCLUSIVE"}
    for name, questions in (("synth_arith", 200), ("synth_retrieval", 48)):
        n = checks[name]["numbers"]
        assert n["repeats_vary"] is False and n["icc"] == 1.0
        assert n["effective_answers"] == pytest.approx(questions)  # 8 repeats worth one each
        assert n["drop"] == 0.0  # the two starts answered every question alike
    arith, retrieval = checks["synth_arith"]["numbers"], checks["synth_retrieval"]["numbers"]
    assert arith["questions_needed"] <= 200 < 200 * 8  # enough questions, not enough answers
    why = retrieval["undecided_because"]
    assert "repeats are copies" in why and f"about {retrieval['questions_needed']} questions" in why
    assert retrieval["questions_needed"] > 48
    assert checks["synth_mcq"]["numbers"]["repeats_vary"] is True  # options shuffled per repeat


def test_the_sampled_a_a_is_go_with_repeats_worth_less_than_answers():
    checks = accuracy_checks(json.loads((RUN / "report-t6/summary.json").read_text()))
    assert {k["verdict"] for k in checks.values()} == {"GO"}
    for k in checks.values():
        n = k["numbers"]
        assert n["repeats_vary"] is True and 0.2 < n["icc"] < 0.7
        assert n["effective_answers"] < n["answers_per_side"] / 2
