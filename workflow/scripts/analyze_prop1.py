"""Rule analyze_prop1: the attention-dilution law's predictions vs the measured decay."""
import pandas as pd

from lengthgen import rules
from lengthgen.bootstrap import seed_bootstrap
from lengthgen.experiments import prop1
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import ACCURACY_BY_LENGTH, CLAIMS
from lengthgen.schemas.prop1 import PROP1_ERROR, PROP1_PREDICTION
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
predictions = pd.concat([prop1.predict_dilution(model, run["offset"], run["seed"], params.lengths, params.n_samples)
                         for run, model in load_models(params.runs, snakemake.input.models, params.expected)], ignore_index=True)
measured = read_table(snakemake.input.accuracy, ACCURACY_BY_LENGTH)
comparison = prop1.compare_with_measured(predictions, measured, experiment="base")
errors = prop1.prediction_errors(comparison, params.train_length_max)


def claims_of(comparison):
    return prop1.claims_prop1(prop1.prediction_errors(comparison, params.train_length_max), rules.PROP1_CLAIM_PREDICTOR,
                              rules.MAX_ATTENTION_MAE, rules.MAX_ACCURACY_MAE)


claims = claims_of(comparison)
write_table(seed_bootstrap(claims_of, {"comparison": comparison}, **params.bootstrap), output.spread, CLAIM_SPREAD)
write_table(comparison, output.comparison, PROP1_PREDICTION)
write_table(errors, output.errors, PROP1_ERROR)
write_table(claims, output.claims, CLAIMS)
atomic_write_text(prop1.section_markdown(errors, claims, params.train_length_max), output.section)
