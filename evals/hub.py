"""The Hugging Face hub from a node that may have no internet: asked once, quickly.

``datasets.load_dataset`` on an offline node retries every request with back-off (about 23 s
per dataset, each retry line logged twice under Hydra) before it fails. One short request to
the hub's endpoint tells first whether it answers; when it does not, the dataset is read from
the local cache only (what ``HF_HUB_OFFLINE=1`` does), which fails at once when it is not
there, and the message says how to get it.
"""

from __future__ import annotations

import contextlib
import functools
import urllib.error
import urllib.request
from collections.abc import Iterator

HUB_PROBE_S = 5.0  # an endpoint that answers does so well within this; a dead one fails sooner


def offline_mode() -> bool:
    """Whether the user asked for the cache only (``HF_HUB_OFFLINE`` or ``HF_DATASETS_OFFLINE``)."""
    import datasets.config
    from huggingface_hub import constants

    return bool(constants.is_offline_mode() or datasets.config.HF_HUB_OFFLINE)


def hub_endpoint() -> str:
    """The hub the datasets library asks (``HF_ENDPOINT``, else https://huggingface.co)."""
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


@functools.cache
def _probe(endpoint: str) -> str | None:
    request = urllib.request.Request(endpoint, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=HUB_PROBE_S):
            return None
    except urllib.error.HTTPError:
        return None  # it answered: a status is an answer
    except (OSError, ValueError) as exc:  # URLError, refused, timeout, no route, no DNS
        return f"{endpoint} did not answer: {getattr(exc, 'reason', exc)}"


def hub_unreachable() -> str | None:
    """Why the hub cannot be asked from here, or None when it answers (asked once a process)."""
    if offline_mode():
        return "offline mode is on (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE)"
    return _probe(hub_endpoint())


@contextlib.contextmanager
def cache_only() -> Iterator[None]:
    """Load from the local cache only for the duration of the block, as ``HF_HUB_OFFLINE=1``."""
    import datasets.config
    from huggingface_hub import constants

    saved = (constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE)
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = saved


def not_cached_message(path: str, subset: str | None, split: str, why: str) -> str:
    """What to do when the hub is out of reach and the dataset is not in this node's cache."""
    import datasets.config

    args = ", ".join(repr(a) for a in (path, subset) if a is not None)
    return (
        f"not in this node's cache ({datasets.config.HF_DATASETS_CACHE}) and the hub cannot be "
        f"asked: {why}. To get it, on a machine with internet (HF_TOKEN set if the dataset is "
        f'gated) run: python -c "import datasets; datasets.load_dataset({args}, '
        f'split={split!r})", then copy its HF cache folder here or point HF_HOME at a shared '
        "one, and run again (it is then read offline); or save the rows to a file and use "
        "dataset.source=file dataset.path=<file>"
    )
