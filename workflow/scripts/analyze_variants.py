"""Rule analyze_variants: every encoding's accuracy over seeds, its class, the account's checks and their seed
spread, its section."""
from lengthgen.bootstrap import seed_bootstrap
from lengthgen.experiments.variants import classify_variants, section_markdown, summarize_variants, variants_checks
from lengthgen.jobs import start_job
from lengthgen.schemas.core import ACCURACY_BY_LENGTH, ACCURACY_SUMMARY, CLAIMS, RANGE_FIT
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.variants import VARIANTS_CLASSES
from lengthgen.tables import atomic_write_text, read_tables, write_table
from lengthgen.training_report import fit_counts, runs_that_fit

start_job(snakemake.log[0])
params = snakemake.params
fits = read_tables(snakemake.input.fits, RANGE_FIT)
# A class past the range presupposes a fitted range: where most seeds fit it, the others are left out.
evaluations = runs_that_fit(read_tables(snakemake.input.evaluations, ACCURACY_BY_LENGTH), fits)


def claims_of(evaluations):
    classes = classify_variants(summarize_variants(evaluations), params.vocab_size, params.train_length_max)
    return variants_checks(classes, params.descriptions, params.vocab_size)


summary = summarize_variants(evaluations)
classes = classify_variants(summary, params.vocab_size, params.train_length_max).merge(fit_counts(fits))
checks = claims_of(evaluations)
write_table(seed_bootstrap(claims_of, {"evaluations": evaluations}, **params.bootstrap), snakemake.output.spread,
            CLAIM_SPREAD)
write_table(summary, snakemake.output.summary, ACCURACY_SUMMARY)
write_table(classes, snakemake.output.classes, VARIANTS_CLASSES)
write_table(checks, snakemake.output.claims, CLAIMS)
atomic_write_text(section_markdown(summary, classes, checks, params.descriptions, params.encodings,
                                   params.vocab_size, params.train_length_max), snakemake.output.section)
