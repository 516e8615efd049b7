"""Error metrics and the causal FLOP count."""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from backends.probe.metrics import causal_tflops, error_metrics, max_abs_diff  # noqa: E402


def _ref():
    return torch.linspace(-1, 1, 4 * 2 * 8).view(4, 2, 8)


def test_identical_outputs_have_no_error():
    m = error_metrics(_ref().clone(), _ref(), 1e-2, 1e-2)
    assert m == {
        "max_abs": 0.0,
        "mean_abs": 0.0,
        "rel_fro": 0.0,
        "rows_beyond_frac": 0.0,
        "nonfinite": 0,
    }


@pytest.mark.parametrize(
    ("delta", "beyond"),
    [(0.012, 0.0), (0.5, 1 / 8)],  # 0.012 < 0.01 + 0.01 * max|ref row| (~0.49); 0.5 is not
)
def test_one_row_off(delta, beyond):
    out = _ref().clone()
    out[2, 1, 3] += delta
    m = error_metrics(out, _ref(), 1e-2, 1e-2)
    assert m["max_abs"] == pytest.approx(delta, rel=1e-4)
    assert m["rows_beyond_frac"] == pytest.approx(beyond)
    assert m["mean_abs"] == pytest.approx(delta / 64, rel=1e-3)


def test_nonfinite_outputs_are_counted_and_wrong():
    out = _ref().clone()
    out[0, 0, 0] = float("nan")
    out[1, 1, 1] = float("inf")
    m = error_metrics(out, _ref(), 1e-2, 1e-2)
    assert m["nonfinite"] == 2 and m["max_abs"] is None
    assert m["rows_beyond_frac"] == pytest.approx(2 / 8)
    assert m["rel_fro"] == 0.0  # the finite part is exact
    assert max_abs_diff(out, _ref()) is None


def test_relative_frobenius():
    m = error_metrics(_ref() * 1.01, _ref(), 1.0, 0.0)
    assert m["rel_fro"] == pytest.approx(0.01, rel=1e-4)


def test_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="shape"):
        error_metrics(_ref()[:2], _ref(), 1e-2, 1e-2)


def test_causal_tflops():
    # 1 x 1024 tokens, 32 heads of 128: 4 * 1024*1025/2 * 32 * 128 FLOP in 1 ms.
    assert causal_tflops(1, 1024, 32, 128, 1.0) == pytest.approx(
        4 * 1024 * 1025 / 2 * 32 * 128 / 1e-3 / 1e12
    )
    assert math.isclose(causal_tflops(2, 1024, 32, 128, 2.0), causal_tflops(1, 1024, 32, 128, 1.0))


def test_failing_rows_names_positions_heads_and_blocks():
    from backends.probe.metrics import failing_rows

    seqlen, heads = 300, 2
    rows = torch.tensor([0, 1, 2, 150, 299, 300, 301, 450])  # two sequences of 300
    ref = torch.ones(len(rows), heads, 4)
    out = ref.clone()
    out[0, 0, 1] += 1.0  # position 0, head 0
    out[5, 1, 0] += 1.0  # position 0 of the second sequence, head 1
    out[3, 0, 2] = float("nan")  # position 150, head 0: non-finite is wrong
    found = failing_rows(out, ref, rows, seqlen, 1e-2, 1e-2)
    assert found["count"] == 3
    assert found["rows"] == 2  # positions 0 and 150
    assert found["first_positions"] == [0, 150]
    assert found["max_position"] == 150
    assert found["per_128_rows"][:3] == [2, 1, 0]
    assert found["per_head"] == [2, 1]


def test_failing_rows_when_none_fail():
    from backends.probe.metrics import failing_rows

    ref = torch.ones(3, 2, 4)
    found = failing_rows(ref.clone(), ref, torch.arange(3), 3, 1e-2, 1e-2)
    assert (found["count"], found["rows"], found["max_position"]) == (0, 0, None)
