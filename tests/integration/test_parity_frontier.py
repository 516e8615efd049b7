"""The skip-softmax frontier's divergence column: the largest factor inside the parity band.

Real ``mtp-eval`` cells on the simulated server: fa3 generates the sequences, fa3_repeat (the A/A)
and fmha_v2 at the prefill skip-softmax factors 0, 1e4 and 1e6 re-score them; only 1e6 perturbs
the logits (``logit_sigma`` matched on the factor's environment variable, as SGLang reads it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.report.write.summary_json import read_summary
from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
ENV = "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
COMMON = [
    "evals=[]", "parity.enabled=true", "parity.sequences=12", "parity.prompt_tokens=16",
    "parity.new_tokens=16", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05",
]  # fmt: skip
FACTOR = f"{{match:{{{ENV}:1000000}},logit_sigma:0.2}}"  # the frontier's perturbed factor
FP8 = "{match:{kv_cache_dtype:fp8_e4m3},logit_sigma:0.2}"  # the KV comparison's perturbed dtype
# The frontier's and the KV comparison's cells share one effect list: each perturbs only cells
# of its own sweep (fmha_v2 at factor 1e6; fmha_v2 with fp8 KV), never fa3 or fa3_repeat, whose
# sequences and A/A both tests can then share (``baseline_and_aa``).
BOTH = [*COMMON, f"server.simulated.effects=[{FACTOR},{FP8}]"]


@pytest.fixture(scope="module")
def baseline_and_aa(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """fa3 generating the sequences and fa3_repeat (the A/A) re-scoring them, as both tests'."""
    root = tmp_path_factory.mktemp("baseline")
    base = run_script("mtp-eval", "backend=fa3", *BOTH, f"output_dir={root}/fa3")
    assert base.returncode == 0, base.stdout[-2000:] + base.stderr[-2000:]
    source, sweep = f"parity.sequences_from={root}/fa3", f"hydra.sweep.dir={root / 'aa'}"
    run = run_script("mtp-eval", "-m", "backend=fa3_repeat", *BOTH, source, sweep)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return root


def test_the_frontier_names_the_largest_factor_inside_the_parity_band(
    baseline_and_aa: Path, tmp_path: Path
) -> None:
    source = f"parity.sequences_from={baseline_and_aa}/fa3"
    run = run_script("mtp-eval", "-m", "backend=fmha_v2", "skip_softmax.prefill=0,10000,1000000",
                     *BOTH, source, f"hydra.sweep.dir={tmp_path / 'v2'}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    # the same cells as one folder of fa3, aa and v2 gave; --no-html: the page is not read
    report = run_script("mtp-eval-report", str(baseline_and_aa), str(tmp_path / "v2"), "--out",
                        str(tmp_path / "report"), "--no-html", timeout=180)  # fmt: skip
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    (entry,) = read_summary(tmp_path / "report" / "summary.json")["frontier"]
    assert [p["factor"] for p in entry["points"]] == [0.0, 1e4, 1e6]
    assert [p["parity"]["verdict"] for p in entry["points"]] == ["GO", "GO", "NO-GO"]
    assert entry["largest_inside_band_factor"] == 1e4
    md = (tmp_path / "report" / "report.md").read_text()
    assert "Largest factor inside the parity band: 10000." in md
    assert "| divergence (parity) |" in md


def test_sequences_from_auto_pairs_by_the_reports_rule_in_one_sweep(tmp_path: Path) -> None:
    """The baseline listed first generates; the others find it as the report pairs them."""
    effect = "server.simulated.effects=[{match:{attention_backend:trtllm_mha},logit_sigma:0.2}]"
    run = run_script("mtp-eval", "-m", "backend=fa3,fa3_repeat,fmha_v2", *COMMON, effect,
                     "parity.sequences_from=auto", f"hydra.sweep.dir={tmp_path}/s")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = run_script("mtp-eval-report", str(tmp_path / "s"), "--out", str(tmp_path / "r"),
                        "--no-html", timeout=180)  # fmt: skip  # summary.json alone is read
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    summary = read_summary(tmp_path / "r" / "summary.json")
    found = {(e["variant"], e["path"]): e for e in summary["parity"]}
    assert found[("fa3_repeat", "prefill")]["verdict"] == "GO"
    cand = found[("fmha_v2", "prefill")]
    assert cand["verdict"] == "NO-GO" and cand["paired_by"].startswith("the report's baseline")
    assert cand["sequences_from"].startswith(str(tmp_path / "s"))


def test_sequences_from_auto_without_a_baseline_fails_the_cell_naming_the_fix(
    tmp_path: Path,
) -> None:
    run = run_script("mtp-eval", "backend=fmha_v2", *BOTH, "parity.sequences_from=auto",
                     f"output_dir={tmp_path}/lone")  # fmt: skip
    assert run.returncode != 0
    assert "run the fa3 cell with parity.enabled=true first" in run.stdout + run.stderr


def test_the_kv_dtype_comparison_has_a_divergence_column(
    baseline_and_aa: Path, tmp_path: Path
) -> None:
    """fmha_v2 at auto and fp8_e4m3 KV; only fp8's logits are perturbed (matched on the flag)."""
    source = f"parity.sequences_from={baseline_and_aa}/fa3"
    run = run_script("mtp-eval", "-m", "backend=fmha_v2", "kv_dtype=auto,fp8_e4m3", *BOTH,
                     source, f"hydra.sweep.dir={tmp_path / 'v2'}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = run_script("mtp-eval-report", str(baseline_and_aa), str(tmp_path / "v2"), "--out",
                        str(tmp_path / "report"), timeout=180)  # fmt: skip
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    md = (tmp_path / "report" / "report.md").read_text()
    table = md[md.index("## KV dtype: fmha_v2") :]
    assert "KV dtypes inside the parity band: auto." in table
    rows = [r for r in table.splitlines() if r.startswith(("| auto", "| fp8_e4m3"))]
    assert rows[0].split(" | ")[2].startswith("GO: ")
    assert rows[1].split(" | ")[2].startswith("NO-GO: ")
    assert "<h2>KV dtype: fmha_v2" in (tmp_path / "report" / "report.html").read_text()
