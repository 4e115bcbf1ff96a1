"""Rule analyze_frequency: the rotary frequency decomposition of each trained RoPE head."""
import pandas as pd

from lengthgen import rules
from lengthgen.bootstrap import seed_bootstrap
from lengthgen.experiments import frequency
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.frequency import (FREQUENCY_BLOCKS, FREQUENCY_SINGULAR_VALUES, FREQUENCY_SUMMARY,
                                         FREQUENCY_UNTRAINED_SUMMARY)
from lengthgen.tables import atomic_write_text, write_table
from lengthgen.training import init_head

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
per_head, at_init = [], []
for run, model in load_models(params.runs, snakemake.input.models, params.expected):
    per_head.append(frequency.analyze_head(model, run["offset"], run["seed"], params.train_length_max))
    # The same head before training: the baseline of every statistic.
    at_init.append(frequency.analyze_head(init_head(model.config, run["seed"]), run["offset"], run["seed"],
                                          params.train_length_max)[1])
blocks, summary, singular = (pd.concat(parts, ignore_index=True) for parts in zip(*per_head))
untrained = pd.concat(at_init, ignore_index=True)


def claims_of(summary, untrained):
    return frequency.claims_frequency(summary, untrained, rules.MIN_TOP4_SHARE, rules.MIN_TOP4_ALIGNMENT)


claims = claims_of(summary, untrained)
write_table(seed_bootstrap(claims_of, {"summary": summary, "untrained": untrained}, **params.bootstrap), output.spread,
            CLAIM_SPREAD)
write_table(blocks, output.blocks, FREQUENCY_BLOCKS)
write_table(summary, output.summary, FREQUENCY_SUMMARY)
write_table(untrained, output.untrained, FREQUENCY_UNTRAINED_SUMMARY)
write_table(singular, output.singular, FREQUENCY_SINGULAR_VALUES)
write_table(claims, output.claims, CLAIMS)
atomic_write_text(frequency.section_markdown(summary, untrained, claims, params.train_length_max), output.section)
