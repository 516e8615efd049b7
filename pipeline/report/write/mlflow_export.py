"""``mtp-eval-report SWEEP --mlflow URI``: the report's runs written to an MLflow tracking store.

Idempotent: each run is found again by its ``mtp_eval.key`` tag (where the sweep ran and the job:
``mlflow_runs.run_key``), so a second export of the same sweep, from its folder or a moved copy,
updates the runs it made (name, tags, end time, new or changed metrics, the artifacts) instead of
adding runs. MLflow keeps a run's start time as created. MLflow is imported here only (an optional
extra: ``pip install 'mtp-eval[mlflow]'``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.write.mlflow_identity import sweep_origin
from pipeline.report.write.mlflow_runs import TAG, RunFields, cell_runs, sweep_run

KEY = f"{TAG}.key"


class MlflowExportError(ValueError):
    """The export cannot be done; the message says what to change."""


@dataclass(frozen=True)
class Exported:
    """What an export wrote: the experiment, the parent run and the cells' runs."""

    experiment_id: str
    parent_run_id: str
    cell_run_ids: tuple[str, ...]
    created: int  # runs created by this export (0 on a second export of the same sweep)


def _open(uri: str, experiment: str) -> tuple[Any, str]:
    """The client of the store at ``uri`` and the experiment's id (created when missing)."""
    try:
        import mlflow
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError as err:
        raise MlflowExportError(
            "--mlflow needs MLflow: pip install 'mtp-eval[mlflow]' (or mlflow itself)"
        ) from err
    try:
        client = MlflowClient(tracking_uri=uri)
        return client, _experiment(client, experiment)
    except MlflowException as err:
        if "database schema" not in str(err):
            raise
        # MLflow calls any other schema "out-of-date", also one a newer MLflow wrote.
        raise MlflowExportError(
            f"the MLflow store at {uri} has another schema than MLflow {mlflow.__version__} "
            f"(this install) writes ({err.message.split('. ')[0]}): export with the MLflow that "
            "wrote it, or take a backup and run `mlflow db upgrade URI` if it is older; the "
            "mlflow extras pin client and UI to one version so that the UI opens the store"
        ) from err


def _experiment(client: Any, name: str) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None and found.lifecycle_stage == "deleted":
        raise MlflowExportError(f"MLflow experiment {name!r} is deleted: restore it or pick "
                                "another with --mlflow-experiment")  # fmt: skip
    return str(found.experiment_id) if found else str(client.create_experiment(name))


def _find(client: Any, experiment: str, key: str) -> Any:
    runs = client.search_runs([experiment], filter_string=f"tags.`{KEY}` = '{key}'", max_results=2)
    return runs[0] if runs else None


def write_run(client: Any, experiment: str, fields: RunFields) -> tuple[str, bool]:
    """Create or update one run; returns its id and whether it was created."""
    from mlflow.entities import Metric, Param, RunTag

    run = _find(client, experiment, fields.key)
    created = run is None
    if run is None:
        run = client.create_run(
            experiment, start_time=fields.start_ms, tags={KEY: fields.key}, run_name=fields.name
        )
    elif run.info.run_name != fields.name:  # the sweep's folder was renamed
        client.update_run(run.info.run_id, name=fields.name)
    run_id, data = run.info.run_id, run.data
    _check_params(run_id, fields, data.params)
    # A new metric is stamped with the measurement's end; a changed one with now, so that MLflow,
    # which shows the latest value, shows it.
    now = int(time.time() * 1000)
    params = [Param(k, v) for k, v in fields.params.items() if k not in data.params]
    metrics = [Metric(k, v, now if k in data.metrics else fields.end_ms or now, 0)
               for k, v in fields.metrics.items() if data.metrics.get(k) != v]  # fmt: skip
    tags = [RunTag(k, v) for k, v in fields.tags.items()]
    for at in range(0, max(len(params), len(metrics), len(tags)), 100):  # MLflow's batch cap
        part = slice(at, at + 100)
        client.log_batch(run_id, metrics=metrics[part], params=params[part], tags=tags[part])
    _log_artifacts(client, run_id, fields.artifacts)
    client.set_terminated(run_id, fields.status, end_time=fields.end_ms)
    return run_id, created


def _check_params(run_id: str, fields: RunFields, logged: dict[str, str]) -> None:
    for name, value in fields.params.items():
        if name in logged and logged[name] != value:
            raise MlflowExportError(
                f"MLflow run {run_id} ({fields.name}) has param {name}={logged[name]!r}, "
                f"this report says {value!r}: MLflow params never change; delete that run or "
                "export to another experiment (--mlflow-experiment)"
            )


def _log_artifacts(client: Any, run_id: str, paths: Sequence[Path]) -> None:
    """Each file at the run's artifact root, each folder under its own name (``samples/``)."""
    for path in paths:
        if path.is_file():
            client.log_artifact(run_id, str(path))
        elif path.is_dir():
            client.log_artifacts(run_id, str(path), artifact_path=path.name)


def export_report(
    report: Report, files: Sequence[Path], uri: str, experiment: str = "mtp-eval"
) -> Exported:
    """Write ``report`` to the tracking store at ``uri``: parent run, cell runs, artifacts.

    The parent run holds the report's files under ``report/``; each cell's run its
    ``result.json`` and ``samples/``.

    Args:
        report: the built report.
        files: the report's files (``write_outputs``), logged as the parent run's artifacts.
        uri: an MLflow tracking URI (``http://host:5000``, ``sqlite:///mlflow.db``, a folder).
        experiment: the MLflow experiment (created when missing).

    Raises:
        MlflowExportError: MLflow is not installed, the store has another MLflow's schema, or
            it holds a run the export cannot update.
    """
    client, experiment_id = _open(uri, experiment)
    origins = {folder: sweep_origin(Path(folder)) for folder in {c.sweep for c in report.cells}}
    parent, made = write_run(client, experiment_id, sweep_run(report, origins))
    cells = [write_run(client, experiment_id, f) for f in cell_runs(report, origins, parent)]
    for path in files:
        client.log_artifact(parent, str(path), artifact_path="report")
    created = int(made) + sum(int(c) for _, c in cells)
    return Exported(experiment_id, parent, tuple(r for r, _ in cells), created)
