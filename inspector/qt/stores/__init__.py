"""Store features of the window: the open dialog, versions dock, newer-version notice, shape
suggestion and embedder picker."""
