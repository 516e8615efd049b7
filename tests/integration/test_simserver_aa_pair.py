"""An A/A pair through real simulated servers: with ``sampling_spread`` the two server starts
differ as SGLang's do at temperature > 0; without it they answer every request alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.live_h200 import aa_spread as aa
from tests.helpers.cells import REPO

pytestmark = pytest.mark.integration
SPREAD = 0.4  # ICC 0.6, synth_arith's on the H200 (benchmarks/results/live-h200/aa_spread.md)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("aa") / "sweep"
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", "-m", "backend=fa3,fa3_repeat",
         f"server.simulated.sampling_spread=0,{SPREAD}", "evals=[synth_arith]",
         "evals.synth_arith.repeats=8", "server.simulated.accuracy=0.67",
         "server.simulated.mean_completion_tokens=12", "server.simulated.startup_delay_s=0.1",
         "client.progress=false", f"hydra.sweep.dir={out}"],
        cwd=REPO, text=True, capture_output=True, timeout=400)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def samples(sweep: Path, variant: str, spread: float) -> aa.Samples:
    """The synth_arith samples of the cell of ``variant`` at ``spread``."""
    for result in sweep.glob("*/result.json"):
        data = json.loads(result.read_text())
        conf = data["config"]
        if (
            data["cell"]["variant"] == variant
            and float(conf.get("simulated", {}).get("sampling_spread", 0.0)) == spread
        ):
            text = (result.parent / "samples" / "synth_arith.jsonl").read_text()
            return aa.samples_of(text.splitlines())
    raise AssertionError(f"no {variant} cell at sampling_spread={spread} in {sweep}")


def pair(sweep: Path, spread: float) -> tuple[np.ndarray, np.ndarray]:
    a, b = samples(sweep, "fa3", spread), samples(sweep, "fa3_repeat", spread)
    reps = aa.common_repeats(a, b)
    assert len(reps) == 8
    return aa.matrix_of(a, 0, reps), aa.matrix_of(b, 0, reps)


def test_without_spread_an_aa_pair_agrees_on_every_request(sweep: Path) -> None:
    base, cand = pair(sweep, 0.0)
    diff = aa.paired_difference(base, cand)
    assert (diff.diff, diff.se, diff.agreement) == (0.0, 0.0, 1.0)
    assert aa.spread_of(base).mixed_share == 0.0  # an identical prompt: always right or wrong


def test_with_spread_an_aa_pair_differs_as_independent_samples(sweep: Path) -> None:
    base, cand = pair(sweep, SPREAD)
    for cell in (base, cand):
        s = aa.spread_of(cell)
        assert s.mean == pytest.approx(0.67, abs=0.06)
        assert s.icc == pytest.approx(1 - SPREAD, abs=0.12)
        assert s.mixed_share > 0.3  # about 0.45 expected; SD about 0.035 over 200 questions
    diff = aa.paired_difference(base, cand)
    assert diff.se > 0.004 and diff.agreement < 0.95
    assert abs(diff.diff) < 4 * diff.se  # an A/A pair: no difference beyond the noise
    assert diff.se == pytest.approx(diff.se_sampling, rel=0.35)  # the two starts independent
    assert abs(diff.shared_share) < 0.25
