"""A MISSING cell stays in its skip-softmax frontier: ``mtp-eval -m`` cells, then the report.

fa3 and fmha_v2 at factors 0 and 1e4 on the simulated server; the 1e4 cell's result.json is then
removed, as when its job died, so the report knows it only from the sweep (MISSING, no SGLang
release recorded). The frontier must still show both factors, the missing one with what is
missing, instead of dropping the variant's frontier for want of a second factor.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration
COMMON = [
    "evals=[mcq_sample]", "evals.mcq_sample.repeats=2", "client.progress=false",
    "speed.enabled=true", "speed.prefill_tokens=[1024]", "speed.prefill_batches=[]",
    "speed.decode_batches=[]", "speed.repeats=3", "server.simulated.timing_model=h200_synth_llama",
    "server.simulated.startup_delay_s=0.1", "server.stop_grace_s=5",
]  # fmt: skip


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv), cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_missing_factor_is_kept_in_its_frontier_and_says_what_is_missing(tmp_path: Path):
    sweeps = {"base": ["backend=fa3"], "v2": ["backend=fmha_v2", "skip_softmax.prefill=0,10000"]}
    for name, overrides in sweeps.items():
        run = _run(console_script("mtp-eval"), "-m", *overrides, *COMMON,
                   f"hydra.sweep.dir={tmp_path / name}")  # fmt: skip
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    (died,) = [p for p in (tmp_path / "v2").glob("*/result.json") if "10000" in p.parent.name]
    died.unlink()
    out = tmp_path / "report"
    report = _run(console_script("mtp-eval-report"), str(tmp_path / "base"), str(tmp_path / "v2"),
                  "--out", str(out))  # fmt: skip
    assert report.returncode in (1, 2), report.stdout[-2000:] + report.stderr[-2000:]
    (entry,) = read_summary(out / "summary.json")["frontier"]
    assert entry["sglang_version"] == "0.5.19"  # the present cell's release, not "?"
    assert [(p["factor"], p["status"]) for p in entry["points"]] == [
        (0.0, "ok"), (10000.0, "missing")]  # fmt: skip
    assert entry["points"][1]["accuracy_verdict"] == "MISSING"
    md = (out / "report.md").read_text()
    section = md.split("## Skip-softmax frontier: fmha_v2", 1)[1].split("\n## ", 1)[0]
    assert "SGLang release not recorded: MISSING, the job left no result.json" in section
    assert "| 10000 | not measured | MISSING |" in section
