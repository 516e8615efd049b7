"""The layout of ``result.json``'s ``evals.<name>`` and ``accept`` blocks (see ``result_schema``).

``eval_block`` writes an eval's block and ``EvalSummary`` reads it through ``EvalJson``;
``pipeline.measuring.accept_windows`` assembles ``accept`` and ``AcceptBlock`` reads it through
``AcceptJson``.
"""

from __future__ import annotations

from typing import Any, TypedDict

from evals.sample_line import EvalStatsJson


class CrossCheckJson(TypedDict, total=False):
    """``accept.cross_check`` / ``metrics_cross_check``: a server figure against our own.

    The observed figure's key is its source: ``server`` (``/server_info``) or ``metrics``
    (Prometheus); ``per_request`` is the figure from the per-request statistics.
    """

    server: float | None
    metrics: float | None
    per_request: float | None
    relative_difference: float | None
    agrees: bool | None


class TrafficJson(TypedDict):
    """``accept.traffic``: requests the server counted in the window against those sent."""

    counted: float
    sent: int
    attempts: int
    foreign: float


class ServerWindowJson(TypedDict):
    """``accept.server_window``: the requests the server-side figures cover.

    Those are server_avg_spec_accept_length, metrics, cross_check, metrics_cross_check and
    traffic; the per-request figures cover every request of the eval.
    """

    covers: str  # all | resumed (only the requests sent after a resume: the rest were kept)
    requests: int  # requests sent in the window
    of: int  # the eval's requests (kept and sent)


class AcceptJson(TypedDict, total=False):
    """``accept`` of the cell and of each eval (``pipeline.measuring.accept_windows``)."""

    n_requests: int
    n_with_spec: int
    status: str  # ok | missing | not_speculative
    accept_length: float
    accept_length_stderr: float | None
    accept_length_request_mean: float
    accept_rate: float | None
    per_position_acceptance: list[float]
    server_equivalent_accept_length: float
    completion_tokens: int
    verify_ct: int
    num_correct_drafts: int
    num_proposed_drafts: int
    accept_rate_stderr: float | None
    per_position_acceptance_stderr: list[float | None]
    server_avg_spec_accept_length: float | None
    metrics: dict[str, Any]
    cross_check: CrossCheckJson
    metrics_cross_check: CrossCheckJson
    traffic: TrafficJson
    server_window: ServerWindowJson
    # How the server figure weighted its DP ranks (absent with one); "unweighted ..." says why
    server_accept_weighting: str


class SequentialJson(TypedDict, total=False):
    """``evals.<name>.sequential``: the stopping design, the cell's role and its last look."""

    max_repeats: int
    repeats_per_round: int
    alpha: float
    margin: float
    spending: str
    family: str
    statistic: str
    broken_share: float  # anytime cells since the NO-GO split (pipeline.stats.nogo_split)
    planned_looks: int  # a greedy server's anytime design plans one look (issue 37)
    alpha_looks: str  # "doubling": anytime looks that spend alpha (pipeline.stats.look_schedule)
    role: str  # baseline | candidate | why the fixed design ran
    baseline_dir: str
    look: int
    decision: str


class EvalJson(EvalStatsJson, total=False):
    """``evals.<name>``: one eval's summary (``pipeline.results.eval_block.eval_block``).

    The statistics are ``EvalStatsJson``, as ``evals.metrics.summarize`` writes them (one
    declaration: the eval writes them, this block carries them); an ungraded eval has them None.
    """

    label: str
    kind: str | None
    sampling: dict[str, Any]
    resumed_samples: int
    sequential: SequentialJson
    lm_eval: dict[str, Any]
    summarised_from: str
    accept: AcceptJson
