"""Node functions, one module per phase family."""
