"""Parity judged by ``mtp-eval-report`` over real ``mtp-eval`` cells on the simulated server.

fa3 generates 24 sequences with an eval (mcq_sample) beside; fa3_repeat (a second start: the A/A)
and fmha_v2 re-score them. Every start carries restart noise (``logprobs.restart_sigma``), so the
A/A's divergence is small but not zero and sets the band. fmha_v2's simulated model loses one
point of accuracy (``accuracy_delta``, far inside the accuracy check's 2-point margin) and its
logits carry noise of a known size (``logit_sigma``): parity says NO-GO where accuracy cannot.
"""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.results.cell_paths import parity_dir
from pipeline.simserver.logprob_replies import cell_model
from pipeline.simserver.logprobs import context_hashes, exact_kl
from pipeline.simserver.simconfig import Effect, SimConfig
from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
EFFECT = {"match": {"attention_backend": "trtllm_mha"}, "accuracy_delta": -0.01,
          "logit_sigma": 0.15}  # fmt: skip
COMMON = [
    "evals=[mcq_sample]", "parity.enabled=true", "parity.sequences=24", "parity.prompt_tokens=16",
    "parity.new_tokens=32", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05", "+server.simulated.logprobs.restart_sigma=0.02",
    f"server.simulated.effects=[{{match:{{attention_backend:trtllm_mha}},accuracy_delta:-0.01,"
    f"logit_sigma:{EFFECT['logit_sigma']}}}]",
]  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The baseline cell, then the A/A and the candidate re-scoring its sequences (a sweep)."""
    folder = tmp_path_factory.mktemp("parity")
    base = run_script("mtp-eval", "backend=fa3", *COMMON, f"output_dir={folder}/fa3")
    assert base.returncode == 0, base.stdout[-2000:] + base.stderr[-2000:]
    source, sweep = f"parity.sequences_from={folder}/fa3", f"hydra.sweep.dir={folder}/sweep"
    run = run_script("mtp-eval", "-m", "backend=fa3_repeat,fmha_v2", *COMMON, source, sweep)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return folder


def _report(root: Path, name: str, policy: str = "", html: bool = False) -> tuple[int, dict, Path]:
    """``mtp-eval-report`` over ``root``; report.html only with ``html`` (a test that reads it)."""
    args = [str(root), "--out", str(root / name), *([] if html else ["--no-html"])]
    if policy:
        (root / f"{name}.yaml").write_text(policy)
        args += ["--tolerance", str(root / f"{name}.yaml")]
    run = run_script("mtp-eval-report", *args, timeout=180)
    assert "internal error" not in run.stderr, run.stderr
    return run.returncode, json.loads((root / name / "summary.json").read_text()), root / name


def _checks(summary: dict, kind: str) -> dict[str, dict]:
    return {c["variant"]: k for c in summary["cells"] for k in c["checks"] if k["kind"] == kind}


def test_the_aa_is_go_and_a_one_point_perturbation_is_no_go_by_parity_only(root: Path) -> None:
    code, summary, out = _report(root, "report", html=True)
    parity = _checks(summary, "parity_vs_baseline")
    assert set(parity) == {"fa3_repeat", "fmha_v2"}
    aa, cand = parity["fa3_repeat"], parity["fmha_v2"]
    assert aa["verdict"] == "GO", aa["message"]
    assert aa["numbers"]["divergence"] > 0 and aa["numbers"]["band_source"] == "aa"
    assert cand["verdict"] == "NO-GO", cand["message"]
    assert cand["numbers"]["lower"] > cand["numbers"]["band"] == aa["numbers"]["band"]
    assert len(cand["numbers"]["worst"]) == 5 and cand["numbers"]["bins"][0]["tokens"] > 0
    accuracy = _checks(summary, "accuracy_vs_baseline")["fmha_v2"]
    assert accuracy["verdict"] != "NO-GO"  # a 1-point drop: invisible at a 2-point margin
    assert code == 1 and summary["verdict"] == "NO-GO"
    md = (out / "report.md").read_text()
    assert "## Parity" in md and "fmha_v2" in md[md.index("## Parity") :]
    assert "## Parity" in (out / "report.html").read_text().replace("<h2>Parity</h2>", "## Parity")
    rows = list(csv.DictReader((out / "cells.csv").open()))
    assert {r["variant"]: r["parity"] for r in rows} == {
        "fa3": "", "fa3_repeat": "GO", "fmha_v2": "NO-GO"}  # fmt: skip
    junit = ET.parse(out / "junit.xml").getroot()
    names = [t.get("name") or "" for t in junit.iter("testcase")]
    assert sum("logprob parity" in n for n in names) == 2


KNOWN = {"match": {"attention_backend": "trtllm_mha"}, "logit_sigma": 0.2}
PLAIN = [
    "evals=[]", "parity.enabled=true", "parity.sequences=32", "parity.prompt_tokens=16",
    "parity.new_tokens=32", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05",
    "server.simulated.effects=[{match:{attention_backend:trtllm_mha},logit_sigma:0.2}]",
]  # fmt: skip


def _true_kl(base: Path) -> float:
    """The exact KL(fa3 || fmha_v2) of the simulated models, averaged over the scored tokens."""
    conf = SimConfig(effects=[Effect(**KNOWN)])
    p_model, q_model = cell_model(conf, [], 0), cell_model(conf, [0], 0)
    total, count = 0.0, 0
    for line in (parity_dir(base) / "sequences.jsonl").read_text().splitlines():
        row = json.loads(line)
        ids, start = row["prompt_ids"] + row["output_ids"], len(row["prompt_ids"])
        hashes = context_hashes(ids, p_model.seed)
        for t in range(start, len(ids)):
            total += exact_kl(p_model.at(hashes[t - 1], t), q_model.at(hashes[t - 1], t))
            count += 1
    return total / count


def test_a_perturbation_of_known_kl_is_measured_within_its_interval(tmp_path: Path) -> None:
    """Without restart noise the simulated KL is known exactly (``exact_kl``)."""
    base = run_script("mtp-eval", "backend=fa3", *PLAIN, f"output_dir={tmp_path}/fa3")
    assert base.returncode == 0, base.stdout[-2000:] + base.stderr[-2000:]
    # the A/A and the candidate in one sweep (one process start less than a cell each): the same
    # cells, re-scoring the baseline's sequences named by their folder
    source, sweep = f"parity.sequences_from={tmp_path}/fa3", f"hydra.sweep.dir={tmp_path}/sweep"
    run = run_script("mtp-eval", "-m", "backend=fa3_repeat,fmha_v2", *PLAIN, source, sweep)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    truth = _true_kl(tmp_path / "fa3")
    assert 0.005 < truth < 0.03
    # kl_sampled is unbiased for KL(base || cand) over the baseline's sampled tokens
    _, summary, _ = _report(tmp_path, "sampled", "parity:\n  metric: kl_sampled\n")
    numbers = _checks(summary, "parity_vs_baseline")["fmha_v2"]["numbers"]
    assert numbers["lower"] <= truth <= numbers["upper"], (numbers, truth)
    entries = summary["parity"]
    (entry,) = [e for e in entries if e["variant"] == "fmha_v2" and e["path"] == "prefill"]
    assert entry["verdict"] != "GO"  # noisier than the top-k KL, never GO here
    # the top 10 rows list all 8 ids the simulated model gives a logit: the top-k KL is exact
    code, summary, _ = _report(tmp_path, "topk")
    check = _checks(summary, "parity_vs_baseline")["fmha_v2"]
    assert check["numbers"]["divergence"] == pytest.approx(truth, rel=1e-6)
    assert check["verdict"] == "NO-GO" and code == 1


def test_no_aa_cell_leaves_parity_inconclusive_naming_the_variant(root: Path) -> None:
    _, summary, _ = _report(root, "no_aa", "parity:\n  aa_variant: trtllm_mha\n")
    cand = _checks(summary, "parity_vs_baseline")["fmha_v2"]
    assert cand["verdict"] == "INCONCLUSIVE" and "trtllm_mha" in cand["message"]


def test_mlflow_runs_carry_the_parity_verdict_and_numbers(root: Path) -> None:
    from pipeline.report.assemble.build import build_report
    from pipeline.report.load.tolerance import load_tolerance
    from pipeline.report.write.mlflow_runs import cell_run

    report = build_report([root], load_tolerance("default"))
    (cand,) = [c for c in report.cells if c.variant == "fmha_v2"]
    run = cell_run(report, cand, "origin", "parent")
    assert run.tags["verdict/parity_vs_baseline"] == "NO-GO"
    assert run.metrics["parity_divergence"] > run.metrics["parity_band"] > 0


def test_cells_moved_from_where_they_ran_keep_their_worst_sequences(root: Path, tmp_path: Path):
    """A run copied off the device names the device's folders (sequences_from): the report
    reads the source cell where it is now, so the worst sequences are not lost on the way."""
    moved = tmp_path / "committed" / root.name  # the sweep and cell folders keep their names
    shutil.copytree(root / "fa3", moved / "fa3")
    shutil.copytree(root / "sweep", moved / "sweep")
    shutil.rmtree(root / "fa3")  # the folder the summaries name is gone, as on a device
    try:
        _, summary, _ = _report(moved, "report")
    finally:
        shutil.copytree(moved / "fa3", root / "fa3")
    cand = _checks(summary, "parity_vs_baseline")["fmha_v2"]
    assert cand["verdict"] == "NO-GO", cand["message"]
    assert len(cand["numbers"]["worst"]) == 5, cand["numbers"].get("paired_by")
    assert Path(cand["numbers"]["sequences_from"]) == moved / "fa3"


def test_the_band_is_read_from_every_input_when_baseline_dirs_name_only_fa3(root: Path) -> None:
    """--baseline-dir picks the baseline; the A/A among the inputs still sets the band (it was
    passed over, leaving fmha_v2 INCONCLUSIVE for want of a band that was measured)."""
    args = [str(root), "--baseline-dir", str(root / "fa3"), "--out", str(root / "named"),
            "--no-html"]  # fmt: skip
    run = run_script("mtp-eval-report", *args, timeout=180)
    assert "internal error" not in run.stderr, run.stderr
    summary = json.loads((root / "named" / "summary.json").read_text())
    cand = _checks(summary, "parity_vs_baseline")["fmha_v2"]
    assert cand["verdict"] == "NO-GO", cand["message"]
    assert cand["numbers"]["band_source"] == "aa" and "fa3_repeat" in cand["numbers"]["aa_cell"]
    decode = _checks(summary, "decode_parity_vs_baseline")  # the A/A bounds the decode path too
    assert decode["fmha_v2"]["numbers"]["aa_upper"] is not None, decode["fmha_v2"]["message"]
