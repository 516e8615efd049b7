"""What the installed console scripts plan for fmha_v2 with speculation on each SGLang release.

The XQA speculative-decoding mask is in SGLang's ``trtllm_mha_backend.py`` from 0.5.21 for
target-verify only and from 0.5.22 for draft-extend too (benchmarks/results/sglang-rules.md), so a
0.5.22 sweep must verify on XQA, a 0.5.21 one on XQA with the draft worker routed away.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers.cells import console_script

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("version", "verify", "draft", "flags"),
    [
        ("0.5.20", "fa3", "fa3", ["--speculative-attention-mode", "decode"]),
        ("0.5.21", "xqa", "fa3", ["--attention-backend", "trtllm_mha",
                                  "--speculative-draft-attention-backend", "fa3"]),
        ("0.5.22", "xqa", "xqa", ["--attention-backend", "trtllm_mha"]),
    ],
)  # fmt: skip
def test_dry_run_plans_fmha_v2_verify_by_release(tmp_path, version, verify, draft, flags):
    run = subprocess.run(
        [console_script("mtp-eval"), "server=sglang", f"server.sglang_version={version}",
         "gpu=h200", "backend=fmha_v2", "dry_run=true"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    (result_file,) = (tmp_path / "outputs").rglob("result.json")
    result = json.loads(result_file.read_text())
    assert result["status"] == "planned"
    assert result["runs"] == {"prefill": "fmha_v2", "decode": "xqa" if verify == "xqa" else "fa3",
                              "verify": verify, "draft": draft}  # fmt: skip
    command = next(line for line in run.stdout.splitlines() if line.startswith("server command:"))
    argv = command.split()
    assert all(f in argv for f in flags), command
    assert ("--speculative-attention-mode" in argv) is (verify != "xqa")
    assert ("--speculative-draft-attention-backend" in argv) is (draft != "xqa")


def test_matrix_for_0522_verifies_fmha_v2_on_xqa(tmp_path):
    run = subprocess.run(
        [console_script("mtp-eval-matrix"), "--sglang-version", "0.5.22", "--variants",
         "fmha_v2,trtllm_mha", "--families", "SM90,SM120", "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    cells = [c for c in json.loads(run.stdout)["cells"] if c["speculative"]]
    assert cells and all(c["outcome"] in ("ok", "no-effect", "reject") for c in cells)
    for cell in cells:
        if cell["outcome"] != "reject":  # SM120 refuses fp8_e4m3 / skip-softmax prefill
            assert cell["runs"]["verify"] == cell["runs"]["draft"] == "xqa", cell
            assert cell["notes"] == [] or all("prefill stays" not in n for n in cell["notes"]), cell
