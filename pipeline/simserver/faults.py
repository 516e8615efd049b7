"""Which injected fault hits a request (pure).

Rate faults are drawn from ``hash(seed, prompt, attempt)``, where ``attempt`` counts earlier
requests with the same prompt in this server process: a rerun of the same sequence sees the same
faults, and a client's retry gets a fresh draw (so retries can succeed, as with a flaky server).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipeline.simserver.model import hash_units

# Checked in this order; the name is what the ledger's "fault" field says. The first four draw
# from one hash, as before the others existed, so a seeded run of those alone sees what it saw.
# abort: SGLang's finish reason "abort" (``aborts.py``: its body per ``abort_status``);
# rate_limit: HTTP 429 with ``Retry-After: retry_after``; stream_error: an error object inside a
# stream (streams only); invalid_utf8: a reply that is not UTF-8; missing_meta_info: a 200
# without meta_info and sglext (a gateway that passes only OpenAI's fields).
RATE_FAULT_ORDER = (
    "connection_reset", "http_5xx", "malformed_json", "truncation",
    "abort", "rate_limit", "stream_error", "invalid_utf8", "missing_meta_info",
)  # fmt: skip


@dataclass(frozen=True)
class Faults:
    """The ``faults`` object of ``--sim-config`` with its defaults filled in."""

    rates: tuple[float, ...] = (0.0,) * len(RATE_FAULT_ORDER)  # in RATE_FAULT_ORDER
    abort_status: int | None = None  # the HTTP status an abort carries (None: a graceful one)
    retry_after: str | None = "1"  # HTTP 429's Retry-After header (None: none sent)
    crash_after_requests: int | None = None
    hang_after_requests: int | None = None
    missing_spec_keys: bool = False
    latency_s: float = 0.0
    reject_message: str | None = None
    crash_at_start: str | None = None  # the scheduler's last traceback line; None: no crash
    never_healthy: bool = False
    # A misconfigured or foreign server: these /server_info keys replace what the argv resolved
    # to (e.g. {attention_backend: flashinfer}, {model_path: ...}, {speculative_algorithm: null}).
    serve_instead: tuple[tuple[str, Any], ...] = ()
    foreign_requests: int = 0  # each of the first N requests is counted twice (another client)
    busy: bool = False  # one request of another client runs forever (never idle for a flush)
    exit_after_requests: int | None = None  # exit right after sending the N-th answer
    log_warning: str | None = None  # a line logged at start (a release's warning, e.g. a copy)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Faults:
        """Build from the (already validated) ``faults`` object."""
        rates = tuple(float(raw.get(f"{name}_rate") or 0.0) for name in RATE_FAULT_ORDER)
        return cls(
            rates=rates,
            abort_status=raw.get("abort_status"),
            retry_after=raw.get("retry_after", "1"),
            crash_after_requests=raw.get("crash_after_requests"),
            hang_after_requests=raw.get("hang_after_requests"),
            missing_spec_keys=bool(raw.get("missing_spec_keys")),
            latency_s=float(raw.get("latency_s") or 0.0),
            reject_message=raw.get("reject_message"),
            crash_at_start=_crash_message(raw.get("crash_at_start")),
            never_healthy=bool(raw.get("never_healthy")),
            serve_instead=tuple(sorted((raw.get("serve_instead") or {}).items())),
            foreign_requests=int(raw.get("foreign_requests") or 0),
            busy=bool(raw.get("busy")),
            exit_after_requests=raw.get("exit_after_requests"),
            log_warning=raw.get("log_warning"),
        )

    @property
    def any_rate(self) -> bool:
        """Whether any rate fault can fire (saves the hash when none can)."""
        return any(r > 0.0 for r in self.rates)


def _crash_message(value: Any) -> str | None:
    if not value:
        return None
    if isinstance(value, str):
        return value
    return "RuntimeError: simulated scheduler failure at start-up (crash_at_start)"


def rate_fault(faults: Faults, seed: int, prompt: str, attempt: int) -> str | None:
    """The rate fault that hits this request, or None."""
    if not faults.any_rate:
        return None
    units: tuple[float, ...] = hash_units(str(seed), "fault", prompt, str(attempt))
    units += hash_units(str(seed), "fault2", prompt, str(attempt))
    units += hash_units(str(seed), "fault3", prompt, str(attempt))
    for name, rate, u in zip(RATE_FAULT_ORDER, faults.rates, units, strict=False):
        if u < rate:
            return name
    return None


def stop_fault(faults: Faults, completed: int) -> str | None:
    """The stop fault due once ``completed`` requests were answered, or None."""
    if faults.crash_after_requests is not None and completed >= faults.crash_after_requests:
        return "crash_after_requests"
    if faults.hang_after_requests is not None and completed >= faults.hang_after_requests:
        return "hang_after_requests"
    return None
