"""serving_crosscheck: bench_serving's line beside the serving phase's level (issue 42 item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.live_h200.serving_crosscheck import (
    CrosscheckError,
    bench_line,
    main,
    rows,
    serving_point,
    variant_result,
)

# The keys SGLang 0.5.23's sglang/benchmark/serving.py writes (the figures this reads).
BENCH = {"backend": "sglang", "max_concurrency": 16, "completed": 32, "output_throughput": 2000.0,
         "median_ttft_ms": 40.0, "p90_ttft_ms": 80.0, "p99_ttft_ms": 120.0, "median_itl_ms": 5.0,
         "p90_itl_ms": 6.0, "p99_itl_ms": 9.0, "median_tpot_ms": 5.5, "p90_tpot_ms": 6.5,
         "median_e2e_latency_ms": 1500.0, "p90_e2e_latency_ms": 1800.0}  # fmt: skip
POINT = {"bucket": 8192, "concurrency": 16, "requests": 32, "output_tokens_per_s": 1800.0,
         "ttft_ms": {"p50": 44.0, "p90": 80.0, "p99": 150.0},
         "itl_ms": {"p50": 5.0, "p90": 6.6, "p99": 9.0}, "tpot_ms": {"p50": 5.5, "p90": 6.5},
         "e2e_ms": {"p50": 1500.0}}  # fmt: skip


def _cell(sweep: Path, name: str, variant: str, points: list[dict[str, Any]]) -> None:
    (sweep / name).mkdir(parents=True)
    result = {"cell": {"variant": variant}, "serving": {"points": points}}
    (sweep / name / "result.json").write_text(json.dumps(result))


@pytest.mark.parametrize(
    ("figure", "phase", "bench", "ratio"),
    [
        ("output tokens/s", 1800.0, 2000.0, 0.9),
        ("TTFT p50 (ms)", 44.0, 40.0, 1.1),
        ("TTFT p99 (ms)", 150.0, 120.0, 1.25),
        ("ITL p90 (ms)", 6.6, 6.0, 1.1),
        ("requests", 32.0, 32.0, 1.0),
        ("e2e p90 (ms)", None, 1800.0, None),  # the phase has no p90: no ratio
    ],
)
def test_rows_set_each_figure_beside_the_bench(
    figure: str, phase: float | None, bench: float | None, ratio: float | None
) -> None:
    row = next(r for r in rows(POINT, BENCH) if r.figure == figure)
    assert (row.phase, row.bench) == (phase, bench)
    assert row.ratio == (pytest.approx(ratio) if ratio is not None else None)


def test_serving_point_names_the_levels_it_has() -> None:
    result = {"serving": {"points": [POINT, {**POINT, "concurrency": 4}]}}
    assert serving_point(result, 8192, 16)["output_tokens_per_s"] == 1800.0
    with pytest.raises(CrosscheckError, match=r"bucket 1024, concurrency 16.*\(8192, 4\)"):
        serving_point(result, 1024, 16)


def test_the_variant_is_the_cells_not_a_prefix(tmp_path: Path) -> None:
    _cell(tmp_path, "0_m_fa3_repeat_auto_exact", "fa3_repeat", [])
    _cell(tmp_path, "1_m_fa3_auto_exact", "fa3", [POINT])
    path, _ = variant_result(tmp_path, "fa3")
    assert path.parent.name == "1_m_fa3_auto_exact"
    with pytest.raises(CrosscheckError, match="no cell of variant 'fmha_v2'"):
        variant_result(tmp_path, "fmha_v2")


def test_bench_line_reads_the_last_line_and_refuses_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({**BENCH, "output_throughput": 1.0}) + "\n" + json.dumps(BENCH))
    assert bench_line(path)["output_throughput"] == 2000.0
    path.write_text("")
    with pytest.raises(CrosscheckError, match=r"b\.jsonl: no bench_serving line"):
        bench_line(path)
    path.write_text(json.dumps({"error": "x"}))
    with pytest.raises(CrosscheckError, match="no 'output_throughput'"):
        bench_line(path)


def test_main_prints_the_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = tmp_path / "lc-bench.jsonl"
    bench.write_text(json.dumps(BENCH) + "\n")
    _cell(tmp_path / "lc-off", "0_m_fa3_auto_exact", "fa3", [POINT])
    out = tmp_path / "x.json"
    argv = [str(bench), str(tmp_path / "lc-off"), "--bucket", "8192", "--concurrency", "16"]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| output tokens/s | 1,800.0 | 2,000.0 | 0.900 |" in printed
    assert json.loads(out.read_text())["rows"][0]["ratio"] == pytest.approx(0.9)
    assert main([*argv[:2], "--bucket", "1024", "--concurrency", "16"]) == 2
    assert "no serving level at bucket 1024" in capsys.readouterr().err
