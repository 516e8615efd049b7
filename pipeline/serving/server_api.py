"""The few administrative calls the pipeline makes to an SGLang server (sync, stdlib HTTP).

What the answers mean (keys, endpoint names, Prometheus names) is ``backends.server_info``'s.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from backends.server_info import LATEST, ServerInfo
from pipeline.serving.waiting import announced_wait


class ServerApiError(RuntimeError):
    """An administrative endpoint answered with an error or with something that is not JSON.

    ``status`` is the HTTP status (None when nothing answered) and ``path`` the method and
    endpoint (``GET /server_info``), so that a 401 can name the key that endpoint needs.
    """

    def __init__(self, message: str, status: int | None = None, path: str = "") -> None:
        super().__init__(message)
        self.status, self.path = status, path


def _request(url: str, method: str, api_key: str | None, timeout_s: float) -> tuple[int, bytes]:
    req = urllib.request.Request(url, method=method)
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    try:
        with (
            announced_wait(f"{method} {url}", timeout_s),
            urllib.request.urlopen(req, timeout=timeout_s) as resp,
        ):
            return int(resp.status), resp.read()
    except urllib.error.HTTPError as err:
        return int(err.code), err.read()
    except OSError as err:
        raise ServerApiError(f"{method} {url}: {err}") from err


def get_json(
    base_url: str, path: str, api_key: str | None = None, timeout_s: float = 60.0
) -> dict[str, Any]:
    """GET ``path`` and parse the JSON object it returns."""
    status, body = _request(base_url + path, "GET", api_key, timeout_s)
    if status != 200:
        raise ServerApiError(
            f"GET {path} answered HTTP {status}: {body[:300]!r}", status, f"GET {path}"
        )
    try:
        data = json.loads(body)
    except ValueError as err:
        raise ServerApiError(f"GET {path} did not answer JSON: {body[:300]!r}") from err
    if not isinstance(data, dict):
        raise ServerApiError(f"GET {path} answered {type(data).__name__}, not a JSON object")
    return data


def server_info(base_url: str, api_key: str | None = None, timeout_s: float = 60.0) -> ServerInfo:
    """``/server_info`` parsed (``/get_server_info`` on servers that lack the new name).

    Only a 404 tries the next name: a refused key or a server that does not answer is raised
    at once (no second wait).
    """
    *older, last = LATEST.info_paths
    for path in older:
        try:
            return ServerInfo.parse(get_json(base_url, path, api_key, timeout_s))
        except ServerApiError as err:
            if err.status != 404:
                raise
    return ServerInfo.parse(get_json(base_url, last, api_key, timeout_s))


def flush_cache(base_url: str, key: str | None = None, timeout_s: float = 120.0) -> None:
    """Reset the server's accept counters (and its KV cache); waits for the server to be idle.

    Args:
        base_url: the server.
        key: SGLang's admin key when it runs with ``--admin-api-key`` (then only that key
            opens ``/flush_cache``), else its API key.
        timeout_s: how long the server may wait for running requests to finish.
    """
    status, body = _request(
        f"{base_url}/flush_cache?timeout={timeout_s:g}", "POST", key, timeout_s + 10
    )
    if status != 200:
        raise ServerApiError(
            f"POST /flush_cache answered HTTP {status}: {body[:300]!r}", status, "POST /flush_cache"
        )


def metrics_text(base_url: str, api_key: str | None = None) -> str | None:
    """Prometheus text from ``/metrics``, or None when metrics are off."""
    try:
        status, body = _request(base_url + "/metrics", "GET", api_key, 30.0)
    except ServerApiError:
        return None
    return body.decode("utf-8", errors="replace") if status == 200 else None
