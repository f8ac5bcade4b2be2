"""Help › Tour: the demo store's stories walked in the real window, one step at a time."""
