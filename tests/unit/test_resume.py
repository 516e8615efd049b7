import json

from pipeline.results.resume import claim_samples, finished_result, kept_samples, mark_skipped
from pipeline.results.store import read_result, write_json_atomic


def line(qid, repeat, error=None, correct=True):
    return json.dumps(
        {"question_id": qid, "repeat": repeat, "error_kind": error, "correct": correct}
    )


def test_kept_samples_drops_errors_and_torn_lines_and_keeps_latest(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        "\n".join(
            [
                line("a", 0, correct=False),
                line("a", 0, correct=True),  # later line wins
                line("b", 0, error="timeout"),  # asked again
                line("c", 1),
                '{"question_id": "d", "rep',  # torn by a kill
            ]
        )
        + "\n"
    )
    kept = kept_samples(path)
    assert sorted((r["question_id"], r["repeat"], r["correct"]) for r in kept) == [
        ("a", 0, True),
        ("c", 1, True),
    ]
    assert len(path.read_text().splitlines()) == 2  # rewritten without the dropped lines


def test_claim_samples_moves_other_configs_aside(tmp_path):
    samples = claim_samples(tmp_path, "hash1")
    (samples / "e.jsonl").write_text(line("a", 0) + "\n")
    assert claim_samples(tmp_path, "hash1") == samples and (samples / "e.jsonl").exists()
    claim_samples(tmp_path, "hash2")
    assert not (samples / "e.jsonl").exists()
    assert (tmp_path / "samples.previous-hash1" / "e.jsonl").exists()  # never deleted
    claim_samples(tmp_path, "hash1")
    assert (tmp_path / "samples.previous-hash2").exists()


def test_finished_result_only_for_ok_with_same_hash(tmp_path):
    assert finished_result(tmp_path, "h") is None
    write_json_atomic(tmp_path / "result.json", {"status": "failed", "config_hash": "h"})
    assert finished_result(tmp_path, "h") is None
    write_json_atomic(tmp_path / "result.json", {"status": "ok", "config_hash": "h"})
    assert finished_result(tmp_path, "other") is None
    previous = finished_result(tmp_path, "h")
    assert previous is not None
    assert mark_skipped(tmp_path, previous, "now").resumed[-1].at == "now"
    on_disk = read_result(tmp_path)
    assert on_disk is not None and on_disk.resumed[-1].action == "skipped: already ok"


def test_damaged_result_is_rerun(tmp_path):
    (tmp_path / "result.json").write_text("{not json")
    assert finished_result(tmp_path, "h") is None


def test_speculative_cells_ask_again_for_samples_without_spec_stats(tmp_path):
    path = tmp_path / "s.jsonl"
    with_spec = json.dumps(
        {"question_id": "a", "repeat": 0, "error_kind": None, "spec": {"verify_ct": 3}}
    )
    without = json.dumps({"question_id": "b", "repeat": 0, "error_kind": None, "spec": None})
    path.write_text(with_spec + "\n" + without + "\n")
    assert [r["question_id"] for r in kept_samples(path, need_spec=True)] == ["a"]
    path.write_text(with_spec + "\n" + without + "\n")
    assert len(kept_samples(path, need_spec=False)) == 2
