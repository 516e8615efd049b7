"""Which SGLang release a cell is planned for (its compatibility rules depend on it)."""

from __future__ import annotations

import importlib.metadata

from pipeline import server_api
from pipeline.schema import ServerConf


def sglang_version(server: ServerConf) -> str:
    """The SGLang version of the server a cell will use.

    Order: ``server.sglang_version`` when set; the simulated server's imitated version; the
    running server's ``/server_info`` for ``server=external``; the installed ``sglang`` package.

    Raises:
        ValueError: nothing tells the version; the message says which key to set.
    """
    if server.sglang_version:
        return server.sglang_version
    if server.kind == "simulated":
        return server.simulated.sglang_version
    if server.kind == "external" and server.base_url:
        version = server_api.server_info(server.base_url.rstrip("/")).get("version")
        if isinstance(version, str):
            return version
    try:
        return importlib.metadata.version("sglang")
    except importlib.metadata.PackageNotFoundError as err:
        raise ValueError(
            "cannot tell which SGLang version to plan for: sglang is not installed here; set "
            "server.sglang_version=0.5.23 (or the version the server runs)"
        ) from err
