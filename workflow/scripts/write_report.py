"""Rule report: RESULTS.md from the setup, every experiment's generated section and, with confirmation runs, the
replication section."""
import datetime
from pathlib import Path

from lengthgen.drift import previous_changes_markdown
from lengthgen.jobs import start_job
from lengthgen.report import machine_description, render_results
from lengthgen.table_schemas.core import ALL_CLAIMS, TRAINING_SUMMARY
from lengthgen.table_schemas.replication import REPLICATION
from lengthgen.table_schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_table
from lengthgen.training_report import training_markdown

start_job(snakemake.log[0])
inputs = snakemake.input
sections = {experiment: Path(path).read_text()
            for experiment, path in zip(snakemake.params.experiments, inputs.sections)}
claims = read_table(inputs.claims, ALL_CLAIMS)
spread = read_table(inputs.spread, CLAIM_SPREAD)
claims = claims.join(spread.drop(columns=["experiment", "section", "claim", "statistic", "offset"]))  # row for row (rule all_claims)
replication, replication_section, table = None, None, None
if "replication_table" in inputs.keys():
    table = read_table(inputs.replication_table, REPLICATION)
    replication = dict(zip(table["experiment"], table["replication"]))
    replication_section = Path(inputs.replication_section).read_text()
training = training_markdown(read_table(inputs.training, TRAINING_SUMMARY))
if "previous_claims" in inputs.keys():
    changes = previous_changes_markdown(Path(inputs.previous_claims), read_table(inputs.claims, ALL_CLAIMS),
                                        snakemake.params.changes_note)
    training = f"{training}\n\n{changes}"
text = render_results(snakemake.params.config, sections, claims, snakemake.params.commit, datetime.date.today(),
                      machine_description(), training, snakemake.params.left_out, replication, replication_section,
                      table)
atomic_write_text(text, snakemake.output[0])
