"""Rule evaluate_transformer: accuracy of the transformers of one (pe, offset), every seed, at every position
of every evaluation length."""
import logging

from lengthgen.data import eval_sets_from_frame
from lengthgen.evaluation import accuracy_by_position
from lengthgen.runtime.job import start_job
from lengthgen.runtime.device import configure_torch, resolve_device
from lengthgen.tables.core import EVAL_SET
from lengthgen.experiments.transformer.tables import TRANSFORMER_BY_POSITION
from lengthgen.tables.io import read_table, write_table
from lengthgen.models.transformer import load_transformer

job = start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params = snakemake.params
eval_sets = eval_sets_from_frame(read_table(snakemake.input.eval_set, EVAL_SET))
for run, model_path, output in zip(params.runs, snakemake.input.models, snakemake.output):
    model = load_transformer(model_path, resolve_device(params.device), {**params.expected, "pe": run["pe"]})
    by_position = accuracy_by_position(model, eval_sets, run["offset"], params.eval_samples)
    logging.info("%s: mean accuracy per length\n%s", run, by_position.groupby("length")["accuracy"].mean().to_string())
    write_table(by_position.assign(**run), output, TRANSFORMER_BY_POSITION)
job.finish()
