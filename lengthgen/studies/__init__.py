"""The studies that rerun the experiments: confirmation runs, robustness points, drift between runs."""
