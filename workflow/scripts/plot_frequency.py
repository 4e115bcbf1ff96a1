"""Rule plot_frequency: energy per rotary block, concentration, alignment, singular values."""
import matplotlib.pyplot as plt

from lengthgen import frequency
from lengthgen.jobs import start_job
from lengthgen.plots.frequency import plot_frequency
from lengthgen.tables import read_table

start_job(snakemake.log[0], snakemake.threads)
plt.style.use(snakemake.input.style)
inputs = snakemake.input
plot_frequency(read_table(inputs.blocks, "frequency_blocks"), read_table(inputs.summary, "frequency_summary"),
               read_table(inputs.singular, "frequency_singular_values"), snakemake.params.train_length_max,
               frequency.MIN_TOP4_SHARE, frequency.MIN_TOP4_ALIGNMENT, snakemake.output[0], snakemake.params.dpi)
