"""Rule plot_linear: the linear control's accuracy, weights and kernels vs length."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.linear import plot_linear_control
from lengthgen.schemas.linear import LINEAR_BY_LENGTH, LINEAR_KERNEL, LINEAR_KERNEL_COMPARISON, LINEAR_KERNEL_DILUTION
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
inputs, params = snakemake.input, snakemake.params
plot_linear_control(read_table(inputs.by_length, LINEAR_BY_LENGTH), read_table(inputs.kernels, LINEAR_KERNEL),
                    read_table(inputs.dilution, LINEAR_KERNEL_DILUTION),
                    read_table(inputs.comparison, LINEAR_KERNEL_COMPARISON), *params.train_lengths,
                    params.vocab_size, snakemake.output[0], params.dpi)
