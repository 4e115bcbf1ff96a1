"""Rule analyze_linear: the linear-attention control against the min-norm interpolant."""
import pandas as pd

from lengthgen import linear_control as lc
from lengthgen.data import eval_sets_from_frame
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0], snakemake.threads)
params, output = snakemake.params, snakemake.output
train_length_min, train_length_max = params.train_lengths
eval_sets = {offset: eval_sets_from_frame(read_table(path, "eval_set"))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
by_length, kernels, comparison = [], [], []
for run, model in load_models(params.runs, snakemake.input.models):
    offset, seed = int(run["offset"]), int(run["seed"])
    by_length.append(lc.evaluate_linear_head(model, eval_sets[offset], offset, seed, train_length_min, train_length_max))
    kernels.append(lc.kernel_frame(model, offset, seed, train_length_max, max_delta=max(params.lengths)))
    comparison.append(lc.kernel_comparison(model, offset, seed, train_length_max))
by_length, kernels, comparison = (pd.concat(frames, ignore_index=True) for frames in (by_length, kernels, comparison))
dilution = lc.kernel_dilution(kernels, params.lengths)
claims = lc.claims_linear(by_length, comparison, dilution, train_length_max, params.vocab_size)
for frame, path, kind in ((by_length, output.by_length, "linear_by_length"), (kernels, output.kernels, "linear_kernel"),
                          (comparison, output.comparison, "linear_kernel_comparison"),
                          (dilution, output.dilution, "linear_kernel_dilution"), (claims, output.claims, "claims")):
    write_table(frame, path, kind)
training = params.training
section = lc.section_markdown(by_length, comparison, dilution, claims, train_length_min, train_length_max,
                              training["steps"], training["batch_size"], training["lr"])
atomic_write_text(section, output.section)
