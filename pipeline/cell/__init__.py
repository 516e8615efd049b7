"""The cell job: one cell end to end (``job.run_cell``), its guards, how it ends badly."""
