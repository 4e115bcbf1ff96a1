"""Rule report: every page of the report (lengthgen.report.pages): RESULTS.md, a page per experiment and the
appendices, from the run's tables, its sections and every claim's judgments."""
import datetime
from pathlib import Path

from lengthgen.report.pages import render_pages
from lengthgen.report.provenance import machine_description
from lengthgen.report.training import training_markdown
from lengthgen.runtime.job import start_job
from lengthgen.studies.drift import previous_changes_markdown
from lengthgen.studies.judgments.tables import CLAIM_JUDGMENTS, CLAIM_SECONDARY
from lengthgen.tables.core import ACCURACY_SUMMARY, CLAIMS, TRAINING_SUMMARY
from lengthgen.tables.io import atomic_write_text, read_table

job = start_job(snakemake.log[0])
inputs, params = snakemake.input, snakemake.params
sections = {section: Path(path).read_text() for section, path in zip(params.sections, inputs.sections)}
judged = "judgments" in inputs.keys()  # without the multiseed experiment no claim is judged


def judgment_table(name, kind):
    return read_table(inputs[name], kind) if judged else kind.schema.empty_table().to_pandas()


changes = None
if "previous_claims" in inputs.keys():
    changes = previous_changes_markdown(Path(inputs.previous_claims), read_table(inputs.claims, CLAIMS),
                                        params.changes_note)
pages = render_pages(
    params.config, sections, read_table(inputs.claims, CLAIMS), params.experiments,
    judgments=judgment_table("judgments", CLAIM_JUDGMENTS),
    secondary=judgment_table("secondary", CLAIM_SECONDARY),
    commit=params.commit, date=datetime.date.today(), machine=machine_description(),
    training=training_markdown(read_table(inputs.training, TRAINING_SUMMARY)), changes=changes,
    left_out=params.left_out, pages=params.pages,
    robustness_section=Path(inputs.robustness_section).read_text() if "robustness_section" in inputs.keys() else None,
    accuracy=read_table(inputs.accuracy, ACCURACY_SUMMARY) if "accuracy" in inputs.keys() else None)
for page, output in zip(params.pages, snakemake.output):
    atomic_write_text(pages[page], output)
job.finish()
