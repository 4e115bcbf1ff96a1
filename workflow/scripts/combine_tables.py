"""Concatenate per-run tables of one schema into one table."""
from lengthgen.jobs import start_job
from lengthgen.tables import read_tables, write_table

start_job(snakemake.log[0], snakemake.threads)
kind = snakemake.params.get("kind", "accuracy_by_length")
write_table(read_tables(snakemake.input.evaluations, kind), snakemake.output[0], kind)
