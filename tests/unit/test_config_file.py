"""One way to fail for every config file read outside Hydra (backends.config_file)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from backends.config_file import (
    Check,
    ConfigFileError,
    check_record,
    checked,
    load_structured,
    read_mapping,
)


@dataclass(frozen=True)
class Inner:
    rate: float | None = checked(None, Check(0.0, 1.0))
    count: int = checked(1, Check(1))


@dataclass(frozen=True)
class Outer:
    kind: str = checked("a", Check(choices=("a", "b")))
    inner: Inner = field(default_factory=Inner)
    items: list[Inner] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"kin": "a"}, "f.yaml: unknown key kin; allowed: kind, inner, items, extra"),
        ({"inner": {"cnt": 2}}, "f.yaml: unknown key inner.cnt; allowed: rate, count"),
        ({"items": [{}, {"rat": 1}]}, r"unknown key items\[1\].rat"),
        ({"kind": "c"}, "f.yaml: kind = 'c'; use one of a, b"),
        ({"inner": {"rate": 1.5}}, r"f.yaml: inner.rate = 1.5 must be in \[0.0, 1.0\]"),
        ({"inner": {"count": 0}}, "f.yaml: inner.count = 0 must be >= 1"),
        ({"items": [{"count": 0}]}, r"items\[0\].count = 0 must be >= 1"),
        ({"inner": {"count": "many"}}, "f.yaml: inner.count = 'many' must be an integer"),
        ({"inner": {"count": True}}, "inner.count = True must be an integer"),
        ({"inner": None}, r"f.yaml: inner is empty \(null\); give it a value or leave"),
        ({"items": "x"}, "items = 'x' must be a list"),
        ([1, 2], "f.yaml: expected a mapping of Outer keys"),
    ],
)
def test_every_mistake_names_file_key_and_fix(raw: Any, message: str) -> None:
    with pytest.raises(ConfigFileError, match=message):
        load_structured(Outer, raw, "f.yaml")


def test_good_file_builds_the_dataclass_and_base_gives_defaults() -> None:
    built = load_structured(Outer, {"kind": "b", "items": [{"rate": 0.5}]}, "f.yaml")
    assert built == Outer(kind="b", items=[Inner(rate=0.5)])
    assert load_structured(Inner, None, "f.yaml", base=Inner(count=3)) == Inner(count=3)


def test_read_mapping(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    assert read_mapping(tmp_path / "empty.yaml") == {}
    (tmp_path / "bad.yaml").write_text("a: [unclosed\n")
    with pytest.raises(ConfigFileError, match=r"bad\.yaml: cannot read YAML"):
        read_mapping(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(ConfigFileError, match=r"list\.yaml: expected a mapping at the top level"):
        read_mapping(tmp_path / "list.yaml")


@dataclass(frozen=True)
class Row:
    key: Any
    count: int
    rate: float
    ok: bool


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"count": 1, "rate": 0.5, "ok": True}, "r.jsonl:3: key is missing"),
        ({"key": 1, "count": 1.0, "rate": 0.5, "ok": True}, "count = 1.0 must be an integer"),
        ({"key": 1, "count": True, "rate": 0.5, "ok": True}, "count = True must be an integer"),
        ({"key": 1, "count": 1, "rate": "x", "ok": True}, "rate = 'x' must be a number"),
        ({"key": 1, "count": 1, "rate": 0.5, "ok": 1}, "ok = 1 must be true or false"),
    ],
)
def test_a_data_row_fails_in_the_words_of_a_config_file(record: Any, message: str) -> None:
    with pytest.raises(ConfigFileError, match=message):
        check_record(Row, record, "r.jsonl:3")


def test_a_good_data_row_passes_with_keys_of_its_own() -> None:
    check_record(Row, {"key": None, "count": 2, "rate": 1, "ok": False, "extra": [1]}, "r")
