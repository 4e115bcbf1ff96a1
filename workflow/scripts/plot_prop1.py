"""Rule plot_prop1: predicted vs measured target attention and accuracy, for one offset."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.prop1 import plot_prop1
from lengthgen.schemas.prop1 import PROP1_PREDICTION
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
params = snakemake.params
comparison = read_table(snakemake.input.comparison, PROP1_PREDICTION)
plot_prop1(comparison, int(snakemake.wildcards.offset), params.vocab_size, *params.train_lengths,
           snakemake.output[0], params.dpi)
