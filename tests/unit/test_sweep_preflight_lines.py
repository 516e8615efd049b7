"""The pre-flight's lines (each problem once, its jobs named unless all have it) and the rule
that a sweep in which a cell failed, or no cell produced a result, exits 1."""

from __future__ import annotations

from collections import Counter

import pytest
from omegaconf import OmegaConf

from pipeline.cli.preflight import runs_elsewhere, said_once
from pipeline.cli.sweep_outcome import CellOutcome, nothing_produced, sweep_end_line


@pytest.mark.parametrize(
    ("found", "jobs", "lines"),
    [
        ([], 3, []),
        ([("no GPU", "a"), ("no GPU", "b")], 2, ["no GPU"]),
        ([("no GPU", "a"), ("no version", "a"), ("no GPU", "b")], 2,
         ["no GPU", "no version (in a)"]),
        ([("no file", "gpu=auto"), ("no file", "gpu=h200")], 3,
         ["no file (in gpu=auto; gpu=h200)"]),
    ],
)  # fmt: skip
def test_each_problem_is_said_once(found, jobs, lines):
    assert said_once(found, jobs) == lines


@pytest.mark.parametrize(
    ("counts", "line"),
    [
        ({"ok": 1, "failed": 7}, None),
        ({"planned": 2}, None),
        ({"failed": 2}, "no cell of this sweep produced a result (2 failed); exit code 1"),
        ({"failed": 1, "unsupported": 3},
         "no cell of this sweep produced a result (1 failed, 3 unsupported); exit code 1"),
        ({}, "no cell of this sweep produced a result (no cell ran); exit code 1"),
    ],
)  # fmt: skip
def test_a_sweep_without_a_result_is_told(counts, line):
    assert nothing_produced(Counter(counts)) == line


def _outcomes(*statuses: str) -> list[CellOutcome]:
    return [
        CellOutcome(f"c{i}", s, "crash" if s == "failed" else "") for i, s in enumerate(statuses)
    ]


@pytest.mark.parametrize(
    ("statuses", "line"),
    [
        (("ok", "ok"), None),
        (("ok", "unsupported"), None),  # SGLang's rules refused it: an outcome, not a failure
        (("planned", "planned"), None),
        (("ok", "failed"), "1 of 2 cells failed (c1: crash); the other cells' results are kept"),
        (("failed", "ok", "failed", "failed", "failed"),
         "4 of 5 cells failed (c0: crash; c2: crash; c3: crash and 1 more)"),
        (("failed", "failed"), "no cell of this sweep produced a result (2 failed)"),
    ],
)  # fmt: skip
def test_a_sweep_with_a_failed_cell_ends_with_exit_1(statuses, line):
    said = sweep_end_line(_outcomes(*statuses))
    assert said == line if line is None else (said is not None and said.startswith(line))
    assert said is None or said.endswith("exit code 1")


@pytest.mark.parametrize(
    ("target", "elsewhere"),
    [
        ("hydra_plugins.mtp_eval_launcher.MtpEvalSlurmLauncher", True),
        ("hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher", True),
        ("hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher", False),
        ("hydra._internal.core_plugins.basic_launcher.BasicLauncher", False),
    ],
)
def test_a_sweep_on_slurm_is_not_judged_by_the_login_node(target, elsewhere):
    config = OmegaConf.create({"hydra": {"launcher": {"_target_": target}}})
    assert runs_elsewhere(config) is elsewhere
