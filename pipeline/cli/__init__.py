"""The console entry points: ``mtp-eval``, ``mtp-eval-probe``, ``mtp-eval-signoff``."""
