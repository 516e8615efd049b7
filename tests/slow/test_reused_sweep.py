"""A sweep rerun into an old folder: only its own cells are judged, finished ones are skipped
(and say so), and what it writes is what ``outputs/README.md`` describes.

Sweep A (fa3, fmha_v2, with fmha_v2 planted 30 points worse) and then sweep B (fa3, triton) go
into the same folder, through the installed ``mtp-eval`` and ``mtp-eval-report`` scripts.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.slow
PLANT = "[{match:{prefill_attention_backend:trtllm_mha},accuracy_delta:-0.3}]"
COMMON = [
    "-m",
    "client.concurrency=8",
    "server.simulated.startup_delay_s=0.1",
    f"server.simulated.effects={PLANT}",
]


def mtp_eval(sweep_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [console_script("mtp-eval"), *COMMON, *args, f"hydra.sweep.dir={sweep_dir}"],
        capture_output=True, text=True, timeout=240, check=False, cwd=sweep_dir.parent,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return run


@pytest.fixture(scope="module")
def reused(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    sweep_dir = tmp_path_factory.mktemp("reused") / "sweep"
    sweep_dir.mkdir()
    first = mtp_eval(sweep_dir, "backend=fa3,fmha_v2")
    second = mtp_eval(sweep_dir, "backend=fa3,triton")
    return sweep_dir, first.stdout, second.stdout


def test_the_report_judges_only_the_sweeps_own_cells(reused):
    sweep_dir, _, _ = reused
    stale = next(sweep_dir.glob("1_tiny-sim_fmha_v2_*"))
    assert (stale / "result.json").is_file()  # sweep A's NO-GO cell is still there
    run = subprocess.run(
        [console_script("mtp-eval-report"), str(sweep_dir)],
        capture_output=True, text=True, timeout=240, check=False, cwd=sweep_dir.parent,
    )  # fmt: skip
    assert run.returncode != 1, run.stdout  # the stale NO-GO no longer decides
    summary = json.loads((sweep_dir / "report" / "summary.json").read_text())
    assert sorted(c["variant"] for c in summary["cells"]) == ["fa3", "triton"]
    assert [i for i in summary["ignored"] if str(stale) in i], summary["ignored"]
    assert f"IGNORED       {stale}: not a job of" in run.stdout  # on the console too
    assert "Ignored folders" in (sweep_dir / "report" / "report.md").read_text()


def test_the_report_shows_what_ran_and_the_paired_change_against_the_margin(reused):
    sweep_dir, _, _ = reused
    if not (sweep_dir / "report" / "report.md").is_file():
        subprocess.run([console_script("mtp-eval-report"), str(sweep_dir)], check=False,
                       capture_output=True, timeout=240)  # fmt: skip
    md = (sweep_dir / "report" / "report.md").read_text()
    head = "| prefill | decode | verify | draft | SGLang | FlashInfer | mtp-eval commit |"
    assert head in md
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()[:10]  # fmt: skip
    rows = [line for line in md.splitlines() if f"| {sha}" in line]
    assert any("| triton | triton | triton | triton | triton | 0.5.19 |" in r for r in rows), md
    assert any("| fa3 | fa3 | fa3 | fa3 | fa3 | 0.5.19 |" in r for r in rows), md
    page = (sweep_dir / "report" / "report.html").read_text()
    assert 'alt="paired accuracy change against the margin"' in page


def test_a_rerun_says_which_cells_it_skipped_and_which_folders_it_ignored(reused):
    _, first, second = reused
    assert "skipped, already finished" not in first
    assert "tiny-sim/fa3/auto/sp=None/sd=None: skipped, already finished" in second
    assert "ok (simulated), skipped: already finished" in second  # in the sweep's table
    assert "2 cells under" in second
    assert re.search(r"ignored: \S+/1_tiny-sim_fmha_v2_\S+ is not a job of this sweep", second)


def test_result_json_is_as_readable_as_every_other_output(reused):
    sweep_dir, _, _ = reused
    for cell in sweep_dir.glob("*_tiny-sim_*"):
        result_mode = (cell / "result.json").stat().st_mode & 0o777
        assert result_mode == (cell / "server.log").stat().st_mode & 0o777, oct(result_mode)
        assert result_mode & 0o040  # the group can read it


def test_outputs_readme_names_everything_a_sweep_writes(reused):
    sweep_dir, _, _ = reused
    readme = (REPO / "outputs" / "README.md").read_text()
    cells = sorted(p.name for p in sweep_dir.iterdir() if p.is_dir() and p.name[0].isdigit())
    assert cells == [
        "0_tiny-sim_fa3_auto_exact",  # skip-softmax off reads `exact`, not spNone_sdNone
        "1_tiny-sim_fmha_v2_auto_exact",
        "1_tiny-sim_triton_auto_exact",
    ]
    cell = sweep_dir / cells[0]
    written = {p.name for p in cell.iterdir()}
    written |= {f"samples/{p.name}" for p in (cell / "samples").iterdir()}
    written |= {f".hydra/{p.name}" for p in (cell / ".hydra").iterdir()}
    written |= {p.name for p in sweep_dir.iterdir() if not p.name[0].isdigit()}
    missing = sorted(
        name for name in written
        if name not in readme and name.split("/")[-1] not in readme
        and not name.startswith("samples/mcq_sample")
    )  # fmt: skip
    assert missing == [], f"outputs/README.md does not mention {missing}"
    for named in ("report/", "samples/CONFIG_HASH", "cli.log", "probe/", "demo-", "signoff-"):
        assert named in readme
    assert "samples/<eval>.jsonl" in readme
