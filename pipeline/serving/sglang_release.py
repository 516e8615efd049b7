"""Which SGLang release a cell is planned for (its compatibility rules depend on it)."""

from __future__ import annotations

import importlib.metadata

from pipeline.results.cell_error import CellError
from pipeline.serving import server_api
from pipeline.serving.server_kind import ServerPlan


def sglang_version(plan: ServerPlan, api_key: str | None = None) -> str:
    """The SGLang version of the server a cell will use.

    Order: ``server.sglang_version`` when set; the simulated server's imitated version; the
    running server's ``/server_info`` for ``server=external`` (asked with ``api_key``, waiting
    at most ``server.external_timeout_s``); the installed ``sglang`` package.

    Raises:
        CellError: nothing tells the version (kind ``config``); the message says which key to set.
    """
    server, kind = plan.conf, plan.kind
    if server.sglang_version:
        return server.sglang_version
    if kind.simulated:
        return server.simulated.sglang_version
    if kind.external and server.base_url:
        base_url = server.base_url.rstrip("/")
        try:
            info = server_api.server_info(base_url, api_key, server.external_timeout_s)
        except server_api.ServerApiError as err:
            if err.status is not None:  # it answered: a refused key is explained by the caller
                raise
            raise server_api.ServerApiError(  # a refused connection fails at once: no "within"
                f"server=external: {base_url} did not answer GET /server_info: {err} (is the "
                f"server up at that URL? the wait is bounded by server.external_timeout_s="
                f"{server.external_timeout_s:g} s; asked for the SGLang version, or set "
                "server.sglang_version)"
            ) from err
        if info.version is not None:
            return info.version
    try:
        return importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError as err:
        raise CellError(  # the user's setting to make, not a bug: no exception name in front
            "config",
            "cannot tell which SGLang version to plan for: sglang is not installed here; set "
            "server.sglang_version=0.5.23 (or the version the server runs)",
        ) from err
