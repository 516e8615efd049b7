"""The full-depth shapes (issue 43) as the installed ``mtp-eval`` plans them for H200s.

One dry run of every cell LIVE_PLAN=full-shapes runs (conf/experiment/full_*.yaml x fa3, fmha_v2,
fa3_repeat x bf16 and fp8 KV, with the plan's server settings) on SGLang 0.5.23: each is planned,
serves its full-depth folder with random weights at its tp (and dp), and fmha_v2 plans
trtllm_mha for each architecture (none is MLA).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from benchmarks.live_h200.shapes.memory import FULL_SHAPES
from tests.helpers.cells import REPO, console_script

pytestmark = pytest.mark.integration

SHAPES = "benchmarks/live_h200/shapes"
BACKENDS = {"fa3": "fa3", "fmha_v2": "trtllm_mha", "fa3_repeat": "fa3"}  # variant -> argv's


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> list[dict]:
    sweep = tmp_path_factory.mktemp("full")
    experiments = ",".join(s.experiment for s in FULL_SHAPES)
    run = subprocess.run(
        [console_script("mtp-eval"), "-m", f"experiment={experiments}", "server=sglang",
         "server.sglang_version=0.5.23", "gpu=h200", "dry_run=true",
         "backend=" + ",".join(BACKENDS), "kv_dtype=auto,fp8_e4m3",
         "server.mem_fraction_static=0.85", "server.max_running_requests=32",
         "server.extra_args=[--sampling-backend,pytorch,--max-total-tokens,262144]",
         f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, timeout=600, check=False, cwd=REPO,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    results = [json.loads(p.read_text()) for p in sorted(sweep.glob("*/result.json"))]
    assert len(results) == len(FULL_SHAPES) * len(BACKENDS) * 2, run.stdout[-3000:]
    return results


@pytest.mark.parametrize("shape", FULL_SHAPES, ids=lambda s: s.experiment)
def test_every_full_cell_plans_its_tp_and_dp_on_random_weights(planned, shape):
    folder = f"{SHAPES}/{shape.folder}"
    model = (folder, shape.tp)
    cells = [r for r in planned if (r["cell"]["model_path"], r["config"]["model"]["tp"]) == model]
    assert len(cells) == 6  # 3 variants x 2 KV dtypes
    for result in cells:
        assert result["status"] == "planned", result.get("error")
        argv = result["server"]["argv"]
        assert flag(argv, "--load-format") == "dummy"
        assert flag(argv, "--tp-size") == str(shape.tp)
        assert flag(argv, "--dp-size") == (str(shape.dp) if shape.dp > 1 else None)
        assert "--enable-dp-attention" not in argv and "--attn-dp-size" not in argv
        assert flag(argv, "--mem-fraction-static") == "0.85"
        assert flag(argv, "--max-total-tokens") == "262144"
        variant = result["cell"]["variant"]
        assert flag(argv, "--attention-backend") == BACKENDS[variant], argv
        assert flag(argv, "--kv-cache-dtype") == result["cell"]["kv_dtype"]
        draft = flag(argv, "--speculative-draft-model-path")
        assert draft == (f"{SHAPES}/{shape.draft}" if shape.draft else None)
        assert result["config"]["speed"]["enabled"] is True
