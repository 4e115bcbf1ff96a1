"""Rule analyze_base: summary over seeds, the base claim's checks, its RESULTS.md section."""
from lengthgen.base import section_markdown, summarize_accuracy
from lengthgen.claims import base_checks
from lengthgen.jobs import start_job
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0], snakemake.threads)
params = snakemake.params
accuracy = read_table(snakemake.input.accuracy, "accuracy_by_length")
summary = summarize_accuracy(accuracy[accuracy["experiment"] == "base"])
checks = base_checks(summary, params.vocab_size, params.train_length_max)
write_table(summary, snakemake.output.summary, "accuracy_summary")
write_table(checks, snakemake.output.claims, "claims")
atomic_write_text(section_markdown(summary, checks, params.vocab_size), snakemake.output.section)
