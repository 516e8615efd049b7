"""A rerun judges a finished cell again under its own ``server.on_*`` policies.

Through the installed ``mtp-eval`` and the simulated server's ``foreign_requests`` fault (another
client's requests counted in the eval's window).
"""

from __future__ import annotations

import pytest

from tests.helpers.cells import result_of
from tests.helpers.proxied import FAST, mtp_eval

pytestmark = pytest.mark.integration
FOREIGN = "+server.simulated.faults.foreign_requests=5"


@pytest.mark.parametrize("fault_again", [True, False], ids=["still-crowded", "alone-now"])
def test_a_cell_finished_under_warn_is_judged_again_under_fail(tmp_path, fault_again):
    cell = tmp_path / "cell"
    first = mtp_eval(*FAST, FOREIGN, f"hydra.run.dir={cell}")
    assert first.returncode == 0, first.stdout + first.stderr
    assert result_of(cell).evals["mcq_sample"].accept.traffic.foreign > 0
    again = [*FAST, *([FOREIGN] if fault_again else []), "server.on_foreign_traffic=fail"]
    rerun = mtp_eval(*again, f"hydra.run.dir={cell}")
    assert "skipped, already finished" not in rerun.stdout
    result = result_of(cell)
    moved = list(tmp_path.glob("cell/samples.previous-*-foreign-traffic"))
    assert len(moved) == 1 and (moved[0] / "mcq_sample.jsonl").exists()  # never deleted
    assert f"its samples were moved to {moved[0].name}/" in rerun.stdout
    if fault_again:
        assert rerun.returncode != 0 and result.error.kind == "foreign_traffic"
        return
    assert rerun.returncode == 0 and result.status == "ok", result.error
    assert result.evals["mcq_sample"].accept.traffic.foreign == 0
    assert result.evals["mcq_sample"].resumed_samples == 0  # measured in a window of its own
