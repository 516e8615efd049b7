"""Scripts run as `python -m benchmarks.live_h200.NAME` from the repository root."""
