"""The comparisons, one module per model family."""
