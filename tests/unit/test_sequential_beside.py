import dataclasses
import json
import time

import pytest

from pipeline.config.cell_config import to_cell_config
from pipeline.config.checks import ConfigError
from pipeline.config.schema import SequentialConf
from pipeline.measuring.live_looks import (
    answered_records,
    eval_entry,
    live_entry,
    running_keys,
    write_live,
)
from pipeline.measuring.sequential_beside import (
    behind,
    candidate_folders,
    choose_beside,
    open_candidates,
    starting,
    still_needed,
    wait_for_looks,
    wait_for_repeats,
)
from pipeline.measuring.sequential_run import repeats_of
from pipeline.results.baseline_choice import CellKey
from pipeline.results.cell_error import CellError
from tests.unit.test_config import compose_cell

ME = "/s/0_fa3"

MULTIRUN = (
    "hydra:\n  sweeper:\n    _target_: hydra._internal.core_plugins.basic_sweeper.BasicSweeper\n"
    "    params:\n      backend: fa3,triton\n  overrides:\n    task: []\nbackend:\n  name: fa3\n"
    "model:\n  name: m\nkv_dtype:\n  name: auto\n"
)


def key(folder, variant="fa3"):
    return CellKey(str(folder), str(folder.parent), "running", variant, "m", "auto",
                   ("exact", "exact"), "[]", "H200", "")  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "ended", "expected"),
    [
        (None, False, True),  # not at this eval yet: it may still need every repeat
        (None, True, None),  # ended without a record: never paired
        ({"baseline_dir": ME, "state": "running"}, False, True),
        ({"baseline_dir": ME, "state": "stopped"}, False, False),
        ({"baseline_dir": ME, "state": "running"}, True, False),  # ended mid-eval (failed)
        ({"baseline_dir": "/s/4_fa3", "state": "running"}, False, None),  # another baseline
        ({"baseline_dir": None, "state": "done"}, False, None),  # ran the fixed design
    ],
)
def test_still_needed(entry, ended, expected):
    assert still_needed(entry, ended, ME) is expected


@pytest.mark.parametrize(
    ("states", "goes_on"),
    [
        ([False, False], False),  # both paired and stopped
        ([False, True], True),  # one still running
        ([False, None], False),  # the other pairs elsewhere
        ([None, None], True),  # nobody paired with it: keep every repeat for later readers
        ([], True),  # a single run: no sweep, no candidates
        ([False, True, None], True),
    ],
)
def test_the_baseline_goes_on_while_a_candidate_may_need_it(states, goes_on):
    assert open_candidates(states) is goes_on


@pytest.mark.parametrize(
    ("entry", "repeats", "expected"),
    [
        ({"baseline_dir": ME, "state": "running", "repeats": 2}, 4, True),
        ({"baseline_dir": ME, "state": "running", "repeats": 4}, 4, False),
        ({"baseline_dir": ME, "state": "stopped", "repeats": 2}, 4, False),
        (None, 4, False),  # not started: never waited for (cells run one after the other)
        ({"baseline_dir": "/x", "state": "running", "repeats": 0}, 4, False),
    ],
)
def test_behind(entry, repeats, expected):
    assert behind(entry, False, ME, repeats) is expected


def test_a_line_being_written_is_left_out(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text('{"repeat": 0}\n{"repeat": 1}\n{"rep')
    assert answered_records(path) == [{"repeat": 0}, {"repeat": 1}]
    assert answered_records(tmp_path / "none.jsonl") == []


def test_live_record_keeps_other_evals_and_names_the_running_cell(tmp_path):
    cell = tmp_path / "0_fa3"
    write_live(cell, key(cell), "a", live_entry("baseline", "running", 2))
    write_live(cell, key(cell), "b", live_entry("baseline", "running", 0))
    assert eval_entry(cell, "a") == {"role": "baseline", "state": "running", "repeats": 2}
    (found,) = running_keys(tmp_path)
    assert found.status == "ok" and found.skip == ("exact", "exact")  # read as it will end
    assert found.evals == ()  # none in this key; a key with evals reads back as a tuple:
    write_live(cell, dataclasses.replace(key(cell), evals=("a", "b")), "a", live_entry(
        "baseline", "running", 2))  # fmt: skip
    assert running_keys(tmp_path)[0].evals == ("a", "b")
    (cell / "result.json").write_text("{}")
    assert running_keys(tmp_path) == []  # ended: the finished pool has it now


def test_waiting_for_a_round_returns_the_repeats_it_has(tmp_path):
    cell = tmp_path / "0_fa3"
    write_live(cell, key(cell), "a", live_entry("baseline", "running", 4))
    assert wait_for_repeats(cell, "a", 4, 0.0) == 4
    write_live(cell, key(cell), "a", live_entry("baseline", "stopped", 2))
    assert wait_for_repeats(cell, "a", 4, 0.0) == 2  # it stopped: no more will come


def test_a_late_baseline_is_a_clear_error(tmp_path):
    cell = tmp_path / "0_fa3"
    write_live(cell, key(cell), "a", live_entry("baseline", "running", 2))
    with pytest.raises(CellError, match=r"has 2 of the 4 repeats of eval a .*baseline_wait_s"):
        wait_for_repeats(cell, "a", 4, 0.3)


def test_a_baseline_that_ended_failed_is_a_clear_error(tmp_path):
    cell = tmp_path / "0_fa3"
    cell.mkdir()
    (cell / "result.json").write_text(json.dumps({"schema_version": 1, "status": "failed"}))
    with pytest.raises(CellError, match="ended FAILED"):
        wait_for_repeats(cell, "a", 4, 10.0)


def test_candidate_folders_come_from_multirun_yaml(tmp_path):
    (tmp_path / "multirun.yaml").write_text(MULTIRUN.replace("fa3,triton", "fa3,triton,fmha_v2"))
    (tmp_path / "1_m_triton_auto_exact").mkdir()
    assert [f.name for f in candidate_folders(tmp_path, "fa3")] == ["1_m_triton_auto_exact", "2_"]


def test_a_candidate_pairs_with_a_running_baseline_or_waits_for_one(tmp_path):
    (tmp_path / "multirun.yaml").write_text(MULTIRUN)
    me = key(tmp_path / "1_m_triton_auto_exact", "triton")
    conf = SequentialConf(baseline_runs="beside", baseline_wait_s=0.3)
    match = ["model", "kv_dtype"]
    waited = choose_beside(me, list, tmp_path, conf, match)  # fa3's job has not started
    assert waited.chosen is None and "waited 0.3 s for a running baseline" in waited.note
    base = tmp_path / "0_m_fa3_auto_exact"
    write_live(base, key(base), "a", live_entry("baseline", "running", 0))
    assert choose_beside(me, list, tmp_path, conf, match).chosen.folder == str(base)


def test_no_wait_for_a_baseline_job_of_another_kv_dtype(tmp_path):
    (tmp_path / "multirun.yaml").write_text(MULTIRUN)
    me = dataclasses.replace(key(tmp_path / "1_m_triton_fp8", "triton"), kv_dtype="fp8_e4m3")
    conf = SequentialConf(baseline_runs="beside", baseline_wait_s=30.0)
    found = choose_beside(me, list, tmp_path, conf, ["model", "kv_dtype"])  # at once
    assert found.chosen is None and "waited" not in found.note


@pytest.mark.parametrize(("repeats", "expected"), [([], 0), ([0, 1, 0, 1], 2), ([3], 4)])
def test_repeats_of(repeats, expected):
    assert repeats_of([{"repeat": r} for r in repeats]) == expected


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["sequential.baseline_runs=later"], "sequential.baseline_runs='later' is out of range: "
         "use first or beside"),
        (["sequential.baseline_wait_s=0"], "sequential.baseline_wait_s=0.0 is out of range: "
         "use seconds > 0"),
    ],
)  # fmt: skip
def test_a_sequential_layout_value_that_makes_no_sense_is_refused_at_compose(
    overrides: list[str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        to_cell_config(compose_cell(overrides))


def test_a_started_candidate_is_waited_for_until_it_reaches_an_eval(tmp_path):
    (tmp_path / "multirun.yaml").write_text(MULTIRUN.replace("fa3,triton", "fa3,triton,fmha_v2"))
    base, started = tmp_path / "0_m_fa3_auto_exact", tmp_path / "1_m_triton_auto_exact"
    started.mkdir()  # its job runs, its server is starting: no live record yet
    assert starting(started) and not starting(tmp_path / "2_")  # 2: not started at all
    t0 = time.monotonic()
    wait_for_looks(base, "fa3", "a", 2, 0.5)
    assert time.monotonic() - t0 >= 0.5  # held, up to sequential.baseline_wait_s
    write_live(started, key(started), "a", {**live_entry("candidate", "running", 2),
                                            "baseline_dir": str(base)})  # fmt: skip
    assert not starting(started)
    t0 = time.monotonic()
    wait_for_looks(base, "fa3", "a", 2, 30.0)  # it has looked at 2: no wait
    assert time.monotonic() - t0 < 5
    (started / "result.json").write_text("{}")
    assert not starting(started)  # ended
