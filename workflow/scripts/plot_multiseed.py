"""Rule plot_multiseed: every headline per offset, with each seed and the 95% interval."""
import matplotlib.pyplot as plt

from lengthgen import multiseed  # noqa: F401  (registers the headline table schemas)
from lengthgen.jobs import start_job
from lengthgen.plots.multiseed import plot_multiseed
from lengthgen.tables import read_table

start_job(snakemake.log[0], snakemake.threads)
plt.style.use(snakemake.input.style)
plot_multiseed(read_table(snakemake.input.by_seed, "headline_by_seed"),
               read_table(snakemake.input.summary, "headline_summary"), snakemake.output[0], snakemake.params.dpi)
