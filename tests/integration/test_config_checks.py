"""Nonsense values fail when the config is composed: one line each, before anything starts."""

from __future__ import annotations

import subprocess

import pytest

from pipeline.config.checks import ConfigError, config_problems
from tests.helpers.cells import compose_conf, console_script, processes_mentioning

pytestmark = pytest.mark.integration

# override, the line it must print (key, value, allowed range)
CASES = [
    ("skip_softmax.prefill=-1", "skip_softmax.prefill=-1.0 is out of range: use null (exact "
     "softmax) or a finite factor >= 0"),
    ("skip_softmax.prefill=nan", "skip_softmax.prefill=nan is out of range"),
    ("skip_softmax.decode=inf", "skip_softmax.decode=inf is out of range"),
    ("evals=[]", "evals=[] selects no eval: name at least one, e.g. evals=[mcq_sample]"),
    ("client.concurrency=0", "client.concurrency=0 is out of range: use an integer >= 1"),
    ("evals.mcq_sample.repeats=0", "evals.mcq_sample.repeats=0 is out of range: use an integer"),
    ("client.max_error_rate=1.5", "client.max_error_rate=1.5 is out of range: use 0 to 1"),
    # Found by QA: these started a server and measured nonsense (accept rate -0.000) or failed
    # every cell of a sweep one by one.
    ("server.on_mismatch=ignore", "server.on_mismatch='ignore' is out of range: use fail or warn"),
    ("server.on_unverified=off", "server.on_unverified='off' is out of range: use fail or warn"),
    ("model.speculative.num_steps=-1", "model.speculative.num_steps=-1 is out of range: use null "
     "(SGLang chooses) or an integer >= 1"),
    ("model.speculative.eagle_topk=0", "model.speculative.eagle_topk=0 is out of range"),
    ("model.speculative.num_draft_tokens=0", "model.speculative.num_draft_tokens=0 is out of"),
    ("model.tp=0", "model.tp=0 is out of range: use an integer >= 1"),
    ("model.load_format=random", "model.load_format='random' is out of range: use null (SGLang's "
     "auto) or one of auto, pt, safetensors"),
    ("model.sampling.max_tokens=0", "model.sampling.max_tokens=0 is out of range"),
    ("model.sampling.temperature=-1", "model.sampling.temperature=-1.0 is out of range"),
]  # fmt: skip


@pytest.mark.parametrize(("override", "line"), CASES, ids=[c[0] for c in CASES])
def test_console_script_refuses_before_a_server_starts(tmp_path, override, line):
    run_dir = tmp_path / "run"
    run = subprocess.run(
        [console_script("mtp-eval"), override, f"hydra.run.dir={run_dir}"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [f"mtp-eval: {line}"] or (
        len(run.stderr.strip().splitlines()) == 1 and line in run.stderr
    ), run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert not (run_dir / "server.log").exists() and not (run_dir / "result.json").exists()
    assert processes_mentioning(str(run_dir)) == []


def test_every_problem_is_listed_at_once():
    with pytest.raises(ConfigError) as err:
        compose_conf(["skip_softmax.prefill=-1", "client.concurrency=0", "evals=[]"])
    assert [p.split("=")[0] for p in err.value.problems] == [
        "skip_softmax.prefill", "client.concurrency", "evals"
    ]  # fmt: skip


@pytest.mark.parametrize(
    "override", ["skip_softmax.prefill=0", "skip_softmax.prefill=0.5", "client.concurrency=1"]
)
def test_values_in_range_pass(override):
    assert config_problems(compose_conf([override])) == []


def test_a_sweep_is_refused_before_its_first_cell(tmp_path):
    # The bad value is in the last job: without the up-front check three cells ran first.
    sweep = tmp_path / "sweep"
    run = subprocess.run(
        [console_script("mtp-eval"), "-m", "backend=fa3,fmha_v2", "skip_softmax.prefill=0.5,-1",
         f"hydra.sweep.dir={sweep}"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.strip().splitlines() == [
        "mtp-eval: skip_softmax.prefill=-1.0 is out of range: use null (exact softmax) or a "
        "finite factor >= 0 (in skip_softmax.prefill=-1)"
    ], run.stderr
    assert not list(sweep.glob("*/result.json")) and "Traceback" not in run.stderr
