"""The tuning dock: sweep heatmap, judgments, compare, pool map and receipts."""
