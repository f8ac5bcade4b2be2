"""The engine, without Qt. Layers, each importing only those below it (import-linter checks):

- `evidence`: receipts, their HTML and SVG, checks for CI, text reports
- `analysis`: metrics, judgments, ground truth, sweeps, safe over-fetch, compare, pool map
- `engine`: parameters, presets, scope, fetch, the pipeline (derive/run), blend, trace,
  diagnosis, expected rows, and the LiveSession that re-ranks live
- `stores`: opening stores read-only (LanceDB local, s3://, db://; SQLite docs), roles, shapes,
  versions, embedders, the demo store
- `errors`, `jsonio`: shared by all
"""
