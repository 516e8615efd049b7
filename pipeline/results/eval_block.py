"""``evals.<name>`` of ``result.json``: one eval's summary, written and read through these types.

The measuring part puts a block together with ``eval_block`` (what the eval is, its statistics as
``evals`` summarised them, how it ran) and hands ``EvalSummary`` to the cell's draft; the report,
the summary and the tests read the fields. ``to_json`` is the block as written, key order included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pipeline.results.accept_block import AcceptBlock
from pipeline.results.eval_schema import EvalJson, SequentialJson
from pipeline.results.json_values import as_list, as_map, as_optional_text, as_seconds

DESIGN_KEYS = ("max_repeats", "repeats_per_round", "alpha", "margin", "spending", "family",
               "statistic", "broken_share", "planned_looks", "alpha_looks")  # fmt: skip
RATES = ("no_answer_rate", "truncated_rate", "error_rate")
# Retried attempts (HTTP 5xx, dropped connections, unfinished replies) per request above which the
# console and the report warn: the figures are still exact, but the server or what stands in
# front of it is failing often enough to say so.
RETRY_WARN_RATE = 0.05


@dataclass(frozen=True)
class SequentialBlock:
    """``evals.<name>.sequential``: the stopping design, the cell's role and its last look."""

    role: Any  # baseline | candidate | why the fixed design ran
    look: Any = None  # a candidate's last look (1-based)
    decision: Any = None  # GO | NO-GO | undecided
    design: Mapping[str, Any] = field(default_factory=dict)  # max_repeats, ..., spending
    baseline_dir: str | None = None  # a candidate's baseline cell folder

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SequentialBlock:
        """The block as written (read leniently: ``EvalSummary.checked_sequential`` checks it)."""
        block = cast(SequentialJson, data)
        design = {k: data[k] for k in DESIGN_KEYS if k in data}
        return cls(
            block.get("role"), block.get("look"), block.get("decision"), design,
            as_optional_text(block.get("baseline_dir")),
        )  # fmt: skip

    def to_json(self) -> SequentialJson:
        """The block as the cell writes it: the design, the role, then a candidate's look."""
        out = cast(SequentialJson, {**self.design, "role": self.role})
        if self.baseline_dir is not None:
            out["baseline_dir"] = self.baseline_dir
        if self.look is not None:
            out["look"] = self.look
        if self.decision is not None:
            out["decision"] = self.decision
        return out


@dataclass(frozen=True)
class EvalHead:
    """What an eval is and how it sampled: the first fields of its block."""

    label: str
    kind: str | None  # the eval's ``kind`` in the config (None: not configured by name)
    sampling: Mapping[str, Any]  # the sampling settings and their ``source`` (eval | model)

    def to_json(self) -> dict[str, Any]:
        """The head's fields as the block begins."""
        return {"label": self.label, "kind": self.kind, "sampling": dict(self.sampling)}


@dataclass(frozen=True)
class EvalSummary:
    """``evals.<name>``: one eval's summary; ``data`` keeps every field it was written with."""

    accuracy: float | None
    ci95: tuple[float | None, float | None]
    accept: AcceptBlock | None  # None: the eval has no accept window of its own
    graded: bool = True  # False: ungraded (MT-Bench-style, accept rates only)
    stderr: float | None = None
    n_questions: int | None = None
    n_repeats: int | None = None
    rates: Mapping[str, float | None] = field(default_factory=dict)  # no_answer, truncated, error
    sequential: SequentialBlock | None = None  # None: a fixed design (or a malformed block)
    label: str | None = None
    sampling: Mapping[str, Any] = field(default_factory=dict)
    n_samples: int | None = None
    counts: Mapping[str, int] = field(default_factory=dict)  # correct, wrong, ... | answered, ...
    wall_time_s: float | None = None
    resumed_samples: int | None = None  # answered samples of an earlier run, kept
    lm_eval: Mapping[str, Any] | None = None  # lm-eval's own results (``kind: lm_eval``)
    summarised_from: str | None = None  # set when summarised from the samples on disk
    # The server's prefill time (``evals.metrics.prefill_summary``); None in results from before it
    # or from a server without --enable-metrics.
    mean_prefill_s: float | None = None
    prefill_s_per_1k_prompt_tokens: float | None = None
    data: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EvalSummary:
        """The eval block as written (MT-Bench and other ungraded evals have no accuracy)."""
        block = cast(EvalJson, data)
        lo, hi = [*as_list(block.get("ci95")), None, None][:2]
        own, seq, lm = block.get("accept"), block.get("sequential"), block.get("lm_eval")
        return cls(
            accuracy=block.get("accuracy"),
            ci95=(lo, hi),
            accept=AcceptBlock.from_json(as_map(own)) if own else None,
            graded=block.get("graded", True) is not False,
            stderr=block.get("stderr"),
            n_questions=block.get("n_questions"),
            n_repeats=block.get("n_repeats"),
            rates={k: data.get(k) for k in RATES},
            sequential=SequentialBlock.from_json(seq) if isinstance(seq, dict) else None,
            label=as_optional_text(block.get("label")),
            sampling=as_map(block.get("sampling")),
            n_samples=block.get("n_samples"),
            counts=as_map(block.get("counts")),
            wall_time_s=block.get("wall_time_s"),
            resumed_samples=block.get("resumed_samples"),
            lm_eval=lm if isinstance(lm, Mapping) else None,
            summarised_from=block.get("summarised_from"),
            mean_prefill_s=as_seconds(block.get("mean_prefill_s")),
            prefill_s_per_1k_prompt_tokens=as_seconds(block.get("prefill_s_per_1k_prompt_tokens")),
            data=data,
        )

    def to_json(self) -> EvalJson:
        """The block as written (``from_json(x).to_json() == x``, key order included)."""
        return cast(EvalJson, dict(self.data))

    @property
    def _block(self) -> EvalJson:
        return cast(EvalJson, self.data)

    @property
    def retries(self) -> dict[str, int]:
        """Retried attempts per cause (empty in results written before they were counted)."""
        raw = as_map(self._block.get("retries"))
        return {str(k): int(v) for k, v in raw.items() if isinstance(v, int)}

    @property
    def error_kinds(self) -> dict[str, int]:
        """Errored requests per error kind (empty in results written before they were counted)."""
        raw = as_map(self._block.get("error_kinds"))
        return {str(k): int(v) for k, v in raw.items() if isinstance(v, int)}

    def requests_line(self, name: str) -> str | None:
        """What eval ``name``'s requests went through, in words; None when nothing happened."""
        retries, errors = self.retries, self.error_kinds
        if not retries and not errors:
            return None
        parts = [f"{sum(counts.values())} {what}" + (f" ({_kinds(counts)})" if counts else "")
                 for what, counts in (("retried", retries), ("errored", errors))]  # fmt: skip
        return f"eval {name}: {', '.join(parts)} of {self.n_samples} requests"

    def retry_warning(self, name: str) -> str | None:
        """A warning when eval ``name`` retried more than ``RETRY_WARN_RATE`` per request."""
        rate = self._block.get("retry_rate")
        if not isinstance(rate, int | float) or rate <= RETRY_WARN_RATE:
            return None
        return (
            f"eval {name}: {sum(self.retries.values())} retries over {self.n_samples} requests "
            f"({_kinds(self.retries)}), more than {RETRY_WARN_RATE:.0%} of requests: the server "
            "or the network in front of it fails often; the figures are of the answered requests"
        )

    def checked_sequential(self) -> SequentialBlock | None:
        """The sequential block, checked: None when the eval ran the fixed design.

        Raises:
            ValueError: the block is not a mapping or lacks a key its role needs.
        """
        seq = self._block.get("sequential")
        if seq is None:
            return None
        if not isinstance(seq, dict):
            raise ValueError(f"sequential = {seq!r} must be a mapping")
        lacking = [k for k in ("role", "max_repeats", "repeats_per_round") if k not in seq]
        if seq.get("role") == "candidate" and "look" not in seq:
            lacking.append("look")
        if lacking:
            raise ValueError(f"sequential block lacks {', '.join(lacking)}")
        return SequentialBlock.from_json(seq)


def eval_block(
    head: EvalHead,
    statistics: Mapping[str, Any],
    *,
    resumed_samples: int,
    wall_time_s: float | None = None,
    sequential: SequentialBlock | None = None,
    lm_eval: Mapping[str, Any] | None = None,
    summarised_from: str | None = None,
    accept: AcceptBlock | None = None,
) -> EvalSummary:
    """One eval's block as the cell writes it, typed.

    Args:
        head: what the eval is and how it sampled.
        statistics: ``evals.accounting.summarize_records`` of its samples.
        resumed_samples: answered samples of an earlier run that were kept.
        wall_time_s: how long the eval ran (None: summarised without running it).
        sequential: the stopping design and its last look, when the eval ran in rounds.
        lm_eval: lm-eval's own results, for ``kind: lm_eval``.
        summarised_from: where the figures come from when not from a run that ended.
        accept: the eval's accept statistics, when known as the block is written.
    """
    data = cast(EvalJson, {**head.to_json(), **statistics})  # summarize_records's keys
    if wall_time_s is not None:
        data["wall_time_s"] = wall_time_s
    data["resumed_samples"] = resumed_samples
    if sequential is not None:
        data["sequential"] = sequential.to_json()
    if lm_eval is not None:
        data["lm_eval"] = dict(lm_eval)
    if summarised_from is not None:
        data["summarised_from"] = summarised_from
    if accept is not None:
        data["accept"] = accept.to_json()
    return EvalSummary.from_json(data)


def _kinds(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in counts.items())
