"""Rule report: every page of the report (lengthgen.report.pages): RESULTS.md, a page per experiment and the
appendices, from the run's tables, its sections and, with confirmation runs, the replication."""
import datetime
from pathlib import Path

from lengthgen.report.claims_table import robustness_of_findings
from lengthgen.studies.drift import previous_changes_markdown
from lengthgen.runtime.job import start_job
from lengthgen.studies.confirmation.replication import SPREAD_KEY
from lengthgen.report.provenance import machine_description
from lengthgen.report.pages import render_pages, write_pages
from lengthgen.tables.core import ACCURACY_SUMMARY, ALL_CLAIMS, TRAINING_SUMMARY
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.studies.robustness.tables import ROBUSTNESS_CHECKS
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import read_table
from lengthgen.report.training import training_markdown

job = start_job(snakemake.log[0])
inputs, params = snakemake.input, snakemake.params
sections = {section: Path(path).read_text() for section, path in zip(params.sections, inputs.sections)}
claims = read_table(inputs.claims, ALL_CLAIMS)
spread = read_table(inputs.spread, CLAIM_SPREAD)
claims = claims.join(spread.drop(columns=SPREAD_KEY))  # row for row (rule all_claims)
replication, replication_section = None, None
if "replication_table" in inputs.keys():
    replication = read_table(inputs.replication_table, REPLICATION)
    replication_section = Path(inputs.replication_section).read_text()
robustness, robustness_section = None, None
if "robustness" in inputs.keys():
    robustness = robustness_of_findings(read_table(inputs.robustness, ROBUSTNESS_CHECKS), claims)
    robustness_section = Path(inputs.robustness_section).read_text()
changes = None
if "previous_claims" in inputs.keys():
    changes = previous_changes_markdown(Path(inputs.previous_claims), read_table(inputs.claims, ALL_CLAIMS),
                                        params.changes_note)
pages = render_pages(params.config, sections, claims, params.experiments, commit=params.commit,
                     date=datetime.date.today(), machine=machine_description(),
                     training=training_markdown(read_table(inputs.training, TRAINING_SUMMARY)), changes=changes,
                     left_out=params.left_out, replication=replication, replication_section=replication_section,
                     robustness=robustness, robustness_section=robustness_section,
                     accuracy=read_table(inputs.accuracy, ACCURACY_SUMMARY) if "accuracy" in inputs.keys() else None)
# The rule's outputs are these pages (results_pages.page_paths), in their order: the same set, or a bug.
if sorted(pages) != sorted(params.pages):
    raise RuntimeError(f"the pages rendered ({sorted(pages)}) are not the rule's outputs ({sorted(params.pages)})")
write_pages({output: pages[page] for page, output in zip(params.pages, snakemake.output)})
job.finish()
