"""SGLang version strings: a small parser and half-open ranges, so rules can say "before 0.5.23".

Pre-releases sort before their release (``0.5.23rc1 < 0.5.23``), so a fix that lands in 0.5.23 is
not assumed in its release candidates; post-releases sort after it, local tags (``+cu130``) with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_VERSION_RE = re.compile(
    r"v?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[.-]?(?P<pre>a|b|rc|alpha|beta|dev)\.?(?P<pre_n>\d*))?"
    r"(?:[.-]?post\.?(?P<post>\d*))?"
    r"(?:\+[\w.]+)?",
    re.IGNORECASE,
)
_STAGE = {"dev": -4, "a": -3, "alpha": -3, "b": -2, "beta": -2, "rc": -1}


class VersionError(ValueError):
    """Raised for a version string that is not ``MAJOR.MINOR.PATCH[rcN|.postN]``."""


@dataclass(frozen=True, order=True)
class Version:
    """A comparable SGLang version."""

    release: tuple[int, ...]
    stage: int  # <0 pre-release, 0 release, 1 post-release
    stage_number: int
    text: str = field(compare=False)  # display only: 0.5.23 == v0.5.23

    def __str__(self) -> str:
        return self.text


def parse_version(text: str) -> Version:
    """Parse ``"0.5.19"``, ``"0.5.23rc1"``, ``"0.5.20.post1"`` or ``"v0.5.23+cu130"``.

    Args:
        text: The version string (as SGLang's ``/server_info`` ``version`` or a config value).

    Returns:
        A totally ordered ``Version``.

    Raises:
        VersionError: If the text is not a version.
    """
    match = _VERSION_RE.fullmatch(text.strip())
    if match is None:
        raise VersionError(
            f"SGLang version {text!r} is not MAJOR.MINOR.PATCH (e.g. '0.5.23'); "
            "fix server.sglang_version or --sglang-version"
        )
    release = tuple(int(part) for part in match.group("release").split("."))
    while len(release) > 1 and release[-1] == 0:  # 0.5.0 == 0.5
        release = release[:-1]
    if match.group("pre"):
        stage, number = _STAGE[match.group("pre").lower()], int(match.group("pre_n") or 0)
    elif match.group("post") is not None:
        stage, number = 1, int(match.group("post") or 0)
    else:
        stage, number = 0, 0
    return Version(release, stage, number, text.strip())


def in_range(version: Version, since: str | None, until: str | None) -> bool:
    """Whether ``since <= version < until`` (either bound may be open)."""
    if since is not None and version < parse_version(since):
        return False
    return until is None or version < parse_version(until)
