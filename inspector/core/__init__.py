"""The engine, without Qt. Layers, each importing only those below it (import-linter checks):

- `evidence`: receipts, their HTML and SVG, checks for CI, text reports
- `analysis`: metrics, judgments, ground truth, sweeps, safe over-fetch, compare, pool map
- `engine`: the one engine (`flow`: pipelines of stages from pipeline files, the question,
  its answer, diagnosis, expected rows, the index facet, and LiveFlow that re-runs live), and
  what its classic stages stand on: the pool source (`pool`, `pools`), the pool's parameters
  (`params`), scope rules, tie rules, the blend and the index rule
- `stores`: opening stores read-only (LanceDB local, s3://, db://; SQLite docs), roles, shapes,
  versions, embedders, the demo store
- `errors`, `jsonio`: shared by all
"""
