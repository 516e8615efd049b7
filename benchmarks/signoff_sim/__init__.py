"""Monte Carlo checks of the sign-off rules, run by the benchmarks beside them and the tests.

``release_sim`` decides every replication with the report's own functions (``pipeline.stats``);
``simulation`` / ``requirements`` / ``threshold`` are the older comparison with TensorRT-LLM's
rule (``benchmarks/signoff_rules_comparison.py``). Nothing in ``pipeline`` imports them: they
live beside what runs them; the benchmark scripts and the tests import them as
``benchmarks.signoff_sim``.
"""
