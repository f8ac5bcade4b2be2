"""The engine on vector-indexed (ANN) tables: the exact ranking beside the approximate one
(`facet`: exact ranks, rows lost to the index, ANN recall) and expected rows lost to the index
(`expect`). Which cached depths a deep approximate fetch answers exactly is
`engine.index_rule`, which the pipeline itself reads."""
