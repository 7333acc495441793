"""Validation against a float64 numpy reference, and (later) the timing protocol and CSV output."""
