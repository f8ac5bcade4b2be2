"""Memories kept outside LanceDB, written into a new LanceDB store the presets read (the
source is only read)."""
