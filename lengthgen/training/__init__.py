"""Training: the loop every model shares, Adam's fused step, and whether a model fits its range."""
