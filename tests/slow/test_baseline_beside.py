"""A baseline that runs beside its candidates (``sequential.baseline_runs=beside``): real cells
through the installed ``mtp-eval`` on the simulated server, all at once under submitit's local
launcher, then the installed ``mtp-eval-report``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import processes_mentioning
from tests.helpers.proxied import console_script, mtp_eval

pytestmark = pytest.mark.slow

# fa3 the baseline; triton answers as it does (GO after a few rounds), fmha_v2 20 points worse
# (NO-GO at once). 16 repeats planned in rounds of 2.
SWEEP = (
    "-m", "backend=fa3,triton,fmha_v2", "sequential.enabled=true",
    "sequential.baseline_runs=beside", "sequential.max_repeats=16",
    "sequential.repeats_per_round=2", "client.progress=false",
    "server.simulated.startup_delay_s=0.05",
    "server.simulated.effects=[{match:{prefill_attention_backend:trtllm_mha},accuracy_delta:-0.2}]",
)  # fmt: skip
EVAL = "mcq_sample"


def cells_of(sweep: Path) -> dict[str, dict]:
    found = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    return {r["cell"]["variant"]: r for r in found}


def report_verdicts(sweep: Path, by: tuple[str, ...] = ("variant",)) -> dict:
    """The installed report's accuracy verdict per candidate, keyed by its ``by`` fields.

    ``--no-html``: the verdicts are read from summary.json, which the page does not change.
    """
    proc = subprocess.run([console_script("mtp-eval-report"), str(sweep), "--no-html"],
                          text=True, capture_output=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a NO-GO candidate
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    key = (lambda c: c[by[0]]) if len(by) == 1 else (lambda c: tuple(c[f] for f in by))
    return {key(c): k["verdict"] for c in summary["cells"] for k in c["checks"]
            if k["kind"] == "accuracy_vs_baseline"}  # fmt: skip


@pytest.fixture(scope="module")
def per_kv(tmp_path_factory) -> tuple[Path, dict]:
    """The release layout's shape, run once for the two tests that read it (a sweep each was 28
    and 40 s): a baseline per KV dtype, all six cells at once under submitit's local launcher,
    each KV dtype's three cells the sweep of fa3, triton and fmha_v2 beside each other. With the
    report's accuracy verdicts by (variant, KV dtype)."""
    sweep = tmp_path_factory.mktemp("beside") / "per-kv"
    proc = mtp_eval(*SWEEP, "kv_dtype=auto,fp8_e4m3", "hydra/launcher=local",
                    f"hydra.sweep.dir={sweep}", timeout=280)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return sweep, report_verdicts(sweep, ("variant", "kv_dtype"))


def test_the_baseline_stops_once_its_candidates_stopped(per_kv):
    sweep, verdicts = per_kv
    assert (sweep / ".submitit").is_dir()  # the cells really ran as parallel submitit jobs
    found = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    for i, kv in enumerate(("auto", "fp8_e4m3")):  # each baseline with its own candidates
        cells = {r["cell"]["variant"]: r for r in found if r["cell"]["kv_dtype"] == kv}
        base, same, worse = (cells[v]["evals"][EVAL] for v in ("fa3", "triton", "fmha_v2"))
        assert worse["sequential"]["decision"] == "NO-GO"
        assert same["sequential"]["decision"] == "GO"
        # The worse one stopped first; the baseline went on for the other, then stopped on the
        # round its last look needed (never more than one round ahead of its candidates' looks).
        assert worse["n_repeats"] < same["n_repeats"] <= base["n_repeats"] < 16
        assert base["n_repeats"] <= same["n_repeats"] + 2
        assert base["sequential"]["role"] == "baseline"
        assert base["sequential"]["look"] * 2 == base["n_repeats"]
        base_dir = sweep / f"{i}_tiny-sim_fa3_{kv}_exact"
        for cand in (same, worse):
            assert cand["sequential"]["baseline_dir"] == str(base_dir)
        live = json.loads((base_dir / "sequential_live.json").read_text())
        assert live["evals"][EVAL] == {"role": "baseline", "state": "stopped",
                                       "repeats": base["n_repeats"]}  # fmt: skip
        # The report, pairing by its own rule on what is on disk, decides as the looks did.
        own = {v: cells[v]["evals"][EVAL]["sequential"]["decision"] for v in ("triton", "fmha_v2")}
        said = {v: verdicts[(v, kv)] for v in ("triton", "fmha_v2")}
        assert said == own == {"triton": "GO", "fmha_v2": "NO-GO"}
    assert processes_mentioning(str(sweep)) == []


def test_cells_run_one_after_the_other_pair_with_a_finished_baseline(tmp_path):
    """Hydra's basic launcher runs the baseline (listed first) alone: no candidate has started,
    so it runs every repeat and the candidates pair with it once it has ended, as before."""
    sweep = tmp_path / "serial"
    # 8 repeats, not 16: every one still runs alone, and the candidates (GO at 4 repeats, NO-GO
    # at 2) pair with its first repeats by question and repeat: the same numbers as with 16.
    proc = mtp_eval(*SWEEP, "sequential.max_repeats=8", f"hydra.sweep.dir={sweep}", timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = cells_of(sweep)
    base = cells["fa3"]["evals"][EVAL]
    assert base["n_repeats"] == 8 and "look" not in base["sequential"]
    own = {v: cells[v]["evals"][EVAL]["sequential"]["decision"] for v in ("triton", "fmha_v2")}
    assert report_verdicts(sweep) == own == {"triton": "GO", "fmha_v2": "NO-GO"}


def test_a_baseline_per_kv_dtype_each_beside_its_own_candidates(per_kv):
    """The release layout's shape: a baseline per KV dtype, all six cells at once; each
    candidate pairs with the running baseline of its KV dtype (the report's rule)."""
    sweep, verdicts = per_kv
    found = [json.loads(p.read_text()) for p in sweep.glob("*/result.json")]
    cells = {(r["cell"]["variant"], r["cell"]["kv_dtype"]): r["evals"][EVAL] for r in found}
    assert len(cells) == 6
    for kv in ("auto", "fp8_e4m3"):
        base = cells[("fa3", kv)]
        cands = [cells[(v, kv)] for v in ("triton", "fmha_v2")]
        assert {Path(c["sequential"]["baseline_dir"]).name for c in cands} == {
            f"{0 if kv == 'auto' else 1}_tiny-sim_fa3_{kv}_exact"
        }
        assert max(c["n_repeats"] for c in cands) <= base["n_repeats"] < 16
    own = {k: c["sequential"]["decision"] for k, c in cells.items() if k[0] != "fa3"}
    assert verdicts == own
    assert set(own.values()) == {"GO", "NO-GO"}


# Two engines that answer alike, greedily: gsm8k_sample asks each question the same way at every
# repeat, so the simulated server's answers are copies within a start (as SGLang's at
# temperature 0); fa3 and triton differ on a few questions.
GREEDY = (
    "-m", "backend=fa3,triton", "evals=[gsm8k_sample]", "sequential.enabled=true",
    "sequential.baseline_runs=beside", "sequential.max_repeats=16",
    "sequential.repeats_per_round=2", "client.progress=false",
    "server.simulated.startup_delay_s=0.05", "hydra/launcher=local",
)  # fmt: skip


@pytest.mark.parametrize("temperature", [0.0, 0.6])
def test_greedy_copies_end_both_cells_after_one_round(tmp_path, temperature):
    """At temperature 0 repeats that are copies cannot inform: the candidate stops after its
    first round and says why, its baseline with it, and the report says how many questions the
    margin needs. At 0.6 the same copies are not presumed to be copies: the rounds go on."""
    sweep = tmp_path / f"t{temperature}"
    sampling = [f"model.sampling.temperature={temperature}"]
    if temperature:  # 2 looks show the rounds going on past the first (copies stop after it);
        sampling.append("sequential.max_repeats=4")  # 16 were 1024 undecided requests
    proc = mtp_eval(*GREEDY, *sampling, f"hydra.sweep.dir={sweep}", timeout=280)
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = cells_of(sweep)
    base, cand = (cells[v]["evals"]["gsm8k_sample"] for v in ("fa3", "triton"))
    # --no-html: only summary.json and the exit code are read
    report = subprocess.run([console_script("mtp-eval-report"), str(sweep), "--no-html"],
                            text=True, capture_output=True, timeout=120, check=False)  # fmt: skip
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    (acc,) = [k for c in summary["cells"] for k in c["checks"]
              if k["kind"] == "accuracy_vs_baseline"]  # fmt: skip
    # What the report reads the looks with travels in the cell (pipeline.stats.look_schedule).
    assert cand["sequential"]["alpha_looks"] == "doubling"
    if temperature:
        assert "planned_looks" not in cand["sequential"]
        assert cand["n_repeats"] > 2 and "copies" not in str(cand["sequential"]["decision"])
        return
    assert cand["sequential"]["planned_looks"] == 1 and cand["sequential"]["look"] == 1
    assert cand["sequential"]["decision"].startswith("stopped: repeats are copies")
    assert cand["n_repeats"] == base["n_repeats"] == 2
    assert base["sequential"]["decision"] == "stopped: every candidate paired with it had stopped"
    assert report.returncode == 2, report.stdout + report.stderr
    numbers = acc["numbers"]
    assert acc["verdict"] == "INCONCLUSIVE" and numbers["repeats_vary"] is False
    assert numbers["questions_needed"] > numbers["n_questions"]
    assert f"about {numbers['questions_needed']} questions can" in numbers["undecided_because"]
    assert "one look planned: greedy" in numbers["sequential"]
