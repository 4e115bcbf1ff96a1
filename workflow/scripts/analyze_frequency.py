"""Rule analyze_frequency: the rotary frequency decomposition of each trained RoPE head."""
import pandas as pd

from lengthgen import rules
from lengthgen.experiments import frequency
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS
from lengthgen.schemas.frequency import FREQUENCY_BLOCKS, FREQUENCY_SINGULAR_VALUES, FREQUENCY_SUMMARY
from lengthgen.tables import atomic_write_text, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
per_head = [frequency.analyze_head(model, run["offset"], run["seed"], params.train_length_max)
            for run, model in load_models(params.runs, snakemake.input.models, params.head)]
blocks, summary, singular = (pd.concat(parts, ignore_index=True) for parts in zip(*per_head))
claims = frequency.claims_frequency(summary, rules.MIN_TOP4_SHARE, rules.MIN_TOP4_ALIGNMENT)
write_table(blocks, output.blocks, FREQUENCY_BLOCKS)
write_table(summary, output.summary, FREQUENCY_SUMMARY)
write_table(singular, output.singular, FREQUENCY_SINGULAR_VALUES)
write_table(claims, output.claims, CLAIMS)
atomic_write_text(frequency.section_markdown(summary, claims, params.train_length_max), output.section)
