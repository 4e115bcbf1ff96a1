"""Rule judge_claims: every claim judged by its one rule in every condition (this run, confirmation runs, robustness
points), and its secondary statistics over seeds."""
from lengthgen.experiments.multiseed.tables import HEADLINE_BY_SEED
from lengthgen.runtime.job import start_job
from lengthgen.studies.judgments.judge import Condition, claim_judgments, secondary_statistics
from lengthgen.studies.judgments.tables import CLAIM_JUDGMENTS, CLAIM_SECONDARY
from lengthgen.tables.io import read_table, write_table

job = start_job(snakemake.log[0])
conditions = [Condition(**condition) for condition in snakemake.params.conditions]
tables = [read_table(path, HEADLINE_BY_SEED) for path in snakemake.input.by_seed]
write_table(claim_judgments(conditions, tables), snakemake.output.judgments, CLAIM_JUDGMENTS)
write_table(secondary_statistics(conditions, tables), snakemake.output.secondary, CLAIM_SECONDARY)
job.finish()
