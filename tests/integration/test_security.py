"""Secrets never reach an output file; the server listens on loopback only."""

from __future__ import annotations

import json
import os

import psutil
import pytest

from pipeline.cell.job import run_cell
from pipeline.serving.keys import with_api_key
from pipeline.serving.server import managed_server
from tests.helpers.cells import compose_conf, processes_mentioning

pytestmark = pytest.mark.integration
API_KEY = "sk-mtp-eval-test-9f8e7d6c5b4a"
HF_TOKEN = "hf_mtpEvalTestToken0123456789"


def all_output_bytes(root):
    for path in root.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


def test_api_key_end_to_end_and_no_secret_in_any_output(tmp_path, fast_sim, monkeypatch):
    monkeypatch.setenv("MTP_EVAL_TEST_API_KEY", API_KEY)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    cell_dir = tmp_path / "cell"
    conf = compose_conf(
        [
            *fast_sim,
            "client.api_key_env=MTP_EVAL_TEST_API_KEY",
            "+server.env.MY_SERVICE_TOKEN=" + HF_TOKEN[::-1],
        ]
    )
    result = run_cell(conf, cell_dir)
    assert result.status == "ok", result.error
    argv = result.server_argv
    assert argv[argv.index("--api-key") + 1] == "***"  # passed to the server, masked on record
    assert result.provenance.server_env["MY_SERVICE_TOKEN"] == "***"
    log = (cell_dir / "server.log").read_text()
    assert "***" in log or "--api-key" not in log
    for path, data in all_output_bytes(cell_dir):
        for secret in (API_KEY, HF_TOKEN, HF_TOKEN[::-1]):
            assert secret.encode() not in data, f"{secret[:6]}... leaked into {path}"
    assert processes_mentioning(str(cell_dir)) == []


def test_without_the_key_the_server_refuses_and_the_cell_says_so(tmp_path, fast_sim):
    # The server is started with a key (via extra args), the client has none: 401 is not retried.
    result = run_cell(
        compose_conf(
            [*fast_sim, f"server.extra_args=[--api-key,{API_KEY}]", "client.max_retries=0"]
        ),
        tmp_path / "cell",
    )
    assert result.status == "failed"
    assert result.error.kind == "server_api"
    assert "401" in result.error.message and "client.api_key_env" in result.error.message


def test_key_written_into_the_config_is_refused():
    conf = compose_conf(["client.api_key=abcd1234"])
    with pytest.raises(ValueError, match="api_key_env"):
        with_api_key(conf)


def test_key_variable_must_be_set(monkeypatch):
    monkeypatch.delenv("MTP_EVAL_UNSET_VAR", raising=False)
    with pytest.raises(ValueError, match="MTP_EVAL_UNSET_VAR"):
        with_api_key(compose_conf(["client.api_key_env=MTP_EVAL_UNSET_VAR"]))


def test_server_listens_on_loopback_only(tmp_path, fast_sim):
    from pipeline.serving.server import HealthPolicy, free_port

    conf = compose_conf(fast_sim)
    assert conf.server.host == "127.0.0.1"
    port = free_port()
    key = tmp_path / "key.jsonl"
    key.write_text("")
    (tmp_path / "sim.json").write_text(
        json.dumps({"answer_key": str(key), "ledger": str(tmp_path / "l.jsonl")})
    )
    argv = [
        os.sys.executable,
        "-m",
        "pipeline.simserver",
        "--model-path",
        "m",
        "--port",
        str(port),
        "--sim-config",
        str(tmp_path / "sim.json"),
    ]
    with managed_server(
        argv,
        dict(os.environ),
        f"http://127.0.0.1:{port}",
        tmp_path / "log",
        HealthPolicy(20, 0.05, 0.5),
        5,
    ) as server:
        assert server.process is not None
        listening = [
            c.laddr
            for p in [psutil.Process(server.process.pid)]
            for c in p.net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN
        ]
        assert listening and all(addr.ip == "127.0.0.1" for addr in listening)
