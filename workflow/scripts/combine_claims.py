"""Rule all_claims: every check of every experiment that ran, and their seed spreads."""
from lengthgen.runtime.job import start_job
from lengthgen.tables.core import CLAIMS
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import read_tables, write_table

job = start_job(snakemake.log[0])
claims = read_tables(snakemake.input.claims, CLAIMS)
spread = read_tables(snakemake.input.spreads, CLAIM_SPREAD)
keys = ["experiment", "claim", "statistic"]
if not claims[keys].equals(spread[keys]):
    raise ValueError("the seed spreads do not list the same checks as the claims, in the same order: rerun the "
                     "analyze_* jobs of the experiments whose files are older")
write_table(claims, snakemake.output.claims, CLAIMS)
write_table(spread, snakemake.output.spread, CLAIM_SPREAD)
job.finish()
