"""Sweeps through real sbatch: every cell a SLURM job, results identical to the same sweep run
locally, resources from the config in the submission script, a two-task multi-node cell."""

from __future__ import annotations

import json
import re
import sys

import pytest

from pipeline.results.result_types import NodeResult
from tests.helpers.cells import processes_mentioning
from tests.helpers.slurm import SMALL_CELLS, assert_ran_on_slurm, report, results

pytestmark = [pytest.mark.slurm, pytest.mark.timeout(600)]


def test_demo_on_slurm_matches_the_local_demo(slurm, tmp_path):
    on_slurm, local = tmp_path / "slurm", tmp_path / "local"
    proc = slurm.mtp_eval("experiment=demo", *SMALL_CELLS, f"hydra.sweep.dir={on_slurm}")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    cells = results(on_slurm)
    assert len(cells) == 4 and all(r.status == "ok" for r in cells.values())
    jobs = {r.provenance.slurm["job"] for r in cells.values()}
    assert len(jobs) == 4  # one SLURM array task per cell
    for result in cells.values():
        assert_ran_on_slurm(slurm, on_slurm, result)
    assert processes_mentioning(str(on_slurm)) == []

    done = slurm.mtp_eval("experiment=demo", f"hydra.sweep.dir={local}")
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(r.provenance.slurm is None for r in results(local).values())
    slurm_code, slurm_cells = report(slurm, on_slurm)
    local_code, local_cells = report(slurm, local)
    assert slurm_code == local_code == 1  # the demo's planted NO-GO, read from SLURM's cells
    assert slurm_cells == local_cells


def test_signoff_sweep_on_slurm_matches_the_local_one(slurm, tmp_path):
    sweep_args = [
        "server=simulated",
        "evals=[mcq_sample]",
        "evals.mcq_sample.repeats=4",
        "hydra.sweeper.params.kv_dtype=auto",
        "client.progress=false",
        "server.simulated.startup_delay_s=0.1",
        "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},"
        "accuracy_delta:-0.3}]",
    ]
    codes, reports = [], []
    for where, extra in (("slurm", SMALL_CELLS), ("local", [])):
        sweep = tmp_path / where
        proc = slurm.run(
            sys.executable,
            "-m",
            "pipeline.cli.signoff",
            "--sweep-dir",
            str(sweep),
            *sweep_args,
            *extra,
            timeout=400,
        )
        assert f"{sweep}: exit code" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert len(results(sweep)) == 4  # fa3, fmha_v2 x prefill factor 0, 0.5
        codes.append(proc.returncode)
        reports.append(report(slurm, sweep)[1])
        if where == "slurm":
            for result in results(sweep).values():
                assert_ran_on_slurm(slurm, sweep, result)
    assert codes == [1, 1]  # a 30-point drop is a NO-GO wherever it was measured
    assert reports[0] == reports[1]


def test_model_and_cluster_resources_reach_sbatch(slurm, tmp_path):
    sweep = tmp_path / "resources"
    proc = slurm.mtp_eval(
        "-m",
        "dry_run=true",
        "hydra/launcher=slurm",
        "model.tp=2",
        "cluster.cpus_per_task=2",
        "cluster.mem_gb=3",
        "cluster.time_min=7",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (result,) = results(sweep).values()
    job_id = result.provenance.slurm["job_id"]
    script = (sweep / ".submitit" / job_id / f"{job_id}_submission.sh").read_text()
    for line in ("--gpus-per-node=2", "--cpus-per-task=2", "--mem=3GB", "--time=7"):
        assert f"#SBATCH {line}\n" in script, script
    job = slurm.job(job_id)  # and SLURM granted them
    assert job["TresPerNode"] == "gres:gpu:2" and "mem=3G" in job["TRES"], job
    assert job["TimeLimit"] == "00:07:00" and job["NumCPUs"] == "2"
    assert result.provenance.slurm["gpus_on_node"] == "2"
    assert result.provenance.cuda_visible_devices == "0,1"  # bound by SLURM
    assert_ran_on_slurm(slurm, sweep, result)


def test_multinode_cell_takes_its_ranks_from_a_real_two_task_job(slurm, tmp_path):
    sweep = tmp_path / "multinode"
    proc = slurm.mtp_eval(
        "-m",
        *SMALL_CELLS,
        "backend=fa3",
        "cluster.nodes=2",
        "model.tp=2",  # one GPU per node
        "hydra.launcher.nodes=1",
        "hydra.launcher.tasks_per_node=2",  # both tasks on one node
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (node0,) = results(sweep).values()
    assert node0.status == "ok"
    node1 = NodeResult.from_json(json.loads(next(sweep.glob("0_*/node-1/result.json")).read_text()))
    assert node1.status == "ok" and node0.provenance.slurm and node1.slurm
    facts0, facts1 = node0.provenance.slurm, node1.slurm
    assert facts0["job_id"] == facts1["job_id"] and facts0["ntasks"] == "2"
    assert (facts0["procid"], facts1["procid"]) == ("0", "1")  # SLURM's own task ranks
    for argv, rank in ((node0.server_argv, "0"), (node1.server_argv, "1")):
        flags = " ".join(argv)
        assert f"--nnodes 2 --node-rank {rank} --dist-init-addr localhost:20000" in flags
    job = slurm.job(facts0["job_id"])
    assert job["NumTasks"] == "2" and job["NumNodes"] == "1"
    assert_ran_on_slurm(slurm, sweep, node0)
    assert re.search(r"localhost", job["BatchHost"])
