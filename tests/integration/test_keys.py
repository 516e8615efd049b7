"""SGLang's two keys: ``--api-key`` on every call, ``--admin-api-key`` for ``/flush_cache``.

Against real simulated server processes (started by the pipeline, or by the test for
``server=external``): the key goes out on every call (the version query included), the admin
key opens ``/flush_cache``, every 401 says which key is missing for which endpoint, and neither
key reaches an output file or the console.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from evals.eval_conf import ClientConf
from pipeline.cell.job import run_cell
from pipeline.serving.keys import auth_hint
from tests.helpers.cells import compose_conf, console_script, external_sim, result_of

pytestmark = pytest.mark.integration
API_KEY = "sk-mtp-eval-test-9f8e7d6c5b4a"
ADMIN_KEY = "adm-mtp-eval-test-1a2b3c4d5e6f"
API_ENV, ADMIN_ENV = "MTP_EVAL_TEST_API_KEY", "MTP_EVAL_TEST_ADMIN_KEY"
KEYS = [f"client.api_key_env={API_ENV}", f"client.admin_api_key_env={ADMIN_ENV}"]
SERVER_KEYS = ["--api-key", API_KEY, "--admin-api-key", ADMIN_KEY]


def leaks(root, console: str = "") -> list[str]:
    found = [f"console: {k[:6]}" for k in (API_KEY, ADMIN_KEY) if k in console]
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [f"{path}: {k[:6]}" for k in (API_KEY, ADMIN_KEY) if k.encode() in data]
    return found


def test_both_keys_through_the_console_script_and_no_key_anywhere(tmp_path, fast_sim):
    env = {**os.environ, API_ENV: API_KEY, ADMIN_ENV: ADMIN_KEY}
    cell = tmp_path / "cell"
    run = subprocess.run(
        [console_script("mtp-eval"), *fast_sim, *KEYS, f"hydra.run.dir={cell}"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    result = result_of(cell)
    assert result.status == "ok", result.error
    argv = result.server_argv
    assert argv[argv.index("--api-key") + 1] == "***"
    assert argv[argv.index("--admin-api-key") + 1] == "***"  # the server really had both
    assert leaks(tmp_path, run.stdout + run.stderr) == []


@pytest.fixture
def keyed_server(tmp_path, fast_sim):
    """A running simulated server with both keys, and the overrides of a cell that uses it."""
    with external_sim(tmp_path, fast_sim, SERVER_KEYS) as url:
        yield [*fast_sim, "server=external", f"server.base_url={url}", "gpu=h200"]


def run_external(tmp_path, overrides, monkeypatch, api=API_KEY, admin=ADMIN_KEY):
    monkeypatch.setenv(API_ENV, api)
    monkeypatch.setenv(ADMIN_ENV, admin)
    return run_cell(compose_conf(overrides), tmp_path / "cell")


def test_external_server_every_call_carries_the_key(tmp_path, keyed_server, monkeypatch):
    # The version query (server.sglang_version unset) went out without the key before: 401.
    result = run_external(tmp_path, [*keyed_server, *KEYS], monkeypatch)
    assert result.status == "ok", result.error
    assert result.cell.sglang_version == "0.5.19"
    assert leaks(tmp_path / "cell") == []  # the external server's own log is not ours


@pytest.mark.parametrize(
    ("keys", "admin", "expected"),
    [
        ([], ADMIN_KEY, ["GET /server_info needs the server's --api-key", "client.api_key_env"]),
        (KEYS[:1], ADMIN_KEY,
         [f"POST /flush_cache refused the key from ${API_ENV}", "--admin-api-key",
          "client.admin_api_key_env"]),
        (KEYS, "adm-wrong-key-000",
         [f"POST /flush_cache refused the key from ${ADMIN_ENV}", "--admin-api-key"]),
    ],
    ids=["no_key", "no_admin_key", "wrong_admin_key"],
)  # fmt: skip
def test_each_401_names_the_key_and_the_endpoint(
    tmp_path, keyed_server, monkeypatch, keys, admin, expected
):
    result = run_external(tmp_path, [*keyed_server, *keys], monkeypatch, admin=admin)
    assert result.status == "failed"
    assert result.error.kind == "server_api"
    message = result.error.message
    assert "HTTP 401" in message and all(part in message for part in expected), message
    assert leaks(tmp_path / "cell") == []


@pytest.mark.parametrize(
    ("status", "path", "client", "expected"),
    [
        (404, "GET /server_info", ClientConf(), ""),
        (401, "GET /server_info", ClientConf(), "needs the server's --api-key"),
        (401, "GET /server_info", ClientConf(api_key_env="K"), "refused the key from $K"),
        (401, "POST /flush_cache", ClientConf(), "client.admin_api_key_env=THAT_VARIABLE"),
        (401, "POST /flush_cache", ClientConf(api_key_env="K"), "(set client.admin_api_key_env"),
        (401, "POST /flush_cache", ClientConf(admin_api_key_env="A"), "from $A: it must equal"),
    ],
)
def test_auth_hint_table(status, path, client, expected):
    hint = auth_hint(status, path, client)
    assert (expected in hint) if expected else hint == ""


def test_start_up_progress_masks_the_keys_sglang_logs(tmp_path, capsys):
    # SGLang logs its server_args, keys included; the progress line quotes the last log line.
    from pipeline.serving.server import HealthPolicy, ServerStartError, free_port, wait_healthy

    log = tmp_path / "server.log"
    log.write_text(f"server_args=ServerArgs(api_key='{API_KEY}', admin_api_key='{ADMIN_KEY}')\n")
    policy = HealthPolicy(0.6, 0.05, 0.1, report_every_s=0.1, secrets=(API_KEY, ADMIN_KEY))
    with pytest.raises(ServerStartError):
        wait_healthy(f"http://127.0.0.1:{free_port()}", policy, log_path=log)
    out = capsys.readouterr().out
    assert "last log line: server_args=ServerArgs(api_key='***', admin_api_key='***')" in out
    assert API_KEY not in out and ADMIN_KEY not in out
