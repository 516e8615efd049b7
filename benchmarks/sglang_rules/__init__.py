"""Scripts run as `python -m benchmarks.sglang_rules.NAME` from the repository root."""
