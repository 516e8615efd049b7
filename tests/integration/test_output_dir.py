"""``output_dir=X`` is the cell's one folder: Hydra's ``.hydra/`` and ``cli.log`` go there too.

A new user ran the README's ``mtp-eval backend=fa3 evals=[] parity.enabled=true
output_dir=outputs/par/fa3``: the cell went to ``outputs/par/fa3`` (no ``.hydra/``), and Hydra
made ``outputs/runs/<time>_...`` holding only ``.hydra/`` and ``cli.log``, which a later
``mtp-eval-report outputs/runs`` listed as MISSING ("the job started and never finished").
"""

from __future__ import annotations

import pytest

from pipeline.config.schema import run_dir
from tests.helpers.cells import result_of, run_script

pytestmark = pytest.mark.integration
QUICK = ["evals.mcq_sample.dataset.limit=4", "evals.mcq_sample.repeats=1"]


@pytest.mark.parametrize(
    ("output_dir", "expected"),
    [(None, "outputs/runs/t"), ("", "outputs/runs/t"), ("out/x", "out/x"), ("/abs", "/abs")],
)
def test_the_run_folder_is_output_dir_when_set(output_dir: str | None, expected: str) -> None:
    assert run_dir(output_dir, "outputs/runs/t") == expected


@pytest.mark.parametrize("relative", [True, False])
def test_output_dir_holds_the_cell_and_hydras_files_and_nothing_else_is_made(
    tmp_path, fast_sim, relative: bool
) -> None:
    target = "out/fa3" if relative else str(tmp_path / "out/fa3")
    run = run_script("mtp-eval", "backend=fa3", *fast_sim, *QUICK, f"output_dir={target}",
                     cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    cell = tmp_path / "out/fa3"
    assert result_of(cell).status == "ok"
    assert (cell / ".hydra" / "config.yaml").is_file() and (cell / "cli.log").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no outputs/runs/<time>_...
    # The report over the folder above finds one finished cell, nothing missing.
    report = run_script("mtp-eval-report", str(tmp_path / "out"), "--no-html", cwd=tmp_path)
    assert "MISSING" not in report.stdout + report.stderr, report.stdout[-2000:]
