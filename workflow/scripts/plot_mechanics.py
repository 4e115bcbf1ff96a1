"""Rule plot_mechanics: argmax positions, attention mass in range, attention maps."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.mechanics import plot_mechanics
from lengthgen.schemas.mechanics import MECHANICS_ARGMAX_HISTOGRAM, MECHANICS_ATTENTION_PROFILE, MECHANICS_BY_LENGTH
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
params, inputs = snakemake.params, snakemake.input
plot_mechanics(read_table(inputs.by_length, MECHANICS_BY_LENGTH),
               read_table(inputs.histogram, MECHANICS_ARGMAX_HISTOGRAM),
               read_table(inputs.profile, MECHANICS_ATTENTION_PROFILE), *params.train_lengths, snakemake.output[0],
               params.dpi)
