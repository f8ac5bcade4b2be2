"""What keeps reading a store safe: no secret shown (redact), private copies that cannot be
mixed up (cache), SQLite read without side files (sqlite_ro), a pinned table whose
cleaned-up version is one clear sentence (guarded), and every file the tool writes kept out
of every store and off planted links (outputs)."""
