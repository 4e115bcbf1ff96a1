"""Rule analyze_multiseed: headlines per run, summarized over seeds, and every claim in one table."""
import pandas as pd

from lengthgen.experiments import multiseed
from lengthgen.jobs import start_job
from lengthgen.schemas.core import ACCURACY_BY_LENGTH, ALL_CLAIMS, CLAIMS
from lengthgen.schemas.frequency import FREQUENCY_SUMMARY
from lengthgen.schemas.linear import LINEAR_BY_LENGTH
from lengthgen.schemas.mechanics import MECHANICS_BY_LENGTH
from lengthgen.schemas.multiseed import HEADLINE_BY_SEED, HEADLINE_SUMMARY
from lengthgen.schemas.prop1 import PROP1_PREDICTION
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.tables import atomic_write_text, read_table, read_tables, write_table

start_job(snakemake.log[0])
inputs, output, settings = snakemake.input, snakemake.output, snakemake.params.settings
sources = {kind.name: read_table(getattr(inputs, kind.name), kind)
           for kind in (ACCURACY_BY_LENGTH, MECHANICS_BY_LENGTH, PROP1_PREDICTION, FREQUENCY_SUMMARY, LINEAR_BY_LENGTH)}
sources[SHIFT_CHANGES.name] = read_tables(inputs.shift_changes, SHIFT_CHANGES)
by_seed = multiseed.headline_by_seed(sources, settings)
summary = multiseed.summarize_headlines(by_seed, settings)
checks = multiseed.claims_multiseed(summary)
write_table(by_seed, output.by_seed, HEADLINE_BY_SEED)
write_table(summary, output.summary, HEADLINE_SUMMARY)
write_table(checks, output.claims, CLAIMS)
every_check = pd.concat([read_tables(inputs.claims, CLAIMS), checks], ignore_index=True)
write_table(multiseed.all_claims(every_check), output.all_claims, ALL_CLAIMS)
atomic_write_text(multiseed.section_markdown(summary), output.section)
