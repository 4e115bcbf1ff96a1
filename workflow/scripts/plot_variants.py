"""Rule plot_variants: accuracy of every encoding by length, one panel per offset, with its class."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.variants import plot_variants
from lengthgen.schemas.core import ACCURACY_SUMMARY
from lengthgen.schemas.variants import VARIANTS_CLASSES
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
params = snakemake.params
plot_variants(read_table(snakemake.input.summary, ACCURACY_SUMMARY), read_table(snakemake.input.classes, VARIANTS_CLASSES),
              params.encodings, params.train_lengths, snakemake.output[0], params.dpi)
