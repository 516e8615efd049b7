import json

import pytest

from backends.server_info import metric_total
from pipeline.results.store import config_hash, read_result, write_json_atomic


def test_atomic_write_leaves_no_temp_files(tmp_path):
    write_json_atomic(tmp_path / "result.json", {"status": "ok"})
    write_json_atomic(tmp_path / "result.json", {"status": "failed"})
    result = read_result(tmp_path)
    assert result is not None and result.to_json() == {"status": "failed"}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_atomic_write_keeps_old_file_when_serialisation_fails(tmp_path):
    write_json_atomic(tmp_path / "result.json", {"status": "ok"})

    class Boom:
        def __str__(self):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        write_json_atomic(tmp_path / "result.json", {"x": Boom()})
    assert json.loads((tmp_path / "result.json").read_text()) == {"status": "ok"}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_config_hash_is_order_independent_and_sensitive():
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1})
    assert config_hash({"a": 1}) != config_hash({"a": 2})


METRICS = """# HELP sglang:spec_verify_calls_total x
# TYPE sglang:spec_verify_calls_total counter
sglang:spec_verify_calls_total{model_name="m",tp_rank="0"} 10.0
sglang:spec_verify_calls_total{model_name="m",tp_rank="1"} 5.0
sglang:spec_verify_calls_total_created{model_name="m"} 1.7e9
sglang:generation_tokens_total 30
"""


def test_metric_total_sums_label_sets_and_ignores_prefix_names():
    assert metric_total(METRICS, "sglang:spec_verify_calls_total") == 15.0
    assert metric_total(METRICS, "sglang:generation_tokens_total") == 30.0
    assert metric_total(METRICS, "sglang:absent") is None
    assert metric_total(None, "x") is None


def test_overhead_excludes_server_start_and_stop():
    from pipeline.cell.cell_result import overhead

    marks = {
        "launch": 0.5,
        "ready": 400.5,
        "verified": 400.6,
        "evals_done": 410.0,
        "stopped": 417.0,
        "end": 417.2,
    }
    assert overhead(marks) == {
        "to_first_request_s": 0.6,
        "after_last_response_s": 0.2,
        "server_stop_s": 7.0,
    }
    assert overhead({"launch": 0.1, "end": 0.2})["to_first_request_s"] is None
    with_start = overhead({**marks, "process_start": -1.5})
    assert with_start["to_first_request_s"] == 2.1  # 1.5 s of interpreter and imports counted
