"""Rule plot_cures: rope and learned heads under each cure, measured and predicted."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots.cures import plot_cures
from lengthgen.schemas.cures import CURES_BY_LENGTH, CURES_PREDICTION, CURES_RECOVERY
from lengthgen.tables import read_table

start_job(snakemake.log[0])
plt.style.use(snakemake.input.style)
inputs, params = snakemake.input, snakemake.params
plot_cures(read_table(inputs.by_length, CURES_BY_LENGTH), read_table(inputs.predictions, CURES_PREDICTION),
           read_table(inputs.recovery, CURES_RECOVERY), params.vocab_size, *params.train_lengths,
           snakemake.output[0], params.dpi)
