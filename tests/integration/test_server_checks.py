"""A cell whose server runs something else than it asked, on every server kind.

"External" servers here are the simulated server started by the test, as a user would start
SGLang, with its own argv (another backend, model, speculative shape); the cell then runs with
``server=external`` against it. Managed servers misbehave through the simulated server's faults.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.launch import EXPOSE_ENV, plan_launch
from backends.options import LaunchOptions
from backends.resolved import CellSpec
from backends.server_info import metric_total
from evals.base import make_eval
from pipeline.cell.job import run_cell
from pipeline.report.cli import main as report_main
from pipeline.serving import server_api
from pipeline.serving.server import HealthPolicy, free_port, managed_server
from pipeline.serving.server_checks import plan_gpu
from pipeline.serving.server_command import SIM_LEDGER_FILE, server_argv, server_env
from pipeline.serving.server_kind import ServerPlan
from tests.helpers.cells import REPO, compose_conf, processes_mentioning, result_of

pytestmark = pytest.mark.integration
QUICK = [
    "server.simulated.startup_delay_s=0.05",  # ready at once: no test is about a slow start-up
    "client.progress=false",
    "server.stop_grace_s=5",
    "server.startup_timeout_s=30",
    "client.retry_backoff_s=0.01",
    "client.request_timeout_s=10",
]
N_PROMPTS = 58 * 2  # mcq_sample: bundled questions x the default 2 repeats


@contextlib.contextmanager
def sim_server(folder: Path, overrides: list[str], expose_env: bool = True) -> Iterator[str]:
    """The simulated server started as a user starts SGLang: argv of a cell with ``overrides``."""
    conf = compose_conf([*QUICK, *overrides])
    port = free_port()
    options = LaunchOptions(
        port=port, enable_metrics=True, extra_args=tuple(conf.server.extra_args)
    )
    version = conf.server.simulated.sglang_version
    plan = plan_launch(
        CellSpec(
            conf.model,
            conf.backend,
            conf.kv_dtype,
            conf.skip_softmax,
            plan_gpu(conf.gpu, ServerPlan.of(conf.server), conf.client.api_key),
            version,
            options,
        )
    )
    key = [e for n, ec in conf.evals.items() for e in make_eval(n, ec).answer_key()]
    folder.mkdir(parents=True)
    env = {k: v for k, v in plan.env.items() if expose_env or k != EXPOSE_ENV}
    argv = server_argv(ServerPlan.of(conf.server), plan.args, env, folder, key)
    environ = {
        k: v for k, v in server_env(conf.server, env).items() if expose_env or k != EXPOSE_ENV
    }
    url = f"http://127.0.0.1:{port}"
    with managed_server(argv, environ, url, folder / "server.log", HealthPolicy(30, 0.05, 0.5), 5):
        yield url
    assert processes_mentioning(str(folder)) == []


def external(url: str, *overrides: str) -> list[str]:
    return [*QUICK, "server=external", f"server.base_url={url}", "gpu=h200", *overrides]


def samples(cell_dir: Path, name: str = "mcq_sample") -> list[dict]:
    path = cell_dir / "samples" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def cli(cell_dir: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    """``mtp-eval`` as a user runs it (its console table is what they see)."""
    argv = [sys.executable, "-m", "pipeline", *overrides, f"hydra.run.dir={cell_dir}"]
    return subprocess.run(argv, cwd=REPO, text=True, capture_output=True, timeout=180)


def report(*folders: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, dict]:
    # --no-html: the tests read the exit code, the console, summary.json and report.md
    code = report_main([*map(str, folders), "--out", str(out), "--no-html"])
    summary = json.loads((out / "summary.json").read_text())
    return code, capsys.readouterr().out, summary


def baseline_verdicts(summary: dict, variant: str) -> set[str]:
    cell = next(c for c in summary["cells"] if c["variant"] == variant)
    return {k["verdict"] for k in cell["checks"] if k["kind"].endswith("_vs_baseline")}


def verdict_of(summary: dict, variant: str) -> str:
    return next(c["verdict"] for c in summary["cells"] if c["variant"] == variant)


# 1. A verifiable mismatch fails the cell on every server kind, external included.
def test_external_server_running_another_backend_fails_the_cell(tmp_path):
    with sim_server(tmp_path / "server", ["backend=flashinfer"]) as url:
        result = run_cell(compose_conf(external(url, "backend=fmha_v2")), tmp_path / "cell")
    assert result.status == "failed" and result.error.kind == "mismatch"
    assert "prefill_attention_backend: asked 'trtllm_mha', server runs None" in (
        result.error.message
    )
    assert samples(tmp_path / "cell") == []  # nothing was sent


def test_external_speculative_shape_mismatch_fails_the_cell(tmp_path):
    shape = ["model.speculative.num_steps=2", "model.speculative.num_draft_tokens=3"]
    with sim_server(tmp_path / "server", shape) as url:
        result = run_cell(compose_conf(external(url)), tmp_path / "cell")
    assert result.error.kind == "mismatch"
    assert "speculative_num_steps: asked 3, server runs 2" in result.error.message


def test_warn_only_mismatch_shows_in_console_warnings_and_report(tmp_path, capsys):
    cell_dir = tmp_path / "cell"
    with sim_server(tmp_path / "server", ["backend=flashinfer"]) as url:
        proc = cli(cell_dir, *external(url, "backend=fmha_v2", "server.on_mismatch=warn"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "ok, MISCONFIGURED" in proc.stdout and "prefill_attention_backend" in proc.stdout
    assert "warning: MISCONFIGURED: prefill_attention_backend" in proc.stdout
    result = result_of(cell_dir)
    assert any(w.startswith("MISCONFIGURED: prefill_attention_backend") for w in result.warnings)
    code, out, summary = report(cell_dir, out=tmp_path / "report", capsys=capsys)
    assert code != 0 and "MISCONFIGURED" in out
    assert verdict_of(summary, "fmha_v2") == "MISCONFIGURED"
    assert "MISCONFIGURED" in (tmp_path / "report" / "report.md").read_text()


# Done-when: never GO for a cell whose server ran another backend, KV dtype, speculative shape or
# model, whatever server.* says. The server runs the baseline's config in the first case, so the
# candidate's accuracy and accept length equal the baseline's: without the check it is a GO.
NOT_WHAT_WAS_ASKED = {
    "backend": "{attention_backend: fa3}",
    "kv_dtype": "{kv_cache_dtype: fp8_e4m3}",
    "speculative_shape": "{speculative_num_steps: 2, speculative_num_draft_tokens: 3}",
    "model": "{model_path: meta-llama/Llama-3.1-70B-Instruct}",
}


# Identical answers decide GO at a 2-point margin only from 4 repeats of the 58 questions: the
# sign-off reads its SE where the null holds, and 2 repeats leave p(GO) at 0.065.
PAIRED = ["evals.mcq_sample.repeats=4"]


@pytest.fixture(scope="module")
def baseline_cell(tmp_path_factory) -> Path:
    cell_dir = tmp_path_factory.mktemp("baseline") / "fa3"
    assert run_cell(compose_conf([*QUICK, *PAIRED, "backend=fa3"]), cell_dir).status == "ok"
    return cell_dir


@pytest.mark.parametrize("what", list(NOT_WHAT_WAS_ASKED))
@pytest.mark.parametrize("policy", ["warn", "fail"])
def test_report_never_gives_go_to_a_cell_that_ran_something_else(
    tmp_path, capsys, baseline_cell, what, policy
):
    fault = f"+server.simulated.faults.serve_instead={NOT_WHAT_WAS_ASKED[what]}"
    overrides = [*QUICK, *PAIRED, "backend=triton", f"server.on_mismatch={policy}", fault]
    result = run_cell(compose_conf(overrides), tmp_path / "triton")
    if policy == "fail":
        assert result.error.kind == "mismatch"
    else:
        assert result.status == "ok" and result.warnings
    code, _, summary = report(baseline_cell, tmp_path / "triton", out=tmp_path / "r", capsys=capsys)
    assert code != 0
    assert verdict_of(summary, "triton") == ("MISCONFIGURED" if policy == "warn" else "FAILED")
    assert "GO" not in baseline_verdicts(summary, "triton")


def test_same_server_config_is_a_go_so_the_check_above_can_fail(tmp_path, capsys, baseline_cell):
    fault = "+server.simulated.faults.serve_instead={attention_backend: fa3}"
    overrides = [*QUICK, *PAIRED, "backend=triton", "server.on_mismatch=warn", fault]
    run_cell(compose_conf(overrides), tmp_path / "triton")
    path = tmp_path / "triton" / "result.json"  # rewritten as a cell before the fix wrote it
    old = {**json.loads(path.read_text()), "mismatches": [], "runs": {}, "label_runs": {}}
    path.write_text(json.dumps(old))
    _, _, summary = report(baseline_cell, tmp_path / "triton", out=tmp_path / "r", capsys=capsys)
    assert baseline_verdicts(summary, "triton") == {"GO"}


def test_kernels_other_than_the_label_fail_before_launch_or_are_misconfigured(tmp_path, capsys):
    # fa3 with fp8_e5m2 KV: SGLang silently runs triton, so the "fa3" label would be wrong.
    result = run_cell(compose_conf([*QUICK, "kv_dtype=fp8_e5m2"]), tmp_path / "fail")
    assert result.error.kind == "mismatch" and "runs.decode" in result.error.message
    assert not (tmp_path / "fail" / "server.log").exists()  # nothing was started
    warned = run_cell(
        compose_conf([*QUICK, "kv_dtype=fp8_e5m2", "server.on_mismatch=warn"]), tmp_path / "warn"
    )
    assert warned.status == "ok" and warned.runs["decode"] == "triton"
    code, _, summary = report(tmp_path / "warn", out=tmp_path / "r", capsys=capsys)
    assert code != 0 and verdict_of(summary, "fa3") == "MISCONFIGURED"


def ledger_chats(server_dir: Path) -> int:
    rows = [json.loads(x) for x in (server_dir / SIM_LEDGER_FILE).read_text().splitlines()]
    return sum(r["endpoint"] == "chat" and r["fault"] is None for r in rows)


@pytest.mark.parametrize("first_run", ["stopped", "complete"])
def test_samples_of_a_misconfigured_server_never_mix_into_a_rerun(tmp_path, first_run):
    # Found by QA: 50 answers of a flashinfer server (on_mismatch=warn, server stopped) were kept
    # and merged into the rerun on a correct fa3 server, whose result then had no mismatch.
    cell_dir, warn = tmp_path / "cell", "server.on_mismatch=warn"
    stop = ["+server.simulated.faults.exit_after_requests=50"] if first_run == "stopped" else []
    with sim_server(tmp_path / "wrong", ["backend=flashinfer", *stop]) as url:
        wrong = run_cell(compose_conf(external(url, warn)), cell_dir)
    assert (wrong.status == "ok") == (first_run == "complete"), wrong.error
    with sim_server(tmp_path / "right", []) as url:
        right = run_cell(compose_conf(external(url, warn)), cell_dir)
    assert right.status == "ok" and not right.resumed  # measured again, not skipped
    assert [m for m in right.mismatches if m.verifiable] == []
    assert ledger_chats(tmp_path / "right") == N_PROMPTS  # every sample from the right server
    assert len(list(cell_dir.glob("samples.previous-*-misconfigured-*"))) == 1


def test_sglang_version_set_other_than_the_servers_is_said(tmp_path):
    # Found by QA: planned with 0.5.23's rules against a 0.5.19 server, and nothing was said.
    with sim_server(tmp_path / "server", []) as url:
        proc = cli(tmp_path / "cell", *external(url, "server.sglang_version=0.5.23"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = (
        "planned with SGLang 0.5.23's rules (server.sglang_version) but the server reports 0.5.19"
    )
    assert line in proc.stdout


# 2. The model is checked; the message names the key that disagreed.
@pytest.mark.parametrize(
    ("server_side", "key", "served"),
    [
        (["model.path=meta-llama/Llama-3.1-70B-Instruct"], "model_path",
         "meta-llama/Llama-3.1-70B"),
        (["model.served_model_name=llama-70b"], "served_model_name", "llama-70b"),
        (["model.speculative.draft_model_path=other-draft"], "speculative_draft_model_path",
         "other-draft"),
    ],
    ids=["model_path", "served_model_name", "draft"],
)  # fmt: skip
def test_external_server_serving_another_model_fails_naming_the_key(
    tmp_path, server_side, key, served
):
    cell = ["model.speculative.draft_model_path=my-draft"] if key.startswith("spec") else []
    with sim_server(tmp_path / "server", server_side) as url:
        result = run_cell(compose_conf(external(url, *cell)), tmp_path / "cell")
    assert result.error.kind == "mismatch"
    assert f"{key}: asked" in result.error.message and served in result.error.message
    # the fix for the same weights under another name (QA: only on_mismatch=warn was hinted)
    assert "if the server serves the same weights under that name, set model." in (
        result.error.message
    )


def test_external_server_drafting_with_another_model_than_the_targets_heads_fails(tmp_path):
    # Found by QA: the cell (no draft path: the target's MTP heads) passed against a server that
    # drafts with a separate model.
    with sim_server(
        tmp_path / "server", ["model.speculative.draft_model_path=some/eagle-head"]
    ) as url:
        result = run_cell(compose_conf(external(url)), tmp_path / "cell")
    assert result.error.kind == "mismatch"
    assert "speculative_draft_model_path: asked 'tiny-sim', server runs 'some/eagle-head'" in (
        result.error.message
    )


# 3. Unverifiable settings are an explicit list, shown; on_unverified decides.
def test_unverified_settings_are_listed_shown_and_can_fail(tmp_path, capsys):
    cell_dir = tmp_path / "cell"
    factors = ["backend=fmha_v2", "skip_softmax.prefill=0.5"]
    with sim_server(tmp_path / "server", factors, expose_env=False) as url:
        proc = cli(cell_dir, *external(url, *factors))
        strict = run_cell(
            compose_conf(external(url, *factors, "server.on_unverified=fail")), tmp_path / "strict"
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    name = "env:SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR"
    assert f"{name}=0.5" in proc.stdout  # the console table's unverified column
    assert f"warning: unverified: {name}=0.5" in proc.stdout
    result = result_of(cell_dir)
    decode = "env:SGLANG_SKIP_SOFTMAX_DECODE_THRESHOLD_SCALE_FACTOR"  # must be unset: unknown too
    # gpu=h200 against an external server: the GPU and the kernels resting on it are unverified
    assert [u.key for u in result.unverified] == [name, decode, "gpu", "runs.prefill"]
    assert EXPOSE_ENV in (result.unverified[0].reason or "")
    assert any(w.startswith(f"unverified: {name}") for w in result.warnings)
    report(cell_dir, out=tmp_path / "r", capsys=capsys)
    assert f"{name}=0.5" in (tmp_path / "r" / "report.md").read_text()
    assert f"{decode}=unset" in proc.stdout  # must be unset, not the word None (found by QA)
    assert strict.error.kind == "unverified" and name in strict.error.message


def test_rerun_with_on_unverified_fail_is_not_skipped_as_finished(tmp_path):
    # Found by QA: a cell finished with unverified settings (warn) was skipped as finished by a
    # rerun with server.on_unverified=fail, so the strict policy never applied.
    cell_dir = tmp_path / "cell"
    with sim_server(tmp_path / "server", [], expose_env=False) as url:
        first = run_cell(compose_conf(external(url)), cell_dir)
        strict = run_cell(compose_conf(external(url, "server.on_unverified=fail")), cell_dir)
    assert first.status == "ok" and first.unverified
    assert strict.error.kind == "unverified" and not strict.resumed
    assert len(samples(cell_dir)) == N_PROMPTS  # the measured samples stay on disk


def test_exact_softmax_cell_on_a_server_with_a_factor_in_its_env_is_a_mismatch(tmp_path):
    env = "+server.env={SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR: '0.5'}"
    result = run_cell(compose_conf([*QUICK, env]), tmp_path / "cell")
    assert result.error.kind == "mismatch"
    assert "SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR: asked None, server runs '0.5'" in (
        result.error.message
    )


@pytest.mark.parametrize("reported", ["NEXTN", "eagle"])
def test_server_reporting_an_alias_of_the_algorithm_runs_what_was_asked(tmp_path, reported):
    # SGLang reports NEXTN as EAGLE; an SGLang-like server that does not still runs EAGLE.
    fault = f"+server.simulated.faults.serve_instead={{speculative_algorithm: {reported}}}"
    result = run_cell(compose_conf([*QUICK, fault]), tmp_path / "cell")
    assert result.status == "ok", result.error
    assert result.observed["speculative_algorithm"] == reported


def test_server_leaving_attention_backend_unset_with_one_backend_per_phase_runs_it(tmp_path):
    # Found by QA: prefill and decode both fa3 but attention_backend null failed as a mismatch.
    fault = "+server.simulated.faults.serve_instead={attention_backend: null}"
    split = "server.extra_args=[--prefill-attention-backend,fa3,--decode-attention-backend,fa3]"
    with sim_server(tmp_path / "server", [fault, split]) as url:
        result = run_cell(compose_conf(external(url)), tmp_path / "cell")
    assert result.status == "ok", result.error
    assert result.observed["attention_backend"] is None


def test_server_reporting_bfloat16_runs_the_bf16_kv_cache_asked_for(tmp_path):
    with sim_server(tmp_path / "server", ["server.extra_args=[--kv-cache-dtype,bfloat16]"]) as url:
        result = run_cell(compose_conf(external(url, "kv_dtype=bf16")), tmp_path / "cell")
    assert result.status == "ok", result.error
    assert result.observed["kv_cache_dtype"] == "bfloat16"


# 4. A server without speculative decoding is found before the first request.
@pytest.mark.parametrize("policy", ["fail", "warn"])
def test_server_without_speculation_fails_before_the_first_request(tmp_path, policy):
    fault = "+server.simulated.faults.serve_instead={speculative_algorithm: null}"
    cell_dir = tmp_path / "cell"
    result = run_cell(compose_conf([*QUICK, fault, f"server.on_mismatch={policy}"]), cell_dir)
    assert result.error.kind == "no_speculation"
    assert "the server runs without speculative decoding" in result.error.message
    ledger = (
        (cell_dir / SIM_LEDGER_FILE).read_text() if (cell_dir / SIM_LEDGER_FILE).exists() else ""
    )
    assert ledger == "" and samples(cell_dir) == []


# 5. The GPU is the server's.
def test_external_server_with_gpu_auto_asks_for_the_gpu(tmp_path):
    with sim_server(tmp_path / "server", []) as url:
        overrides = [o for o in external(url) if o != "gpu=h200"]
        result = run_cell(compose_conf(overrides), tmp_path / "cell")
    assert result.error.kind == "config"
    message = result.error.message
    assert "server=external with gpu=auto" in message and "set gpu=" in message
    assert "device='cuda'" in message


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this host has a GPU")
def test_sglang_server_without_a_gpu_here_says_so(tmp_path):
    conf = compose_conf([*QUICK, "server=sglang", "server.sglang_version=0.5.19", "dry_run=true"])
    result = run_cell(conf, tmp_path / "cell")
    assert result.error.kind == "no_gpu"
    assert "no NVIDIA GPU detected here; set gpu=... to plan for one" in result.error.message


# 7. Server-level figures that are exact.
def ledger_truth(cell_dir: Path) -> float:
    rows = [json.loads(x) for x in (cell_dir / SIM_LEDGER_FILE).read_text().splitlines()]
    served = [r for r in rows if r["endpoint"] == "chat" and r["fault"] is None]
    verify = sum(r["verify_ct"] for r in served)
    return sum(r["verify_ct"] + r["num_correct_drafts"] for r in served) / verify


def test_first_window_of_a_fresh_server_is_cross_checked(tmp_path):
    with sim_server(tmp_path / "server", []) as url:  # SGLang: no counter sample before a request
        fresh = server_api.metrics_text(url)
    assert fresh is not None and "# TYPE sglang:num_requests counter" in fresh
    assert metric_total(fresh, "sglang:num_requests_total") is None
    result = run_cell(compose_conf(QUICK), tmp_path / "cell")
    accept = result.evals["mcq_sample"].accept
    assert accept.metrics["sglang:num_requests_total"] == N_PROMPTS
    assert accept.metrics_cross_check.agrees is True


def test_dp2_server_accept_length_is_weighted_by_verify_steps(tmp_path):
    cell_dir = tmp_path / "cell"
    result = run_cell(compose_conf([*QUICK, "server.extra_args=[--dp-size,2]"]), cell_dir)
    assert result.status == "ok", result.error
    assert result.provenance.server_argv.count("--dp-size") == 1  # enters the argv once
    truth = ledger_truth(cell_dir)  # accepted tokens over verify steps, both ranks together
    assert result.evals["mcq_sample"].accept.server_avg_spec_accept_length == (
        pytest.approx(truth, rel=1e-12)
    )


def test_foreign_requests_are_warned_with_numbers_and_strict_mode_fails(tmp_path):
    fault = "+server.simulated.faults.foreign_requests=5"
    result = run_cell(compose_conf([*QUICK, fault]), tmp_path / "warn")
    assert result.status == "ok"
    line = f"the server counted {N_PROMPTS + 5} requests but the pipeline sent {N_PROMPTS}"
    assert any(line in w for w in result.warnings), result.warnings
    strict = compose_conf([*QUICK, fault, "server.on_foreign_traffic=fail"])
    failed = run_cell(strict, tmp_path / "fail")
    assert failed.error.kind == "foreign_traffic"
    assert f"counted {N_PROMPTS + 5} requests" in failed.error.message


def test_permanently_busy_server_names_the_likely_cause(tmp_path):
    busy = [*QUICK, "+server.simulated.faults.busy=true", "server.idle_timeout_s=0.5"]
    result = run_cell(compose_conf(busy), tmp_path / "cell")
    assert result.error.kind == "server_busy"
    message = result.error.message
    assert "did not become idle" in message and "another client" in message
    assert "1 requests running" in message


# 8. A dying server is reported plainly and nothing is lost.
def test_external_server_stopping_after_the_last_answer(tmp_path):
    stop = f"+server.simulated.faults.exit_after_requests={N_PROMPTS}"
    with sim_server(tmp_path / "server", [stop]) as url:
        result = run_cell(compose_conf(external(url)), tmp_path / "cell")
    assert result.error.kind == "server_died"
    message = result.error.message
    assert f"the server stopped answering during mcq_sample after {N_PROMPTS} of {N_PROMPTS}" in (
        message
    )
    block = result.evals["mcq_sample"]
    assert block.n_samples == N_PROMPTS and block.accuracy is not None
    assert block.accept.accept_length > 1


def test_managed_server_dying_mid_run_keeps_complete_evals(tmp_path):
    cell_dir = tmp_path / "cell"
    crash = f"+server.simulated.faults.crash_after_requests={N_PROMPTS + 10}"
    overrides = [*QUICK, "evals=[mcq_sample,gsm8k_sample]", crash]
    result = run_cell(compose_conf(overrides), cell_dir)
    assert result.error.kind == "server_died"
    message = result.error.message
    assert message.startswith("the server stopped answering during gsm8k_sample after ")
    assert "exited with code 1" in message and "CUDA error" in result.error.log_tail
    assert list(result.evals) == ["mcq_sample"]  # complete; the partial one is not summarised
    assert result.evals["mcq_sample"].n_samples == N_PROMPTS
    assert processes_mentioning(str(cell_dir)) == []


def test_server_kind_defaults_are_fail_on_mismatch_everywhere():
    for kind in ("simulated", "sglang", "external", "docker"):
        conf = compose_conf([f"server={kind}"])
        assert (conf.server.on_mismatch, conf.server.on_unverified) == ("fail", "warn"), kind
