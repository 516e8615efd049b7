"""The start-up sweeps' table (issue 42 item 5): marks to times, the hidden start-up, the lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.live_h200.startup_sweeps import (
    CellTimes,
    Sweep,
    cell_times,
    hidden_startup,
    main,
    table,
)

MARKS = {"process_start": -3.0, "launch": 0.5, "ready": 70.5, "verified": 71.0,
         "evals_done": 91.0, "stopped": 96.0, "end": 96.0}  # fmt: skip


def test_marks_become_start_up_evals_stop_and_wall() -> None:
    assert cell_times(MARKS) == CellTimes(startup=70.0, evals=20.0, stop=5.0, wall=99.0)


@pytest.mark.parametrize(
    ("cells", "hidden"),
    [
        ([CellTimes(70, 20, 5, 99)], 0.0),  # one cell: nothing to start ahead
        ([CellTimes(70, 20, 5, 99), CellTimes(70, 20, 5, 99)], 25.0),  # up to evals + stop
        ([CellTimes(70, 200, 5, 280), CellTimes(70, 20, 5, 99)], 70.0),  # the whole start
    ],
)
def test_a_later_start_hides_behind_the_cell_before(cells: list[CellTimes], hidden: float) -> None:
    assert hidden_startup(cells) == hidden


def test_the_table_says_both_walls_per_cell_and_the_bound() -> None:
    cells = [CellTimes(70, 20, 5, 99), CellTimes(70, 20, 5, 99)]
    lines = table(Sweep(200.0, cells), Sweep(150.0, cells))
    assert lines[2].startswith("| today | 0 | 70.00 | 20.00 | 5.00 | 99.00 |")
    assert (
        "- today: 100.00 s per cell (200.0 s for 2 cells; waiting for servers 70% of it)" in lines
    )
    assert ("- server.prestart_next=true: 75.00 s per cell (150.0 s), 25% less; "
            "the bound from today's marks: 87.50 s") in lines  # fmt: skip


def test_a_sweep_without_its_wall_or_cells_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = tmp_path / "seq", tmp_path / "pre"
    before.mkdir()
    after.mkdir()
    assert main([str(before), str(after)]) == 1
    assert "seq/sweep_wall_s.txt: missing" in capsys.readouterr().err
    (before / "sweep_wall_s.txt").write_text("200.0\n")
    assert main([str(before), str(after)]) == 1
    assert "seq: no cell wrote a result.json" in capsys.readouterr().err
