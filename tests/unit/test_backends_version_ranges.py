from __future__ import annotations

import pytest

from backends.version_ranges import VersionError, in_range, parse_version


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("0.5.17", "0.5.19"),
        ("0.5.19", "0.5.20"),
        ("0.5.20", "0.5.23"),
        ("0.5.9", "0.5.10"),  # numeric, not lexicographic
        ("0.5.23rc1", "0.5.23"),
        ("0.5.23.dev0", "0.5.23rc0"),
        ("0.5.23", "0.5.23.post1"),
        ("0.5.23", "0.6"),
    ],
)
def test_ordering(lower: str, higher: str) -> None:
    assert parse_version(lower) < parse_version(higher)


@pytest.mark.parametrize(
    ("a", "b"), [("0.5.23", "v0.5.23"), ("0.5.23", "0.5.23+cu130"), ("0.5", "0.5.0")]
)
def test_equal_spellings(a: str, b: str) -> None:
    assert parse_version(a) == parse_version(b)


@pytest.mark.parametrize("text", ["", "latest", "0.5.x", "five"])
def test_bad_version_names_the_fix(text: str) -> None:
    with pytest.raises(VersionError, match="sglang_version"):
        parse_version(text)


@pytest.mark.parametrize(
    ("version", "since", "until", "inside"),
    [
        ("0.5.19", None, "0.5.23", True),
        ("0.5.23", None, "0.5.23", False),
        ("0.5.23rc2", None, "0.5.23", True),
        ("0.5.17", "0.5.19", None, False),
        ("0.5.19", "0.5.19", "0.5.20", True),
        ("0.5.20", "0.5.19", "0.5.20", False),
        ("0.5.23", None, None, True),
    ],
)
def test_in_range(version: str, since: str | None, until: str | None, inside: bool) -> None:
    assert in_range(parse_version(version), since, until) is inside
