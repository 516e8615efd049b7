"""One baseline rule, through the installed scripts and the simulated server: a sequential cell
stops against the baseline the report judges it with (same GPU; exact softmax for a skip-softmax
cell), and a report over several sweeps pairs within a sweep, warns when it cannot, labels cells
by sweep and takes ``--baseline-dir``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cells import console_script, result_of

pytestmark = pytest.mark.integration
QUICK = ["client.progress=false", "server.simulated.startup_delay_s=0.05", "server.stop_grace_s=5"]
# The group-sequential design: this test is about which baseline the looks pair with, and that
# design decides identical answers on 58 questions at 4 repeats (the anytime one needs 8).
SEQUENTIAL = ["sequential.enabled=true", "sequential.max_repeats=4"]
SEQUENTIAL += ["sequential.repeats_per_round=2", "sequential.statistic=group_sequential"]
NO_GO = (
    "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},accuracy_delta:-0.3}]"
)


def _script(name: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(name), *args],
        capture_output=True, text=True, timeout=300, check=False, cwd=cwd,
    )  # fmt: skip


def _mtp_eval(args: list[str], cwd: Path) -> None:
    run = _script("mtp-eval", [*args, *QUICK], cwd)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


def _report(
    args: list[str], cwd: Path, html: bool = False
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """The report over ``args``; its page only when ``html`` (a test that reads report.html):
    ``--no-html`` leaves every other file (summary.json, report.md, junit.xml) the same."""
    out = cwd / "report-out"
    shutil.rmtree(out, ignore_errors=True)  # never read an earlier call's summary
    page = [] if html else ["--no-html"]
    run = _script("mtp-eval-report", [*args, "--out", str(out), *page], cwd)
    assert run.returncode in (0, 1, 2), run.stdout[-2000:] + run.stderr[-2000:]
    assert "internal error" not in run.stderr, run.stderr
    return run, json.loads((out / "summary.json").read_text())


def _accuracy(summary: dict) -> dict[str, dict]:
    """Accuracy-vs-baseline check of each cell, by 'sweep/cell folder name'."""
    return {
        "/".join(Path(c["folder"]).parts[-2:]): k
        for c in summary["cells"]
        for k in c["checks"]
        if k["kind"] == "accuracy_vs_baseline"
    }


def test_sequential_stopping_pairs_by_the_reports_rule(tmp_path):
    seq = tmp_path / "seq"
    _mtp_eval(["backend=fa3", *SEQUENTIAL, f"hydra.run.dir={seq}/0_fa3"], tmp_path)
    # triton answers exactly like fa3 in the simulation: paired, GO at look 2 (identical answers
    # on 58 questions decide only at 4 repeats once the SE is read where the null holds).
    skip = ["backend=triton", "skip_softmax.prefill=0.5", *SEQUENTIAL]
    _mtp_eval([*skip, f"hydra.run.dir={seq}/1_triton_skip"], tmp_path)
    other_gpu = ["backend=triton", "server.simulated.gpu_name='NVIDIA B200 (simulated)'"]
    _mtp_eval([*other_gpu, *SEQUENTIAL, f"hydra.run.dir={seq}/2_triton_b200"], tmp_path)

    skip_block = result_of(seq / "1_triton_skip").evals["mcq_sample"].checked_sequential()
    assert skip_block is not None and skip_block.role == "candidate", skip_block
    assert Path(str(skip_block.baseline_dir)).name == "0_fa3"  # exact-softmax fallback
    assert skip_block.decision == "GO" and skip_block.look == 2
    gpu_block = result_of(seq / "2_triton_b200").evals["mcq_sample"].checked_sequential()
    assert gpu_block is not None and gpu_block.role != "candidate", gpu_block  # no H200 pair
    assert "no fa3 cell with the same" in str(gpu_block.role) and "gpu" in str(gpu_block.role)
    assert result_of(seq / "2_triton_b200").evals["mcq_sample"].n_repeats == 4  # fixed design

    _, summary = _report([str(seq)], tmp_path)
    checks = _accuracy(summary)
    assert checks["seq/1_triton_skip"]["numbers"]["baseline_folder"].endswith("0_fa3")
    assert checks["seq/1_triton_skip"]["verdict"] == "GO"
    assert checks["seq/2_triton_b200"]["verdict"] == "NO BASELINE"  # as the run found
    assert summary["warnings"] == [], summary["warnings"]


@pytest.fixture(scope="module")
def three_sweeps(tmp_path_factory) -> Path:
    """A: fa3 + a fmha_v2 30 points worse, stopped by its looks; B: a fa3 at 0.40 run later;
    C: a fmha_v2 alone (no baseline in its sweep: all repeats)."""
    root = tmp_path_factory.mktemp("sweeps")
    a_sweep = ["-m", "backend=fa3,fmha_v2", NO_GO, *SEQUENTIAL, f"hydra.sweep.dir={root}/A"]
    _mtp_eval(a_sweep, root)
    _mtp_eval(["-m", "backend=fa3", "server.simulated.accuracy=0.4",
               f"hydra.sweep.dir={root}/B"], root)  # fmt: skip
    _mtp_eval(["-m", "backend=fmha_v2", *SEQUENTIAL, f"hydra.sweep.dir={root}/C"], root)
    return root


def test_a_report_over_sweeps_pairs_within_a_sweep_and_warns_when_it_cannot(three_sweeps):
    run, summary = _report(["A", "B", "C"], three_sweeps, html=True)
    checks = _accuracy(summary)
    a_cand = next(k for name, k in checks.items() if name.startswith("A/"))
    assert "/A/" in "/" + a_cand["numbers"]["baseline_folder"] + "/"  # not B's, that ended last
    assert a_cand["verdict"] == "NO-GO"
    c_cand = next(k for name, k in checks.items() if name.startswith("C/"))
    assert c_cand["numbers"]["baseline_folder"].startswith("B/")  # elsewhere: the latest
    (warning,) = [w for w in summary["warnings"] if "baseline from another sweep" in w]
    assert "sweep C" in warning and "B/" in warning and "--baseline-dir" in warning
    assert "WARNING" in run.stdout and "baseline from another sweep" in run.stdout
    html = (three_sweeps / "report-out" / "report.html").read_text()
    assert html.index("baseline from another sweep") < html.index("<h2>")  # a banner on top
    labels = {Path(c["folder"]).parts[-2]: c["label"] for c in summary["cells"]}
    assert all(f"[sweep {sweep}]" in label for sweep, label in labels.items()), labels


def test_the_user_names_the_baseline_folder(three_sweeps):
    _, summary = _report(["B", "C", "--baseline-dir", "A"], three_sweeps)
    checks = _accuracy(summary)
    c_cand = next(k for name, k in checks.items() if name.startswith("C/"))
    assert c_cand["numbers"]["baseline_folder"].startswith("A/")
    assert c_cand["verdict"] == "GO"  # fmha_v2 at 0.72 against A's fa3 at 0.72
    assert not [w for w in summary["warnings"] if "another sweep" in w]
    assert summary["inputs"] == ["B", "C"]  # A is read for its baselines only


def test_baseline_dir_cells_are_baselines_only_never_judged(three_sweeps):
    # A's own fmha_v2 is 30 points worse (NO-GO in a report of A): read from --baseline-dir it
    # serves A's fa3 to C and is neither judged nor counted, so C's GO is the exit code.
    run, summary = _report(["C", "--baseline-dir", "A"], three_sweeps)
    assert run.returncode == 0, run.stdout
    assert summary["verdict"] == "GO" and summary["judged"] is True
    assert {Path(c["folder"]).parts[-2] for c in summary["cells"]} == {"C"}
    assert "NO-GO" not in summary["counts"]
    shown = {Path(b["folder"]).name: b for b in summary["baselines"]}
    fa3 = next(b for name, b in shown.items() if "_fa3_" in name)
    v2 = next(b for name, b in shown.items() if "_fmha_v2_" in name)
    (c_cell,) = summary["cells"]
    assert fa3["baseline_for"] == [c_cell["label"]] and v2["baseline_for"] == []
    assert all(f"{'BASELINE':<13} " + b["label"] in run.stdout for b in summary["baselines"])
    md = (three_sweeps / "report-out" / "report.md").read_text()
    assert "Baselines from elsewhere: 2 cell(s) of --baseline-dir A" in md
    assert "## Baselines from elsewhere (not judged)" in md
    junit = ET.parse(three_sweeps / "report-out" / "junit.xml").getroot()
    assert junit.get("failures") == "0"
    assert not [c for c in junit.iter("testcase") if "[sweep A]" in c.get("classname", "")]
    # The same folders named as a DIR under test are judged: A's NO-GO is then the exit code.
    run, summary = _report(["A", "C", "--baseline-dir", "A"], three_sweeps)
    assert run.returncode == 1 and summary["baselines"] == []


def test_a_baseline_other_than_the_one_the_looks_used_is_warned_about(three_sweeps):
    _, summary = _report(["A", "B", "C", "--baseline-dir", "B"], three_sweeps)
    checks = _accuracy(summary)
    a_cand = next(k for name, k in checks.items() if name.startswith("A/"))
    assert a_cand["numbers"]["baseline_folder"].startswith("B/")  # as asked
    (warning,) = [w for w in summary["warnings"] if "stopped early against" in w]
    assert "fmha_v2" in warning and "A/0_tiny-sim_fa3" in warning, warning


def test_a_speed_only_baseline_that_ended_last_is_left_aside_for_one_with_the_evals(
    three_sweeps, tmp_path
):
    # The live speed lease's shape (2026-12-02): the pool check's fa3 cell (evals=[]) ended after
    # the speed sweep's fa3; the report paired every candidate with it and found NO BASELINE.
    # B's fa3 has the evals and C's fmha_v2 no baseline in its sweep (the sweeps above, not two
    # more cells): the pool's fa3, run now, ends after B's.
    speed_only = ["evals=[]", "speed.enabled=true",
                  "speed.prefill_tokens=[1024]", "speed.prefill_batches=[]",
                  "speed.decode_batches=[]", "speed.repeats=1"]  # fmt: skip
    pool = tmp_path / "pool"  # outside the shared sweeps: the other tests never read it
    _mtp_eval(["-m", "backend=fa3", *speed_only, f"hydra.sweep.dir={pool}"], tmp_path)
    _, summary = _report(["B", str(pool), "C"], three_sweeps)
    checks = _accuracy(summary)
    assert {name.split("/")[0] for name in checks} == {"C"}, checks
    for check in checks.values():
        assert check["verdict"] != "NO BASELINE", check["message"]
        assert check["numbers"]["baseline_folder"].startswith("B/")
        assert "fewer of its evals left aside" in check["message"], check["message"]
