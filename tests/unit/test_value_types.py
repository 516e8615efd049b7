"""A command-line value of the wrong type, found before Hydra composes: the key, the type it takes
and a value it takes, in one line (``pipeline.config.value_types``)."""

from __future__ import annotations

import pytest

from pipeline.cli.probe import ProbeRootConf
from pipeline.config.schema import RootConf
from pipeline.config.value_types import value_problem


@pytest.mark.parametrize(
    ("override", "said"),
    [
        ("evals.mcq_sample.repeats=two", "evals.mcq_sample.repeats=two: 'two' is not an integer; "
         "evals.mcq_sample.repeats takes an integer, e.g. evals.mcq_sample.repeats=1"),
        ("skip_softmax.prefill=abc", "skip_softmax.prefill=abc: 'abc' is not a number; "
         "skip_softmax.prefill takes a number or null, e.g. skip_softmax.prefill=0.5"),
        ("skip_softmax.prefill=0,abc", "'abc' is not a number"),  # a sweep: each value
        ("skip_softmax.prefill=choice(1e6,x)", "'x' is not a number"),
        ("client.concurrency=1.5", "1.5 is not an integer; client.concurrency takes an integer"),
        ("evals.mcq_sample.repeats=null", "null is not allowed; evals.mcq_sample.repeats takes"),
        ("+model.tp=two", "'two' is not an integer; model.tp takes an integer"),
        ("dry_run=maybe", "'maybe' is not true or false; dry_run takes true or false"),
        ("speed.prefill_tokens=1024", "1024 is not a list; speed.prefill_tokens takes a list, "
         "each an integer, e.g. speed.prefill_tokens=[1024,4096,16384,65536,131072]"),
        ("speed.prefill_tokens=[1024,x]", "'x' is not an integer"),
        # accepted as Hydra accepts them, or left to Hydra
        ("skip_softmax.prefill=1e6", None),
        ("skip_softmax.prefill=0,0.5,null", None),
        ("evals.mcq_sample.repeats='4'", None),  # OmegaConf converts a quoted number
        ("evals.mcq_sample.repeats=range(1,4)", None),
        ("evals.mcq_sample.repeats=${client.concurrency}", None),  # resolved later
        ("skip_softmax.prefill=interval(0,1)", None),
        ("~skip_softmax.prefill", None),
        ("server.simulated.sglang_version=0.5.23", None),  # a string takes any scalar
        ("+server.env.MY_FLAG=1", None),  # an open map: any value
        ("backnd=fa3", None),  # an unknown key: schema_keys names it
        ("skip_softmax.prefill=f(1)", None),  # Hydra's syntax error: Hydra names it
    ],
)  # fmt: skip
def test_a_value_of_the_wrong_type_names_the_key_the_type_and_an_example(override, said):
    found = value_problem(override, RootConf)
    assert (found is None) if said is None else (found is not None and said in found), found


def test_the_probe_reads_its_own_schema():
    assert value_problem("skip_softmax.prefill=abc", ProbeRootConf) is not None
    assert value_problem("dry_run=maybe", ProbeRootConf) is None  # no such key in the probe's
