"""Rule plot_base: accuracy vs length, rope vs learned, one panel per offset."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.base import plot_base
from lengthgen.schemas.core import ACCURACY_SUMMARY
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
params = snakemake.params
summary = read_table(snakemake.input.summary, ACCURACY_SUMMARY)
plot_base(summary, params.vocab_size, *params.train_lengths, snakemake.output[0], params.dpi)
