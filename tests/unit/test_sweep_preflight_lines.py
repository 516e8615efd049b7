"""The pre-flight's lines (each problem once, its jobs named unless all have it) and the rule
that a sweep in which no cell produced a result exits 1."""

from __future__ import annotations

from collections import Counter

import pytest
from omegaconf import OmegaConf

from pipeline.cli.preflight import runs_elsewhere, said_once
from pipeline.cli.sweep_outcome import nothing_produced


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
