"""Issue 22 item 2: the anytime-valid design, through real ``mtp-eval-report`` runs on cell
folders written in the on-disk format. The look that stopped a cell and the report decide with
one function on the same pairs; a stopped cell extended past ``max_repeats`` stays valid."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from pipeline.config.schema import SequentialConf
from pipeline.measuring.sequential_run import design_of, look
from pipeline.results.eval_block import DESIGN_KEYS
from tests.helpers.report_cells import records, run_report, write_cell, write_multirun

pytestmark = pytest.mark.integration
N, K = 200, 32


def truth(drop_share: float = 0.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and candidate answers (N x K): a fifth uncertain, the rest nearly certain.

    The candidate answers wrong a share ``drop_share`` of what it would have got right.
    """
    rng = np.random.default_rng(seed)
    p = np.where(np.arange(N) < N // 5, 0.5, np.where(np.arange(N) % 4 == 0, 0.02, 0.98))
    base = rng.random((N, K)) < p[:, None]
    cand = (rng.random((N, K)) < p[:, None]) & (rng.random((N, K)) >= drop_share)
    return base, cand


def first_stop(base: list[dict], cand: np.ndarray, conf: SequentialConf, family: int):
    """Run the looks as ``sequential_run`` does: the first that decides, with its repeats."""
    design = design_of(conf, family)
    j = 0
    for j in range(1, 10 * design.n_looks):
        k = design.repeats_per_round * j
        if k > cand.shape[1]:
            break
        decision = look(records(cand[:, :k], accept=None), base, design, j)
        if decision is not None:
            return design, j, decision
    return design, j - 1, None


def write_stopped(root: Path, base: list[dict], cand: np.ndarray, design, j: int,
                  decision: str | None) -> None:  # fmt: skip
    write_multirun(root, ["fmha_v2", "fa3"])
    k = design.repeats_per_round * j
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(cand[:, :k], accept=None),
               speculative=False)  # fmt: skip
    write_cell(root / "1_m_fa3", "fa3", base, speculative=False)
    path = root / "0_m_fmha_v2" / "result.json"
    result = json.loads(path.read_text())
    fields = {key: asdict(design)[key] for key in DESIGN_KEYS}
    result["evals"]["gpqa_diamond"]["sequential"] = {
        **fields, "role": "candidate", "look": j, "decision": decision or "undecided",
        "baseline_dir": str(root / "1_m_fa3"),
    }  # fmt: skip
    path.write_text(json.dumps(result))


def accuracy(summary: dict) -> dict:
    cell = next(c for c in summary["cells"] if c["variant"] == "fmha_v2")
    return next(k for k in cell["checks"] if k["kind"] == "accuracy_vs_baseline")


@pytest.mark.parametrize(("drop_share", "expected"), [(0.0, "GO"), (0.15, "NO-GO")])
def test_the_report_says_what_the_look_that_stopped_the_cell_said(tmp_path, drop_share, expected):
    b, c = truth(drop_share)
    base = records(b, accept=None)
    conf = SequentialConf(max_repeats=16, repeats_per_round=2)
    design, j, decision = first_stop(base, c, conf, family=8)
    assert decision == expected and design.statistic == "eprocess" and j < design.n_looks
    write_stopped(tmp_path / "m", base, c, design, j, decision)
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    acc = accuracy(summary)
    assert acc["verdict"] == expected, acc["message"]
    assert acc["numbers"]["nogo_family"] == 8 and "anytime-valid look" in acc["message"]


def test_a_cell_extended_past_max_repeats_is_read_on_all_its_repeats(tmp_path):
    # Undecided at its planned 4 repeats; a second run with max_repeats 32 extends it (the
    # looks at repeats 6, 8, ... are read at shares of alpha the first two left: as valid).
    b, c = truth(0.0, seed=6)
    base = records(b, accept=None)
    short = SequentialConf(max_repeats=4, repeats_per_round=2)
    _, j, decision = first_stop(base, c[:, :4], short, family=8)
    assert decision is None and j == 2
    longer, j2, later = first_stop(base, c, SequentialConf(max_repeats=32, repeats_per_round=2), 8)
    assert later == "GO" and j2 > 2
    write_stopped(tmp_path / "m", base, c, longer, j2, later)
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    assert accuracy(summary)["verdict"] == "GO"


def test_a_stopped_no_go_stays_no_go_when_the_run_goes_on(tmp_path):
    # The p-value is the running minimum over looks: more repeats never take it back.
    b, c = truth(0.15, seed=5)
    base = records(b, accept=None)
    design, j, decision = first_stop(base, c, SequentialConf(max_repeats=16, repeats_per_round=2),
                                     family=8)  # fmt: skip
    assert decision == "NO-GO"
    c_later = c.copy()
    c_later[:, 2 * j :] = b[:, 2 * j :]  # afterwards it answers exactly as the baseline
    write_stopped(tmp_path / "m", base, c_later, design, min(j + 4, 16), decision)
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    assert accuracy(summary)["verdict"] == "NO-GO"


def test_a_group_sequential_cell_is_still_read_as_it_stopped(tmp_path):
    # Cells written before (statistic null / observed) keep the stagewise reading.
    b, c = truth(0.0)
    base = records(b, accept=None)
    conf = SequentialConf(max_repeats=16, repeats_per_round=2, statistic="group_sequential")
    design, j, decision = first_stop(base, c, conf, family=1)
    write_stopped(tmp_path / "m", base, c, design, j, decision)
    _, summary = run_report([tmp_path / "m"], tmp_path / "r")
    acc = accuracy(summary)
    assert acc["verdict"] == (decision or "INCONCLUSIVE") and "sequential look" in acc["message"]
