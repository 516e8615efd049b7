"""Scripts run as `python -m benchmarks.kernel_probe.NAME` from the repository root."""
