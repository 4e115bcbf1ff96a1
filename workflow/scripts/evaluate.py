"""Rule evaluate: accuracy of one trained model at every evaluation length."""
import logging

from lengthgen.base import label_runs
from lengthgen.data import eval_sets_from_frame
from lengthgen.evaluation import accuracy_by_length
from lengthgen.jobs import start_job
from lengthgen.model import load_head
from lengthgen.tables import read_table, write_table
from lengthgen.training import resolve_device

start_job(snakemake.log[0], snakemake.threads)
run, params = snakemake.params.run, snakemake.params
model = load_head(snakemake.input.model, resolve_device(params.device))
eval_sets = eval_sets_from_frame(read_table(snakemake.input.eval_set, "eval_set"))
evaluation = accuracy_by_length(model, eval_sets, run["offset"])
logging.info("%s\n%s", run, evaluation.to_string(index=False))
write_table(label_runs(evaluation, "base", *params.train_lengths, **run), snakemake.output[0], "accuracy_by_length")
