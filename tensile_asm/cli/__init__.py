"""Command-line entry points: tensile-asm, tensile-create-library (and tensile, with tuning)."""
