"""The writer's side of the result contract: typed blocks come out as the cell always wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.results.eval_block import EvalHead, SequentialBlock, eval_block
from pipeline.results.result_types import AcceptBlock, CellResult, NodeResult
from pipeline.results.store import read_result

OLD_CELL = (
    Path(__file__).parents[1] / "data" / "sweep-schema1-f95dc87" / "0_tiny-sim_fmha_v2_auto_exact"
)
HEAD = ("label", "kind", "sampling")
DESIGN = {"max_repeats": 4, "repeats_per_round": 2, "alpha": 0.05, "margin": 0.02,
          "spending": "obrien_fleming"}  # fmt: skip


def old_block() -> dict:
    return json.loads((OLD_CELL / "result.json").read_text())["evals"]["mcq_sample"]


def test_an_eval_block_written_typed_is_the_block_an_old_cell_wrote():
    old = old_block()
    # What evals.accounting.summarize_records gave: no wall time yet, the eval's run sets it.
    stats = {k: v for k, v in old.items() if k not in (*HEAD, "resumed_samples", "accept")}
    stats["wall_time_s"] = None
    block = eval_block(
        EvalHead(old["label"], old["kind"], old["sampling"]),
        stats,
        wall_time_s=old["wall_time_s"],
        resumed_samples=old["resumed_samples"],
        accept=AcceptBlock.from_json(old["accept"]),
    )
    assert json.dumps(block.to_json()) == json.dumps(old)  # key order included
    assert block.label == old["label"] and block.counts == old["counts"]
    assert block.n_samples == old["n_samples"] and block.wall_time_s == old["wall_time_s"]


def test_a_block_summarised_from_disk_keeps_the_stats_wall_time_and_ends_with_accept():
    head = EvalHead("MCQ", "mcq", {"temperature": 0.0, "source": "model"})
    stats = {"n_samples": 2, "wall_time_s": None, "graded": True}
    block = eval_block(head, stats, resumed_samples=2, summarised_from="disk",
                       accept=AcceptBlock.from_json({"status": "missing"}))  # fmt: skip
    assert list(block.to_json()) == [*HEAD, "n_samples", "wall_time_s", "graded",
                                      "resumed_samples", "summarised_from", "accept"]  # fmt: skip
    assert block.wall_time_s is None and block.summarised_from == "disk"
    harness = eval_block(head, stats, wall_time_s=1.5, resumed_samples=0, lm_eval={"n_shot": {}})
    assert list(harness.to_json())[-2:] == ["resumed_samples", "lm_eval"]
    assert harness.lm_eval == {"n_shot": {}} and harness.accept is None


@pytest.mark.parametrize(
    ("block", "written"),
    [
        (SequentialBlock("baseline", design=DESIGN), {**DESIGN, "role": "baseline"}),
        (
            SequentialBlock("candidate", 2, "GO", DESIGN, baseline_dir="/s/0_fa3"),
            {
                **DESIGN,
                "role": "candidate",
                "baseline_dir": "/s/0_fa3",
                "look": 2,
                "decision": "GO",
            },
        ),
    ],
    ids=["baseline", "candidate"],
)
def test_the_sequential_block_is_written_as_before(block, written):
    assert json.dumps(block.to_json()) == json.dumps(written)
    assert SequentialBlock.from_json(written) == block


def test_accept_block_fields_of_an_old_result():
    old = old_block()["accept"]
    accept = AcceptBlock.from_json(old)
    assert accept.to_json() == old and accept.cross_check and accept.metrics_cross_check
    assert accept.cross_check.observed == old["cross_check"]["server"]
    assert accept.metrics_cross_check.observed == old["metrics_cross_check"]["metrics"]
    assert list(accept.per_position_acceptance) == old["per_position_acceptance"]
    assert accept.traffic is not None and accept.traffic.sent == old["traffic"]["sent"]


def test_typed_readers_of_an_old_result_see_observed_client_and_provenance():
    result = read_result(OLD_CELL)
    assert result is not None
    assert result.observed["kv_cache_dtype"] == result.raw["observed"]["kv_cache_dtype"]
    assert result.client_concurrency == result.raw["client"]["concurrency"]
    assert result.provenance.server_argv == tuple(result.raw["provenance"]["server_argv"])
    assert result.node is None


def test_a_worker_nodes_result_round_trips_and_rides_on_the_cell_result():
    node = NodeResult(1, "failed", 3, ("python", "-m", "sglang"), {"procid": "1"}, "boom", "1")
    written = node.to_json()
    assert list(written) == ["node_rank", "status", "exit_code", "server_argv", "slurm",
                             "log_tail", "devices"]  # fmt: skip
    assert NodeResult.from_json(json.loads(json.dumps(written))) == node
    assert CellResult.from_json({"status": "failed", "node": written}).node == node
