"""Mandarin frontend."""
