"""Rule report: RESULTS.md from the setup and every experiment's generated section."""
import datetime
from pathlib import Path

from lengthgen.jobs import start_job
from lengthgen.report import machine_description, render_results
from lengthgen.schemas.core import CLAIMS
from lengthgen.tables import atomic_write_text, read_tables

start_job(snakemake.log[0])
sections = {experiment: Path(path).read_text()
            for experiment, path in zip(snakemake.params.experiments, snakemake.input.sections)}
claims = read_tables(snakemake.input.claims, CLAIMS)
text = render_results(snakemake.params.config, sections, claims, snakemake.params.commit,
                      datetime.date.today(), machine_description())
atomic_write_text(text, snakemake.output[0])
