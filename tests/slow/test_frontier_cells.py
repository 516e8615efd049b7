"""The skip-softmax frontier end to end: ``mtp-eval -m`` cells on the simulated server, the report.

fa3 (the baseline) and fmha_v2 at four prefill skip-softmax factors, each cell with an eval and a
speed phase. The simulated server's ``h200_synth_llama`` table makes fmha_v2's prefill faster as
its factor skips more tiles (more at longer prompts), and an effect (its fault knob) costs the
largest factor 30 points of accuracy: the frontier must show gains growing with the factor, GO up
to 3e4, NO-GO at 1e5, and name 3e4 as the factor to pick, with the measured skipped shares.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from pipeline.simserver.timing import PREFILL_SKIP_ENV
from tests.helpers.cells import REPO, run_script

pytestmark = pytest.mark.slow
MEASURED = REPO / "benchmarks/results/live-h200/signoff/checks/skip_fraction.json"
COMMON = [
    "evals=[mcq_sample]", "evals.mcq_sample.repeats=8", "client.progress=false",
    "speed.enabled=true", "speed.prefill_tokens=[1024,4096,16384]", "speed.prefill_batches=[]",
    "speed.decode_batches=[]", "speed.repeats=3",
    "server.simulated.timing_model=h200_synth_llama", "server.simulated.timing_jitter=0.03",
    "server.simulated.startup_delay_s=0.1", "server.stop_grace_s=5",
    f"server.simulated.effects=[{{match:{{{PREFILL_SKIP_ENV}:100000}},accuracy_delta:-0.3}}]",
]  # fmt: skip
FACTORS = (0.0, 1e4, 3e4, 1e5)


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fa3 sweep and the fmha_v2 factor sweep, one report over both."""
    root = tmp_path_factory.mktemp("frontier")
    sweeps = {"base": ["backend=fa3"],
              "v2": ["backend=fmha_v2", "skip_softmax.prefill=0,10000,30000,100000"]}  # fmt: skip
    for name, overrides in sweeps.items():
        run = run_script("mtp-eval", "-m", *overrides, *COMMON,
                   f"hydra.sweep.dir={root / name}")  # fmt: skip
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = run_script("mtp-eval-report", str(root / "base"), str(root / "v2"),
                  "--out", str(root / "report"), "--skip-fractions", str(MEASURED),
                  "--frontier-per-eval", timeout=180)  # fmt: skip
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]  # 1e5: NO-GO
    return root / "report"


def test_the_frontier_has_every_factor_with_its_verdict_gain_and_skipped_share(
    reported: Path,
) -> None:
    (entry,) = read_summary(reported / "summary.json")["frontier"]
    assert (entry["variant"], entry["kv_dtype"]) == ("fmha_v2", "auto")
    points = entry["points"]
    assert [p["factor"] for p in points] == list(FACTORS)
    assert [p["accuracy_verdict"] for p in points] == ["GO", "GO", "GO", "NO-GO"]
    assert [p["eval_verdicts"] for p in points][-1] == {"mcq_sample": "NO-GO"}
    assert [p["skipped_fraction"] for p in points] == [0.0, 0.34995, 0.65338, 0.84407]
    assert entry["largest_go_factor"] == 3e4
    # Gains over the factor-0 cell at 16k tokens grow with the factor, each above 1 with its
    # interval, and at one factor grow with the prompt length (attention's share of the time).
    at_16k = [p["prefill_gain"][2] for p in points[1:]]
    assert [g["tokens"] for g in at_16k] == [16384] * 3
    ratios = [g["ratio"] for g in at_16k]
    assert ratios == sorted(ratios) and all(g["ratio_ci95"][0] > 1.0 for g in at_16k)
    by_length = [g["ratio"] for g in points[2]["prefill_gain"]]
    assert by_length == sorted(by_length) and by_length[0] < 1.05 < by_length[-1]
    assert points[0]["prefill_gain"][0]["note"] == "the factor-0 reference"


def test_the_report_pages_show_the_frontier_and_the_factor_to_pick(reported: Path) -> None:
    md = (reported / "report.md").read_text()
    title = "Skip-softmax frontier: fmha_v2 on tiny-sim, NVIDIA H200 (simulated), KV auto"
    assert f"## {title}, SGLang 0.5.19" in md
    assert "Largest factor whose verdict is GO: 30000 (prefill 1 x 1,024: " in md
    header = next(line for line in md.splitlines() if line.startswith("| factor |"))
    assert "| mcq_sample |" in header and "prefill 1 x 16,384 gain" in header
    row = next(line for line in md.splitlines() if line.startswith("| 100000 |"))
    assert "| 84.4% | NO-GO |" in row
    assert f"Tiles skipped: measured with HF ({MEASURED})" in md
    html = (reported / "report.html").read_text()
    assert f"<h2>{title}, SGLang 0.5.19</h2>" in html


def test_an_unreadable_skip_fractions_file_is_an_input_error_that_says_how_to_write_one(
    reported: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "skip.json"
    bad.write_text('{"skip_fraction": {"auto": {"10000": "most"}}}')
    sweeps = [str(reported.parent / name) for name in ("base", "v2")]
    run = run_script("mtp-eval-report", *sweeps, "--out", str(tmp_path / "r"),
               "--skip-fractions", str(bad), timeout=180)  # fmt: skip
    assert run.returncode == 2 and not (tmp_path / "r").exists()
    assert f"{bad}: skip_fraction.auto.10000='most'" in run.stderr
    assert "-m benchmarks.live_h200.skip_fraction MODEL_FOLDER OUT.json" in run.stderr
