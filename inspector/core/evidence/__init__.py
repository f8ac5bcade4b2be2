"""What leaves the inspector for reviewers and CI: receipt bundles (JSON + self-contained
HTML with inline SVG), checks files and their assertions, and the CLI's text reports."""
