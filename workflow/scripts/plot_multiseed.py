"""Rule plot_multiseed: every headline per offset, with each seed and the 95% interval."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.multiseed import plot_multiseed
from lengthgen.schemas.multiseed import HEADLINE_BY_SEED, HEADLINE_SUMMARY
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
plot_multiseed(read_table(snakemake.input.by_seed, HEADLINE_BY_SEED),
               read_table(snakemake.input.summary, HEADLINE_SUMMARY), snakemake.output[0], snakemake.params.dpi)
