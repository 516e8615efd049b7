"""A GPU the server cannot confirm is unverified, with every kernel choice that rests on it.

Through the installed ``mtp-eval`` against a simulated server (which, as SGLang, reports
``device: cuda`` and no GPU name) started by the test: ``server=external`` with ``gpu=b200``.
"""

from __future__ import annotations

import pytest

from tests.helpers.cells import external_sim, result_of
from tests.helpers.proxied import FAST, mtp_eval

pytestmark = pytest.mark.integration


def test_gpu_b200_against_a_server_that_does_not_say_is_unverified(tmp_path):
    backend = "backend=trtllm_mha"  # its kernels are trtllm-gen on SM100 only
    with external_sim(tmp_path / "a", [*FAST, backend, "gpu=b200"], []) as url:
        overrides = [*FAST, backend, "server=external", f"server.base_url={url}", "gpu=b200"]
        run = mtp_eval(*overrides, f"hydra.run.dir={tmp_path}/c")
        strict = mtp_eval(*overrides, "server.on_unverified=fail", f"hydra.run.dir={tmp_path}/s")
    assert run.returncode == 0, run.stdout + run.stderr
    result = result_of(tmp_path / "c")
    unverified = {u.key: u for u in result.unverified}
    assert unverified["gpu"].requested == "NVIDIA B200 (SM100)"
    assert "does not report its GPU" in (unverified["gpu"].reason or "")
    phases = sorted(k for k in unverified if k.startswith("runs."))
    assert phases and all(unverified[k].requested == result.runs[k[5:]] for k in phases)
    assert "warning: unverified: gpu='NVIDIA B200 (SM100)'" in run.stdout
    assert strict.returncode != 0 and result_of(tmp_path / "s").error.kind == "unverified"


def test_a_gpu_this_host_simulates_itself_is_confirmed(tmp_path):
    run = mtp_eval(*FAST, f"hydra.run.dir={tmp_path}/c")
    assert run.returncode == 0, run.stdout + run.stderr
    assert not [u for u in result_of(tmp_path / "c").unverified if u.key == "gpu"]
