"""The MLflow export's run keys, names and times: what survives moving a sweep's folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.report.load.cells import CellRecord
from pipeline.report.write.mlflow_identity import recorded_sweep_dir, sweep_origin
from pipeline.report.write.mlflow_runs import epoch_ms, run_key, run_name, sweep_key
from tests.helpers.records import record


def cell(folder: Path | None, overrides: tuple[str, ...] = (), sweep: str = "") -> CellRecord:
    return record(str(folder), model="tiny-sim", folder=folder, simulated=True,
                  overrides=overrides, sweep=sweep)  # fmt: skip


def write_yaml(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))


def hydra(runtime: dict[str, str], sweep_dir: str = "outputs/multirun/${now:%H-%M}") -> dict:
    return {"hydra": {"sweep": {"dir": sweep_dir}, "runtime": runtime}}


def test_the_origin_is_where_hydra_wrote_the_jobs_whatever_the_folder_is_called_now(
    tmp_path: Path,
):
    ran = "/scratch/me/outputs/multirun/2026-12-04_18-42-01"
    for where in (tmp_path / "a" / "sweep", tmp_path / "b" / "renamed"):
        write_yaml(where / "multirun.yaml", hydra({"cwd": "/scratch/me"}))
        write_yaml(where / "0_x" / ".hydra" / "hydra.yaml",
                   hydra({"cwd": "/scratch/me", "output_dir": f"{ran}/0_x"}))  # fmt: skip
        assert sweep_origin(where) == ran


@pytest.mark.parametrize(
    ("sweep_dir", "cwd", "origin"),
    [
        ("outputs/live/g2-base", "/tmp/mtp-repo", "/tmp/mtp-repo/outputs/live/g2-base"),
        ("/data/sweeps/nightly", "/home/me", "/data/sweeps/nightly"),
        ("outputs/multirun/${now:%Y-%m-%d_%H-%M-%S}", "/home/me", None),  # Hydra keeps it so
    ],
)
def test_multirun_yaml_gives_the_sweep_dir_only_when_hydra_kept_it_literal(
    sweep_dir: str, cwd: str, origin: str | None
):
    assert recorded_sweep_dir(hydra({"cwd": cwd}, sweep_dir)) == origin


def test_without_hydra_records_the_folder_name_is_the_origin(tmp_path: Path):
    (tmp_path / "committed-sweep" / "0_x").mkdir(parents=True)
    write_yaml(tmp_path / "committed-sweep" / "multirun.yaml", hydra({"cwd": "/home/me"}))
    assert sweep_origin(tmp_path / "committed-sweep") == "committed-sweep"


def test_a_key_names_the_origin_and_the_job_never_the_present_path(tmp_path: Path):
    job = ("experiment=demo", "backend=fa3")
    here = cell(tmp_path / "a" / "0_x", job)
    moved = cell(tmp_path / "elsewhere" / "1_y", job)
    missing = cell(None, job)  # a job that left no folder keeps its key once it has one
    assert (
        run_key("/ran/here", here) == run_key("/ran/here", moved) == run_key("/ran/here", missing)
    )
    assert run_key("/ran/there", here) != run_key("/ran/here", here)
    assert run_key("/o", cell(tmp_path / "0_x")) == run_key("/o", cell(tmp_path / "m" / "0_x"))
    assert run_key("/o", cell(tmp_path / "0_x")) != run_key("/o", cell(tmp_path / "1_x"))
    assert sweep_key({"/a/s": "/r1", "/b/t": "/r2"}) == sweep_key({"/c/t": "/r2", "/d/s": "/r1"})


def test_a_run_is_named_by_its_sweep_folder_and_the_cell(tmp_path: Path):
    record = cell(tmp_path / "nightly" / "0_x", sweep=str(tmp_path / "nightly"))
    assert run_name(record) == "nightly tiny-sim/fa3/auto/sp=None/sd=None @ H200 [simulated]"


@pytest.mark.parametrize(
    ("stamp", "ms"),
    [
        ("2026-11-30T22:50:10+00:00", 1_796_079_010_000),
        ("2026-11-30T23:50:10+01:00", 1_796_079_010_000),  # one moment, another zone
        (None, None),
        ("", None),
        ("not a time", None),
    ],
)
def test_result_timestamps_become_mlflow_milliseconds(stamp: str | None, ms: int | None):
    assert epoch_ms(stamp) == ms
