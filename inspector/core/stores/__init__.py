"""Opening stores read-only and knowing what they hold: LanceDB folders and URIs (`store`,
`remote`), SQLite docs files (`docs_source`, `docs_sqlite`, `docs_fts5`), one entry point for
both (`opening`), column roles, system shapes, versions, private full-text copies (`fts`),
embedders and the demo store. Nothing here knows the pipeline."""
