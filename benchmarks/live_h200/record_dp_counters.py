"""Record what a data-parallel SGLang server says about speculation, per DP rank (issue 43 item 2).

    python3 benchmarks/live_h200/record_dp_counters.py URL OUTDIR [REQUESTS]

Against a server started with ``--dp-size 2`` (or attention DP), after ``/flush_cache``: REQUESTS
(default 24) ``/generate`` calls, 8 at a time so both ranks get some, each reply's ``meta_info``
kept (``dp_rank``, ``spec_verify_ct``, ``completion_tokens``); then ``/server_info`` five times
(``internal_states`` is gathered in the order the ranks answer, SGLang 0.5.23
``managers/communicator.py``: does it move?) and ``/metrics``. Writes the raw bodies
(``replies.json``, ``server_info_<k>.json``, ``metrics.txt``) and ``summary.json``: each rank's
request-weighted accept length from the replies, each ``/server_info``'s per-state
``avg_spec_accept_length`` in its order, and the label sets of every ``sglang:spec_*`` series.
Those settle whether a state's figure can be tied to a rank and whether the server's accept
length over ranks equals the request-weighted one (pipeline/measuring/accept_stats.py).
Standard library only: it runs beside any SGLang on the GPU host.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

INFOS = 5  # /server_info readings, to see whether the states' order moves
SERIES = re.compile(r"^(sglang:spec_\w+)\{([^}]*)\}", re.MULTILINE)


def call(url: str, body: dict[str, Any] | None = None) -> bytes:
    """GET (no body) or POST JSON; the raw body (an HTTP error raises: the recording is void)."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as resp:
        raw: bytes = resp.read()
        return raw


def request(i: int) -> dict[str, Any]:
    """The i-th /generate body: a short prompt of its own, 64 new tokens, greedy."""
    text = f"Question {i}: count from {i} to {i + 20}, one number a line."
    return {"text": text, "sampling_params": {"max_new_tokens": 64, "temperature": 0.0}}


def per_rank(replies: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Requests, completion tokens, verify steps and their ratio per ``meta_info.dp_rank``."""
    ranks: dict[str, dict[str, float]] = {}
    for reply in replies:
        meta = reply.get("meta_info", {})
        rank = ranks.setdefault(str(meta.get("dp_rank")), {"requests": 0, "tokens": 0, "verify": 0})
        rank["requests"] += 1
        rank["tokens"] += meta.get("completion_tokens", 0)
        rank["verify"] += meta.get("spec_verify_ct", 0)
    for rank in ranks.values():
        rank["accept_length"] = rank["tokens"] / rank["verify"] if rank["verify"] else float("nan")
    return ranks


def index_weighted(states: list[Any], ranks: dict[str, dict[str, float]]) -> float | None:
    """The states' figures weighted by the verify steps of the rank of the same index."""
    weights = [ranks.get(str(i), {}).get("verify", 0.0) for i in range(len(states))]
    if not states or not all(isinstance(a, (int, float)) for a in states) or not sum(weights):
        return None
    return sum(a * w for a, w in zip(states, weights, strict=True)) / sum(weights)


def summarise(
    replies: list[dict[str, Any]], infos: list[dict[str, Any]], metrics: str
) -> dict[str, Any]:
    """What the recording shows (pure: the unit tests feed it bodies)."""
    ranks = per_rank(replies)
    tokens, verify = (
        sum(r["tokens"] for r in ranks.values()),
        sum(r["verify"] for r in ranks.values()),
    )
    states = [
        [s.get("avg_spec_accept_length") for s in info.get("internal_states", [])] for info in infos
    ]
    labels: dict[str, list[str]] = {}
    for name, label_text in SERIES.findall(metrics):
        labels.setdefault(name, []).append(label_text)
    return {
        "dp_size": infos[0].get("dp_size") if infos else None,
        "per_rank_from_replies": ranks,
        "request_weighted_accept_length": tokens / verify if verify else None,
        "states_in_order": states,
        # What accept_stats.server_accept makes of the first reading: state i taken as rank i,
        # weighted by rank i's verify steps (meta_info.dp_rank). Equal to the request-weighted
        # figure only if the states come in rank order and hold the same requests.
        "index_weighted_accept_length": index_weighted(states[0] if states else [], ranks),
        "spec_series_labels": labels,
    }


def main(argv: list[str]) -> int:
    """Record from ``argv[0]`` into ``argv[1]`` (``argv[2]`` requests)."""
    base, out = argv[0].rstrip("/"), Path(argv[1])
    count = int(argv[2]) if len(argv) > 2 else 24
    out.mkdir(parents=True, exist_ok=True)
    call(base + "/flush_cache", {})
    with ThreadPoolExecutor(8) as pool:
        replies = [
            json.loads(r)
            for r in pool.map(lambda i: call(base + "/generate", request(i)), range(count))
        ]
    (out / "replies.json").write_text(json.dumps(replies, indent=1) + "\n")
    infos = []
    for k in range(INFOS):
        raw = call(base + "/server_info")
        (out / f"server_info_{k}.json").write_bytes(raw)
        infos.append(json.loads(raw))
    metrics = call(base + "/metrics").decode()
    (out / "metrics.txt").write_text(metrics)
    summary = summarise(replies, infos, metrics)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"record_dp_counters: {count} requests, ranks {sorted(summary['per_rank_from_replies'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
