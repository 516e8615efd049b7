"""What the command line says is what runs: a key outside the schema is refused with or without
``+`` (naming the closest key), and an ``evals=[...]`` choice replaces an experiment's evals
instead of leaving a phantom eval on the schema's default dataset. Through the installed scripts.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cells import console_script, result_of

pytestmark = pytest.mark.integration
QUICK = ["evals.mcq_sample.dataset.limit=6", "evals.mcq_sample.repeats=1"]


def _run(script: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [console_script(script), *args],
        capture_output=True, text=True, timeout=600, check=False, cwd=cwd,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "closest"),
    [
        (["-m", "backend=fmha_v2,fa3", "+skip_softmax.prefil=0,1e6"], "skip_softmax.prefill"),
        (["skip_softmax.prefil=1e6"], "skip_softmax.prefill"),
        (["+backnd=fa3"], "backend"),
        (["backnd=fa3"], "backend"),
        (["+client.concurency=8"], "client.concurrency"),
    ],
)
def test_a_key_outside_the_schema_fails_before_anything_runs(tmp_path, fast_sim, args, closest):
    sweep = tmp_path / "sweep"
    run = _run("mtp-eval", [*args, *fast_sim, *QUICK, f"hydra.sweep.dir={sweep}"], tmp_path)
    assert run.returncode == 2, run.stdout[-1500:] + run.stderr[-1500:]
    assert f"did you mean {closest}?" in run.stderr
    assert "use +" not in run.stderr  # Hydra's own advice to append the misspelt key
    assert not list(tmp_path.rglob("result.json"))


def test_the_signoff_refuses_a_misspelt_key_before_its_sweep(tmp_path, fast_sim):
    sweep = tmp_path / "signoff"
    args = ["--sweep-dir", str(sweep), "server=simulated", "+skip_softmax.prefil=0,1e6"]
    run = _run("mtp-eval-signoff", [*args, *fast_sim, *QUICK], tmp_path)
    assert run.returncode == 2, run.stdout[-1500:] + run.stderr[-1500:]
    assert "did you mean skip_softmax.prefill?" in run.stderr
    assert not sweep.exists()


@pytest.mark.parametrize(
    "extra",
    [
        "+server.env.MY_FLAG=1",
        "+server.simulated.faults.foreign_requests=0",
        "+model.chat_template_kwargs.enable_thinking=true",
    ],
)
def test_a_plus_inside_an_open_map_still_adds_the_entry(tmp_path, fast_sim, extra):
    out = tmp_path / "cell"
    run = _run("mtp-eval", [extra, "dry_run=true", f"hydra.run.dir={out}", *fast_sim], tmp_path)
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert result_of(out).status == "planned"


def test_an_eval_no_file_defines_is_refused_at_compose(tmp_path, fast_sim):
    # A preset of the user's that sets an eval's repeats without choosing that eval.
    (tmp_path / "conf/experiment").mkdir(parents=True)
    preset = "# @package _global_\nevals:\n  gpqa_diamond:\n    repeats: 4\n"
    (tmp_path / "conf/experiment/mine.yaml").write_text(preset)
    args = ["--config-dir", str(tmp_path / "conf"), "experiment=mine", *fast_sim, *QUICK]
    run = _run("mtp-eval", args, tmp_path)
    assert run.returncode == 2, run.stdout[-1500:] + run.stderr[-1500:]
    assert "evals.gpqa_diamond has no dataset" in run.stderr
    assert "evals=[mcq_sample,gpqa_diamond]" in run.stderr
    assert not list(tmp_path.rglob("result.json"))


def test_an_evals_choice_replaces_the_experiments_evals_in_the_signoff(tmp_path, fast_sim):
    # compare_backends chooses GPQA diamond at 4 repeats; `evals=[mcq_sample]` must run that
    # alone, not also an eval named gpqa_diamond on the bundled questions judged against GPQA.
    sweep = tmp_path / "compare"
    args = ["--sweep-dir", str(sweep), "--experiment", "compare_backends", "evals=[mcq_sample]"]
    args += ["server=simulated", *fast_sim, *QUICK]
    run = _run("mtp-eval-signoff", args, tmp_path)
    assert run.returncode in (0, 2), run.stdout[-1500:] + run.stderr[-1500:]
    cells = sorted(p.parent for p in sweep.glob("*/result.json"))
    assert len(cells) == 2, run.stdout[-1500:] + run.stderr[-1500:]
    for cell in cells:
        assert list(result_of(cell).evals) == ["mcq_sample"], cell
        assert sorted(p.name for p in (cell / "samples").glob("*.jsonl")) == ["mcq_sample.jsonl"]
    summary = json.loads((sweep / "report" / "summary.json").read_text())
    judged = {c.get("eval") for cell in summary["cells"] for c in cell["checks"]} - {None}
    assert judged == {"mcq_sample"}, judged


@pytest.mark.parametrize(
    ("script", "args", "said"),
    [
        ("mtp-eval", ["evals.mcq_sample.repeats=two"],
         "evals.mcq_sample.repeats=two: 'two' is not an integer; evals.mcq_sample.repeats takes "
         "an integer, e.g. evals.mcq_sample.repeats=1"),
        ("mtp-eval", ["-m", "evals.mcq_sample.repeats=two"],
         "'two' is not an integer; evals.mcq_sample.repeats takes an integer"),
        ("mtp-eval", ["skip_softmax.prefill=abc"],
         "skip_softmax.prefill=abc: 'abc' is not a number; skip_softmax.prefill takes a number "
         "or null, e.g. skip_softmax.prefill=0.5"),
        ("mtp-eval", ["-m", "skip_softmax.prefill=abc"],
         "'abc' is not a number; skip_softmax.prefill takes a number or null"),
        ("mtp-eval", ["-m", "backend=fa3,fmha_v2", "skip_softmax.prefill=0,abc"],
         "skip_softmax.prefill=0,abc: 'abc' is not a number"),
        ("mtp-eval", ["speed.prefill_tokens=1024"],
         "1024 is not a list; speed.prefill_tokens takes a list, each an integer, e.g. "
         "speed.prefill_tokens=[1024,"),
        ("mtp-eval", ["dry_run=maybe"], "'maybe' is not true or false; dry_run takes true or"),
        ("mtp-eval-signoff", ["evals.mcq_sample.repeats=two"],
         "'two' is not an integer; evals.mcq_sample.repeats takes an integer"),
        ("mtp-eval-probe", ["skip_softmax.prefill=abc"],
         "'abc' is not a number; skip_softmax.prefill takes a number or null"),
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_type_exits_2_naming_the_type(tmp_path, script, args, said):
    # Was Hydra's five lines ("Value 'two' of type 'str' could not be converted to Integer",
    # full_key, reference_type, ...) and exit code 1, as though a cell had failed.
    run = _run(script, args, tmp_path)
    assert run.returncode == 2, run.stdout[-1500:] + run.stderr[-1500:]
    assert said in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr  # one line, no page
    assert "could not be converted" not in run.stderr and "full_key" not in run.stderr
    assert not list(tmp_path.iterdir())  # nothing composed, no run folder


@pytest.mark.parametrize(
    "args",
    [
        ["skip_softmax.prefill=1e6", "evals.mcq_sample.repeats=2", "dry_run=true"],
        ["-m", "skip_softmax.prefill=0,0.5,null", "evals.mcq_sample.repeats=range(1,3)",
         "speed.prefill_tokens=[1024,4096]", "dry_run=true"],
    ],
)  # fmt: skip
def test_values_of_the_right_type_still_run(tmp_path, fast_sim, args):
    run = _run("mtp-eval", [*args, *fast_sim, f"hydra.run.dir={tmp_path / 'cell'}",
                            f"hydra.sweep.dir={tmp_path / 'sweep'}"], tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stdout[-1500:] + run.stderr[-1500:]
    assert list(tmp_path.rglob("result.json"))
