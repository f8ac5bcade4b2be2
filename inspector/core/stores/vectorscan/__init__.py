"""Exact flat vector search for many queries in one streamed pass (sweeps): LanceDB's own
float32 arithmetic (`kernels`, compiled by numba in `kernels_jit` when installed), the
scan (`scan`) and its split over a Ray cluster (`on_ray`). Read-only."""
