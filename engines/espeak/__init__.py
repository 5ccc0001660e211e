"""espeak-ng engine."""
