"""Rule all_claims: every check of every experiment that ran, each with its experiment's verdict."""
from lengthgen.claims import with_verdicts
from lengthgen.jobs import start_job
from lengthgen.schemas.core import ALL_CLAIMS, CLAIMS
from lengthgen.tables import read_tables, write_table

start_job(snakemake.log[0])
write_table(with_verdicts(read_tables(snakemake.input.claims, CLAIMS)), snakemake.output[0], ALL_CLAIMS)
