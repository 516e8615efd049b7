"""Load an eval's rows from the bundled data, the Hugging Face hub, a URL or a local file."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evals.eval_conf import DatasetConf
from evals.hub import cache_only, hub_unreachable, not_cached_message

DATA_DIR = Path(__file__).parent / "data"
_SUFFIXES = (".csv", ".jsonl", ".parquet")


class DatasetError(ValueError):
    """An eval's rows cannot be loaded; the message names the file, row, column and fix."""


def cache_dir() -> Path:
    """Where downloaded datasets are kept: ``$MTP_EVAL_CACHE`` or ``~/.cache/mtp-eval``."""
    return Path(os.environ.get("MTP_EVAL_CACHE") or Path.home() / ".cache" / "mtp-eval")


def load_rows(conf: DatasetConf, required: Sequence[str]) -> list[dict[str, Any]]:
    """Load, truncate and validate the rows of a dataset.

    Args:
        conf: where the rows come from (``source``: bundled | hf | url | file) and ``limit``.
        required: columns every row must have with a non-empty value.

    Returns:
        The first ``conf.limit`` rows (all when None), as dicts keyed by column.

    Raises:
        DatasetError: unknown source, unreadable file or row, missing column or empty value.
    """
    if conf.limit is not None and (isinstance(conf.limit, bool) or conf.limit < 1):
        raise DatasetError(f"dataset.limit={conf.limit!r}: use a positive integer or null (all).")
    loaders = {"bundled": _bundled, "hf": _hf, "url": _url, "file": _file}
    if conf.source not in loaders:
        raise DatasetError(
            f"dataset.source={conf.source!r} is unknown: use one of {', '.join(loaders)}."
        )
    where, rows = loaders[conf.source](conf)
    rows = rows[: conf.limit] if conf.limit is not None else rows
    if not rows:
        raise DatasetError(f"{where}: no rows. Check dataset.path / subset / split.")
    check_columns(rows, required, where)
    return rows


def check_columns(rows: Sequence[dict[str, Any]], required: Sequence[str], where: str) -> None:
    """Raise a DatasetError naming the first missing column or empty required value.

    Args:
        rows: loaded rows; row numbers in messages count from 1.
        required: the columns an eval needs.
        where: the file or dataset name used in messages.
    """
    missing = [c for c in required if c not in rows[0]]
    if missing:
        found = ", ".join(repr(k) for k in rows[0])
        raise DatasetError(
            f"{where}: missing column(s) {missing}; found {found}. Rename the columns or "
            f"choose an eval kind that matches this file."
        )
    for number, row in enumerate(rows, start=1):
        for column in required:
            value = row.get(column)
            if value is None or (isinstance(value, str) and not value.strip()):
                raise DatasetError(
                    f"{where}: row {number}, column {column!r} is empty or missing. Fill it in "
                    f"or remove the row."
                )


def _bundled(conf: DatasetConf) -> tuple[str, list[dict[str, Any]]]:
    path = DATA_DIR / conf.path
    if not path.is_file():
        names = sorted(p.name for p in DATA_DIR.iterdir() if p.suffix in _SUFFIXES)
        raise DatasetError(
            f"dataset.path={conf.path!r}: no such bundled file in {DATA_DIR}; bundled: {names}."
        )
    return str(path), read_file(path)


def _file(conf: DatasetConf) -> tuple[str, list[dict[str, Any]]]:
    path = Path(conf.path).expanduser()
    if not path.is_file():
        raise DatasetError(
            f"dataset.path={conf.path!r}: no such file (resolved to {path.resolve()})."
        )
    return str(path), read_file(path)


def read_file(path: Path) -> list[dict[str, Any]]:
    """Read a CSV, JSONL or Parquet file by its suffix.

    Args:
        path: the file.

    Returns:
        One dict per row.

    Raises:
        DatasetError: unsupported suffix or an unreadable row.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path)
    if suffix == ".jsonl":
        return _read_jsonl(path)
    if suffix == ".parquet":
        return _read_parquet(path)
    raise DatasetError(f"{path}: unsupported suffix {suffix!r}; use one of {list(_SUFFIXES)}.")


def _read_csv(path: Path) -> list[dict[str, Any]]:
    # utf-8-sig: spreadsheet exports often start with a byte-order mark.
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            rows = []
            for number, row in enumerate(reader, start=1):
                if None in row:  # more fields than the header has columns
                    raise DatasetError(
                        f"{path}: row {number} (line {reader.line_num}) has more fields than "
                        f"the header; quote fields that contain commas."
                    )
                rows.append(dict(row))
            return rows
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DatasetError(
            f"{path}: not readable as UTF-8 CSV ({exc}); re-save it as UTF-8."
        ) from exc


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 ({exc}); re-save it as UTF-8.") from exc
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{path}: line {line_no} is not valid JSON ({exc.msg}); fix or remove the line."
            ) from exc
        if not isinstance(row, dict):
            raise DatasetError(f"{path}: line {line_no} is not a JSON object; write one per line.")
        rows.append(row)
    return rows


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq  # heavy; only Parquet needs it

    try:
        return list(pq.read_table(path).to_pylist())
    except Exception as exc:  # pyarrow raises several unrelated types for a bad file
        raise DatasetError(f"{path}: not a readable Parquet file ({exc}).") from exc


def _url(conf: DatasetConf) -> tuple[str, list[dict[str, Any]]]:
    path = download(conf.path)
    return f"{conf.path} (cached at {path})", read_file(path)


def download(url: str) -> Path:
    """Download ``url`` once into the cache; later calls reuse the file.

    Args:
        url: http(s) or file URL; its last path segment keeps the suffix.

    Returns:
        The cached file.

    Raises:
        DatasetError: the download failed (the message names the URL and the offline fix).
    """
    name = url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "data"
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    target = cache_dir() / "datasets" / f"{digest}-{name}"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".part{os.getpid()}")
    try:
        with urllib.request.urlopen(url, timeout=60) as response, partial.open("wb") as out:
            out.write(response.read())
    except (OSError, ValueError) as exc:
        partial.unlink(missing_ok=True)
        raise DatasetError(
            f"dataset.path={url!r}: download failed ({exc}). Without internet, download it "
            f"elsewhere and use dataset.source=file with dataset.path=<local file>, or copy "
            f"it to {target}."
        ) from exc
    partial.replace(target)  # atomic: a half-written file is never taken for the dataset
    return target


def _hf(conf: DatasetConf) -> tuple[str, list[dict[str, Any]]]:
    import datasets  # heavy; only the hub source needs it

    where = f"HF dataset {conf.path!r} (subset={conf.subset!r}, split={conf.split!r})"
    token = os.environ.get("HF_TOKEN") or None
    # A local folder needs no hub; otherwise ask the hub once, quickly, before datasets
    # retries for ~23 s: out of reach, the cache alone answers (at once, either way).
    why = None if Path(conf.path).expanduser().exists() else hub_unreachable()
    try:
        with cache_only() if why is not None else contextlib.nullcontext():
            loaded = datasets.load_dataset(conf.path, conf.subset, split=conf.split, token=token)
    except Exception as exc:  # datasets raises many types; every one becomes a DatasetError
        if why is not None:
            hint = not_cached_message(conf.path, conf.subset, conf.split, why)
            raise DatasetError(f"{where}: {hint}") from exc
        raise DatasetError(f"{where}: {hf_fix_hint(exc, conf.path, token is not None)}") from exc
    return where, [dict(row) for row in loaded]


def hf_fix_hint(exc: Exception, path: str, has_token: bool) -> str:
    """Explain a ``datasets.load_dataset`` failure and the step that fixes it.

    Args:
        exc: the exception ``load_dataset`` raised.
        path: the dataset id.
        has_token: whether HF_TOKEN was set.

    Returns:
        The exception text followed by what to do.
    """
    text = f"{type(exc).__name__}: {exc}"
    if "gated" in text.lower() or type(exc).__name__ == "GatedRepoError":
        step = (
            "check that the token's account has been granted access"
            if has_token
            else ("export HF_TOKEN=<token> (create one at https://huggingface.co/settings/tokens)")
        )
        return (
            f"{text}. This dataset is gated: accept its terms at "
            f"https://huggingface.co/datasets/{path} while logged in, then {step}. Or use the "
            f"public CSV: evals=gpqa_diamond_csv."
        )
    if isinstance(exc, ConnectionError) or "offline" in text.lower():
        return (
            f"{text}. The hub is unreachable: run once with internet (and HF_TOKEN) to fill "
            f"the cache, then HF_DATASETS_OFFLINE=1 reads it offline; or use dataset.source=file."
        )
    return f"{text}. Check dataset.path, dataset.subset and dataset.split."
