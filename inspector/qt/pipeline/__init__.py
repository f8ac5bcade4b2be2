"""The pipeline view: query bar, sliders, stage tables, funnel, plots, detail pane, expected
rows. Panels take the view-model and subscribe to its signals."""
