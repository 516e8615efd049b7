"""Speed, the report's side: ratios to the baseline, A/A bands, speed checks, costs, frontiers."""
