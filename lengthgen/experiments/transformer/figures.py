"""Figures of the transformer experiment: its shift equivariance (``transformer_shift``, the
supplement's name), and its accuracy by position with its steps (found and predicted), the retrieving heads
and their carriers (``transformer``)."""

import matplotlib.pyplot as plt
import pandas as pd

from lengthgen.plots import encoding_color
from lengthgen.experiments.shift.figures import change_panel
from lengthgen.experiments.transformer.summaries import retrieving, same_heads_at_init


def draw(tables: dict[str, pd.DataFrame], settings: dict) -> dict:
    task = settings["task"]
    return {"transformer_shift": plot_transformer_shift(tables["transformer_shift_changes"]),
            "transformer": plot_transformer(tables["transformer_by_position"], tables["transformer_heads"],
                                            tables["transformer_blocks"], tables["transformer_carrier"],
                                            tables["transformer_untrained_carrier"], tables["transformer_steps"],
                                            tables["transformer_step_predictions"],
                                            task["vocab_size"], task["train_length_max"])}


def plot_transformer_shift(changes: pd.DataFrame):
    """Output-logit (the claim's) and attention-logit change vs shift, one row per offset."""
    offsets = sorted(changes["offset"].unique())
    fig, axes = plt.subplots(len(offsets), 2, figsize=(15, 4.6 * len(offsets)), squeeze=False, layout="constrained")
    for row, offset in zip(axes, offsets):
        cells = changes[changes["offset"] == offset]
        change_panel(row[0], cells, "output_logit_change", f"K={offset}: output logits (the claim)", rules=True)
        change_panel(row[1], cells, "attention_logit_change", f"K={offset}: attention logits, every layer and head",
                     rules=False)
    fig.legend(*axes[0][0].get_legend_handles_labels(), fontsize="small", loc="outside right center")
    fig.suptitle("transformer shift equivariance: solid float64, dashed float32; bold max over seeds, thin each seed")
    return fig


def _mark_steps(ax, steps: pd.DataFrame, predictions: pd.DataFrame, train_length_max: int) -> None:
    """A vertical line at each rope step past the range (solid) and at each step a strongest head's kernel
    predicts (dashed), each with its seed at the top."""
    found = steps[(steps["pe"] == "rope") & (steps["position"] >= train_length_max)]
    predicted = predictions[predictions["predicted_step"].notna()]
    for (positions, seeds), style, label in (
            ((found["position"], found["seed"]), "-", "rope step found (a drop of a window's accuracy)"),
            ((predicted["predicted_step"], predicted["seed"]), "--", "step the strongest head's kernel predicts")):
        for index, (position, seed) in enumerate(zip(positions, seeds)):
            ax.axvline(int(position), color="k", ls=style, lw=0.9, alpha=0.7, label=label if index == 0 else None)
            ax.annotate(f"s{seed}", (int(position), 1.0), xycoords=("data", "axes fraction"), fontsize="x-small",
                        ha="left", va="top", rotation=90)


def _accuracy_panel(ax, by_position: pd.DataFrame, steps: pd.DataFrame, predictions: pd.DataFrame,
                    vocab_size: int, train_length_max: int) -> None:
    """Accuracy at every position of the longest evaluation length: mean over seeds (bold), each seed (thin),
    and the rope steps, found and predicted (``_mark_steps``)."""
    longest = by_position[by_position["length"] == by_position["length"].max()]
    ax.axvspan(longest["position"].min(), train_length_max - 1, color="0.9", zorder=0,
               label="positions seen in training")
    for pe, runs in longest.groupby("pe", sort=True):
        color = encoding_color(pe)
        for _, run in runs.groupby("seed"):
            ax.plot(run["position"], run["accuracy"], color=color, lw=0.4, alpha=0.35)
        mean = runs.groupby("position")["accuracy"].mean()
        ax.plot(mean.index, mean.to_numpy(), color=color, lw=1.2,
                label=f"{pe} (mean over {runs['seed'].nunique()} seeds)")
    ax.axhline(1 / vocab_size, color="k", ls="--", lw=1, label="chance")
    _mark_steps(ax, steps, predictions, train_length_max)
    ax.set_xscale("log", base=2)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(f"position t (sequences of length {int(longest['length'].max())})")
    ax.set_ylabel("accuracy at t")


def _heads_panel(ax, heads: pd.DataFrame, carrier: pd.DataFrame, offset: int) -> None:
    """Mean attention weight of every (seed, layer, head) at each offset delta; the retrieving heads marked."""
    table = heads.pivot_table(index=["seed", "layer", "head"], columns="delta", values="mean_weight")
    image = ax.imshow(table.to_numpy(), aspect="auto", cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
    marked = set(retrieving(carrier)[["seed", "layer", "head"]].itertuples(index=False, name=None))
    ax.set_yticks(range(len(table)), [f"s{s} L{l} H{h}" + (" *" if (s, l, h) in marked else "")
                                      for s, l, h in table.index], fontsize="x-small")
    ax.axvline(offset, color="w", ls=":", lw=1)
    ax.set_xlabel("offset delta = query - key position")
    ax.set_title(f"K={offset}: mean attention at each offset (rope; * retrieves)", fontsize="medium")
    plt.colorbar(image, ax=ax, fraction=0.04)


def _blocks_panel(ax, blocks: pd.DataFrame, carrier: pd.DataFrame, untrained: pd.DataFrame, offset: int) -> None:
    """Energy share per rotary block of every retrieving head, with its top-4 share (and the same head's at init,
    ``untrained``) and alignment."""
    keys = ["seed", "layer", "head"]
    at_init = same_heads_at_init(carrier, untrained).set_index(keys)["top4_share"]
    judged = retrieving(carrier).set_index(keys)
    for key, head in blocks.groupby(keys, sort=True):
        if key not in judged.index:
            continue
        summary = judged.loc[key]
        ax.plot(head["block"], head["energy_share"], marker=".", alpha=0.7,
                label=f"seed {key[0]} L{key[1]} H{key[2]}: top-4 {summary['top4_share']:.2f} "
                      f"(at init {at_init[key]:.2f}), alignment {summary['top4_alignment']:.2f}")
    ax.set_yscale("log")
    ax.set_xlabel("rotary block i of the head (fastest first)")
    ax.set_ylabel("energy share A_i^2 / sum A^2")
    ax.set_title(f"K={offset}: carrier of each retrieving head", fontsize="medium")
    if ax.get_legend_handles_labels()[0]:  # below the panel: inside, it would cover the blocks' shares
        ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.2))


def plot_transformer(by_position: pd.DataFrame, heads: pd.DataFrame, blocks: pd.DataFrame, carrier: pd.DataFrame,
                     untrained: pd.DataFrame, steps: pd.DataFrame, predictions: pd.DataFrame, vocab_size: int,
                     train_length_max: int):
    """One column per offset: accuracy by position with the steps; each rope head's attention by offset; the
    carriers."""
    offsets = sorted(by_position["offset"].unique())
    fig, axes = plt.subplots(3, len(offsets), figsize=(6.5 * len(offsets), 13), squeeze=False, layout="constrained")
    for column, offset in zip(axes.T, offsets):
        _accuracy_panel(column[0], by_position[by_position["offset"] == offset], steps[steps["offset"] == offset],
                        predictions[predictions["offset"] == offset], vocab_size, train_length_max)
        column[0].set_title(f"K={offset}: accuracy by position")
        at_offset = carrier[carrier["offset"] == offset]
        _heads_panel(column[1], heads[heads["offset"] == offset], at_offset, offset)
        _blocks_panel(column[2], blocks[blocks["offset"] == offset], at_offset,
                      untrained[untrained["offset"] == offset], offset)
    # Every column's accuracy panel draws the same encodings: one legend, below the first, covering no curve;
    # the step lines' entries from whichever panels have them.
    handles = dict(zip(*reversed(axes[0][0].get_legend_handles_labels())))
    for ax in axes[0][1:]:
        handles.update({label: handle for handle, label in zip(*ax.get_legend_handles_labels())
                        if label not in handles})
    axes[0][0].legend(handles.values(), handles.keys(), fontsize="small", loc="upper center",
                      bbox_to_anchor=(0.5, -0.2), ncols=2)
    fig.suptitle("transformer on the full-sequence task")
    return fig
