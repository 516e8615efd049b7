"""SPEED-Bench through ``datasets`` and ``mtp-eval``: a local folder in its layout, the bundled
sample on the simulated server, and an offline machine without the data failing in seconds."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from evals.base import make_eval
from evals.datasets import DATA_DIR
from evals.eval_conf import DatasetConf, EvalConf, SpeedBenchConf
from tests.helpers.cells import compose_conf, console_script, result_of

pytestmark = pytest.mark.integration
CONFIGS = {"qualitative": "speed_bench_sample.jsonl",
           "throughput_1k": "speed_bench_throughput_sample.jsonl"}  # fmt: skip


def _folder(tmp_path: Path) -> Path:
    """A local copy in the hub's layout: a README whose configs name each split's files."""
    root = tmp_path / "SPEED-Bench"
    lines = ["---", "configs:"]
    for config, sample in CONFIGS.items():
        (root / config).mkdir(parents=True)
        shutil.copy(DATA_DIR / sample, root / config / "test.jsonl")
        lines += [f"- config_name: {config}", "  data_files:", "  - split: test",
                  f"    path: {config}/test.jsonl"]  # fmt: skip
    (root / "README.md").write_text("\n".join([*lines, "---", ""]))
    return root


@pytest.mark.parametrize(("config", "count"), [("qualitative", 22), ("throughput_1k", 6)])
def test_a_local_folder_in_the_hubs_layout_loads_through_datasets(tmp_path, config, count):
    dataset = DatasetConf(source="hf", path=str(_folder(tmp_path)), subset=config, split="test")
    ev = make_eval("sb", EvalConf(kind="speed_bench", dataset=dataset,
                                  speed_bench=SpeedBenchConf(bucket="1k")))  # fmt: skip
    assert len(ev.prompts()) == count


def test_the_sample_runs_with_a_category_and_bucket_per_sample(tmp_path, fast_sim):
    cell = tmp_path / "cell"
    run = subprocess.run(
        [console_script("mtp-eval"), "evals=[speed_bench_sample]", f"hydra.run.dir={cell}",
         *fast_sim], capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    result = result_of(cell)
    for name, bucket in (("speed_bench_sample", None), ("speed_bench_throughput_sample", "1k")):
        block = result.evals[name]
        assert block.graded is False and block.accept is not None
        rows = [
            json.loads(x) for x in (cell / "samples" / f"{name}.jsonl").read_text().splitlines()
        ]
        assert {r["meta"]["bucket"] for r in rows} == {bucket}
        assert all(r["meta"]["category"] and r["spec"] for r in rows)


def test_an_offline_machine_without_the_data_fails_in_seconds_naming_it(tmp_path, fast_sim):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    start = time.monotonic()
    run = subprocess.run(
        [console_script("mtp-eval"), "evals=[speed_bench]", f"hydra.run.dir={tmp_path / 'c'}",
         *fast_sim], capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    took = time.monotonic() - start
    said = run.stdout + run.stderr
    assert run.returncode == 2, said[-2000:]
    assert "HF dataset 'nvidia/SPEED-Bench' (subset='throughput_32k'" in said
    assert "datasets.load_dataset('nvidia/SPEED-Bench', 'qualitative', split='test')" in said
    assert took < 30, f"{took:.0f} s"


def test_each_category_eval_reads_its_own_rows_of_the_qualitative_split(tmp_path):
    folder = str(_folder(tmp_path))
    evals = compose_conf(["evals=[speed_bench_by_category]"]).evals
    assert len(evals) == 11
    for name, conf in evals.items():
        local = dataclasses.replace(conf, dataset=dataclasses.replace(conf.dataset, path=folder))
        prompts = make_eval(name, local).prompts()
        assert {p.meta["category"] for p in prompts} == {name.removeprefix("speed_bench_")}
        assert len(prompts) == 2
