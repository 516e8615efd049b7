"""The losslessness arm (issue 39 items 3 and 5): greedy spec-on against spec-off, per variant.

Real ``mtp-eval`` cells on the simulated server, all under ``--enable-deterministic-inference``:
fa3's verify pass reads perturbed logits (``verify_logit_sigma``, seen only with speculation),
so its greedy outputs differ from fa3 with speculation off: FAIL naming the request and the
position; triton has no perturbation: PASS; fmha_v2 (trtllm_mha) is refused deterministic mode
by SGLang: UNSUPPORTED, and the report says so without failing it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cells import run_script

pytestmark = pytest.mark.integration
COMMON = [
    "evals=[]", "parity.enabled=true", "parity.sequences=6", "parity.prompt_tokens=16",
    "parity.new_tokens=24", "parity.greedy_sequences=6", "parity.decode_path=false",
    "server.simulated.sglang_version=0.5.23", "server.simulated.startup_delay_s=0.05",
    "server.extra_args=[--enable-deterministic-inference]",
    "server.simulated.effects=[{match:{attention_backend:fa3},verify_logit_sigma:2.0}]",
]  # fmt: skip
SPEC_OFF = [
    "model.speculative.algorithm=null", "model.speculative.num_steps=null",
    "model.speculative.eagle_topk=null", "model.speculative.num_draft_tokens=null",
]  # fmt: skip


def test_spec_on_against_spec_off_under_deterministic_mode(tmp_path: Path) -> None:
    on = run_script("mtp-eval", "-m", "backend=fa3,triton,fmha_v2", *COMMON,
                    f"hydra.sweep.dir={tmp_path}/on")  # fmt: skip
    assert on.returncode in (0, 1), on.stdout[-2000:] + on.stderr[-2000:]
    off = run_script("mtp-eval", "-m", "backend=fa3,triton", *COMMON, *SPEC_OFF,
                     f"hydra.sweep.dir={tmp_path}/off")  # fmt: skip
    assert off.returncode == 0, off.stdout[-2000:] + off.stderr[-2000:]
    report = run_script("mtp-eval-report", str(tmp_path), "--out", str(tmp_path / "r"),
                        "--no-html", timeout=180)  # fmt: skip  # summary.json and report.md read
    assert report.returncode == 1, report.stdout[-2000:] + report.stderr[-2000:]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    found = {c["variant"]: k for c in summary["cells"] for k in c["checks"]
             if k["kind"] == "lossless_vs_spec_off"}  # fmt: skip
    assert found["triton"]["verdict"] == "PASS"
    assert found["triton"]["numbers"]["exact_match_rate"] == 1.0
    fa3 = found["fa3"]
    assert fa3["verdict"] == "FAIL" and fa3["numbers"]["deterministic"] is True
    first = fa3["numbers"]["first_divergence"]
    assert first and all(isinstance(p, int) for p in first.values())
    q, p = next(iter(first.items()))
    assert f"{q} at output position {p}" in fa3["message"]
    assert found["fmha_v2"]["verdict"] == "INFO"
    assert "refuses --enable-deterministic-inference" in found["fmha_v2"]["message"]
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Parity: speculation on vs off (greedy)" in md
