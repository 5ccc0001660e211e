"""English frontend."""
