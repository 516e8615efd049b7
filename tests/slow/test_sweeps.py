"""Real Hydra multiruns of the `mtp-eval` app as a subprocess, as a user types them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.serving.server import free_port
from tests.helpers.cells import REPO, processes_mentioning

pytestmark = pytest.mark.slow


def mtp_eval(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=timeout,
    )


def results(sweep: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sweep.glob("*/result.json")}


def test_demo_experiment_runs_four_simulated_cells(tmp_path):
    sweep = tmp_path / "demo"
    proc = mtp_eval("experiment=demo", f"hydra.sweep.dir={sweep}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = results(sweep)
    assert len(cells) == 4
    assert {(r["cell"]["variant"], r["cell"]["kv_dtype"]) for r in cells.values()} == {
        ("fmha_v2", "auto"),
        ("fmha_v2", "fp8_e4m3"),
        ("fa3", "auto"),
        ("fa3", "fp8_e4m3"),
    }
    assert all(r["status"] == "ok" and r["simulated"] for r in cells.values())
    assert f"4 cells under {sweep}" in proc.stdout
    assert "(simulated)" in proc.stdout
    assert processes_mentioning(str(sweep)) == []
    report = subprocess.run(
        [sys.executable, "-m", "pipeline.report.cli", str(sweep)],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=120,
    )
    assert report.returncode == 1, report.stdout + report.stderr  # the planted NO-GO
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    verdicts = {
        (c["variant"], c["kv_dtype"]): k["verdict"]
        for c in summary["cells"]
        for k in c["checks"]
        if k["kind"] == "accuracy_vs_baseline"
    }
    assert verdicts == {("fmha_v2", "auto"): "GO", ("fmha_v2", "fp8_e4m3"): "NO-GO"}


def test_sm120_sweep_marks_unsupported_cells_and_exits_clean(tmp_path):
    sweep = tmp_path / "sm120"
    proc = mtp_eval(
        "-m",
        "gpu=rtx_pro_6000",
        "backend=fmha_v2",
        "kv_dtype=auto,fp8_e4m3",
        "skip_softmax.prefill=0,0.5",
        "client.progress=false",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = results(sweep)
    statuses = sorted(r["status"] for r in cells.values())
    assert statuses == ["ok", "unsupported", "unsupported", "unsupported"]
    message = "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax."
    for r in cells.values():
        if r["status"] == "unsupported":
            assert message in r["error"]["message"]
            assert not (sweep / "server.log").exists()
        else:
            assert r["cell"]["kv_dtype"] == "auto" and r["cell"]["skip_softmax"]["prefill"] == 0


def test_dry_run_sweep_prints_argv_and_starts_nothing(tmp_path):
    sweep = tmp_path / "dry"
    proc = mtp_eval(
        "-m",
        "dry_run=true",
        "backend=fmha_v2,fa3",
        "gpu=h200",
        "server=sglang",
        "server.sglang_version=0.5.19",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("server command:") == 2
    assert "sglang.launch_server" in proc.stdout
    assert "--decode-attention-backend fa3" in proc.stdout  # 0.5.19 routes fmha_v2's verify
    assert not list(sweep.glob("*/server.log"))


# Cells as submitit_local jobs against a quickly ready simulated server.
LOCAL_JOBS = (
    "hydra/launcher=local",
    "client.progress=false",
    "server.simulated.startup_delay_s=0.2",
)


def test_four_cell_sweep_through_submitit_local(tmp_path):
    sweep = tmp_path / "submitit"
    proc = mtp_eval(
        "-m",
        *LOCAL_JOBS,
        "backend=fmha_v2,fa3",
        "kv_dtype=auto,fp8_e4m3",
        f"hydra.sweep.dir={sweep}",
        timeout=420,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = results(sweep)
    assert len(cells) == 4 and all(r["status"] == "ok" for r in cells.values())
    assert (sweep / ".submitit").is_dir()  # the jobs really went through submitit
    assert processes_mentioning(str(sweep)) == []


def test_parallel_local_cells_with_gpus_auto_take_one_gpu_each(tmp_path):
    sweep = tmp_path / "auto"
    proc = mtp_eval(
        "-m",
        *LOCAL_JOBS,
        "backend=fa3,fa3_repeat",
        "server.gpus=auto",
        "gpu.count=2",  # the simulated server plans for a two-GPU host
        f"hydra.sweep.dir={sweep}",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = results(sweep)
    devices = {
        name.split("_")[0]: r["provenance"]["server_env"]["CUDA_VISIBLE_DEVICES"]
        for name, r in cells.items()
    }
    assert devices == {"0": "0", "1": "1"}, devices  # job number -> its own GPU
    assert all(r["status"] == "ok" for r in cells.values())
    # submitit's local executor hid every GPU from the jobs: only server.gpus=auto gave one back
    assert {r["provenance"]["cuda_visible_devices"] for r in cells.values()} == {""}


def test_two_node_cell_runs_as_two_local_tasks_each_on_its_own_gpu(tmp_path):
    """Node 1 (a simulated SGLang node, which dies when node 0's server goes, as SGLang's did
    live) must be told to stop before node 0's server stops, or it is recorded as failed."""
    sweep, port = tmp_path / "nodes", free_port("127.0.0.1")
    proc = mtp_eval(
        "-m",
        *LOCAL_JOBS,
        "backend=fa3",
        "cluster.nodes=2",
        f"cluster.dist_init_port={port}",
        "server.simulated.shutdown_s=6",  # node 0's stop takes longer than node 1's 5-s poll
        "model.tp=2",
        "server.gpus=auto",
        "gpu.count=2",
        f"hydra.sweep.dir={sweep}",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ((name, node0),) = results(sweep).items()
    assert node0["status"] == "ok", node0.get("error")
    node1 = json.loads((sweep / name / "node-1" / "result.json").read_text())
    assert node1["status"] == "ok" and node1["devices"] == "1", node1
    assert "node 1 joined 127.0.0.1" in (sweep / name / "node-1" / "server.log").read_text()
    assert node0["provenance"]["server_env"]["CUDA_VISIBLE_DEVICES"] == "0"
    for argv, rank in ((node0["provenance"]["server_argv"], 0), (node1["server_argv"], 1)):
        flags = " ".join(argv)
        assert f"--nnodes 2 --node-rank {rank} --dist-init-addr 127.0.0.1:{port}" in flags
        assert "--tp-size 2" in flags
    assert processes_mentioning(str(sweep)) == []


def test_nodes_that_do_not_divide_tp_stop_the_sweep_before_any_cell(tmp_path):
    proc = mtp_eval(
        "-m", "hydra/launcher=local", "cluster.nodes=2", f"hydra.sweep.dir={tmp_path / 'x'}"
    )
    assert proc.returncode != 0
    assert "cluster.nodes=2 must divide model.tp=1" in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "x").exists() or not list((tmp_path / "x").glob("*/result.json"))


def test_signoff_wrapper_runs_the_sweep_then_gates_on_the_report(tmp_path):
    sweep = tmp_path / "signoff"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli.signoff",
            "--sweep-dir",
            str(sweep),
            "server=simulated",
            "evals=[mcq_sample]",
            "evals.mcq_sample.repeats=8",
            "hydra.sweeper.params.kv_dtype=auto",
            "client.progress=false",
            "server.simulated.startup_delay_s=0.1",
            "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},"
            "accuracy_delta:-0.06}]",
        ],
        cwd=REPO,
        text=True,
        capture_output=True,
        timeout=400,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # the planted NO-GO
    assert f"{sweep}: exit code 1" in proc.stdout
    assert (sweep / "report" / "junit.xml").exists()
    assert len(results(sweep)) == 4  # fa3, fmha_v2 x prefill factor 0, 0.5
