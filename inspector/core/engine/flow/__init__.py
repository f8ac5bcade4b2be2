"""Pipelines as data: a retrieval system is a pipeline file of stages from a registry.

`question.Question` is what is asked, `question.ask` answers it, `spec` reads pipeline files,
`registry` holds the stage kinds (registered by `stages`), `runner` runs them and records each
stage, `answer` turns a run into JSON and text, `expect` explains expected rows.
"""
