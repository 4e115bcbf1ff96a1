"""Rule plot_linear: both arms of the linear control: accuracy, weights, convergence and kernels."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.linear import plot_linear_control
from lengthgen.schemas.linear import LINEAR_BY_LENGTH, LINEAR_COMPARISON, LINEAR_CONVERGENCE, LINEAR_CUTOFFS, LINEAR_KERNEL
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
inputs, params = snakemake.input, snakemake.params
plot_linear_control(read_table(inputs.by_length, LINEAR_BY_LENGTH), read_table(inputs.kernels, LINEAR_KERNEL),
                    read_table(inputs.comparison, LINEAR_COMPARISON), read_table(inputs.cutoffs, LINEAR_CUTOFFS),
                    read_table(inputs.convergence, LINEAR_CONVERGENCE), *params.train_lengths,
                    params.vocab_size, snakemake.output[0], params.dpi)
