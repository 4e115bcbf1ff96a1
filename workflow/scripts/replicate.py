"""Rule replication: every check of this run beside the confirmation runs', the replication verdicts, and why."""
from lengthgen.studies.confirmation import replication
from lengthgen.runtime.job import start_job
from lengthgen.studies.confirmation import section as prose
from lengthgen.checks.rule_history import history_markdown
from lengthgen.tables.core import ALL_CLAIMS
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import atomic_write_text, read_table, write_table

job = start_job(snakemake.log[0])
inputs, params, output = snakemake.input, snakemake.params, snakemake.output
runs = {replication.EXPLORATORY: (read_table(inputs.claims, ALL_CLAIMS), read_table(inputs.spread, CLAIM_SPREAD))}
for run, claims, spread in zip(params.runs, inputs.run_claims, inputs.run_spreads):
    runs[run["name"]] = (read_table(claims, ALL_CLAIMS), read_table(spread, CLAIM_SPREAD))
checks = replication.annotated_checks(runs)
comparison = replication.compare_runs(checks, {run["name"]: run["same_task"] for run in params.runs})
claims = replication.claim_replication(checks, comparison)
write_table(replication.replication_table(checks, comparison, claims), output.table, REPLICATION)
section = prose.section(checks, comparison, claims, params.runs, params.exploratory, params.rules, params.rule_files,
                        history_markdown())
atomic_write_text(section, output.section)
job.finish()
