"""The retrieval pipeline: parameters and presets, scope rules, fetching a pool (`pool`),
deriving every stage from it (`pipeline`), the blend formula, the trace and its outcome
vocabulary, the diagnosis, expected-row analysis, user input (`inputs`), and `live`, the one
session object that re-ranks live for the window and anything else."""
