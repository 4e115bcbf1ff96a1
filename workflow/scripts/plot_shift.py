"""Rule plot_shift: largest logit change vs shift, per encoding and dtype, for one offset."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.shift import plot_shift
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
changes = read_table(snakemake.input.changes, SHIFT_CHANGES)
plot_shift(changes, int(snakemake.wildcards.offset), snakemake.output[0], snakemake.params.dpi)
