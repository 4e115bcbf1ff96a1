"""Rule plot_<experiment>: its figures, drawn by lengthgen/experiments/<experiment>/figures.py from its tables."""
import matplotlib.pyplot as plt

from lengthgen.jobs import start_job
from lengthgen.plots import draw_figures

start_job(snakemake.log[0])
params = snakemake.params
plt.style.use([snakemake.input.style, params.style])
tables = {name: (getattr(snakemake.input, name), schema) for name, schema in params.schemas.items()}
draw_figures(params.experiment, tables, params.settings, dict(zip(params.figures, snakemake.output)))
