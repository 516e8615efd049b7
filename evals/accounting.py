"""Per-eval summaries for evals that are not graded (MT-Bench) or graded elsewhere (pure).

``evals.metrics.summarize`` scores every answered request as correct, wrong or no-answer. For an
eval with nothing to grade that would report an accuracy of 0 and every answer as "no answer",
which reads like a broken model; here the accuracy fields are None (n/a) and the counts say what
happened to each request: answered, truncated or errored.
"""

from __future__ import annotations

from collections.abc import Sequence

from evals.metrics import outcome_class, summarize
from evals.sample_line import EvalStatsJson, SampleJson


def summarize_ungraded(
    records: Sequence[SampleJson], wall_time_s: float | None = None
) -> EvalStatsJson:
    """Summarize sample records of an eval without grading.

    Args:
        records: ``sample_record`` dicts.
        wall_time_s: the eval's wall time, recorded when given.

    Returns:
        ``summarize``'s dict with ``graded: False``, the accuracy fields None and ``counts``
        of answered / truncated / error requests.
    """
    summary = summarize(records, wall_time_s)
    classes = [outcome_class(r) for r in records]
    summary["accuracy"] = summary["stderr"] = None
    summary["per_repeat_accuracy"] = summary["no_answer_rate"] = None
    # Bounds unknown, as a pair: readers (pipeline.cli.summary) unpack ci95 without a None check.
    summary["ci95"] = [None, None]
    summary["stderr_method"] = "n/a: not graded"
    summary["counts"] = {
        "answered": sum(c in ("correct", "wrong", "no_answer") for c in classes),
        "truncated": classes.count("truncated"),
        "error": classes.count("error"),
    }
    summary["graded"] = False
    return summary


def summarize_records(
    records: Sequence[SampleJson], graded: bool, wall_time_s: float | None = None
) -> EvalStatsJson:
    """``summarize`` (with ``graded: True``) or ``summarize_ungraded`` by ``graded``."""
    if not graded:
        return summarize_ungraded(records, wall_time_s)
    summary = summarize(records, wall_time_s)
    summary["graded"] = True
    return summary
