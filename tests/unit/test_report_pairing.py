import json

import numpy as np
import pytest

from pipeline.report.judge.accept_pairing import accept_pairs, accept_rows
from pipeline.report.judge.pairing import find_baseline, pair_samples, score_matrix
from pipeline.report.load.samples import SampleError, read_samples
from pipeline.results.result_types import CellResult
from tests.helpers.records import record

MATCH = ("model", "kv_dtype", "skip_softmax", "gpu", "speculative")


def cell(variant, kv="auto", gpu="H200", status="ok", sp=None, finished="", cid=None, tp=None):
    argv = ["--tp-size", str(tp[0]), "--nnodes", str(tp[1])] if tp else []
    return record(
        cid or f"{variant}/{kv}/{sp}/{finished}" + (f"/tp{tp}" if tp else ""),
        {"timing": {"finished_at": finished}, "server": {"argv": argv}},
        variant=variant, kv=kv, factor=sp, gpu=gpu, status=status,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("candidate", "pool", "found", "note"),
    [
        (cell("fmha_v2"), [cell("fa3"), cell("fa3", kv="fp8")], "fa3/auto/None/", ""),
        (cell("fmha_v2", kv="fp8"), [cell("fa3")], None, "no fa3 cell with the same"),
        (cell("fmha_v2", gpu="B200"), [cell("fa3")], None, "no fa3 cell"),
        (cell("fmha_v2"), [cell("fa3", status="failed")], None, "is FAILED"),
        (cell("fmha_v2", sp=0.5), [cell("fa3")], "fa3/auto/None/", "exact softmax"),
        (cell("fmha_v2", sp=0.5), [cell("fa3", sp=0.5), cell("fa3")], "fa3/auto/0.5/", ""),
        (cell("fmha_v2"), [cell("fa3", finished="2"), cell("fa3", finished="1")],
         "fa3/auto/None/2", "2 baseline cells match"),
        # Spread like the candidate when such a baseline exists, whichever ended last.
        (cell("fmha_v2", tp=(2, 1)), [cell("fa3", tp=(2, 1)), cell("fa3", finished="9")],
         "fa3/auto/None//tp(2, 1)", ""),
        (cell("fmha_v2"), [cell("fa3", tp=(2, 1), finished="9"), cell("fa3", tp=(1, 1))],
         "fa3/auto/None//tp(1, 1)", ""),
        (cell("fmha_v2", tp=(2, 2)), [cell("fa3")], "fa3/auto/None/",
         "baseline at one GPU (none at tp=2 over 2 nodes)"),
    ],
)  # fmt: skip
def test_find_baseline(candidate, pool, found, note):
    base, why = find_baseline(candidate, [candidate, *pool], "fa3", MATCH)
    assert (base.id if base else None) == found
    assert note in why


def rec(q, r, correct, tokens=100, verify=40, error=None):
    spec = {"completion_tokens": tokens, "verify_ct": verify} if verify else None
    return {"question_id": q, "repeat": r, "correct": correct, "error_kind": error, "spec": spec}


def keyed(records):
    return {(r["question_id"], r["repeat"]): r for r in records}


def test_pair_samples_by_question_and_repeat():
    # Rows are the baseline's questions; an errored request is no answer (NaN).
    base = keyed([rec("a", 0, True), rec("a", 1, True), rec("b", 0, False), rec("c", 0, True)])
    cand = keyed([rec("a", 0, False), rec("a", 1, True), rec("b", 0, True), rec("d", 0, True),
                  rec("c", 0, True, error="timeout")])  # fmt: skip
    paired = pair_samples(base, cand)
    assert paired.questions == ["a", "b", "c"]
    assert paired.extra_questions == 1  # d only in the candidate
    assert paired.outcomes.by_repeat and list(paired.outcomes.cand_asked) == [True, True, True]
    np.testing.assert_array_equal(paired.diffs, [[-1.0, 0.0], [1.0, np.nan], [np.nan, np.nan]])
    assert paired.repeats == 2
    b, c = paired.flat()
    assert list(b) == [1, 1, 0] and list(c) == [0, 1, 1]
    assert paired.rates["cand_error"] == pytest.approx(1 / 5) and paired.rates["base_error"] == 0


def test_score_matrix_pads_missing_repeats():
    m = score_matrix(keyed([rec("a", 0, True), rec("a", 1, False), rec("b", 0, True)]))
    np.testing.assert_array_equal(m, [[1.0, 0.0], [1.0, np.nan]])


def test_score_matrix_leaves_errors_out_as_the_pairs_and_result_json_do():
    records = [rec("a", 0, True), rec("a", 1, False, error="unfinished"),
               rec("b", 0, False, error="http_5xx"), rec("c", 0, False)]  # fmt: skip
    np.testing.assert_array_equal(score_matrix(keyed(records)), [[1.0], [0.0]])


def test_accept_rows_and_pairs_skip_errors_and_missing_spec():
    base = keyed([rec("a", 0, True, 100, 40), rec("b", 0, True, 90, 30), rec("c", 0, True, 10, 0)])
    cand = keyed([rec("a", 0, True, 80, 40), rec("b", 0, True, 90, 45, error="timeout"),
                  rec("c", 0, True, 10, 5)])  # fmt: skip
    tokens, verify, questions = accept_rows(base)
    assert list(tokens) == [100, 90] and list(verify) == [40, 30] and questions == ["a", "b"]
    cols, questions = accept_pairs(base, cand)
    assert questions == ["a"]
    assert [list(c) for c in cols] == [[100], [40], [80], [40]]


def test_accept_pairs_by_question_when_the_repeat_indices_do_not_overlap():
    # The accuracy is then paired by question; the accept length must not error out.
    base = keyed([rec("a", 0, True, 100, 40), rec("a", 1, True, 60, 20),
                   rec("b", 1, True, 90, 30)])  # fmt: skip
    cand = keyed([rec("a", 5, True, 80, 40), rec("b", 6, True, 45, 15),
                   rec("b", 7, True, 45, 15)])  # fmt: skip
    cols, questions = accept_pairs(base, cand)
    assert questions == ["a", "b"]
    assert [list(c) for c in cols] == [[160, 90], [60, 30], [80, 90], [40, 30]]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question_id": "a", "repeat": 0}'], r"a.jsonl:1: correct is missing"),
        (["{}", "not json"], r"a.jsonl:1: question_id is missing"),
        (['{"question_id": "a", "repeat": 0, "correct": true}', "[1]"], r"a.jsonl:2: expected"),
        (['{"question_id": "a", "repeat": "0", "correct": true}'], "repeat = '0' must be an int"),
        (['{"question_id": "a", "repeat": true, "correct": true}'], "repeat = True must be an int"),
        (['{"question_id": "a", "repeat": 0, "correct": 1}'], "correct = 1 must be true or false"),
        (["{oops"], r"a.jsonl:1: not valid JSON"),
        (['{"question_id": "a", "repeat": 0, "correct": true, "question": "Q?"}'],
         r"a.jsonl:1: question = 'Q\?' must be a JSON object"),
        (['{"question_id": "a", "repeat": 0, "correct": true, "question": {"text": 1}}'],
         r"a.jsonl:1: question: text = 1 must be a string"),
        (['{"question_id": "a", "repeat": 0, "correct": true, "question": {}}'],
         r"a.jsonl:1: question: text is missing"),
    ],
)  # fmt: skip
def test_read_samples_names_file_line_and_field(tmp_path, lines, message):
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "a.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(SampleError, match=message):
        read_samples(tmp_path, "a")


def test_read_samples_reads_lines_with_and_without_a_question(tmp_path):
    (tmp_path / "samples").mkdir()
    lines = [{**rec("a", 0, True), "question": {"text": "Q?", "options": ["x"], "gold": "x"}},
             rec("a", 1, True)]  # fmt: skip
    (tmp_path / "samples" / "e.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = read_samples(tmp_path, "e")
    assert out[("a", 0)]["question"]["text"] == "Q?" and "question" not in out[("a", 1)]


def test_read_samples_keeps_the_last_line_of_a_key(tmp_path):
    (tmp_path / "samples").mkdir()
    lines = [rec("a", 0, False), rec("a", 0, True), rec("b", 1, True)]
    (tmp_path / "samples" / "e.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    out = read_samples(tmp_path, "e")
    assert out[("a", 0)]["correct"] is True and len(out) == 2
    with pytest.raises(SampleError, match="missing"):
        read_samples(tmp_path, "other")


@pytest.mark.parametrize(
    ("argv", "config", "parallel"),
    [
        ([], {}, (1, 1)),
        (["--tp-size", "2"], {}, (2, 1)),
        (["--tensor-parallel-size", "4", "--nnodes", "2"], {}, (4, 2)),  # SGLang's alias
        ([], {"model": {"tp": 8}}, (8, 1)),  # a cell that never started: its config says
        (["--tp-size", "2"], {"model": {"tp": 8}}, (2, 1)),  # what the server was told wins
    ],
)
def test_a_cells_parallel_layout(argv, config, parallel):
    result = CellResult.from_json({"server": {"argv": argv}, "config": config})
    assert result.parallel == parallel
