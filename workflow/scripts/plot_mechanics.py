"""Rule plot_mechanics: argmax positions, attention mass in range, attention maps."""
import matplotlib.pyplot as plt

from lengthgen import mechanics
from lengthgen.jobs import start_job
from lengthgen.plots.mechanics import plot_mechanics
from lengthgen.tables import read_table

start_job(snakemake.log[0], snakemake.threads)
plt.style.use(snakemake.input.style)
params, inputs = snakemake.params, snakemake.input
plot_mechanics(read_table(inputs.by_length, mechanics.BY_LENGTH), read_table(inputs.histogram, mechanics.ARGMAX_HISTOGRAM),
               read_table(inputs.profile, mechanics.ATTENTION_PROFILE), *params.train_lengths, snakemake.output[0],
               params.dpi)
