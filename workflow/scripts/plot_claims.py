"""Rule plot_claims: a forest plot per claim over every condition and K, and rope's accuracy at 32x over the
robustness settings."""
import matplotlib.pyplot as plt

from lengthgen.experiments.claims import CLAIMS
from lengthgen.plots import save_figure
from lengthgen.runtime.job import start_job
from lengthgen.studies.judgments.figures import forest_plot, statistic_plot
from lengthgen.studies.judgments.judge import rope_far_accuracy
from lengthgen.studies.judgments.tables import CLAIM_JUDGMENTS, CLAIM_SECONDARY
from lengthgen.tables.io import read_table

job = start_job(snakemake.log[0])
plt.style.use([snakemake.input.style, snakemake.params.style])
judgments = read_table(snakemake.input.judgments, CLAIM_JUDGMENTS)
secondary = read_table(snakemake.input.secondary, CLAIM_SECONDARY)
for claim, path in zip(CLAIMS, snakemake.output.claims):
    save_figure(forest_plot(claim, judgments, snakemake.params.conditions), path)
save_figure(statistic_plot(rope_far_accuracy(secondary, judgments), snakemake.params.robustness,
                           "rope's accuracy at 32x the training length (mean, 95% interval over seeds)",
                           "What moves rope's accuracy far past the range: each robustness setting",
                           chance=snakemake.params.chance),
            snakemake.output.longest)
job.finish()
