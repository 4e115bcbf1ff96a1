"""Rule analyze_multiseed: headlines per run, summarized over seeds, and every claim in one table."""
import pandas as pd

from lengthgen import multiseed
from lengthgen.jobs import start_job
from lengthgen.tables import atomic_write_text, read_table, read_tables, write_table

start_job(snakemake.log[0], snakemake.threads)
inputs, output, settings = snakemake.input, snakemake.output, snakemake.params.settings
sources = {kind: read_table(getattr(inputs, kind), kind) for kind in
           ("accuracy_by_length", "mechanics_by_length", "prop1_prediction", "frequency_summary", "linear_by_length")}
sources["shift_changes"] = read_tables(inputs.shift_changes, "shift_changes")
by_seed = multiseed.headline_by_seed(sources, settings)
summary = multiseed.summarize_headlines(by_seed, settings)
checks = multiseed.claims_multiseed(summary)
write_table(by_seed, output.by_seed, "headline_by_seed")
write_table(summary, output.summary, "headline_summary")
write_table(checks, output.claims, "claims")
every_check = pd.concat([read_tables(inputs.claims, "claims"), checks], ignore_index=True)
write_table(multiseed.all_claims(every_check), output.all_claims, "all_claims")
atomic_write_text(multiseed.section_markdown(summary), output.section)
