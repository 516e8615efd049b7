"""The speed phase: shapes and prompts, timed prefill and decode on the cell's own server."""
