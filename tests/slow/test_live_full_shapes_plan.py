"""LIVE_PLAN=full-shapes of benchmarks/live_h200/live_signoff.sh, rehearsed on the simulated server.

The phase a lease of several H200s runs (issue 43: full-depth shapes with random weights at their
tp and dp, fa3 / fmha_v2 / fa3_repeat at bf16 and fp8 KV, evals and the speed phase, then one
report), against ``LIVE_SERVER=simulated``, which takes any ``--tp-size`` / ``--dp-size`` on a
machine with no GPU (SGLang's GPU placement is not rehearsed). Two shapes: GLM-4.6 at tp 8 with
its one-GPU cut cells, and Llama-3.1-8B's two dp replicas of tp 2, whose DP ranks the server's
accept length is weighted over. And the refusal on a machine with too few GPUs.
"""

import json
import re

import pytest

from tests.helpers.live_plan import run_live_plan

pytestmark = pytest.mark.slow

SMALL = " ".join(
    ["speed.repeats=1", "speed.warmup=0", "speed.prefill_tokens=[1024]", "speed.prefill_batches=[]",
     "speed.decode_batches=[1]"]
)  # fmt: skip


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.mark.rehearsal  # minutes: `make test-rehearsals`; the refusals below stay in `make test`
def test_the_full_shapes_phase_runs_tp_and_dp_cells_through_speed_and_reports(tmp_path):
    (tmp_path / "live" / "logs").mkdir(parents=True)  # the tick's: the bare server logs there
    run = run_live_plan(
        tmp_path, "full-shapes", ["phase_full_shapes"], 900, LIVE_FULL_OVERRIDES=SMALL,
        LIVE_FULL_SHAPES="glm_4_6_tp8 llama3_1_8b_eagle3_tp2_dp2",
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    live = tmp_path / "repo" / "outputs" / "live"
    sweeps = {"full-glm_4_6_tp8": ("8", None), "cut-glm_4_6": ("1", None),
              "full-llama3_1_8b_eagle3_tp2_dp2": ("2", "2")}  # fmt: skip
    for sweep, (tp, dp) in sweeps.items():
        results = [json.loads(p.read_text()) for p in sorted((live / sweep).glob("*/result.json"))]
        cells = {(r["cell"]["variant"], r["cell"]["kv_dtype"]) for r in results}
        assert cells == {(v, kv) for v in ("fa3", "fmha_v2", "fa3_repeat")
                         for kv in ("auto", "fp8_e4m3")}, sweep  # fmt: skip
        for result in results:
            assert result["status"] == "ok", result.get("error")
            argv = result["server"]["argv"]
            assert (flag(argv, "--tp-size"), flag(argv, "--dp-size")) == (tp, dp)
            assert result["speed"]["points"], "the speed phase ran"
            assert result["accept"]["cross_check"]["agrees"], result["accept"]
            if dp:  # two DP ranks, weighted by the verify steps of each rank's requests
                assert result["observed"]["dp_size"] == 2
                assert "meta_info.dp_rank" in result["accept"]["server_accept_weighting"]
    # Item 2's recording: a bare dp-2 server's replies per rank, /server_info and /metrics.
    summary = json.loads(
        (live / "bodies/dp-counters-llama3_1_8b_eagle3_tp2_dp2/summary.json").read_text()
    )
    assert summary["dp_size"] == 2 and sorted(summary["per_rank_from_replies"]) == ["0", "1"]
    assert len(summary["states_in_order"]) == 5 and summary["request_weighted_accept_length"] > 1
    # One repeat, no speed band: the report judges accept length by MT-Bench category only (issue
    # 40), where random weights' acceptance may differ between variants; the A/A must not.
    assert re.search(r"report exit [12]\b", run.stdout)
    checks = json.loads((live / "report" / "summary.json").read_text())["cells"]
    aa = [k for c in checks if c["variant"] == "fa3_repeat" for k in c["checks"]]
    assert aa and all(k["verdict"] != "NO-GO" for k in aa)
    assert "(tp=8)" in (live / "report" / "report.md").read_text()
    assert (tmp_path / "live" / "live-results.tgz").is_file()


@pytest.mark.parametrize(
    ("gpus", "shapes", "said"),
    [
        ("4", None, "this machine has 4 GPUs (nvidia-smi) and glm_4_6_tp8 needs 8 GPUs"),
        ("8", "glm_4_6_tp16", "glm_4_6_tp16 (no such shape"),
    ],
)
def test_the_plan_refuses_a_machine_short_of_gpus_before_anything_starts(
    tmp_path, gpus, shapes, said
):
    more = {"LIVE_FULL_SHAPES": shapes} if shapes else {}
    run = run_live_plan(tmp_path, "full-shapes", ["tick", "0"], 300, LIVE_GPUS=gpus, **more)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "LIVE_PLAN=full-shapes refused" in run.stdout and said in run.stdout, run.stdout
    assert (tmp_path / "live" / "state" / "report.rc").read_text().strip() == "refused"
    assert not (tmp_path / "repo" / "outputs" / "live").exists()  # no cell started
