"""The production shapes with random weights, as the installed ``mtp-eval`` plans them for an H200.

One dry run of the four ``conf/experiment/shape_*.yaml`` on SGLang 0.5.23: each cell is planned
(the pre-flight passes), its argv serves the committed shape folder with ``--load-format dummy``
on one GPU, with the project's tokenizer, and keeps the shipped config's speculative recipe and
flags.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
SHAPES = "benchmarks/live_h200/shapes"
# experiment -> (folder, --speculative-algorithm, flags of the shipped model config that stay)
EXPECTED = {
    "shape_deepseek_v3": ("deepseek_v3", "EAGLE", []),
    "shape_qwen3_next_80b_a3b": (
        "qwen3_next_80b_a3b", "NEXTN", ["--disable-radix-cache", "--mamba-ssm-dtype", "float32"]
    ),
    "shape_glm_4_6": ("glm_4_6", "EAGLE", ["--reasoning-parser", "glm45"]),
    "shape_llama3_1_8b_eagle3": ("llama3_1_8b", "EAGLE3", ["--dtype", "float16"]),
}  # fmt: skip


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> dict[str, dict]:
    sweep = tmp_path_factory.mktemp("shapes")
    run = subprocess.run(
        [console_script("mtp-eval"), "-m", "experiment=" + ",".join(EXPECTED), "server=sglang",
         "server.sglang_version=0.5.23", "gpu=h200", "dry_run=true", f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    results = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    assert len(results) == len(EXPECTED), run.stdout
    by_folder = {Path(r["config"]["model"]["path"]).name: r for r in results}
    return {exp: by_folder[folder] for exp, (folder, _, _) in EXPECTED.items()}


@pytest.mark.parametrize("experiment", list(EXPECTED))
def test_shape_cell_plans_random_weights_on_one_h200(planned, experiment):
    folder, algorithm, kept = EXPECTED[experiment]
    result = planned[experiment]
    assert result["status"] == "planned", result.get("error")
    assert result["cell"]["sglang_version"] == "0.5.23"
    assert "H200" in result["cell"]["gpu"]["name"]
    argv = result["server"]["argv"]
    assert flag(argv, "--model-path") == f"{SHAPES}/{folder}"
    assert (REPO / SHAPES / folder / "config.json").is_file()
    assert flag(argv, "--load-format") == "dummy" and flag(argv, "--tp-size") == "1"
    tokenizer = flag(argv, "--tokenizer-path")
    assert tokenizer is not None and (REPO / tokenizer / "tokenizer.json").is_file()
    assert flag(argv, "--speculative-algorithm") == algorithm
    assert all(word in argv for word in kept), argv
    draft = flag(argv, "--speculative-draft-model-path")
    assert draft is None or (REPO / draft / "config.json").is_file()
