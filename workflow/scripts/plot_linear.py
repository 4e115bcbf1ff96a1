"""Rule plot_linear: the linear control's accuracy, weights and kernels vs length."""
import matplotlib.pyplot as plt

from lengthgen import linear_control  # noqa: F401  (registers the linear table schemas)
from lengthgen.jobs import start_job
from lengthgen.plots.linear_control import plot_linear_control
from lengthgen.tables import read_table

start_job(snakemake.log[0], snakemake.threads)
plt.style.use(snakemake.input.style)
inputs, params = snakemake.input, snakemake.params
plot_linear_control(read_table(inputs.by_length, "linear_by_length"), read_table(inputs.kernels, "linear_kernel"),
                    read_table(inputs.dilution, "linear_kernel_dilution"),
                    read_table(inputs.comparison, "linear_kernel_comparison"), *params.train_lengths,
                    params.vocab_size, snakemake.output[0], params.dpi)
