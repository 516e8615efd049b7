"""The production shapes that launched on the H200 (SGLang 0.5.23) are what their files say.

Each committed cell is a shipped production model config on its cut shape with random weights,
served by the real engine: ``ok``, ``--load-format dummy`` asked and confirmed by ``/server_info``
(no mismatch but, in the first three, the GPU name, which the explicit ``gpu=h200`` did not yet
confirm with nvidia-smi), the config's
speculative recipe running, and the speculative statistics cross-checked on every request.
"""

from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest

from backends.startup_failure import classify_startup_log

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
LIVE = REPO / "benchmarks/results/live-h200/shapes-0.5.23"
# cell folder -> (its shape folder, its MTP / NextN drafting as SGLang names it)
LAUNCHED = {
    "0_deepseek-v3-dummy_fa3_auto_exact": ("deepseek_v3", "EAGLE"),
    "1_qwen3-next-80b-a3b-dummy_fa3_auto_exact": ("qwen3_next_80b_a3b", "EAGLE"),
    "2_glm-4.6-dummy_fa3_auto_exact": ("glm_4_6", "EAGLE"),
    # the fourth, in the speed lease of 2026-12-02: the shipped float16 recipe as it is
    "0_llama-3.1-8b-eagle3-dummy_fa3_auto_exact": ("llama3_1_8b", "EAGLE3"),
}


def _result(folder: str) -> dict:
    return json.loads((LIVE / "cells" / folder / "result.json").read_text())


@pytest.mark.parametrize("folder", list(LAUNCHED))
def test_the_shape_launched_on_the_real_engine(folder: str) -> None:
    shape, algorithm = LAUNCHED[folder]
    result = _result(folder)
    assert result["status"] == "ok" and not result["simulated"]
    assert result["cell"]["sglang_version"] == "0.5.23"
    argv = result["server"]["argv"]
    assert argv[argv.index("--model-path") + 1] == f"benchmarks/live_h200/shapes/{shape}"
    assert argv[argv.index("--load-format") + 1] == "dummy"
    assert result["requested"]["load_format"] == "dummy"
    assert {m["key"] for m in result["mismatches"]} <= {"gpu"}  # load_format among the agreed
    assert result["observed"]["speculative_algorithm"] == algorithm
    accept = result["accept"]
    assert accept["status"] == "ok"
    assert accept["n_with_spec"] == accept["n_requests"] > 0
    assert accept["verify_ct"] > 0 and accept["num_proposed_drafts"] > 0


def test_the_llama_eagle3_cell_ran_the_shipped_float16_recipe() -> None:
    argv = _result("0_llama-3.1-8b-eagle3-dummy_fa3_auto_exact")["server"]["argv"]
    assert argv[argv.index("--dtype") + 1] == "float16"  # conf/model/llama3_1_8b_eagle3.yaml
    assert "--disable-cuda-graph" not in argv  # the float16 pair captures its graphs


def test_the_first_speed_cell_failed_on_the_drafts_dtype_and_says_so() -> None:
    # --dtype auto: the EAGLE3 draft's config says float16 under a bfloat16 target, and 0.5.23
    # fails its decode-graph capture; conf/experiment/speed_llama3_1_8b.yaml now says bfloat16.
    result = json.loads((LIVE / "first-try-speed/result.json").read_text())
    assert result["status"] == "failed"
    assert "--dtype" not in result["server"]["argv"]
    log = lzma.decompress((LIVE / "first-try-speed/server.log.xz").read_bytes()).decode()
    tail = "\n".join(log.splitlines()[-50:])  # what the pipeline hands the classifier
    failure = classify_startup_log(tail, -9, timed_out=False)
    assert failure.kind == "crash"
    assert failure.message.startswith(
        "Exception: Capture cuda graph failed: expected mat1 and mat2"
    )
    experiment = (REPO / "conf/experiment/speed_llama3_1_8b.yaml").read_text()
    assert "extra_args: [--dtype, bfloat16]" in experiment
