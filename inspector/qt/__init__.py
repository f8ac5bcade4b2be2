"""The Qt window. Everything Qt lives in this subpackage; the engine in inspector.core knows none of it."""
