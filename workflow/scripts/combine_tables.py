"""Rule accuracy_by_length: the per-model evaluations as one table."""
from lengthgen.runtime.job import start_job
from lengthgen.tables.core import ACCURACY_BY_LENGTH
from lengthgen.tables.io import read_tables, write_table

job = start_job(snakemake.log[0])
write_table(read_tables(snakemake.input.evaluations, ACCURACY_BY_LENGTH), snakemake.output[0], ACCURACY_BY_LENGTH)
job.finish()
