"""The one engine (`flow`: pipelines of stages, the question and its answer) and what its
classic stages stand on: fetching a pool (`pool`) through the one pool source (`pools`), the
pool's parameters (`params`, the fetch request), scope rules (`scope`), tie rules (`ties`),
the blend formula (`blend`) and the index rule (`index_rule`)."""
