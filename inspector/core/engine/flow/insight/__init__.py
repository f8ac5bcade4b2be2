"""What the engine says about a run beyond its rows: why a page is short and the smallest change
that fills it (diagnosis), where an expected row is lost and what returns it (expect), the rows
an ANN index lost (facet), and the search over a parameter's values they share (search)."""
