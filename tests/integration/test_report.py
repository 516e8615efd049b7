"""mtp-eval-report on cell folders built in tmp_path (real result.json / samples / multirun.yaml
shapes, summaries from the real evals.metrics and accept_stats code)."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipeline.report.cli import main
from tests.helpers.cells import run_script
from tests.helpers.report_cells import GPU, records, run_report, write_cell, write_multirun

pytestmark = pytest.mark.integration


def baseline_outcomes(n: int = 120, k: int = 8, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = np.where(np.arange(n) < n // 5, 0.5, np.where(np.arange(n) % 4 == 0, 0.02, 0.98))
    return rng.random((n, k)) < p[:, None]


def worse(outcomes: np.ndarray, share: float) -> np.ndarray:
    out = outcomes.copy()
    right = np.flatnonzero(out.all(axis=1))
    out[right[: int(share * len(outcomes))]] = False  # these questions now always fail
    return out


def verdicts(summary: dict, kind: str) -> dict[str, str]:
    return {c["variant"]: k["verdict"] for c in summary["cells"] for k in c["checks"]
            if k["kind"] == kind}  # fmt: skip


@pytest.fixture
def sweep(tmp_path: Path) -> Path:
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3", "triton"])
    base = baseline_outcomes()
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(worse(base, 0.15), accept=2.3))
    write_cell(root / "1_m_fa3", "fa3", records(base))
    write_cell(root / "2_m_triton", "triton", records(base, accept=2.48))
    return root


def test_go_and_no_go_give_exit_1_and_every_output(sweep: Path, tmp_path: Path):
    out = tmp_path / "report"
    code, summary = run_report([sweep], out)
    assert code == 1 and summary["verdict"] == "NO-GO" and summary["exit_code"] == 1
    assert verdicts(summary, "accuracy_vs_baseline") == {"fmha_v2": "NO-GO", "triton": "GO"}
    assert verdicts(summary, "accept_vs_baseline") == {"fmha_v2": "NO-GO", "triton": "GO"}
    junit = ET.parse(out / "junit.xml").getroot()
    failures = [c for c in junit.iter("testcase") if c.find("failure") is not None]
    # fmha_v2's 18 questions that went from always right to always wrong also break.
    assert {c.get("name") for c in failures} == {
        "gpqa_diamond: accuracy vs fa3",
        "gpqa_diamond: broken prompts vs fa3",
        "gpqa_diamond: accept length vs fa3",
    }
    assert "drop" in failures[0].find("failure").get("message")  # the numbers are in it
    assert junit.get("failures") == "3"
    html = (out / "report.html").read_text()
    assert html.count('<img src="data:image/png;base64,') == 4  # grid, accuracy, paired, accept
    assert "NO-GO" in (out / "report.md").read_text()
    rows = list(csv.DictReader((out / "cells.csv").open()))
    assert {r["variant"]: r["vs_baseline"] for r in rows} == {
        "fmha_v2": "NO-GO",
        "fa3": "",
        "triton": "GO",
    }


def test_missing_and_failed_cells_give_exit_2(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3", "triton", "flashinfer"])
    base = baseline_outcomes()
    write_cell(root / "1_m_fa3", "fa3", records(base))
    write_cell(
        root / "2_m_triton",
        "triton",
        None,
        status="failed",
        error={"kind": "server_crash", "message": "died at start"},
    )
    (root / "3_m_flashinfer" / ".hydra").mkdir(parents=True)  # started, never wrote a result
    (root / "3_m_flashinfer" / ".hydra" / "overrides.yaml").write_text(
        yaml.safe_dump(["backend=flashinfer", "kv_dtype=auto"])
    )
    code, summary = run_report([root], tmp_path / "r")
    assert code == 2 and summary["verdict"] == "UNDECIDED"
    status = {c["variant"]: c["verdict"] for c in summary["cells"]}
    assert status == {"fmha_v2": "MISSING", "fa3": "NO REFERENCE", "triton": "FAILED",
                      "flashinfer": "MISSING"}  # fmt: skip
    notes = {c["variant"]: c["note"] for c in summary["cells"]}
    assert "job 0 (backend=fmha_v2 kv_dtype=auto) left no folder" in notes["fmha_v2"]
    assert "server_crash: died at start" in notes["triton"]
    gpus = {c["variant"]: c["gpu"] for c in summary["cells"]}
    assert gpus["fmha_v2"] == GPU  # guessed from the sweep's other cells
    errors = [c for c in ET.parse(tmp_path / "r" / "junit.xml").getroot().iter("testcase")
              if c.find("error") is not None]  # fmt: skip
    # and the baseline alone judged nothing: said in the gate suite (issue 36)
    assert {e.find("error").get("type") for e in errors} == {"MISSING", "FAILED", "NOT JUDGED"}


def test_unsupported_cells_are_skipped_not_failed(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3", "triton"])
    write_cell(root / "0_m_fmha_v2", "fmha_v2", None, status="unsupported")
    write_cell(root / "1_m_fa3", "fa3", records(baseline_outcomes()))
    write_cell(root / "2_m_triton", "triton", records(baseline_outcomes()))
    code, summary = run_report([root], tmp_path / "r")
    assert code == 0 and summary["verdict"] == "GO"
    # Without the judged candidate, the baseline alone judges nothing: exit 2, not GO (issue 36).
    shutil.rmtree(root / "2_m_triton")
    write_multirun(root, ["fmha_v2", "fa3"])
    code, summary = run_report([root], tmp_path / "r")
    assert code == 2 and summary["judged"] is False
    assert any("fa3" in line and "no check judged it" in line for line in summary["not_judged"])
    cases = list(ET.parse(tmp_path / "r" / "junit.xml").getroot().iter("testcase"))
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert any("UNSUPPORTED" in c.find("skipped").get("message") for c in skipped)


def test_simulated_results_are_labelled_everywhere(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3"])
    base = baseline_outcomes()
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(base), simulated=True)
    write_cell(root / "1_m_fa3", "fa3", records(base), simulated=True)
    out = tmp_path / "r"
    code, summary = run_report([root], out)
    assert code == 0 and summary["simulated"] is True
    assert all(c["simulated"] for c in summary["cells"])
    assert "(SIMULATED)" in (out / "report.md").read_text().splitlines()[0]
    assert "SIMULATED" in (out / "report.html").read_text()
    junit = ET.parse(out / "junit.xml").getroot()
    assert "SIMULATED" in junit.get("name")
    assert all("[simulated]" in c.get("classname") for c in junit.iter("testcase"))
    assert {r["simulated"] for r in csv.DictReader((out / "cells.csv").open())} == {"True"}


def test_speculative_cell_without_accept_metric_fails(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3"])
    base = baseline_outcomes()
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(base, accept=None))
    write_cell(root / "1_m_fa3", "fa3", records(base))
    code, summary = run_report([root], tmp_path / "r")
    assert code == 1
    assert verdicts(summary, "accept_metric") == {"fmha_v2": "FAIL", "fa3": "PASS"}


def test_small_drop_is_inconclusive_with_extra_repeats(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3"])
    base = baseline_outcomes(k=2)
    rng = np.random.default_rng(5)
    cand = np.where(rng.random(base.shape) < 0.03, False, base)  # about 2 points worse, noisy
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(cand))
    write_cell(root / "1_m_fa3", "fa3", records(base))
    code, summary = run_report([root], tmp_path / "r")
    assert code == 2
    check = next(k for c in summary["cells"] for k in c["checks"]
                 if k["kind"] == "accuracy_vs_baseline")  # fmt: skip
    assert check["verdict"] == "INCONCLUSIVE"
    assert check["numbers"]["extra_repeats"] is None or check["numbers"]["extra_repeats"] >= 1
    assert "repeats" in check["message"]


def test_one_repeat_adds_mcnemar(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3"])
    base = baseline_outcomes(k=1)
    write_cell(root / "0_m_fmha_v2", "fmha_v2", records(worse(base, 0.1)))
    write_cell(root / "1_m_fa3", "fa3", records(base))
    _, summary = run_report([root], tmp_path / "r")
    mcnemar = next(k for c in summary["cells"] for k in c["checks"] if k["kind"] == "mcnemar")
    n = mcnemar["numbers"]
    assert n["c"] == 0 and n["b"] == 12 and n["p"] == pytest.approx(0.5**12)


def test_single_cell_folders_and_several_inputs(sweep: Path, tmp_path: Path):
    code, summary = run_report([sweep / "0_m_fmha_v2", sweep / "1_m_fa3"], tmp_path / "r")
    assert code == 1 and len(summary["cells"]) == 2


def test_no_html_writes_every_other_file_as_the_full_report_does(sweep: Path, tmp_path: Path):
    full, lean = tmp_path / "full", tmp_path / "lean"
    assert run_report([sweep], full)[0] == run_report([sweep], lean, "--no-html")[0] == 1
    assert {p.name for p in full.iterdir()} - {p.name for p in lean.iterdir()} == {"report.html"}
    for name in ("report.md", "summary.json", "cells.csv", "junit.xml"):
        made = [re.sub(r"\d{4}-\d\d-\d\dT[\d:.+]+", "<time>", (d / name).read_text())
                for d in (full, lean)]  # fmt: skip
        assert made[0] == made[1], name


def test_cli_as_a_process_and_bad_references(sweep: Path, tmp_path: Path):
    out = tmp_path / "r"
    proc = subprocess.run([sys.executable, "-m", "pipeline.report.cli", str(sweep), "--out",
                           str(out)], capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert {p.name for p in out.iterdir()} == {"report.md", "report.html", "junit.xml",
                                               "summary.json", "cells.csv"}  # fmt: skip
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "m.yaml").write_text(yaml.safe_dump({"model": "m", "entries": [
        {"eval": "gpqa_diamond", "kv_dtype": "any", "speculative": "any", "accuracy": 1.4,
         "provenance": {"source": "x", "date": "2026-01-01", "setup": "y"}}]}))  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "pipeline.report.cli", str(sweep), "--out",
                           str(out), "--references", str(refs)], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert proc.returncode == 2
    assert "m.yaml: entries[0].accuracy = 1.4 must be in [0.0, 1.0]" in proc.stderr


def test_a_folder_without_cells_is_refused(tmp_path: Path):
    assert main([str(tmp_path), "--out", str(tmp_path / "r")]) == 2


@pytest.mark.parametrize(
    ("out", "file", "said"),
    [
        ("README.md", "README.md", "--out {tmp}/README.md is a file: --out must be a folder"),
        ("README.md/sub", "README.md",
         "--out {tmp}/README.md/sub is under {tmp}/README.md, a file: --out must be a folder"),
        (None, "multirun/report",
         "the report folder {tmp}/multirun/report is a file: --out must be a folder"),
    ],
)  # fmt: skip
def test_an_out_that_is_a_file_exits_2_saying_it_must_be_a_folder(
    sweep: Path, tmp_path: Path, out: str | None, file: str, said: str
):
    # Was "internal error (FileExistsError: [Errno 17] File exists: ...)".
    (tmp_path / file).write_text("# the user's own file\n")
    args = [str(sweep)] + (["--out", str(tmp_path / out)] if out else [])
    run = run_script("mtp-eval-report", *args, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout[-1500:] + run.stderr[-1500:]
    assert said.format(tmp=tmp_path) in run.stderr, run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert (tmp_path / file).read_text() == "# the user's own file\n"


def timed(recs: list[dict], prefill_s: float) -> list[dict]:
    return [{**r, "prefill_s": prefill_s} for r in recs]  # 50 prompt tokens each


def test_prefill_time_shown_per_cell_where_present(tmp_path: Path):
    root = tmp_path / "multirun"
    write_multirun(root, ["fmha_v2", "fa3", "triton"])
    base = baseline_outcomes(n=40, k=2)
    write_cell(root / "0_m_fmha_v2", "fmha_v2", timed(records(base), 0.02))
    write_cell(root / "1_m_fa3", "fa3", timed(records(base), 0.03))
    write_cell(root / "2_m_triton", "triton", records(base))  # a server without --enable-metrics
    out = tmp_path / "report"
    run_report([root], out)
    md = (out / "report.md").read_text()
    table = md.split("## Prefill time", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| NVIDIA")]
    assert [row.rstrip(" |").split(" | ")[4:] for row in rows] == [
        ["fa3", "gpqa_diamond", "0.0300", "0.6000", "50", "-"],  # no JIT cache recorded
        ["fmha_v2", "gpqa_diamond", "0.0200", "0.4000", "50", "-"],
    ]
    assert "Prefill time" in (out / "report.html").read_text()
    csv_rows = {r["variant"]: r for r in csv.DictReader((out / "cells.csv").open())}
    assert float(csv_rows["fa3"]["prefill_s_per_1k_prompt_tokens"]) == pytest.approx(0.6)
    assert float(csv_rows["fmha_v2"]["mean_prefill_s"]) == pytest.approx(0.02)
    assert csv_rows["triton"]["mean_prefill_s"] == ""
