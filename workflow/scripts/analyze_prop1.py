"""Rule analyze_prop1: the attention-dilution law's predictions vs the measured decay."""
import pandas as pd

from lengthgen import dilution
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0], snakemake.threads)
params, output = snakemake.params, snakemake.output
predictions = pd.concat([dilution.predict_dilution(model, run["offset"], run["seed"], params.lengths, params.n_samples)
                         for run, model in load_models(params.runs, snakemake.input.models)], ignore_index=True)
measured = read_table(snakemake.input.accuracy, "accuracy_by_length")
comparison = dilution.compare_with_measured(predictions, measured, experiment="base")
errors = dilution.prediction_errors(comparison, params.train_length_max)
claims = dilution.claims_prop1(errors, dilution.CLAIM_PREDICTOR, dilution.MAX_ATTENTION_MAE,
                               dilution.MAX_ACCURACY_MAE)
write_table(comparison, output.comparison, "prop1_prediction")
write_table(errors, output.errors, "prop1_error")
write_table(claims, output.claims, "claims")
atomic_write_text(dilution.section_markdown(errors, claims, params.train_length_max), output.section)
