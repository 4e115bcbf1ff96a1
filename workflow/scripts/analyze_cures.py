"""Rule analyze_cures: the base heads under evaluation-time cures, the log-length head, and the law's predictions."""
import pandas as pd

from lengthgen.bootstrap import seed_bootstrap
from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import cures
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS, EVAL_SET
from lengthgen.schemas.cures import CURES_BY_LENGTH, CURES_PREDICTION, CURES_RECOVERY
from lengthgen.schemas.prop1 import PROP1_PREDICTION
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
inputs, params, output = snakemake.input, snakemake.params, snakemake.output
train_length_min, train_length_max = params.train_lengths
eval_sets = {offset: eval_sets_from_frame(read_table(path, EVAL_SET))
             for offset, path in zip(params.offsets, inputs.eval_sets)}
by_length, predictions = [], [cures.uncured_predictions(read_table(inputs.prop1_prediction, PROP1_PREDICTION))]
for run, model in load_models(params.runs, inputs.models, params.expected):
    offset, seed = run["offset"], run["seed"]
    by_length.append(cures.measure_cures(model, eval_sets[offset], offset, seed, train_length_max, train_length_min))
    if run["pe"] == "rope":
        predictions.append(cures.predict_cures(model, offset, seed, params.lengths, params.n_samples,
                                               train_length_max))
for run, model in load_models(params.trained_runs, inputs.trained, params.trained_expected):
    by_length.append(cures.measure_trained(model, eval_sets[run["offset"]], run["offset"], run["seed"],
                                           train_length_min, train_length_max))
by_length, predictions = pd.concat(by_length, ignore_index=True), pd.concat(predictions, ignore_index=True)
recovery = cures.recovery_table(by_length, predictions, train_length_max)
claims = cures.claims_cures(by_length, predictions, train_length_max)
spread = seed_bootstrap(lambda by_length, predictions: cures.claims_cures(by_length, predictions, train_length_max),
                        {"by_length": by_length, "predictions": predictions}, **params.bootstrap)
write_table(spread, output.spread, CLAIM_SPREAD)
write_table(by_length, output.by_length, CURES_BY_LENGTH)
write_table(predictions, output.predictions, CURES_PREDICTION)
write_table(recovery, output.recovery, CURES_RECOVERY)
write_table(claims, output.claims, CLAIMS)
atomic_write_text(cures.section_markdown(by_length, predictions, recovery, claims, train_length_max), output.section)
