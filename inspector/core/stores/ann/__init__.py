"""Vector (ANN) indexes: what a table's index is (`indexes`) and the demo's indexed table
(`demo`)."""

from inspector.core.stores.ann.indexes import IndexInfo, index_on, vector_indexes

__all__ = ["IndexInfo", "index_on", "vector_indexes"]
