"""Rule plot_prop1: predicted vs measured target attention and accuracy, for one offset."""
import matplotlib.pyplot as plt

from lengthgen import dilution  # noqa: F401  (registers the prop1 table schemas)
from lengthgen.jobs import start_job
from lengthgen.plots.dilution import plot_prop1
from lengthgen.tables import read_table

start_job(snakemake.log[0], snakemake.threads)
plt.style.use(snakemake.input.style)
params = snakemake.params
comparison = read_table(snakemake.input.comparison, "prop1_prediction")
plot_prop1(comparison, int(snakemake.wildcards.offset), params.vocab_size, *params.train_lengths,
           snakemake.output[0], params.dpi)
