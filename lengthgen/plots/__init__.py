"""Figures, one module per experiment; this module holds what they share.

Styling comes from ``workflow/matplotlibrc`` (an input of every figure rule), so a
style change reruns the figures and nothing else.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from lengthgen.tables import atomic_path  # noqa: E402

ENCODING_COLORS = {"rope": "tab:blue", "learned": "tab:red", "sinusoidal": "tab:green", "nope": "tab:gray"}


def encoding_color(pe: str) -> str:
    return ENCODING_COLORS.get(pe, f"C{sum(map(ord, pe)) % 10}")


def shade_training_range(ax, train_length_min: int, train_length_max: int) -> None:
    ax.axvspan(train_length_min, train_length_max, color="0.9", zorder=0, label="training range")


def save_figure(fig, path, dpi: int) -> None:
    """Save atomically as PNG and close, so a killed job leaves no half-written figure."""
    with atomic_path(path) as temp:
        fig.savefig(temp, dpi=dpi, format="png", metadata={"Software": None})
    plt.close(fig)
