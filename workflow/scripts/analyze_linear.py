"""Rule analyze_linear: arm 1 (the min-norm control, trained here) and arm 2 (the linear-attention heads)."""
import logging

import pandas as pd

from lengthgen.bootstrap import seed_bootstrap
from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import linear
from lengthgen.jobs import start_job
from lengthgen.rotary_regression import RegressionConfig
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS, EVAL_SET, TRAINING_CURVE
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.linear import (LINEAR_BY_LENGTH, LINEAR_COMPARISON, LINEAR_CONVERGENCE, LINEAR_CUTOFFS,
                                      LINEAR_KERNEL, LINEAR_TRAINING_PROGRESS)
from lengthgen.tables import atomic_write_text, read_table, read_tables, write_table
from lengthgen.task import TaskConfig

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
train_length_min, train_length_max = params.train_lengths
n_offsets = max(params.lengths)
eval_sets = {offset: eval_sets_from_frame(read_table(path, EVAL_SET))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
control = RegressionConfig(**params.control)
parts = []
for run, model in load_models(params.runs, snakemake.input.models, params.expected):
    offset, seed = int(run["offset"]), int(run["seed"])
    task = TaskConfig(params.vocab_size, offset, train_length_min, train_length_max)
    logging.info("arm 1: training the min-norm control for seed %d, offset %d", seed, offset)
    for arm, tables in ((linear.CONTROL, linear.analyze_control(control, task, seed, eval_sets[offset], n_offsets)),
                        (linear.HEAD, linear.analyze_head(model, task, eval_sets[offset], n_offsets))):
        parts.append({name: frame.assign(arm=arm, offset=offset, seed=seed) for name, frame in tables.items()})
tables = {name: pd.concat([part[name] for part in parts if name in part], ignore_index=True)
          for name in ("by_length", "kernels", "cutoffs", "comparison", "convergence")}
progress = linear.training_progress(read_tables(snakemake.input.curves, TRAINING_CURVE))


def claims_of(by_length, comparison):
    return linear.claims_linear(by_length, comparison, train_length_max, params.vocab_size)


claims = claims_of(tables["by_length"], tables["comparison"])
write_table(seed_bootstrap(claims_of, {name: tables[name] for name in ("by_length", "comparison")}, **params.bootstrap),
            output.spread, CLAIM_SPREAD)
for name, kind in (("by_length", LINEAR_BY_LENGTH), ("kernels", LINEAR_KERNEL), ("cutoffs", LINEAR_CUTOFFS),
                   ("comparison", LINEAR_COMPARISON), ("convergence", LINEAR_CONVERGENCE)):
    write_table(tables[name], getattr(output, name), kind)
write_table(progress, output.progress, LINEAR_TRAINING_PROGRESS)
write_table(claims, output.claims, CLAIMS)
head = {**params.head, "d_model": params.model["d_model"], "rope_base": params.model["rope_base"]}
section = linear.section_markdown(tables["by_length"], tables["comparison"], tables["cutoffs"], progress, claims,
                                  train_length_min, train_length_max, params.control, head)
atomic_write_text(section, output.section)
