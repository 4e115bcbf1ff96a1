"""Rule report: RESULTS.md from the setup and every experiment's generated section."""
import datetime
from pathlib import Path

from lengthgen.jobs import start_job
from lengthgen.report import machine_description, render_results
from lengthgen.schemas.core import ALL_CLAIMS
from lengthgen.tables import atomic_write_text, read_table

start_job(snakemake.log[0])
sections = {experiment: Path(path).read_text()
            for experiment, path in zip(snakemake.params.experiments, snakemake.input.sections)}
claims = read_table(snakemake.input.claims, ALL_CLAIMS)
text = render_results(snakemake.params.config, sections, claims, snakemake.params.commit,
                      datetime.date.today(), machine_description(), snakemake.params.left_out)
atomic_write_text(text, snakemake.output[0])
