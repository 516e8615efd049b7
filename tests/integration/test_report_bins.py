"""Accuracy by context length through ``mtp-eval-report`` on cells written in the on-disk format:
a drop concentrated in one length bin is NO-GO although the eval's aggregate is GO, and an eval
whose prompts fall in one bin has no check by length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.helpers.report_cells import records, run_report, write_cell, write_multirun

pytestmark = pytest.mark.integration
LENGTHS = (2000, 6000, 12000, 24000, 48000)  # a bin each: <=4k, 4k-8k, 8k-16k, 16k-32k, 32k-64k


def _with_lengths(recs: list[dict], n: int) -> list[dict]:
    for r in recs:
        r["meta"] = {"prompt_tokens": LENGTHS[int(r["question_id"][1:]) * len(LENGTHS) // n]}
    return recs


def _policy(folder: Path) -> Path:
    repo = Path(__file__).resolve().parents[2]
    text = (repo / "conf/tolerance/default.yaml").read_text()
    path = folder / "margin10.yaml"
    path.write_text(text.replace("max_drop: 0.02 ", "max_drop: 0.10 ", 1))
    (folder / "references").symlink_to(repo / "conf/tolerance/references")
    return path


def _checks(summary: dict, variant: str) -> dict[str, dict]:
    cell = next(c for c in summary["cells"] if c["variant"] == variant)
    return {k["kind"]: k for k in cell["checks"]}


def test_a_drop_in_the_longest_bin_is_nogo_while_the_aggregate_is_go(tmp_path: Path) -> None:
    n, k = 400, 8
    base = np.ones((n, k), dtype=bool)
    cand = base.copy()
    cand[-80:, :2] = False  # the 32k-64k bin loses a quarter of its answers: the eval 5 points
    root = tmp_path / "m"
    write_multirun(root, ["fmha_v2", "fa3"])
    write_cell(root / "0_m_fmha_v2", "fmha_v2", _with_lengths(records(cand), n))
    write_cell(root / "1_m_fa3", "fa3", _with_lengths(records(base), n))
    code, summary = run_report([root], tmp_path / "out", "--tolerance", str(_policy(tmp_path)))
    checks = _checks(summary, "fmha_v2")
    assert checks["accuracy_vs_baseline"]["verdict"] == "GO"
    by_length = checks["accuracy_by_length"]
    assert by_length["verdict"] == "NO-GO" and code == 1
    verdicts = {b["label"]: b["verdict"] for b in by_length["numbers"]["bins"]}
    assert verdicts == {"<=4k": "GO", "4k-8k": "GO", "8k-16k": "GO", "16k-32k": "GO",
                        "32k-64k": "NO-GO"}  # fmt: skip
    assert "Holm-corrected over 5 bins" in by_length["message"]
    cell = next(c for c in summary["cells"] if c["variant"] == "fmha_v2")
    assert cell["verdict"] == summary["verdict"] == "NO-GO"
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| gpqa_diamond | 32k-64k | 80 | -25.00 pts [" in md


def test_an_eval_in_one_length_bin_has_no_check_by_length(tmp_path: Path) -> None:
    truth = np.ones((60, 4), dtype=bool)
    root = tmp_path / "m"
    write_multirun(root, ["fmha_v2", "fa3"])
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(truth))
    write_cell(root / "1_m_fa3", "fa3", records(truth))
    _, summary = run_report([root], tmp_path / "out")
    assert not [kind for kind in _checks(summary, "fmha_v2") if "_by_" in kind]
    assert summary["by_bin"] == [] and summary["frontier_by_length"] == []
    assert "By context length" not in (tmp_path / "out" / "report.md").read_text()
