"""Rule plot_<experiment>: what a reader sees of it, from its tables: its figures (drawn by
lengthgen/experiments/<experiment>/figures.py) and its section text (lengthgen/experiments/<experiment>/section.py)."""
import matplotlib.pyplot as plt

from lengthgen.experiments.sections import write_section
from lengthgen.runtime.job import start_job
from lengthgen.plots import draw_figures, read_figure_tables

job = start_job(snakemake.log[0])
params = snakemake.params
plt.style.use([snakemake.input.style, params.style])
tables = read_figure_tables({name: (getattr(snakemake.input, name), schema) for name, schema in params.schemas.items()})
# Each gets its own copy of the tables: neither may see what the other changed in them.
write_section(params.experiment, {name: table.copy() for name, table in tables.items()}, snakemake.input.claims,
              params.settings, snakemake.output.section)
draw_figures(params.experiment, tables, params.settings, dict(zip(params.figures, snakemake.output.figures)))
job.finish()
