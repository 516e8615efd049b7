"""The skip-softmax estimate of the fp32 reference on 2048-token inputs (seconds of CPU each).

Which inputs skip tiles and which never do, and how the skipped share and the error grow with the
threshold factor; the reference itself is checked against torch's attention in the unit tier.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from backends.probe.inputs import make_inputs  # noqa: E402
from backends.probe.probe_conf import InputProfile  # noqa: E402
from backends.probe.reference import reference, sample_blocks  # noqa: E402

pytestmark = pytest.mark.integration

HEADS = (4, 2, 64)
FACTORS = (1.0, 10.0, 100.0, 1000.0)


def _skip(profile, seqlen=2048, factors=FACTORS):
    x = make_inputs(profile, 1, seqlen, HEADS, seed=5)
    return reference(x, sample_blocks(seqlen, seqlen), factors, kv_tile=128)


def test_gaussian_inputs_never_skip():
    ref = _skip(InputProfile(logit_std=1.0))
    assert ref.tiles > 0
    assert all(ref.skip_fraction(f) == 0.0 for f in FACTORS)
    assert all(torch.equal(ref.emulated[f], ref.out) for f in FACTORS)


@pytest.mark.parametrize(
    ("profile", "factor", "at_least"),
    [
        (InputProfile(sink_logit=30.0, local_logit=12.0), 1.0, 0.8),
        (InputProfile(logit_std=1.5, sink_logit=22.0, local_logit=12.0), 100.0, 0.3),
        (InputProfile(sink_logit=14.0), 1000.0, 0.5),
    ],
)
def test_concentrated_inputs_skip(profile, factor, at_least):
    assert _skip(profile).skip_fraction(factor) >= at_least


def test_skipping_grows_with_the_factor_and_so_does_the_error():
    ref = _skip(InputProfile(logit_std=1.5, sink_logit=22.0, local_logit=12.0))
    fractions = [ref.skip_fraction(f) for f in FACTORS]
    errors = [float((ref.emulated[f] - ref.out).abs().max()) for f in FACTORS]
    assert fractions == sorted(fractions) and fractions[-1] > fractions[0]
    assert errors == sorted(errors) and errors[-1] > 0


def test_only_the_first_key_tile_survives_a_dominant_sink():
    # A sink so strong that every other tile falls under any threshold.
    ref = _skip(InputProfile(logit_std=0.1, sink_logit=60.0), seqlen=512, factors=(1000.0,))
    blocks, tiles_per_head = 512 // 64, sum(b * 64 // 128 + 1 for b in range(8))
    assert ref.tiles == 4 * tiles_per_head
    # Tile 0 of every block stays; everything else goes.
    assert ref.skipped[1000.0] == 4 * (tiles_per_head - blocks)
