"""``experiment=release_signoff`` runs parity first: a parity NO-GO spends no accuracy repeat.

One sweep of real ``mtp-eval`` cells on the simulated server, one after the other (Hydra's basic
launcher): fa3 generates the sequences, fa3_repeat (the A/A) and flashinfer (a clean variant)
re-score them, and fmha_v2, whose simulated logits carry noise of a known size
(``logit_sigma``) and which loses one accuracy point, is NO-GO by parity before its evals.
``mtp-eval-report`` then says why its accuracy was not measured.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.results.cell_paths import samples_path
from pipeline.results.result_types import CellResult
from pipeline.results.store import read_result
from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
SWEEP = [
    "-m", "experiment=release_signoff", "server=simulated",
    "backend=fa3,fa3_repeat,flashinfer,fmha_v2", "kv_dtype=auto", "skip_softmax.prefill=0",
    # 20 of mcq_sample's 58 questions: no check here reads an accuracy, only whether its
    # repeats ran (the gate skips all 4, a clean candidate runs its first round of 2 at least)
    "evals=[mcq_sample]", "evals.mcq_sample.dataset.limit=20", "sequential.max_repeats=4",
    "parity.enabled=true",
    "parity.sequences_from=auto", "parity.sequences=16", "parity.prompt_tokens=16",
    "parity.new_tokens=32", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05", "+server.simulated.logprobs.restart_sigma=0.02",
    "server.simulated.effects=[{match:{attention_backend:trtllm_mha},accuracy_delta:-0.01,"
    "logit_sigma:0.15}]",
]  # fmt: skip


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release sign-off's sweep with the parity gate on."""
    folder = tmp_path_factory.mktemp("gate") / "sweep"
    run = run_script("mtp-eval", *SWEEP, f"hydra.sweep.dir={folder}", timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # the sweep's summary says why a cell's accuracy columns are empty
    assert "parity NO-GO: accuracy not run (mcq_sample 4 repeats)" in run.stdout
    return folder


def cell(sweep: Path, variant: str) -> tuple[Path, CellResult]:
    """The folder and result of the sweep's ``variant`` cell."""
    (folder,) = sweep.glob(f"*_tiny-sim_{variant}_auto_exact")
    result = read_result(folder)
    assert result is not None and result.status == "ok"
    return folder, result


def test_a_perturbed_variant_stops_after_parity(sweep: Path) -> None:
    folder, result = cell(sweep, "fmha_v2")
    assert result.parity is not None and result.parity.order == "first"
    gate = result.parity.gate
    assert gate is not None and gate.verdict == "NO-GO" and gate.stopped
    assert dict(gate.skipped) == {"mcq_sample": 4}
    assert gate.aa_cell is not None and "fa3_repeat" in gate.aa_cell
    assert not result.evals and not samples_path(folder, "mcq_sample").exists()
    assert any("not run: mcq_sample 4 repeats" in w for w in result.warnings)
    assert result.parity.rescore_s is not None and result.parity.wall_s is not None
    assert 0 < result.parity.rescore_s <= result.parity.wall_s


def test_a_clean_variant_goes_on_to_accuracy(sweep: Path) -> None:
    folder, result = cell(sweep, "flashinfer")
    assert result.parity is not None and result.parity.gate is not None
    assert result.parity.gate.verdict != "NO-GO" and not result.parity.gate.stopped
    assert (result.evals["mcq_sample"].n_repeats or 0) >= 2
    assert samples_path(folder, "mcq_sample").is_file()
    # the baseline generated the sequences: nothing to judge, its evals ran
    _, base = cell(sweep, "fa3")
    assert base.parity is not None and base.parity.gate is None and base.evals


def test_the_report_gives_the_parity_reason_and_the_repeats_not_spent(sweep: Path) -> None:
    out = sweep.parent / "report"
    # --no-html: only summary.json and report.md are read
    run = run_script("mtp-eval-report", str(sweep), "--out", str(out), "--no-html", timeout=180)
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "NO-GO"
    (cand,) = [c for c in summary["cells"] if c["variant"] == "fmha_v2"]
    kinds = {(k["kind"], k["verdict"]): k for k in cand["checks"]}
    assert ("parity_vs_baseline", "NO-GO") in kinds
    gated = kinds[("status", "INCONCLUSIVE")]
    assert "not run: mcq_sample 4 repeats" in gated["message"]
    assert gated["numbers"]["accuracy_skipped"] == {"mcq_sample": 4}
    assert not any(k["kind"] == "accuracy_vs_baseline" for k in cand["checks"])
    assert "not run: mcq_sample 4 repeats" in (out / "report.md").read_text()


def test_the_cost_benchmark_prints_the_gpu_time_ratio(sweep: Path, tmp_path: Path) -> None:
    """``python -m benchmarks.parity_cost`` on the sweep; a cell from before the block: marks."""
    import shutil
    import subprocess
    import sys

    from benchmarks.parity_cost import cell_cost, ratios
    from tests.helpers.cells import REPO

    older = tmp_path / "older"
    shutil.copytree(cell(sweep, "flashinfer")[0], older)
    data = json.loads((older / "result.json").read_text())
    del data["parity"]
    (older / "result.json").write_text(json.dumps(data))
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.parity_cost", str(sweep), str(older)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    costs = {v: cell_cost(*cell(sweep, v)) for v in ("fa3", "fa3_repeat", "flashinfer", "fmha_v2")}
    assert costs["fmha_v2"].gated and not costs["fmha_v2"].in_ratio
    assert not costs["fa3"].judged and costs["flashinfer"].in_ratio
    found = ratios(list(costs.values()))
    assert found.candidates == 2 and found.verdict is not None
    rescore = sum(costs[v].rescore_s or 0 for v in ("fa3_repeat", "flashinfer"))
    accuracy = sum(costs[v].accuracy_s for v in ("fa3_repeat", "flashinfer"))
    assert found.verdict == pytest.approx(rescore / accuracy)
    assert "GPU-time ratio per verdict (re-score / accuracy design, 3 candidates)" in run.stdout
    (line,) = [r for r in run.stdout.splitlines() if r.startswith(f"| {older} |")]
    assert line.endswith("| judged | marks |")


def test_the_cost_benchmark_prices_verdicts_from_a_design_sweep(sweep: Path) -> None:
    """``--design``: each candidate's accuracy from the design cell of its variant and KV dtype."""
    import subprocess
    import sys

    from benchmarks.parity_cost import cell_cost
    from tests.helpers.cells import REPO

    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.parity_cost", str(sweep), "--design", str(sweep)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    costs = {v: cell_cost(*cell(sweep, v)) for v in ("fa3_repeat", "flashinfer")}
    rescore = sum(c.rescore_s or 0 for c in costs.values())
    accuracy = sum(c.accuracy_s for c in costs.values())
    (line,) = [r for r in run.stdout.splitlines() if "against the release design" in r]
    assert f"{100 * rescore / accuracy:.2f}%" in line
    folder = cell(sweep, "fmha_v2")[0]  # its parity NO-GO skipped its evals: nothing to price
    gated = f"{folder.parent.name}/{folder.name}"
    rows = run.stdout.splitlines()
    assert any(r.startswith(f"| {gated} |") and "no design cell" in r for r in rows)
    bad = subprocess.run(
        [sys.executable, "-m", "benchmarks.parity_cost", str(sweep), "--design"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "usage: CELLS... [--design DESIGN...]" in bad.stdout


def _parity_rows(report: Path) -> list[str]:
    text = (report / "report.md").read_text()
    return text.split("## Parity\n", 1)[1].split("\n## ", 1)[0].splitlines()


def test_cells_moved_from_the_gpu_host_pair_as_they_ran(sweep: Path, tmp_path: Path) -> None:
    """A lease's cells, committed elsewhere, name the host's folders: paired by folder names."""
    import shutil

    moved = tmp_path / "results" / "sweep"
    shutil.copytree(sweep, moved)
    for summary in moved.glob("*/parity/*.json"):  # what a cell run on the GPU host records
        text = summary.read_text().replace(str(sweep), "/tmp/mtp-repo/outputs/live/sweep")
        summary.write_text(text)
    reports = []
    for folder in (sweep, moved):
        out = tmp_path / f"report-{len(reports)}"
        run = run_script("mtp-eval-report", str(folder), "--out", str(out), "--no-html",
                         timeout=120)  # fmt: skip  # report.md's rows are compared, not the page
        assert run.returncode in (0, 1, 2), run.stderr[-2000:]
        reports.append(_parity_rows(out))
    assert reports[0] == reports[1] and any("| GO |" in r for r in reports[1])
    assert not any("NO BASELINE" in r for r in reports[1])
