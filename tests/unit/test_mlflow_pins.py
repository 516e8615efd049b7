"""One MLflow version for the export's client and the UI/server that opens its store.

A newer client migrates a tracking store to a schema an older ``mlflow server`` / ``mlflow ui``
refuses (the ``mlflow`` extra once pulled mlflow-skinny 3.18, whose store 3.17.2's UI would not
open), so every MLflow requirement of ``pyproject.toml`` pins one and the same version.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
import tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
MLFLOW = re.compile(r"^(mlflow(?:-skinny|-tracing)?)\s*([^;\s]*)")


def mlflow_requirements() -> dict[str, str]:
    """``extra: requirement`` for every MLflow package any extra or the base install names."""
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    groups = {"base": project["dependencies"], **project["optional-dependencies"]}
    found = {}
    for group, requirements in groups.items():
        for requirement in requirements:
            if match := MLFLOW.match(requirement):
                found[f"{group}: {match[1]}"] = match[2]
    return found


def test_every_mlflow_requirement_pins_one_version():
    pins = mlflow_requirements()
    assert {"dev: mlflow", "mlflow: mlflow-skinny", "mlflow-ui: mlflow"} <= set(pins), pins
    assert all(spec.startswith("==") for spec in pins.values()), pins
    assert len(set(pins.values())) == 1, pins


@pytest.mark.mlflow
def test_the_installed_mlflow_is_the_pinned_one():
    pinned = next(iter(mlflow_requirements().values())).removeprefix("==")
    assert version("mlflow") == version("mlflow-skinny") == pinned
