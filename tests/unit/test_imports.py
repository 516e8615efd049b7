"""Import hygiene: our generic package names resolve to this project."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("package", ["pipeline", "backends", "evals"])
def test_generic_package_names_are_ours(package):
    module = __import__(package)
    assert Path(module.__file__).resolve().parent == REPO / package
