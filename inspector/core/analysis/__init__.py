"""Tuning over the engine: ranking metrics, judgments, ground truth without labels, parameter
sweeps, the minimum safe over-fetch, comparing two runs, the pool map, version diffs."""
