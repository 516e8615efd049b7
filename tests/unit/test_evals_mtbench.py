from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.accounting import summarize_records, summarize_ungraded
from evals.base import make_eval
from evals.datasets import DATA_DIR, DatasetError
from evals.eval_conf import DatasetConf, EvalConf
from evals.mtbench import MtBenchEval, turn_id


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def from_rows(tmp_path: Path, rows: list[dict[str, Any]], repeats: int = 1) -> MtBenchEval:
    path = write_jsonl(tmp_path / "conv.jsonl", rows)
    conf = EvalConf(
        kind="mtbench", dataset=DatasetConf(source="file", path=str(path)), repeats=repeats
    )
    return make_eval("mt", conf)


def record(qid: str, repeat: int, response: str | None = "ok", error: str | None = None) -> dict:
    return {"question_id": qid, "repeat": repeat, "response": response, "error_kind": error}


TWO = [{"prompt": ["Write a poem.", "Make it shorter."], "category": "writing"}]


def test_bundled_sample_loads_two_turns_each() -> None:
    conf = EvalConf(
        kind="mtbench", dataset=DatasetConf(source="bundled", path="mtbench_sample.jsonl")
    )
    ev = make_eval("mtbench_sample", conf)
    assert isinstance(ev, MtBenchEval) and ev.graded is False
    assert len(ev.conversations) >= 20
    assert all(len(c["turns"]) == 2 for c in ev.conversations)
    categories = {c["category"] for c in ev.conversations}
    assert categories == {
        "writing",
        "roleplay",
        "reasoning",
        "math",
        "coding",
        "extraction",
        "stem",
        "humanities",
    }
    assert ev.answer_key() == []
    assert "not MT-Bench" in (DATA_DIR / "README.md").read_text()


@pytest.mark.parametrize("column", ["prompt", "turns"])
def test_both_turn_columns(tmp_path: Path, column: str) -> None:
    ev = from_rows(tmp_path, [{column: ["a", "b", "c"]}])
    assert ev.conversations[0]["turns"] == ["a", "b", "c"]


def test_first_turns_only_repeat_major(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, [*TWO, {"prompt": ["Hi.", "Bye."]}], repeats=2)
    prompts = ev.prompts()
    assert [(p.meta["turn"], p.repeat) for p in prompts] == [(1, 0), (1, 0), (1, 1), (1, 1)]
    assert prompts[0].messages == [{"role": "user", "content": "Write a poem."}]
    assert prompts[0].question_id == turn_id(ev.conversations[0]["id"], 1)


def test_turn_ids_are_distinct_per_turn_and_conversation(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, [{"prompt": ["same", "x"]}, {"prompt": ["same", "y"]}])
    ids = {turn_id(c["id"], t) for c in ev.conversations for t in (1, 2)}
    assert len(ids) == 4


@pytest.mark.parametrize(
    ("turn1", "ready", "blocked"),
    [
        (record("T1", 0, "A poem."), 1, 0),
        (record("T1", 0, None), 1, 0),  # reasoning-only or empty content still goes on
        (record("T1", 0, None, error="timeout"), 0, 1),
    ],
)
def test_second_turn_follows_the_first(
    tmp_path: Path, turn1: dict, ready: int, blocked: int
) -> None:
    ev = from_rows(tmp_path, TWO)
    cid = ev.conversations[0]["id"]
    turn1 = {**turn1, "question_id": turn_id(cid, 1)}
    got_ready, got_blocked = ev.next_turns([turn1])
    assert (len(got_ready), len(got_blocked)) == (ready, blocked)
    nxt = (got_ready or got_blocked)[0]
    assert nxt.question_id == turn_id(cid, 2) and nxt.meta["turn"] == 2
    if ready:
        assert nxt.messages == [
            {"role": "user", "content": "Write a poem."},
            {"role": "assistant", "content": turn1["response"] or ""},
            {"role": "user", "content": "Make it shorter."},
        ]


def test_finished_and_foreign_records_give_nothing(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, TWO)
    cid = ev.conversations[0]["id"]
    done = [record(turn_id(cid, 1), 0), record(turn_id(cid, 2), 0)]
    assert ev.next_turns(done) == ([], [])
    assert ev.next_turns([record("not-ours", 0)]) == ([], [])


def test_three_turns_chain_per_repeat(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, [{"prompt": ["one", "two", "three"]}], repeats=2)
    cid = ev.conversations[0]["id"]
    records = [
        record(turn_id(cid, 1), 0, "A1"),
        record(turn_id(cid, 1), 1, "B1"),
        record(turn_id(cid, 2), 0, "A2"),
        record(turn_id(cid, 2), 1, error="http_5xx"),
    ]
    ready, blocked = ev.next_turns(records)
    assert [(p.meta["turn"], p.repeat) for p in ready] == [(3, 0)]
    assert [(p.meta["turn"], p.repeat) for p in blocked] == [(3, 1)]
    assert [m["content"] for m in ready[0].messages] == ["one", "A1", "two", "A2", "three"]


def test_a_blocked_turn_blocks_the_rest(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, [{"prompt": ["one", "two", "three"]}])
    cid = ev.conversations[0]["id"]
    failed = [
        record(turn_id(cid, 1), 0, error="timeout"),
        record(turn_id(cid, 2), 0, error="previous_turn_failed"),
    ]
    ready, blocked = ev.next_turns(failed)
    assert ready == [] and [p.meta["turn"] for p in blocked] == [3]


def test_not_graded(tmp_path: Path) -> None:
    ev = from_rows(tmp_path, TWO)
    assert ev.grade(ev.prompts()[0], "Answer: A") == (None, False)


@pytest.mark.parametrize(
    ("row", "fragments"),
    [
        ({"category": "x"}, ["row 1", "'prompt'", "no turns"]),
        ({"prompt": []}, ["row 1", "'prompt'", "non-empty list"]),
        ({"turns": "just one string"}, ["row 1", "'turns'", "list"]),
        ({"prompt": ["ok", {"role": "user"}]}, ["row 1", "'prompt'", "item 1"]),
    ],
)
def test_unparseable_row_names_file_row_and_column(
    tmp_path: Path, row: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(DatasetError) as err:
        from_rows(tmp_path, [{"prompt": ["fine"]}, row])
    message = str(err.value).replace("row 2", "row 1")  # the bad row is the second
    assert str(tmp_path / "conv.jsonl") in message
    assert "row 2" in str(err.value)
    for fragment in fragments:
        assert fragment in message


def sample(kind: str | None, finish: str = "stop", repeat: int = 0, qid: str = "q") -> dict:
    return {
        "question_id": qid,
        "repeat": repeat,
        "error_kind": kind,
        "finish_reason": finish,
        "extracted": None,
        "correct": False,
        "completion_tokens": 10,
        "prompt_tokens": 5,
    }


def test_ungraded_summary_reports_na_not_zero() -> None:
    records = [
        sample(None, qid="a"),
        sample(None, "length", qid="b"),
        sample("timeout", qid="c"),
        sample("previous_turn_failed", qid="d"),
    ]
    summary = summarize_ungraded(records)
    assert summary["graded"] is False
    assert summary["accuracy"] is None and summary["stderr"] is None
    assert summary["ci95"] == [None, None] and summary["no_answer_rate"] is None
    assert summary["counts"] == {"answered": 1, "truncated": 1, "error": 2}
    assert summary["truncated_rate"] == 0.25 and summary["error_rate"] == 0.5
    assert summary["n_samples"] == 4


def test_graded_summary_is_metrics_summarize() -> None:
    records = [{**sample(None), "extracted": "A", "correct": True}]
    summary = summarize_records(records, graded=True)
    assert summary["graded"] is True and summary["accuracy"] == 1.0


def test_hub_loader_reads_list_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # source=hf goes through datasets.load_dataset; a local folder in the hub's layout runs it
    # offline, with the list column coming back through Arrow.
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "mt_bench_prompts"
    folder.mkdir()
    row = {"prompt": ["Write.", "Shorter."], "prompt_id": 1, "category": "writing", "reference": []}
    write_jsonl(folder / "train.jsonl", [row])
    conf = EvalConf(
        kind="mtbench", dataset=DatasetConf(source="hf", path=str(folder), split="train")
    )
    ev = make_eval("mt", conf)
    assert ev.conversations[0]["turns"] == ["Write.", "Shorter."]
