"""Rule training_summary: every trained model's fit of its training range, in one table."""
import logging

from lengthgen.runtime.job import start_job
from lengthgen.tables.core import RANGE_FIT, TRAINING_SUMMARY
from lengthgen.tables.io import read_tables, write_table
from lengthgen.report.training import training_summary
from lengthgen.science.variant_predictions import mechanism

job = start_job(snakemake.log[0])
fits = {family: read_tables(paths, RANGE_FIT) for family, paths in snakemake.params.families.items()}
descriptions = {pe: mechanism(pe) for frame in fits.values() for pe in frame["pe"].unique()}
summary = training_summary(fits, descriptions)
logging.info("models that do not fit their training range:\n%s", summary[~summary["converged"]].to_string(index=False))
write_table(summary, snakemake.output[0], TRAINING_SUMMARY)
job.finish()
