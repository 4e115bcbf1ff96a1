"""Rule plot_transformer: shift equivariance; accuracy by position, retrieval heads and their carriers."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.transformer import plot_transformer, plot_transformer_shift
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.schemas.transformer import (TRANSFORMER_BLOCKS, TRANSFORMER_BY_POSITION, TRANSFORMER_CARRIER,
                                           TRANSFORMER_HEADS)
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
inputs, params, output = snakemake.input, snakemake.params, snakemake.output
plot_transformer_shift(read_table(inputs.changes, SHIFT_CHANGES), output.shift, params.dpi)
plot_transformer(read_table(inputs.by_position, TRANSFORMER_BY_POSITION), read_table(inputs.heads, TRANSFORMER_HEADS),
                 read_table(inputs.blocks, TRANSFORMER_BLOCKS), read_table(inputs.carrier, TRANSFORMER_CARRIER),
                 params.vocab_size, params.train_length_max, output.accuracy, params.dpi)
