"""The ``datasets`` stand-in lets SGLang 0.5.23's bench_serving import on the offline host.

Run as bench_serving runs there: a fresh interpreter with the stand-in first on PYTHONPATH (this
checkout's venv has the real ``datasets``: the stand-in must shadow it, as it would stand alone).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

STANDINS = Path(__file__).resolve().parents[2] / "benchmarks" / "live_h200" / "bench_standins"
# sglang/benchmark/datasets/mmmu.py's module-level import, then a call it would make for mmmu
MMMU_IMPORT = "from datasets import load_dataset; import datasets; print(datasets.__version__)"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(STANDINS)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=60, check=False)  # fmt: skip


def test_sglangs_import_of_datasets_succeeds_with_the_stand_in():
    run = _python(MMMU_IMPORT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0.0.0+mtp-eval-standin"


def test_loading_a_dataset_refuses_and_names_the_way_out():
    run = _python("from datasets import load_dataset; load_dataset('lmms-lab/MMMU')")
    assert run.returncode == 1
    assert "RuntimeError" in run.stderr and "--dataset-name random-ids" in run.stderr
    assert "'lmms-lab/MMMU'" in run.stderr
