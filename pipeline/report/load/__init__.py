"""What the report reads: cell folders and samples, a sweep's expected jobs, policy, references."""
