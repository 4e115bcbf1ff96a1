"""Rule analyze_linear: the linear-attention control against the min-norm interpolant."""
import pandas as pd

from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import linear
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS, EVAL_SET
from lengthgen.schemas.linear import LINEAR_BY_LENGTH, LINEAR_KERNEL, LINEAR_KERNEL_COMPARISON, LINEAR_KERNEL_DILUTION
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
train_length_min, train_length_max = params.train_lengths
eval_sets = {offset: eval_sets_from_frame(read_table(path, EVAL_SET))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
by_length, kernels, comparison = [], [], []
for run, model in load_models(params.runs, snakemake.input.models, params.head):
    offset, seed = int(run["offset"]), int(run["seed"])
    by_length.append(linear.evaluate_linear_head(model, eval_sets[offset], offset, seed, train_length_min, train_length_max))
    kernels.append(linear.kernel_frame(model, offset, seed, train_length_max, max_delta=max(params.lengths)))
    comparison.append(linear.kernel_comparison(model, offset, seed, train_length_max))
by_length, kernels, comparison = (pd.concat(frames, ignore_index=True) for frames in (by_length, kernels, comparison))
dilution = linear.kernel_dilution(kernels, params.lengths)
claims = linear.claims_linear(by_length, comparison, dilution, train_length_max, params.vocab_size)
for frame, path, kind in ((by_length, output.by_length, LINEAR_BY_LENGTH), (kernels, output.kernels, LINEAR_KERNEL),
                          (comparison, output.comparison, LINEAR_KERNEL_COMPARISON),
                          (dilution, output.dilution, LINEAR_KERNEL_DILUTION), (claims, output.claims, CLAIMS)):
    write_table(frame, path, kind)
training = params.training
section = linear.section_markdown(by_length, comparison, dilution, claims, train_length_min, train_length_max,
                              training["steps"], training["batch_size"], training["lr"])
atomic_write_text(section, output.section)
