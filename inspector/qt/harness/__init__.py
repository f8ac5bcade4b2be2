"""The visual harness: a gallery of the real window in named states (`python -m
inspector.qt.harness.gallery OUTDIR`) and the checks a machine can make on it."""
