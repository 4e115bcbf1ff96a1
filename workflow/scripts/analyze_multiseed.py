"""Rule analyze_multiseed: the headlines of the experiments that run, per run and summarized over seeds."""
from lengthgen.bootstrap import seed_bootstrap
from lengthgen.experiments import multiseed
from lengthgen.jobs import start_job
from lengthgen.schemas.core import CLAIMS
from lengthgen.schemas.multiseed import HEADLINE_BY_SEED, HEADLINE_SUMMARY
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_tables, write_table

start_job(snakemake.log[0])
inputs, output, params = snakemake.input, snakemake.output, snakemake.params
headlines = multiseed.headlines_of(params.experiments)
# Each headline's table, from the input named after its experiment (HEADLINE_TABLES in analysis.smk).
sources = {headline.source.name: read_tables(getattr(inputs, headline.experiment), headline.source)
           for headline in headlines}
by_seed = multiseed.headline_by_seed(sources, params.settings, headlines)
summary = multiseed.summarize_headlines(by_seed, params.settings)
write_table(by_seed, output.by_seed, HEADLINE_BY_SEED)
write_table(summary, output.summary, HEADLINE_SUMMARY)


def claims_of(by_seed):
    return multiseed.claims_multiseed(multiseed.summarize_headlines(by_seed, params.settings))


write_table(claims_of(by_seed), output.claims, CLAIMS)
write_table(seed_bootstrap(claims_of, {"by_seed": by_seed}, **params.bootstrap), output.spread, CLAIM_SPREAD)
atomic_write_text(multiseed.section_markdown(summary), output.section)
