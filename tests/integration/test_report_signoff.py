"""Verdicts a release engineer can sign, through real ``mtp-eval-report`` runs on cell
folders written in the on-disk format (one test per problem a release engineer met)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline.config.schema import SequentialConf
from pipeline.measuring.sequential_run import design_of, look
from pipeline.report.cli import main
from tests.helpers.report_cells import records, run_report, write_cell, write_multirun

pytestmark = pytest.mark.integration


def outcomes(n: int = 200, k: int = 8, seed: int = 0) -> np.ndarray:
    """Questions that are nearly certain (right or wrong) plus a noisy fifth."""
    rng = np.random.default_rng(seed)
    p = np.where(np.arange(n) < n // 5, 0.5, np.where(np.arange(n) % 4 == 0, 0.02, 0.98))
    return rng.random((n, k)) < p[:, None]


def with_errors(recs: list[dict], share: float, seed: int = 1) -> list[dict]:
    """Mark a share of the requests errored, as the client writes them (score 0, error_kind)."""
    rng = np.random.default_rng(seed)
    for r in recs:
        if rng.random() < share:
            r.update(correct=False, extracted=None, finish_reason=None, error_kind="timeout")
    return recs


def check_of(summary: dict, variant: str, kind: str) -> dict:
    cell = next(c for c in summary["cells"] if c["variant"] == variant)
    return next(k for k in cell["checks"] if k["kind"] == kind)


def pair_sweep(root: Path, base: list[dict], cand: list[dict]) -> None:
    write_multirun(root, ["fmha_v2", "fa3"])
    write_cell(root / "0_m_fmha_v2", "fmha_v2", cand, speculative=False)
    write_cell(root / "1_m_fa3", "fa3", base, speculative=False)


def three_equal_cells(tmp_path: Path) -> Path:
    """A sweep of fmha_v2, fa3 and triton answering alike (no accept statistics)."""
    truth, root = outcomes(), tmp_path / "m"
    write_multirun(root, ["fmha_v2", "fa3", "triton"])
    for i, variant in enumerate(["fmha_v2", "fa3", "triton"]):
        write_cell(
            root / f"{i}_m_{variant}", variant, records(truth, accept=None), speculative=False
        )
    return root


def set_result(folder: Path, **changes: object) -> None:
    path = folder / "result.json"
    result = json.loads(path.read_text())
    for dotted, value in changes.items():
        target = result
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    path.write_text(json.dumps(result))


# 1. Errored requests are no answers, on either side; rates beside the verdict; one rule.
def test_baseline_errors_are_left_out_of_the_pairs(tmp_path: Path):
    truth = outcomes()
    base, cand = records(truth, accept=None), records(truth, accept=None)
    with_errors(base, 0.049)
    root = tmp_path / "m"
    pair_sweep(root, base, cand)
    _, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert acc["verdict"] == "GO", acc["message"]  # identical answers: the errors are no drop
    assert acc["numbers"]["base_error"] == pytest.approx(0.049, abs=0.01)
    assert "errors" in acc["message"] and "truncated" in acc["message"]
    # The sequential stopping rule, at a look reading all 8 repeats, says the same.
    design = design_of(SequentialConf(max_repeats=8, repeats_per_round=8))
    assert look(cand, base, design, 1) == "GO"


def test_candidate_errors_must_not_decide_a_go(tmp_path: Path):
    # Errors need not be random (timeouts fall on runaway generations, often wrong answers):
    # GO must hold with them counted wrong. 4.9% of 8 x 200 requests cannot be ruled out.
    truth = outcomes()
    base, cand = records(truth, accept=None), records(truth, accept=None)
    with_errors(cand, 0.049)
    root = tmp_path / "m"
    pair_sweep(root, base, cand)
    _, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert acc["verdict"] == "INCONCLUSIVE", acc["message"]
    assert acc["numbers"]["cand_error"] == pytest.approx(0.049, abs=0.01)
    assert "errors decided it" in acc["message"] and "counted wrong" in acc["message"]
    assert acc["numbers"]["go_bound"] > 0.02 > acc["numbers"]["upper"]
    design = design_of(SequentialConf(max_repeats=8, repeats_per_round=8))
    assert look(cand, base, design, 1) is None  # the stopping rule does not stop on it either


def test_questions_lost_to_errors_can_hold_a_verdict_back(tmp_path: Path):
    truth = outcomes()
    base, cand = records(truth, accept=None), records(truth, accept=None)
    # 12 questions the baseline always gets right error on every candidate request: with them
    # all wrong the drop could be 6 points, past the 2-point margin.
    right = [f"q{i:03d}" for i in np.flatnonzero(truth.all(axis=1))[:12]]
    for r in cand:
        if r["question_id"] in right:
            r.update(correct=False, error_kind="server_error")
    root = tmp_path / "m"
    pair_sweep(root, base, cand)
    code, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert code == 2 and acc["verdict"] == "INCONCLUSIVE"
    assert "12 questions without an answered pair could move the drop" in acc["message"]


# 2. One paired question (SE NaN) decides nothing.
def test_one_paired_question_is_inconclusive(tmp_path: Path):
    truth = outcomes(n=1, k=8, seed=3)
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), records(~truth, accept=None))
    code, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert code == 2 and acc["verdict"] == "INCONCLUSIVE"
    assert "only 1 paired question(s): no verdict" in acc["message"]


# 3. Malformed input: that cell ERROR, the rest written, exit 2 (never 1).
@pytest.mark.parametrize(
    "sequential",
    [{}, {"role": "candidate", "look": 1, "max_repeats": 16, "repeats_per_round": 3}, "yes"],
)
def test_a_malformed_sequential_block_is_that_cells_error(tmp_path: Path, sequential):
    root = three_equal_cells(tmp_path)
    set_result(root / "0_m_fmha_v2", evals__gpqa_diamond__sequential=sequential)
    code, summary = run_report([root], tmp_path / "r")
    assert code == 2
    verdicts = {c["variant"]: c["verdict"] for c in summary["cells"]}
    assert verdicts["fmha_v2"] == "ERROR" and verdicts["triton"] == "GO"
    error = next(k for c in summary["cells"] for k in c["checks"] if k["verdict"] == "ERROR")
    assert "malformed input" in error["message"] and "result.json" in error["message"]


# 4. The baseline that really ended last, named by folder (inputs given in any order).
def test_baseline_is_the_one_that_ended_last(tmp_path: Path):
    truth = outcomes()
    better = truth.copy()
    better[: len(truth) // 5] = True  # an old baseline about 10 points better
    cand, new, old = tmp_path / "cand", tmp_path / "fa3_new", tmp_path / "fa3_old"
    write_cell(cand, "fmha_v2", records(truth, accept=None), speculative=False)
    write_cell(new, "fa3", records(truth, accept=None), speculative=False)
    write_cell(old, "fa3", records(better, accept=None), speculative=False)
    set_result(new, timing={"ended_at": "2026-11-29T12:00:00+00:00"})
    set_result(old, timing={"ended_at": "2026-11-01T12:00:00+00:00"})
    _, summary = run_report([cand, new, old], tmp_path / "r")  # the old one listed last
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert acc["verdict"] == "GO"
    assert acc["numbers"]["baseline_folder"] == str(new)
    assert f"used the one that ended last: {new}" in acc["numbers"]["note"]
    # Named where a reader looks (black box: it was only in summary.json's numbers): the check's
    # message (console, JUnit) and the accuracy table of report.md.
    assert f"used the one that ended last: {new}" in acc["message"]
    table = (tmp_path / "r" / "report.md").read_text().split("## Accuracy vs the baseline")[1]
    assert f"used the one that ended last: {new}" in table.split("\n## ")[0]


# 5. Coverage: absent questions are not GO unless the policy allows; repeats by question.
def test_a_candidate_lacking_questions_is_not_go(tmp_path: Path):
    truth = outcomes()
    cand = [r for r in records(truth, accept=None) if int(r["question_id"][1:]) >= 18]
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), cand)
    code, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert code == 2 and acc["verdict"] == "INCONCLUSIVE"
    assert "18 of the baseline's 200 questions were never asked" in acc["message"]
    assert "182 of 200 baseline questions paired" in acc["message"]
    policy = tmp_path / "lenient.yaml"
    policy.write_text(yaml.safe_dump({"defaults": {"max_absent_questions": 0.1}}))
    code, summary = run_report([root], tmp_path / "r2", "--tolerance", str(policy))
    assert check_of(summary, "fmha_v2", "accuracy_vs_baseline")["verdict"] == "GO"


@pytest.mark.parametrize("shift", [1, 100])  # 1-based repeats; disjoint repeat indices
def test_repeats_that_do_not_line_up_are_paired_by_question(tmp_path: Path, shift: int):
    truth = outcomes()
    cand = records(truth, accept=None)
    for r in cand:
        r["repeat"] += shift
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), cand)
    code, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert code == 0 and acc["verdict"] == "GO"
    assert "paired by question: repeat indices do not line up" in acc["message"]
    assert acc["numbers"]["n_questions"] == 200


# 6. GO is read per cell (intersection-union); Holm only for NO-GO alarms.
def test_each_candidates_go_is_read_at_alpha_without_holm(tmp_path: Path):
    variants = [f"v{i}" for i in range(8)]
    root = tmp_path / "m"
    write_multirun(root, [*variants, "fa3"])
    write_cell(root / "8_m_fa3", "fa3", records(outcomes(k=2), accept=None), speculative=False)
    for i, v in enumerate(variants):  # fresh draws from the same question probabilities
        recs = records(outcomes(k=2, seed=10 + i), accept=None)
        write_cell(root / f"{i}_m_{v}", v, recs, speculative=False)
    code, summary = run_report([root], tmp_path / "r")
    checks = [check_of(summary, v, "accuracy_vs_baseline") for v in variants]
    p_go = [c["numbers"]["p_go_adjusted"] for c in checks]
    # Per-cell p(GO) as computed, GO at alpha; Holm over 8 cells (the old rule) left fewer: some
    # GO cell has a p(GO) above alpha / 8 and is read as it is, not multiplied.
    assert [c["verdict"] == "GO" for c in checks] == [p <= 0.05 for p in p_go]
    assert sum(c["verdict"] == "GO" for c in checks) >= 4
    assert any(0.05 / 8 < p <= 0.05 for p in p_go)
    assert code == 2  # the release is GO only when every candidate is


# 7. A few prompts that break are caught and named.
def test_ten_questions_always_wrong_are_named(tmp_path: Path):
    truth = np.tile(np.arange(200)[:, None] % 10 < 7, (1, 8))  # noise-free: 70% right
    truth[9, :3] = True  # sampled, not greedy: a question's repeats can differ
    cand = truth.copy()
    # A question is one observation whatever its repeats (issue 37): ten broken, none the
    # other way, is p = 2^-10 in the sign test over questions (five would be 2^-5).
    broken = np.flatnonzero(truth.all(axis=1))[:10]
    cand[broken] = False  # a certain 5-point loss on this set
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), records(cand, accept=None))
    code, summary = run_report([root], tmp_path / "r")
    check = check_of(summary, "fmha_v2", "broken_prompts")
    assert code == 1 and check["verdict"] == "FAIL"
    assert check["numbers"]["broken_questions"] == [f"q{i:03d}" for i in broken]
    assert "q000" in check["message"] and "sign test" in check["message"]


# 8. A cell stopped with GO is not INCONCLUSIVE for its reference check's want of repeats.
# 9. GO without a reference is GO (with a note); a fixed-design cell is read at alpha.
def reference_folder(tmp_path: Path, accuracy: float) -> Path:
    refs = tmp_path / "refs"
    refs.mkdir()
    entry = {"eval": "gpqa_diamond", "kv_dtype": "any", "speculative": "any",
             "accuracy": accuracy, "provenance": {"source": "x", "date": "2026-01-01",
                                                  "setup": "y"}}  # fmt: skip
    (refs / "m.yaml").write_text(yaml.safe_dump({"model": "m", "entries": [entry]}))
    return refs


def test_a_stopped_go_cell_is_go_despite_an_undecided_reference(tmp_path: Path):
    truth = outcomes(k=2)
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), records(truth, accept=None))
    seq = {"max_repeats": 16, "repeats_per_round": 2, "alpha": 0.05, "margin": 0.02,
           "role": "candidate", "look": 1, "decision": "GO"}  # fmt: skip
    set_result(root / "0_m_fmha_v2", evals__gpqa_diamond__sequential=seq)
    acc = float(truth.mean())
    refs = reference_folder(tmp_path, acc + 0.02)  # exactly at the margin: cannot decide
    _, summary = run_report([root], tmp_path / "r", "--references", str(refs))
    ref = check_of(summary, "fmha_v2", "accuracy_vs_reference")
    assert ref["verdict"] == "INFO" and "stopped this cell with GO" in ref["message"]
    verdicts = {c["variant"]: c["verdict"] for c in summary["cells"]}
    assert verdicts["fmha_v2"] == "GO"


def test_go_without_reference_is_go_with_a_note(tmp_path: Path, capsys):
    truth = outcomes()
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), records(truth, accept=None))
    code = main([str(root), "--out", str(tmp_path / "r")])
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    cell = next(c for c in summary["cells"] if c["variant"] == "fmha_v2")
    assert code == 0 and cell["verdict"] == "GO" and "no reference" in cell["verdict_note"]
    assert "GO            m/fmha_v2" in capsys.readouterr().out
    assert "| GO (no reference value" in (tmp_path / "r" / "report.md").read_text()


def test_a_fixed_design_cell_is_read_at_alpha(tmp_path: Path):
    truth = outcomes()
    root = tmp_path / "m"
    pair_sweep(root, records(truth, accept=None), records(truth, accept=None))
    seq = {"max_repeats": 16, "repeats_per_round": 2, "alpha": 0.05, "margin": 0.02,
           "role": "no baseline cell found: fixed design"}  # fmt: skip
    set_result(root / "0_m_fmha_v2", evals__gpqa_diamond__sequential=seq)
    _, summary = run_report([root], tmp_path / "r")
    acc = check_of(summary, "fmha_v2", "accuracy_vs_baseline")
    assert acc["numbers"]["level"] == 0.05 and acc["numbers"]["sequential"] == ""


# 3 (black box, benchmarks/report_blackbox.py): a result.json whose blocks have the wrong JSON
# type was judged as a cell called None/None/None, or GO with its eval summary read as empty;
# now it is unreadable (that cell ERROR, naming the key) and the rest is judged.
@pytest.mark.parametrize(
    "changes",
    [
        {"evals": [{"accuracy": 0.7}]},
        {"evals": {"gpqa_diamond": "0.7"}},
        {"cell": None},
        {"cell": ["fmha_v2"]},
        {"cell__gpu": "H200"},
        {"cell__skip_softmax": 0.5},
    ],
)
def test_a_result_of_the_wrong_shape_is_that_cells_error(tmp_path: Path, changes):
    root = three_equal_cells(tmp_path)
    set_result(root / "0_m_fmha_v2", **changes)
    code, summary = run_report([root], tmp_path / "r")
    assert code == 2
    verdicts = {c["id"].rsplit("/", 1)[-1]: c["verdict"] for c in summary["cells"]}
    # Unreadable as a result (as invalid JSON is): ERROR, exit 2, the rest judged.
    assert verdicts == {"0_m_fmha_v2": "ERROR", "1_m_fa3": "NO REFERENCE", "2_m_triton": "GO"}
    error = next(k for c in summary["cells"] for k in c["checks"] if k["verdict"] == "ERROR")
    key = next(iter(changes)).split("__")[-1]
    assert "result.json" in error["message"] and key in error["message"], error["message"]
