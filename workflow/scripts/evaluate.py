"""Rules evaluate_*: accuracy of the heads of one (pe, offset), every seed, at every evaluation length."""
import logging

from lengthgen.data import eval_sets_from_frame
from lengthgen.evaluation import accuracy_by_length, label_runs
from lengthgen.runtime.job import start_job
from lengthgen.models.head import load_head
from lengthgen.runtime.device import configure_torch, resolve_device
from lengthgen.tables.core import ACCURACY_BY_LENGTH, EVAL_SET
from lengthgen.tables.io import read_table, write_table

job = start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params = snakemake.params
eval_sets = eval_sets_from_frame(read_table(snakemake.input.eval_set, EVAL_SET))
for run, model_path, output in zip(params.runs, snakemake.input.models, snakemake.output):
    model = load_head(model_path, resolve_device(params.device), expected={**params.expected, "pe": run["pe"]})
    evaluation = accuracy_by_length(model, eval_sets, run["offset"], run["seed"])
    logging.info("%s\n%s", run, evaluation.to_string(index=False))
    write_table(label_runs(evaluation, "generalization", params.task["train_length_min"], params.task["train_length_max"], **run), output, ACCURACY_BY_LENGTH)
job.finish()
