"""Entry point: ``python -m pipeline.simserver``."""

from __future__ import annotations

import sys

from pipeline.simserver.launcher import main

if __name__ == "__main__":
    sys.exit(main())
