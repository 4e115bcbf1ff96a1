"""Rule plot_replication: every check in every run, by the share of seed resamples in which it holds."""
import matplotlib.pyplot as plt

from lengthgen.runtime.job import start_job
from lengthgen.plots import save_figure
from lengthgen.studies.confirmation.figures import replication_figure
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.tables.io import read_table

job = start_job(snakemake.log[0])
plt.style.use([snakemake.input.style, snakemake.params.style])
save_figure(replication_figure(read_table(snakemake.input.table, REPLICATION)), snakemake.output[0])
job.finish()
