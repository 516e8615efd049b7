"""Which fmha_v2 variants the probe compiles (the filter itself; FlashInfer is not imported)."""

from __future__ import annotations

import itertools

import pytest

from backends.probe.prune import _Itertools, private_workspace, wanted_variant

# The 11 lists FlashInfer 0.6.18's generate_jit_sources multiplies for SM90 warp-specialised
# kernels.
VARIANTS = [
    [90],
    ["bf16"],
    [32, 40, 48, 64, 80, 96, 104, 128, 160, 192, 256],
    [0],
    [True, False],  # logit soft-capping
    [True, False],  # softmax stats
    [False, True],  # skip-softmax
    [True, False],  # ALiBi
    [False],  # MLA
    ["q_paged_kv"],
    [None],
]


@pytest.mark.parametrize(
    ("combo", "wanted"),
    [
        ((90, "bf16", 128, 0, False, False, True, False, False, "q_paged_kv", None), True),
        ((90, "bf16", 128, 0, False, False, False, False, False, "q_paged_kv", None), True),
        ((90, "bf16", 64, 0, False, False, True, False, False, "q_paged_kv", None), False),
        ((90, "bf16", 128, 0, True, False, True, False, False, "q_paged_kv", None), False),
        ((90, "bf16", 128, 0, False, True, True, False, False, "q_paged_kv", None), False),
        ((90, "bf16", 128, 0, False, False, True, True, False, "q_paged_kv", None), False),
    ],
)
def test_wanted_variant(combo, wanted):
    assert wanted_variant(combo, 128) is wanted


@pytest.mark.parametrize("head_dim", [64, 128, 256])
def test_product_keeps_one_head_dim_with_and_without_skip(head_dim):
    kept = list(_Itertools(head_dim).product(*VARIANTS))
    assert len(list(itertools.product(*VARIANTS))) == 176
    assert [(c[2], c[6]) for c in kept] == [(head_dim, False), (head_dim, True)]


def test_other_products_and_names_pass_through():
    shim = _Itertools(128)
    assert list(shim.product([1, 2], "ab")) == list(itertools.product([1, 2], "ab"))
    assert shim.chain is itertools.chain


def test_private_workspace_is_below_the_base(tmp_path):
    assert private_workspace(str(tmp_path)) == str(tmp_path / "mtp-eval-probe-jit")
    assert private_workspace(None).endswith("mtp-eval-probe-jit")
    once = private_workspace(str(tmp_path))
    assert private_workspace(once) == once  # a probe started from the probe's cache stays there
