"""A verify-path perturbation shows in the decode/verify parity only (issue 39 items 2 and 5).

Real ``mtp-eval`` cells on the simulated server: fa3 generates, fa3_repeat (the A/A) and fmha_v2
re-score its sequences; fmha_v2's decoding alone reads perturbed logits (``verify_logit_sigma``:
a verify kernel that differs while prefill agrees). Prefill parity cannot see it: GO; each cell's
decode-time logprobs against its own prefill re-score (``parity/decode.json``), judged against
the baseline's own, NO-GO.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.results.cell_paths import parity_dir
from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
COMMON = [
    "evals=[]", "parity.enabled=true", "parity.sequences=12", "parity.prompt_tokens=16",
    "parity.new_tokens=24", "server.simulated.sglang_version=0.5.23",
    "server.simulated.startup_delay_s=0.05",
    "server.simulated.effects=[{match:{attention_backend:trtllm_mha},verify_logit_sigma:0.2}]",
]  # fmt: skip


def test_a_verify_path_perturbation_is_no_go_on_the_decode_path_only(tmp_path: Path) -> None:
    base = run_script("mtp-eval", "backend=fa3", *COMMON, f"output_dir={tmp_path}/fa3")
    assert base.returncode == 0, base.stdout[-2000:] + base.stderr[-2000:]
    source, sweep = f"parity.sequences_from={tmp_path}/fa3", f"hydra.sweep.dir={tmp_path}/s"
    run = run_script("mtp-eval", "-m", "backend=fa3_repeat,fmha_v2", *COMMON, source, sweep)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    own = json.loads((parity_dir(tmp_path / "fa3") / "decode.json").read_text())
    assert own["metrics"]["kl_topk"]["estimate"] == 0.0  # the baseline decodes what it prefills
    report = run_script("mtp-eval-report", str(tmp_path), "--out", str(tmp_path / "r"),
                        "--no-html", timeout=180)  # fmt: skip  # summary.json and report.md read
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    found = {(c["variant"], k["kind"]): k["verdict"] for c in summary["cells"]
             for k in c["checks"] if "parity" in k["kind"]}  # fmt: skip
    assert found == {
        ("fa3_repeat", "parity_vs_baseline"): "GO",
        ("fa3_repeat", "decode_parity_vs_baseline"): "GO",
        ("fmha_v2", "parity_vs_baseline"): "GO",  # prefill agrees: item 1 cannot see it
        ("fmha_v2", "decode_parity_vs_baseline"): "NO-GO",
    }
    md = (tmp_path / "r" / "report.md").read_text()
    assert "| decode/verify |" in md
