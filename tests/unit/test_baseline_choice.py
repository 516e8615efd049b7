"""The one baseline rule (``pipeline.results.baseline_choice``), table-driven."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pipeline.report.judge.pairing import baseline_key
from pipeline.report.load.cells import cell_from_folder
from pipeline.results.baseline_choice import CellKey, choose_baseline, key_of_result, skip_part
from pipeline.results.store import read_result

MATCH = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


def key(
    variant="fa3", sweep="A", gpu="H200", sp=None, layout="", status="ok", ended="", n="", evals=()
):
    return CellKey(
        folder=f"{sweep}/{variant}-{gpu}-{sp}-{layout}-{status}-{ended}{n}{evals}", sweep=sweep,
        status=status, variant=variant, model="m", kv_dtype="auto", skip=(skip_part(sp), "exact"),
        speculative="[]", gpu=gpu, layout=layout, ended_at=ended, evals=evals,
    )  # fmt: skip


AB = ("a", "b")


ME = key("fmha_v2")


@pytest.mark.parametrize(
    ("cell", "pool", "chosen", "note", "elsewhere"),
    [
        (ME, [key()], key(), "", False),
        (ME, [key(gpu="B200")], None, "no fa3 cell with the same", False),
        (ME, [key(status="misconfigured")], None, "is MISCONFIGURED", False),
        (key("fmha_v2", sp=0.5), [key()], key(), "exact softmax", False),
        (key("fmha_v2", sp=0.5), [key(), key(sp=0.5)], key(sp=0.5), "", False),
        (key("fmha_v2", sp=0), [key()], key(), "", False),  # 0 is exact softmax
        (key("fmha_v2", layout="tp=2"), [key(ended="9"), key(layout="tp=2")],
         key(layout="tp=2"), "", False),
        (key("fmha_v2", layout="tp=2"), [key()], key(), "baseline at one GPU (none at tp=2)",
         False),
        # The candidate's own sweep first, whichever ended last; another sweep's is marked.
        (ME, [key(sweep="B", ended="9"), key(ended="1")], key(ended="1"), "", False),
        (ME, [key(sweep="B", ended="9"), key(sweep="C", ended="1")], key(sweep="B", ended="9"),
         "baseline from another sweep (B, C): none in A", True),
        (ME, [key(sweep="B"), key(status="failed")], key(sweep="B"), "another sweep", True),
        (ME, [key(ended="1"), key(ended="2")], key(ended="2"), "2 baseline cells match", False),
        # The most of the candidate's evals first: a speed-only baseline (no evals) that ended
        # last, even in the candidate's own sweep, has no questions to pair on.
        (key("fmha_v2", evals=AB), [key(ended="9"), key(sweep="B", ended="1", evals=AB)],
         key(sweep="B", ended="1", evals=AB), "1 baseline cell(s) with fewer of its evals", True),
        (key("fmha_v2", evals=AB), [key(ended="9", evals=("a",)), key(ended="1", evals=AB)],
         key(ended="1", evals=AB), "fewer of its evals", False),
        (key("fmha_v2", evals=AB), [key(ended="1", evals=("c",)), key(ended="2")],
         key(ended="2"), "2 baseline cells match", False),  # none shares one: as before
        (key("fmha_v2"), [key(ended="1", evals=AB), key(ended="2")], key(ended="2"), "", False),
    ],
)  # fmt: skip
def test_choose_baseline(cell, pool, chosen, note, elsewhere):
    choice = choose_baseline(cell, [cell, *pool], "fa3", MATCH)
    assert choice.chosen == chosen
    assert note in choice.note
    assert choice.elsewhere is elsewhere


def test_the_gpu_only_counts_when_the_policy_matches_on_it():
    without_gpu = tuple(m for m in MATCH if m != "gpu")
    choice = choose_baseline(ME, [key(gpu="B200")], "fa3", without_gpu)
    assert choice.chosen == key(gpu="B200")


def test_the_job_and_the_report_key_a_cell_alike_from_its_one_identity(tmp_path) -> None:
    """A cell's ``result.json`` keyed by the cell job and by the report: the same key."""
    data_dir = Path(__file__).parents[1] / "data" / "sweep-schema1-f95dc87"
    src = data_dir / "0_tiny-sim_fmha_v2_auto_exact"
    folder = tmp_path / "sweep" / src.name
    shutil.copytree(src, folder)
    data = json.loads((folder / "result.json").read_text())
    data["cell"]["skip_softmax"] = {"prefill": "1e4", "decode": 0}  # hand-written spellings
    (folder / "result.json").write_text(json.dumps(data))
    result = read_result(folder)
    assert result is not None
    job = key_of_result(result, folder)
    record = cell_from_folder(folder, str(folder))
    record.sweep = str(folder.parent)
    report = baseline_key(record)
    assert job.skip == ("10000.0", "exact") and record.name.endswith("/sp=10000.0/sd=None")
    assert (job.variant, job.model, job.kv_dtype, job.skip, job.gpu, job.speculative) == (
        report.variant, report.model, report.kv_dtype, report.skip, report.gpu, report.speculative
    )  # fmt: skip
    assert (job.folder, job.sweep, job.status, job.layout, job.evals) == (
        report.folder, report.sweep, report.status, report.layout, report.evals
    )  # fmt: skip


def test_a_result_whose_factor_is_no_number_names_the_file_key_and_fix(tmp_path) -> None:

    (tmp_path / "result.json").write_text(
        json.dumps({"status": "ok", "cell": {"skip_softmax": {"prefill": "fast"}}})
    )
    with pytest.raises(
        ValueError, match=r"result\.json: cell\.skip_softmax\.prefill: 'fast'.*>= 0"
    ):
        read_result(tmp_path)
