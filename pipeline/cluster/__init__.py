"""Cluster: SLURM jobs and the launcher, one cell over several nodes, GPUs per job and node."""
