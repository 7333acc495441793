"""Tuning: from a Tensile tuning config to benchmark results, winners, logic files and a library (``tensile-asm tune``)."""
