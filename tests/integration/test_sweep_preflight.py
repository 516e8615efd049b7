"""Host-wide problems are said once, before the first cell, with every missing input at once; a
sweep in which no cell produced a result exits 1. Through the installed console scripts, each
test one report a user made: a GPU-less sign-off, a missing dataset file, a dry run missing
settings.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script, result_of

pytestmark = pytest.mark.integration
QUICK = ["evals.mcq_sample.dataset.limit=6", "evals.mcq_sample.repeats=1"]
NO_GPU = "no NVIDIA GPU detected here; set gpu=..."
NO_VERSION = "cannot tell which SGLang version to plan for"
no_gpu_here = pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU is here")
no_sglang_here = pytest.mark.skipif(
    importlib.util.find_spec("sglang") is not None, reason="sglang is installed here"
)


def _run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(script), *args],
        capture_output=True, text=True, timeout=600, check=False, cwd=cwd,
    )  # fmt: skip


def _said(run: subprocess.CompletedProcess[str]) -> str:
    return run.stdout[-3000:] + run.stderr[-3000:]


@no_gpu_here
@no_sglang_here
def test_the_signoff_without_a_gpu_says_so_once_with_the_version_and_starts_nothing(
    tmp_path, fast_sim
):
    # Was: "no NVIDIA GPU detected here" 24 times (8 cells x 3 lines), then an UNDECIDED report.
    sweep = tmp_path / "signoff"
    args = ["--sweep-dir", str(sweep), "evals=[mcq_sample]", *fast_sim, *QUICK]
    run = _run("mtp-eval-signoff", args, tmp_path)
    assert run.returncode == 2, _said(run)
    said = run.stdout + run.stderr
    assert said.count(NO_GPU) == 1 and said.count(NO_VERSION) == 1, said[-3000:]
    assert "nothing was started" in run.stderr and "nothing to judge" in run.stderr
    assert not list(tmp_path.rglob("result.json")) and not sweep.exists()


@no_gpu_here
def test_compare_backends_without_a_gpu_is_refused_before_its_first_cell(tmp_path, fast_sim):
    # Was: every cell failed with the same line, and the sweep exited 0.
    args = ["experiment=compare_backends", "evals=[mcq_sample]", "server.sglang_version=0.5.19"]
    run = _run(
        "mtp-eval", [*args, *fast_sim, *QUICK, f"hydra.sweep.dir={tmp_path / 's'}"], tmp_path
    )
    assert run.returncode == 2, _said(run)
    assert (run.stdout + run.stderr).count(NO_GPU) == 1, _said(run)
    assert not list(tmp_path.rglob("result.json"))


def test_a_missing_dataset_file_is_said_once_for_the_whole_sweep(tmp_path, fast_sim):
    # Was: 4 cells x the same line in the table, the notes and each job's report, exit 0.
    missing = tmp_path / "questions.csv"
    args = [
        "-m", "backend=fa3,fmha_v2", "kv_dtype=auto,fp8_e4m3",
        "evals.mcq_sample.dataset.source=file", f"evals.mcq_sample.dataset.path={missing}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}", *fast_sim, *QUICK,
    ]  # fmt: skip
    run = _run("mtp-eval", args, tmp_path)
    assert run.returncode == 2, _said(run)
    said = run.stdout + run.stderr
    assert said.count(f"dataset.path='{missing}': no such file") == 1, said[-3000:]
    assert "(in " not in said  # every job has it: no job list
    assert not list(tmp_path.rglob("result.json"))


@no_gpu_here
@no_sglang_here
def test_a_dry_run_for_a_real_server_names_every_missing_setting_in_one_run(tmp_path, fast_sim):
    # Was: three runs, one per missing setting, the second "ValueError: cannot tell ...".
    sweep = ["-m", "server=sglang", "backend=fa3,fmha_v2", "dry_run=true", *QUICK]
    run = _run("mtp-eval", [*sweep, f"hydra.sweep.dir={tmp_path / 'a'}"], tmp_path)
    assert run.returncode == 2, _said(run)
    assert "set gpu=..." in run.stderr and "set server.sglang_version=" in run.stderr
    assert "ValueError" not in run.stdout + run.stderr
    fixed = [
        *sweep,
        "gpu=h200",
        "server.sglang_version=0.5.19",
        f"hydra.sweep.dir={tmp_path / 'b'}",
    ]
    planned = _run("mtp-eval", fixed, tmp_path)
    assert planned.returncode == 0, _said(planned)
    assert {result_of(c).status for c in (tmp_path / "b").glob("*_fa3_*")} == {"planned"}


@no_gpu_here
@no_sglang_here
def test_a_single_dry_run_names_both_missing_settings_too(tmp_path):
    run = _run(
        "mtp-eval", ["server=sglang", "dry_run=true", f"hydra.run.dir={tmp_path / 'c'}"], tmp_path
    )
    assert run.returncode == 2, _said(run)
    assert NO_GPU in run.stderr and NO_VERSION in run.stderr
    assert not (tmp_path / "c" / "result.json").exists()


def test_a_sweep_in_which_no_cell_produced_a_result_exits_1(tmp_path, fast_sim):
    # Nothing listens on port 9: every cell fails once it reaches for the server.
    args = [
        "-m", "server=external", "server.base_url=http://127.0.0.1:9", "gpu=h200",
        "server.sglang_version=0.5.19", "server.external_timeout_s=2", "backend=fa3,fmha_v2",
        f"hydra.sweep.dir={tmp_path / 'sweep'}", *fast_sim, *QUICK,
    ]  # fmt: skip
    run = _run("mtp-eval", args, tmp_path)
    assert run.returncode == 1, _said(run)
    assert "no cell of this sweep produced a result (2 failed); exit code 1" in run.stdout
    assert len(list(tmp_path.rglob("result.json"))) == 2  # each failure is still on record


def test_a_sweep_with_one_cell_that_ran_exits_0(tmp_path, fast_sim):
    # fa3 on a B200 is refused by SGLang's rules, fmha_v2 runs: the report judges the rest.
    args = [
        "-m", "backend=fa3,fmha_v2", "gpu=b200", "dry_run=true",
        f"hydra.sweep.dir={tmp_path / 'sweep'}", *fast_sim, *QUICK,
    ]  # fmt: skip
    run = _run("mtp-eval", args, tmp_path)
    assert run.returncode == 0, _said(run)
    statuses = sorted(result_of(p.parent).status for p in tmp_path.rglob("result.json"))
    assert statuses == ["planned", "unsupported"], statuses


def _stand_in_nvidia_smi(folder: Path, line: str) -> dict[str, str]:
    """PATH with an ``nvidia-smi`` that reports one GPU (the real one cannot run here)."""
    folder.mkdir()
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\necho '{line}'\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_a_gpu_named_by_hand_is_held_to_the_hosts_own(tmp_path, fast_sim):
    # gpu=h200 on a B200 host planned SM90 kernels and rules for SM100 without a word.
    env = _stand_in_nvidia_smi(tmp_path / "bin", "NVIDIA B200, 10.0, 580.65.06, 183359")
    args = ["-m", "server=sglang", "server.sglang_version=0.5.23", "gpu=h200",
            "backend=fa3,fmha_v2", *QUICK, f"hydra.sweep.dir={tmp_path / 's'}"]  # fmt: skip
    run = subprocess.run([console_script("mtp-eval"), *args], capture_output=True, text=True,
                         timeout=600, check=False, cwd=tmp_path, env=env)  # fmt: skip
    said = run.stdout + run.stderr
    assert run.returncode == 2, said[-3000:]
    assert said.count("but this host, which starts the server, has NVIDIA B200 (SM100)") == 1
    assert not list(tmp_path.rglob("result.json"))  # refused before the first cell
    planned = subprocess.run([console_script("mtp-eval"), *args, "dry_run=true"],
                             capture_output=True, text=True, timeout=600, check=False,
                             cwd=tmp_path, env=env)  # fmt: skip
    assert planned.returncode == 0, (planned.stdout + planned.stderr)[-3000:]  # a plan for any GPU
