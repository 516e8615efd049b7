"""The server side of an eval's counter window: open it, close it, judge its traffic.

Opening flushes the accept counters and snapshots ``/metrics``; closing reads the server's figures
and the counter deltas.

SGLang's ``/flush_cache`` only runs once the server is idle, so a server kept busy by another
client never opens a window: that gets a message naming the likely cause instead of SGLang's
"Timed out waiting for idle state.". Requests the server counted beyond what this pipeline sent
are another client's, whose tokens are in the server-level figures too.
"""

from __future__ import annotations

from backends.server_info import LATEST, ServerInfo, metric_total
from evals.sample_line import SampleJson
from pipeline.measuring.accept_stats import server_accept
from pipeline.measuring.accept_windows import Window, metric_deltas
from pipeline.results.accept_block import Traffic
from pipeline.results.cell_error import CellError
from pipeline.serving import server_api
from pipeline.serving.server import RunningServer

RUNNING = LATEST.metrics.running


class MeasureError(CellError):
    """Measuring stopped for a reason that fails the cell (``kind`` goes into result.json)."""


def open_window(
    server: RunningServer,
    api_key: str | None,
    idle_timeout_s: float,
    eval_name: str,
    admin_key: str | None = None,
) -> str | None:
    """Flush the server's accept counters and return the ``/metrics`` text before the eval.

    ``admin_key``: SGLang's ``--admin-api-key``, the only key ``/flush_cache`` takes when the
    server has one (else the API key opens it).

    Raises:
        MeasureError: ``server_busy`` when the server did not become idle in time.
        server_api.ServerApiError: the flush was refused (401/403: a key is missing or wrong),
            or nothing answers.
    """
    try:
        server_api.flush_cache(server.base_url, admin_key or api_key, idle_timeout_s)
    except server_api.ServerApiError as err:
        if err.status in (401, 403):
            raise  # a key, not a busy server: the caller's hint names it
        text = server_api.metrics_text(server.base_url, api_key)
        running = metric_total(text, RUNNING)
        if text is None and "HTTP" not in str(err):
            raise  # nothing answers: the caller tells a stopped server apart
        busy = f"{running:g} requests running per /metrics" if running is not None else str(err)
        raise MeasureError(
            "server_busy",
            f"the server did not become idle within server.idle_timeout_s={idle_timeout_s:g} s "
            f"before eval {eval_name} ({busy}): most likely another client is sending it "
            "requests (or a request is stuck). Use a server nobody else uses, stop the other "
            "client, or raise server.idle_timeout_s",
        ) from err
    return server_api.metrics_text(server.base_url, api_key)


def close_window(
    server: RunningServer, api_key: str | None, new: list[SampleJson], before: str | None
) -> tuple[Window, ServerInfo]:
    """The server's figures for the window that ``before`` opened, and its ``/server_info``."""
    after = server_api.metrics_text(server.base_url, api_key)
    deltas = metric_deltas(before, after)
    info = server_api.server_info(server.base_url, api_key)
    value, weighting = server_accept(info, deltas.verify_by_rank, new)
    return Window(new, value, deltas, weighting), info


def check_traffic(eval_name: str, traffic: Traffic | None, policy: str) -> None:
    """Fail on requests of another client in the window when ``policy`` is ``fail``.

    Raises:
        MeasureError: ``foreign_traffic``, with the numbers.
    """
    if policy != "fail" or traffic is None or not traffic.foreign:
        return
    raise MeasureError(
        "foreign_traffic",
        f"eval {eval_name}: the server counted {traffic.counted:g} requests, the pipeline "
        f"sent {traffic.sent} ({traffic.attempts} attempts): another client used the "
        "server during the eval, so its server-level figures are not this cell's "
        "(server.on_foreign_traffic=fail)",
    )
