"""Where a speed-only sweep reaches users besides the report: the console and MLflow.

A real ``mtp-eval -m`` sweep of fa3 and fmha_v2 with ``evals=[]`` and a speed phase, on the
simulated server; its console summary must say what each cell measured (not a bare ``-``), and
``mtp-eval-report --mlflow`` must carry every speed entry of ``summary.json`` into a real MLflow
sqlite store, read back with MLflow's own client.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import mlflow  # the dev extra's: a missing MLflow fails here, never skips
import pytest

from pipeline.report.write.summary_json import read_summary
from pipeline.results.result_types import CellResult
from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration
SPEED = [
    "evals=[]", "speed.enabled=true", "speed.prefill_tokens=[1024,4096]",
    "speed.prefill_batches=[]", "speed.decode_batches=[2]", "speed.decode_new_tokens=32",
    "speed.repeats=3", "server.simulated.timing_model=h200_8b_shape",
    "server.simulated.timing_jitter=0.03", "server.simulated.startup_delay_s=0.1",
]  # fmt: skip


@dataclass(frozen=True)
class SpeedSweep:
    """The sweep folder and what ``mtp-eval -m`` printed."""

    folder: Path
    stdout: str


def _run(*argv: str, cwd: Path = REPO, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> SpeedSweep:
    """fa3 and fmha_v2, speed only."""
    folder = tmp_path_factory.mktemp("speed-reach") / "sweep"
    run = _run(console_script("mtp-eval"), "-m", "backend=fa3,fmha_v2", *SPEED,
               f"hydra.sweep.dir={folder}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return SpeedSweep(folder, run.stdout)


def _results(sweep: SpeedSweep) -> list[CellResult]:
    paths = sorted(sweep.folder.glob("*/result.json"))
    return [CellResult.from_json(json.loads(p.read_text())) for p in paths]


def test_the_summary_table_names_a_speed_only_cells_prefill_not_a_dash(sweep: SpeedSweep):
    table = sweep.stdout.split(f"cells under {sweep.folder}", 1)[1]
    results = _results(sweep)
    assert len(results) == 2
    for result in results:
        assert result.evals == {} and result.speed is not None
        by_tokens = {p.prompt_tokens: p.median_ms for p in result.speed.points
                     if p.phase == "prefill"}  # fmt: skip
        row = next(line for line in table.splitlines() if line.startswith(result.cell.name))
        expected = (f"speed only: prefill {by_tokens[1024]:.1f} ms (1 x 1,024) to "
                    f"{by_tokens[4096]:.1f} ms (1 x 4,096), 1 decode shape")  # fmt: skip
        assert expected in row, row
        (decode,) = [p for p in result.speed.points if p.phase == "decode"]
        assert decode.median_ms is not None and decode.accept_length is not None
        line = (f"{result.cell.name}: speed decode 2 x 512 (+32): {decode.median_ms:.1f} ms "
                f"median of 3")  # fmt: skip
        assert line in table and f"accept length {decode.accept_length:.2f}" in table
    pointer = f"speed ratios to the baseline, with 95% intervals: mtp-eval-report {sweep.folder}"
    assert table.count(pointer) == 1


def test_a_single_speed_only_cell_says_the_same_at_its_end(tmp_path: Path):
    cell = tmp_path / "cell"
    run = _run(console_script("mtp-eval"), "backend=fa3", *SPEED, f"hydra.run.dir={cell}")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "speed only: prefill " in run.stdout and "speed prefill 1 x 4,096: " in run.stdout
    assert f"mtp-eval-report {cell}" in run.stdout


@pytest.mark.mlflow
def test_mlflow_gets_every_speed_entry_under_names_shared_across_runs(
    sweep: SpeedSweep, tmp_path: Path
):
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    # Run beside the store: a sqlite store keeps its artifacts in ./mlruns, never in the checkout.
    run = _run(console_script("mtp-eval-report"), str(sweep.folder), "--out",
               str(tmp_path / "report"), "--mlflow", uri, cwd=tmp_path, timeout=300)  # fmt: skip
    assert run.returncode in (0, 2), run.stdout[-2000:] + run.stderr[-2000:]
    entries = read_summary(tmp_path / "report" / "summary.json")["speed"]
    assert len(entries) == 2 * 3
    client = mlflow.tracking.MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("mtp-eval")
    runs = {r.data.params.get("variant"): r.data.metrics
            for r in client.search_runs([experiment.experiment_id])}  # fmt: skip
    for entry in entries:
        metrics = runs[entry["variant"]]
        prefix = f"speed/{entry['phase']}_{entry['batch']}x{entry['tokens']}"
        assert metrics[f"{prefix}/median_ms"] == pytest.approx(entry["median_ms"])
        if entry["phase"] == "decode":
            assert metrics[f"{prefix}/tokens_per_s"] == pytest.approx(entry["tokens_per_s"])
            assert metrics[f"{prefix}/accept_length"] == pytest.approx(entry["accept_length"])
        if entry["variant"] == "fa3":  # the baseline: no ratio to itself
            assert f"{prefix}/ratio" not in metrics
            continue
        low, high = entry["ratio_ci95"]
        assert metrics[f"{prefix}/ratio"] == pytest.approx(entry["ratio"])
        assert metrics[f"{prefix}/ratio_low"] == pytest.approx(low)
        assert metrics[f"{prefix}/ratio_high"] == pytest.approx(high)
        assert low <= metrics[f"{prefix}/ratio"] <= high
