"""SGLang's server-side HTTP surface in one place: ``GET /server_info`` keys, ``/metrics`` names.

``/server_info`` (``/get_server_info`` on servers without the new name) carries every resolved
server argument at the top level and again in each ``internal_states[i]`` (one entry per DP rank),
which also holds ``avg_spec_accept_length`` (absent before the first verify step),
``effective_max_running_requests_per_dp`` and, with ``SGLANG_EXPOSE_OWN_ENV_VARS=1``, ``env_vars``
(``srt/entrypoints/http_server.py``). The Prometheus counter names (``--enable-metrics``,
``GET /metrics``) come from ``srt/observability/metrics_collector.py``.

Every key this project reads from that surface is in ``SURFACE_BY_VERSION``: supporting a new SGLang
release's keys is an edit of that table (plus its fixture in tests/data), nothing else. It lives in
``backends`` because ``backends.verify`` needs it and ``pipeline`` may import ``backends`` (never
the other way round).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from backends.version_ranges import VersionError, parse_version


@dataclass(frozen=True)
class MetricNames:
    """Prometheus names (``--enable-metrics``, ``GET /metrics``) the accept windows read."""

    generation_tokens: str = "sglang:generation_tokens_total"
    verify_calls: str = "sglang:spec_verify_calls_total"
    requests: str = "sglang:num_requests_total"
    running: str = "sglang:num_running_reqs"
    rank_label: str = "dp_rank"  # label of the per-DP-rank samples


@dataclass(frozen=True)
class SurfaceKeys:
    """The ``/server_info`` keys and endpoints of one SGLang release."""

    info_paths: tuple[str, ...] = ("/server_info", "/get_server_info")  # tried in this order
    version: str = "version"
    dp_size: str = "dp_size"
    states: str = "internal_states"
    accept_length: str = "avg_spec_accept_length"
    running_limit: str = "effective_max_running_requests_per_dp"
    env_vars: str = "env_vars"
    # What tells one server start from another (no pid is exposed): the start-up durations SGLang
    # measured (``startup_time``, a dict in 0.5.19) and, from 0.5.23, the launch command.
    start_keys: tuple[str, ...] = ("startup_time", "launch_command")
    metrics: MetricNames = field(default_factory=MetricNames)


# From the wheels of each release (benchmarks/results/sglang-rules.md, ``server_info_keys``);
# 0.5.23 only adds top-level keys (``launch_command``, read as a start mark when present;
# ``frontend``). A release between two entries reads with the older one's keys; one before the
# first with the first's.
SURFACE_BY_VERSION: dict[str, SurfaceKeys] = {
    "0.5.19": SurfaceKeys(),
    "0.5.20": SurfaceKeys(),
    "0.5.21": SurfaceKeys(),
    "0.5.22": SurfaceKeys(),
    "0.5.23": SurfaceKeys(),
}
LATEST = SURFACE_BY_VERSION[max(SURFACE_BY_VERSION, key=parse_version)]


def surface_for(version: str | None) -> SurfaceKeys:
    """The key table of ``version``: its own entry, else the newest one before it (None: latest)."""
    try:
        wanted = parse_version(version) if version else None
    except VersionError:
        wanted = None
    if wanted is None:
        return LATEST
    known = sorted(SURFACE_BY_VERSION, key=parse_version)
    older = [v for v in known if parse_version(v) <= wanted]
    return SURFACE_BY_VERSION[older[-1] if older else known[0]]


@dataclass(frozen=True)
class ServerInfo:
    """What the pipeline reads from one ``/server_info`` body (build it with ``parse``).

    ``settings``: the resolved server arguments, the top level winning over ``internal_states[0]``
    (which repeats them). ``running_limits`` keeps each state's raw value: ``running_limit``
    validates them, so a body with a bad limit still verifies and only sizing the client fails.
    """

    settings: Mapping[str, object]
    version: str | None
    env_vars: Mapping[str, str] | None  # None: the server does not expose its environment
    accept_length_by_rank: Mapping[str, float]  # rank index ("0", "1", ...) -> accept length
    running_limits: tuple[object, ...] | None  # None: no state reports a limit
    dp_size: object
    keys: SurfaceKeys
    start: Mapping[str, object] = field(default_factory=dict)  # the ``start_keys`` it reports

    @classmethod
    def parse(cls, body: Mapping[str, Any]) -> ServerInfo:
        """Read a decoded ``/server_info`` body with the key table of the version it reports."""
        version = body.get(LATEST.version)
        keys = surface_for(version if isinstance(version, str) else None)
        raw_states = body.get(keys.states)
        states = raw_states if isinstance(raw_states, list) else []
        first = states[0] if states and isinstance(states[0], Mapping) else {}
        settings = {**first, **{k: v for k, v in body.items() if k != keys.states}}
        env = first.get(keys.env_vars)
        return cls(
            settings=settings,
            version=version if isinstance(version, str) else None,
            env_vars=env if isinstance(env, dict) else None,
            accept_length_by_rank=_accept_lengths(states, keys.accept_length),
            running_limits=_running_limits(states, keys.running_limit),
            dp_size=body.get(keys.dp_size, 1),
            keys=keys,
            start={k: body[k] for k in keys.start_keys if body.get(k) is not None},
        )

    def setting(self, key: str) -> tuple[bool, object]:
        """``(found, value)`` of a resolved server argument (``found`` False: not reported)."""
        return (True, self.settings[key]) if key in self.settings else (False, None)

    def running_limit(self) -> int | None:
        """Requests the server runs at once over all DP ranks (None: it does not say).

        With fewer states than ``dp_size`` ranks each state stands for ``dp_size / len(states)``.

        Raises:
            ValueError: a limit or ``dp_size`` that is present but not a positive integer.
        """
        if self.running_limits is None:
            return None
        counts: list[int] = []
        for i, limit in enumerate(self.running_limits):
            if not _positive_int(limit):
                raise ValueError(
                    f"/server_info {self.keys.states}[{i}].{self.keys.running_limit}={limit!r}: "
                    "expected a positive integer (is this an SGLang server?)"
                )
            counts.append(limit)
        dp_size = self.dp_size
        if not _positive_int(dp_size):
            raise ValueError(
                f"/server_info {self.keys.dp_size}={dp_size!r}: expected a positive integer"
            )
        return max(1, round(sum(counts) * dp_size / len(counts)))


def _accept_lengths(states: list[Any], key: str) -> dict[str, float]:
    return {
        str(i): float(s[key])
        for i, s in enumerate(states)
        if isinstance(s, Mapping) and isinstance(s.get(key), int | float)
    }


def _running_limits(states: list[Any], key: str) -> tuple[object, ...] | None:
    limits = [s.get(key) for s in states if isinstance(s, Mapping)]
    if not states or len(limits) != len(states) or all(x is None for x in limits):
        return None
    return tuple(limits)


def _positive_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


@functools.lru_cache(maxsize=8)  # a window reads several counters from one snapshot
def _samples(text: str) -> tuple[tuple[str, tuple[tuple[str, str], ...], float], ...]:
    """Every sample of a ``/metrics`` text: (sample name, labels, value).

    prometheus_client's own parser (SGLang exports with prometheus_client): escaped label
    values, ``# HELP`` / ``# TYPE`` lines and a counter's ``_created`` samples are its job.

    Raises:
        ValueError: the text is not Prometheus' text format.
    """
    from prometheus_client.parser import text_string_to_metric_families

    try:
        families = list(text_string_to_metric_families(text))
    except ValueError as err:
        raise ValueError(f"/metrics is not Prometheus text format: {err}") from err
    return tuple(
        (s.name, tuple(sorted(s.labels.items())), float(s.value))
        for family in families
        for s in family.samples
    )


def metric_total(text: str | None, name: str) -> float | None:
    """Sum of a counter's samples over its label sets; None when absent.

    ``name`` is the sample's name as exposed (``sglang:num_requests_total``), not the family's.
    """
    if not text:
        return None
    values = [value for sample, _, value in _samples(text) if sample == name]
    return sum(values) if values else None


def metric_by_label(text: str | None, name: str, label: str) -> dict[str, float]:
    """A Prometheus counter summed per value of ``label`` (empty when absent or unlabelled)."""
    totals: dict[str, float] = {}
    for sample, labels, value in _samples(text) if text else ():
        by_name = dict(labels)
        if sample == name and label in by_name:
            totals[by_name[label]] = totals.get(by_name[label], 0.0) + value
    return totals


def verify_calls_by_rank(text: str | None, keys: SurfaceKeys = LATEST) -> dict[str, float]:
    """``spec_verify_calls_total`` per DP rank from ``/metrics`` text (empty: unlabelled/absent)."""
    return metric_by_label(text, keys.metrics.verify_calls, keys.metrics.rank_label)
