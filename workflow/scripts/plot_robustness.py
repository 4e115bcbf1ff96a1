"""Rule plot_robustness: every evidence check of the robustness study at every point, coloured by its verdict."""
import matplotlib.pyplot as plt

from lengthgen.runtime.job import start_job
from lengthgen.plots import save_figure
from lengthgen.studies.robustness.figures import robustness_figure
from lengthgen.studies.robustness.tables import ROBUSTNESS_CHECKS
from lengthgen.tables.io import read_table

job = start_job(snakemake.log[0])
plt.style.use([snakemake.input.style, snakemake.params.style])
save_figure(robustness_figure(read_table(snakemake.input.table, ROBUSTNESS_CHECKS), list(snakemake.params.points)),
            snakemake.output[0])
job.finish()
