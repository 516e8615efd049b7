"""Serving: start, stop and talk to the server; place it on GPUs and nodes; SLURM."""
