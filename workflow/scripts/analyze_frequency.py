"""Rule analyze_frequency: the rotary frequency decomposition of each trained RoPE head."""
import pandas as pd

from lengthgen import frequency
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.tables import atomic_write_text, write_table

start_job(snakemake.log[0], snakemake.threads)
params, output = snakemake.params, snakemake.output
per_head = [frequency.analyze_head(model, run["offset"], run["seed"], params.train_length_max)
            for run, model in load_models(params.runs, snakemake.input.models)]
blocks, summary, singular = (pd.concat(parts, ignore_index=True) for parts in zip(*per_head))
claims = frequency.claims_frequency(summary, frequency.MIN_TOP4_SHARE, frequency.MIN_TOP4_ALIGNMENT)
write_table(blocks, output.blocks, "frequency_blocks")
write_table(summary, output.summary, "frequency_summary")
write_table(singular, output.singular, "frequency_singular_values")
write_table(claims, output.claims, "claims")
atomic_write_text(frequency.section_markdown(summary, claims, params.train_length_max), output.section)
