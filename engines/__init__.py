"""Engines of mixvox; each subpackage registers itself as a plugin."""
