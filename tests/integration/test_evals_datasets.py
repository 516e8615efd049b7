from __future__ import annotations

import csv
import functools
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.datasets import DatasetError, hf_fix_hint, load_rows
from evals.eval_conf import DatasetConf

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
COLS = ["Question", "Correct Answer"]
ROWS = [{"Question": f"q{i}", "Correct Answer": f"a{i}", "Extra": str(i)} for i in range(1, 6)]


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    if path.suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_file_source_reads_every_format(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"rows{suffix}", ROWS)
    assert load_rows(DatasetConf(source="file", path=str(path)), COLS) == ROWS


@pytest.mark.parametrize(("limit", "expected"), [(None, 5), (2, 2), (10, 5)])
def test_limit_keeps_the_first_rows(tmp_path: Path, limit: int | None, expected: int) -> None:
    path = write(tmp_path / "rows.csv", ROWS)
    rows = load_rows(DatasetConf(source="file", path=str(path), limit=limit), COLS)
    assert rows == ROWS[:expected]


def test_bundled_sample_loads() -> None:
    rows = load_rows(DatasetConf(source="bundled", path="mcq_sample.csv", limit=3), COLS)
    assert len(rows) == 3 and all(r["Question"] for r in rows)


def test_csv_with_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "bom.csv"
    path.write_text("\ufeffQuestion,Correct Answer\nq,a\n", encoding="utf-8")
    assert load_rows(DatasetConf(source="file", path=str(path)), COLS) == [
        {"Question": "q", "Correct Answer": "a"}
    ]


BAD_CASES = [
    ("missing.csv", "Question\nq1\n", ["missing column(s) ['Correct Answer']", "Rename"]),
    (
        "empty_value.csv",
        "Question,Correct Answer\nq1,a1\nq2,a2\nq3, \n",
        ["row 3, column 'Correct Answer'", "Fill it in"],
    ),
    ("extra_field.csv", "Question,Correct Answer\nq1,a1\nq2,a,b\n", ["row 2 (line 3)", "quote"]),
    (
        "bad_json.jsonl",
        '{"Question": "q", "Correct Answer": "a"}\n{"Question": \n',
        ["line 2 is not valid JSON", "fix or remove"],
    ),
    ("not_object.jsonl", '["q", "a"]\n', ["line 1 is not a JSON object"]),
    (
        "missing_key.jsonl",
        '{"Question": "q", "Correct Answer": "a"}\n{"Question": "q2"}\n',
        ["row 2, column 'Correct Answer'"],
    ),
    ("rows.txt", "Question,Correct Answer\n", ["unsupported suffix '.txt'"]),
    ("header_only.csv", "Question,Correct Answer\n", ["no rows"]),
    ("latin1.csv", "Question,Correct Answer\nq\xe9,a\n", ["not readable as UTF-8", "re-save"]),
    ("broken.parquet", "not parquet", ["not a readable Parquet file"]),
]


@pytest.mark.parametrize(("name", "text", "fragments"), BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_bad_files_name_file_row_column_and_fix(
    tmp_path: Path, name: str, text: str, fragments: list[str]
) -> None:
    path = tmp_path / name
    path.write_bytes(text.encode("latin-1") if "latin1" in name else text.encode())
    with pytest.raises(DatasetError) as err:
        load_rows(DatasetConf(source="file", path=str(path)), COLS)
    message = str(err.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("conf", "fragment"),
    [
        (DatasetConf(source="nope"), "dataset.source='nope' is unknown"),
        (DatasetConf(source="bundled", path="absent.csv"), "bundled: ['mcq_sample.csv'"),
        (DatasetConf(source="file", path="/no/such/file.csv"), "no such file"),
        (DatasetConf(limit=0), "dataset.limit=0"),
    ],
)
def test_bad_config_is_named(conf: DatasetConf, fragment: str) -> None:
    with pytest.raises(DatasetError) as err:
        load_rows(conf, COLS)
    assert fragment in str(err.value)


@pytest.fixture
def http_dir(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "www"
    served.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", served
    server.shutdown()
    server.server_close()


def test_url_downloads_once_then_reads_the_cache(
    tmp_path: Path, http_dir: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MTP_EVAL_CACHE", str(tmp_path / "cache"))
    base, served = http_dir
    write(served / "gpqa.csv", ROWS)
    conf = DatasetConf(source="url", path=f"{base}/gpqa.csv")
    assert load_rows(conf, COLS) == ROWS
    (served / "gpqa.csv").unlink()  # a second load must not need the server
    assert load_rows(conf, COLS) == ROWS
    cached = list((tmp_path / "cache" / "datasets").iterdir())
    assert [p.name.endswith("-gpqa.csv") for p in cached] == [True]


def test_url_failure_says_how_to_work_offline(
    tmp_path: Path, http_dir: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MTP_EVAL_CACHE", str(tmp_path / "cache"))
    base, _ = http_dir
    with pytest.raises(DatasetError) as err:
        load_rows(DatasetConf(source="url", path=f"{base}/absent.csv"), COLS)
    assert "download failed" in str(err.value) and "dataset.source=file" in str(err.value)
    assert not list((tmp_path / "cache" / "datasets").iterdir())  # no partial file left


@pytest.mark.parametrize(
    ("message", "has_token", "fragments"),
    [
        (
            "Dataset 'Idavidrein/gpqa' is a gated dataset on the Hub.",
            False,
            [
                "accept its terms at https://huggingface.co/datasets/Idavidrein/gpqa",
                "export HF_TOKEN=",
            ],
        ),
        ("Dataset 'Idavidrein/gpqa' is a gated dataset on the Hub.", True, ["granted access"]),
        (
            "Couldn't reach 'Idavidrein/gpqa' on the Hub (OfflineModeIsEnabled)",
            False,
            ["HF_DATASETS_OFFLINE=1", "dataset.source=file"],
        ),
        ("BuilderConfig 'x' not found.", False, ["Check dataset.path, dataset.subset"]),
    ],
)
def test_hf_hints(message: str, has_token: bool, fragments: list[str]) -> None:
    exc = ConnectionError(message) if "reach" in message else FileNotFoundError(message)
    hint = hf_fix_hint(exc, "Idavidrein/gpqa", has_token)
    assert message in hint
    for fragment in fragments:
        assert fragment in hint


def run_hf(tmp_path: Path, path: str) -> subprocess.CompletedProcess[str]:
    """load_rows(source=hf) in a fresh interpreter, offline, with a private HF cache."""
    code = (
        "from evals.eval_conf import DatasetConf; from evals.datasets import load_rows;"
        f"print(load_rows(DatasetConf(source='hf', path={path!r}, split='train'), "
        "['Question', 'Correct Answer']))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("HF_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.integration
def test_hf_source_loads_through_datasets_offline(tmp_path: Path) -> None:
    folder = tmp_path / "local_dataset"
    folder.mkdir()
    write(folder / "train.csv", ROWS)
    done = run_hf(tmp_path, str(folder))
    assert done.returncode == 0, done.stderr
    assert "'Question': 'q5'" in done.stdout


@pytest.mark.integration
def test_hf_source_offline_without_cache_says_what_to_do(tmp_path: Path) -> None:
    done = run_hf(tmp_path, "Idavidrein/gpqa")
    assert done.returncode != 0
    assert "DatasetError: HF dataset 'Idavidrein/gpqa'" in done.stderr
    assert "not in this node's cache" in done.stderr and "offline mode is on" in done.stderr
    assert "datasets.load_dataset('Idavidrein/gpqa', split='train')" in done.stderr
