"""A new user's first hour, through the installed console scripts: a mistyped group choice is
refused with the choices (exit 2), ``--help`` pages say what each command does and where its
results go, an offline node fails a hub dataset in seconds and once, a failed compose leaves no
run folder, a resume says what it kept, and exact softmax has one name (``sp=None``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from tests.helpers.cells import console_script, result_of, run_script
from tests.helpers.sim import free_port

pytestmark = pytest.mark.integration
# startup_delay_s: ready after 0.05 s, not fast_sim's 0.2 (no test here is about the start-up);
# retry_backoff_s: the requests a crashed server leaves are retried at once, not over 7.5 s of
# doubling back-off (0.5 s first) before the cell gives up on them
QUICK = ["evals.mcq_sample.dataset.limit=12", "evals.mcq_sample.repeats=1",
         "server.simulated.startup_delay_s=0.05", "client.retry_backoff_s=0.01"]  # fmt: skip
KV_CHOICES = "The choices of kv_dtype are: auto, bf16, fp8_e4m3, fp8_e5m2"
FP8_BOTH = "did you mean kv_dtype=fp8_e4m3 or kv_dtype=fp8_e5m2?"


@pytest.mark.parametrize(
    ("script", "args", "said"),
    [
        ("mtp-eval", ["backend=fmha2"], ["did you mean backend=fmha_v2?", "fa3, fa3_repeat"]),
        ("mtp-eval", ["kv_dtype=fp9"], ["did you mean kv_dtype=fp8_", KV_CHOICES]),
        # a prefix of several choices names each (was fp8_e5m2 alone; the README uses fp8_e4m3)
        ("mtp-eval", ["kv_dtype=fp8"], [FP8_BOTH, KV_CHOICES]),
        ("mtp-eval", ["-m", "backend=fmha,fa3"], ["backend=fmha_v2 or backend=fmha_v2_fi?"]),
        ("mtp-eval-probe", ["kv_dtype=fp8"], [FP8_BOTH]),
        ("mtp-eval", ["evals=[gpqa_diamnd]"], ["did you mean evals=gpqa_diamond?", "mcq_sample"]),
        ("mtp-eval", ["-m", "backend=fa3,fmha2"], ["did you mean backend=fmha_v2?"]),
        ("mtp-eval-signoff", ["backend=fmha2"], ["did you mean backend=fmha_v2?"]),
        ("mtp-eval-probe", ["kv_dtype=fp9"], ["did you mean kv_dtype=fp8_", KV_CHOICES]),
    ],
)
def test_a_group_choice_no_folder_has_exits_2_with_the_choices(tmp_path, script, args, said):
    run = run_script(script, *args, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    for text in said:
        assert text in run.stderr, run.stderr
    assert "Could not find" not in run.stderr and "Traceback" not in run.stderr  # Hydra's page
    assert not list(tmp_path.iterdir())  # nothing composed, no run folder


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ("mtp-eval", ["Common commands:", "Where results go:", "outputs/multirun/<time>/",
                      "result.json, samples/<eval>.jsonl", "Exit codes:",
                      "backend         fa3, fa3_repeat, flashinfer, fmha_v2"]),
        ("mtp-eval-probe", ["kernel parity probe", "Common commands:", "Where results go:",
                            "probe.json", "probe           fp8_rows, full, quick"]),
        ("mtp-eval-signoff", ["release sign-off", "examples:", "where results go:",
                              "report.html", "exit codes:"]),
        ("mtp-eval-report", ["writes report.md, report.html", "Exit codes:"]),
        ("mtp-eval-matrix", ["which GPU family", "examples:"]),
    ],
)  # fmt: skip
def test_help_is_a_page_of_what_it_does_and_where_results_go(tmp_path, script, said):
    run = run_script(script, "--help", timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    for text in said:
        assert text in run.stdout, run.stdout
    assert "Powered by Hydra" not in run.stdout and "== Config ==" not in run.stdout
    assert not list(tmp_path.iterdir())


def test_hydras_own_help_is_still_there(tmp_path):
    run = run_script("mtp-eval", "--hydra-help", timeout=120, cwd=tmp_path)
    assert run.returncode == 0 and "--multirun" in run.stdout, run.stdout + run.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["client.concurrency=0"], "client.concurrency=0 is out of range"),
        (["-m", "client.concurrency=0,4"], "client.concurrency=0 is out of range"),
        (["-m", "skip_softmax.prefill=abc,0"], "'abc' is not a number; skip_softmax.prefill takes"),
    ],
)
def test_a_failed_compose_leaves_no_run_folder(tmp_path, fast_sim, args, said):
    run = run_script("mtp-eval", *args, *fast_sim, timeout=120, cwd=tmp_path)
    assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
    assert said in run.stderr
    assert not (tmp_path / "outputs").exists(), sorted(tmp_path.rglob("*"))


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"HF_ENDPOINT": "http://127.0.0.1:{port}"}, "http://127.0.0.1:{port} did not answer"),
        ({"HF_HUB_OFFLINE": "1"}, "offline mode is on"),
    ],
)
@pytest.mark.serial  # under 20 s: alone
def test_an_offline_node_fails_each_hub_dataset_in_seconds_once(tmp_path, fast_sim, env, why):
    port = free_port()  # bound and closed: nothing listens there
    given = {k: v.format(port=port) for k, v in env.items()}
    environ = {**os.environ, **given, "HF_HOME": str(tmp_path / "hf")}
    args = ["-m", "backend=fa3,fmha_v2", "evals=[gpqa_diamond,mmlu]", *fast_sim]
    started = time.monotonic()
    run = subprocess.run(
        [console_script("mtp-eval"), *args],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    said = run.stdout + run.stderr
    assert run.returncode == 2, said[-3000:]
    # Was ~23 s of retries per dataset (46 s here), each retry line printed twice.
    assert wall < 20, f"{wall:.1f} s"
    assert "Retrying" not in said and "thrown while requesting" not in said
    for load in ("load_dataset('Idavidrein/gpqa', 'gpqa_diamond', split='train')",
                 "load_dataset('cais/mmlu', 'all', split='test')"):  # fmt: skip
        assert said.count(load) == 1, said
    assert said.count(why.format(port=port)) == 2  # once per dataset, not per cell
    assert "dataset.source=file" in said and "HF_HOME" in said
    assert not (tmp_path / "outputs").exists()


def test_a_resumed_cell_says_how_many_samples_it_kept(tmp_path, fast_sim):
    cell = tmp_path / "cell"
    args = [*fast_sim, *QUICK, f"hydra.run.dir={cell}"]
    crashed = run_script("mtp-eval", *args, "+server.simulated.faults.crash_after_requests=5")
    assert crashed.returncode == 1, crashed.stdout[-2000:] + crashed.stderr[-2000:]
    again = run_script("mtp-eval", *args)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    kept = result_of(cell).evals["mcq_sample"].resumed_samples
    assert kept == 5
    said = "mcq_sample: resuming: 5 answered samples kept from samples/mcq_sample.jsonl, 7 of 12"
    assert said in again.stdout
    assert "resumed: mcq_sample kept 5 answered samples of an earlier run, asked 7" in again.stdout


def test_exact_softmax_is_one_name_and_the_report_pairs_it(tmp_path, fast_sim):
    base, cand = tmp_path / "base", tmp_path / "cand"
    for folder, extra in ((base, ["backend=fa3"]),
                          (cand, ["backend=fmha_v2", "skip_softmax.prefill=0"])):  # fmt: skip
        run = run_script("mtp-eval", *extra, *fast_sim, *QUICK, f"hydra.run.dir={folder}")
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert result_of(base).cell.name == "tiny-sim/fa3/auto/sp=None/sd=None"
    assert result_of(cand).cell.name == "tiny-sim/fmha_v2/auto/sp=None/sd=None"
    assert result_of(cand).cell.skip_prefill == 0.0  # the factor as it was set is kept
    old = json.loads((cand / "result.json").read_text())  # as a cell written before named it
    old["cell"]["name"] = "tiny-sim/fmha_v2/auto/sp=0.0/sd=None"
    (cand / "result.json").write_text(json.dumps(old))
    out = tmp_path / "report"
    # --no-html: summary.json and report.md are read, which the page does not change
    report = run_script("mtp-eval-report", str(base), str(cand), "--out", str(out), "--no-html")
    assert report.returncode in (0, 2), report.stdout[-2000:] + report.stderr[-2000:]
    cells = json.loads((out / "summary.json").read_text())["cells"]
    labels = sorted(c["label"].split(" @ ")[0] for c in cells)
    assert labels == ["tiny-sim/fa3/auto/sp=None/sd=None", "tiny-sim/fmha_v2/auto/sp=None/sd=None"]
    (candidate,) = [c for c in cells if c["variant"] == "fmha_v2"]
    kinds = {check["kind"]: check for check in candidate["checks"]}
    assert "accuracy_vs_baseline" in kinds, candidate["checks"]
    assert "sp=0.0" not in (out / "report.md").read_text()


def test_an_offline_node_fails_an_lm_eval_task_without_retries(tmp_path, fast_sim):
    port = free_port()  # nothing listens there
    environ = {**os.environ, "HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HOME": str(tmp_path)}
    run = subprocess.run(
        [console_script("mtp-eval"), "evals=[lm_eval_gsm8k]", "dry_run=true", *fast_sim,
         f"hydra.run.dir={tmp_path / 'cell'}"],
        cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    said = run.stdout + run.stderr
    assert run.returncode == 1, said[-3000:]
    assert "lm-eval task 'gsm8k': its dataset is not in this node's cache" in said
    assert f"http://127.0.0.1:{port} did not answer" in said
    assert "Retrying" not in said and "thrown while requesting" not in said


def test_a_rule_sglang_is_silent_about_warns_with_its_detail(tmp_path, fast_sim):
    # The README's skip sweep: fa3 reads no prefill factor, a rule SGLang logs nothing for. The
    # console printed "warning: no-effect: " and nothing after it.
    run = run_script("mtp-eval", "backend=fa3", "skip_softmax.prefill=0.5", *fast_sim, *QUICK,
                     f"hydra.run.dir={tmp_path / 'cell'}")  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    said = [x for x in run.stdout.splitlines() if x.startswith("warning: no-effect:")]
    assert said and all(x.strip() != "warning: no-effect:" for x in said), said
    assert any("does not read the prefill factor" in x for x in said), said
