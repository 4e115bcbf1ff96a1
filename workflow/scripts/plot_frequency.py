"""Rule plot_frequency: energy per rotary block, concentration, alignment, singular values."""
import matplotlib.pyplot as plt

from lengthgen import rules
from lengthgen.jobs import start_job
from lengthgen.plots.frequency import plot_frequency
from lengthgen.schemas.frequency import FREQUENCY_BLOCKS, FREQUENCY_SINGULAR_VALUES, FREQUENCY_SUMMARY
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
inputs = snakemake.input
plot_frequency(read_table(inputs.blocks, FREQUENCY_BLOCKS), read_table(inputs.summary, FREQUENCY_SUMMARY),
               read_table(inputs.singular, FREQUENCY_SINGULAR_VALUES), snakemake.params.train_length_max,
               rules.MIN_TOP4_SHARE, rules.MIN_TOP4_ALIGNMENT, snakemake.output[0], snakemake.params.dpi)
