"""Scripts run as `python -m benchmarks.live_h200.shapes.NAME` from the repository root."""
