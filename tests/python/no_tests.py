"""A file pytest collects nothing from: the runner must report it as a failure (exit 5 -> 1)."""
