"""Rule analyze_base: summary over seeds, the base claim's checks and their seed spread, its RESULTS.md section."""
from lengthgen.bootstrap import seed_bootstrap
from lengthgen.experiments.base import base_checks, section_markdown, summarize_accuracy
from lengthgen.jobs import start_job
from lengthgen.schemas.core import ACCURACY_BY_LENGTH, ACCURACY_SUMMARY, CLAIMS
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
params = snakemake.params
accuracy = read_table(snakemake.input.accuracy, ACCURACY_BY_LENGTH)
accuracy = accuracy[accuracy["experiment"] == "base"]


def claims_of(accuracy):
    return base_checks(summarize_accuracy(accuracy), params.vocab_size, params.train_length_max)


summary, checks = summarize_accuracy(accuracy), claims_of(accuracy)
write_table(seed_bootstrap(claims_of, {"accuracy": accuracy}, **params.bootstrap), snakemake.output.spread, CLAIM_SPREAD)
write_table(summary, snakemake.output.summary, ACCURACY_SUMMARY)
write_table(checks, snakemake.output.claims, CLAIMS)
atomic_write_text(section_markdown(summary, checks, params.vocab_size), snakemake.output.section)
