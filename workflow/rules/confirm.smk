# The confirmation study: every file of confirmation.runs layered over the config as given
# (lengthgen/studies/confirmation/runs.py) and run as this same workflow, a Snakemake module, into
# <results_dir>/confirm/<name>, its rules named confirm_<name>_<rule>; then this run's checks beside
# theirs (rule replication). A confirmation run lists no runs of its own, so its module includes no
# further modules: the recursion stops after one level, by the config rather than by a flag.
from lengthgen.studies.confirmation.runs import RULE_FILES, confirmation_runs, run_summary
from lengthgen.report.provenance import rules_record

try:
    CONFIRMATION = confirmation_runs(CONFIG_AS_GIVEN, config, REPO, CONFIG_SCHEMA)
except ConfigError as error:
    sys.exit(f"Config error: {error}")

for CONFIRMATION_NAME, CONFIRMATION_RUN in CONFIRMATION.items():
    # Module and rule-prefix names as variables: Snakemake resolves both at `use rule` (dynamic modules).
    CONFIRMATION_MODULE = f"confirm_{CONFIRMATION_NAME}"
    CONFIRMATION_RULES = f"confirm_{CONFIRMATION_NAME}_"

    module:
        name:
            CONFIRMATION_MODULE
        snakefile:
            "../../Snakefile"
        config:
            CONFIRMATION_RUN.config

    use rule * from CONFIRMATION_MODULE as CONFIRMATION_RULES*


CONFIRMATION_REPORTS = [f"{run.results_dir}/RESULTS.md" for run in CONFIRMATION.values()]
# What the replication adds to this run's report; nothing without confirmation runs.
REPLICATION = (
    {
        "replication_table": f"{RESULTS}/tables/replication.parquet",
        "replication_section": f"{RESULTS}/sections/replication.md",
        "replication_figure": f"{RESULTS}/figures/replication.png",
    }
    if CONFIRMATION
    else {}
)


if CONFIRMATION:

    rule replication:
        """This run's checks beside every confirmation run's, with their seed spreads: replication verdicts and causes."""
        input:
            claims=f"{RESULTS}/tables/claims.parquet",
            spread=f"{RESULTS}/tables/claim_spread.parquet",
            run_claims=[f"{run.results_dir}/tables/claims.parquet" for run in CONFIRMATION.values()],
            run_spreads=[f"{run.results_dir}/tables/claim_spread.parquet" for run in CONFIRMATION.values()],
        output:
            table=REPLICATION["replication_table"],
            section=REPLICATION["replication_section"],
        params:
            *script_code("replicate.py"),
            runs=[run.description() for run in CONFIRMATION.values()],
            exploratory=run_summary("exploratory", config),
            rules=rules_record(str(REPO), config["confirmation"]["rules_commit"], RULE_FILES),
            rule_files=list(RULE_FILES),
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/replication.log",
        script:
            "../scripts/replicate.py"

    rule plot_replication:
        input:
            table=REPLICATION["replication_table"],
            style=FIGURE_STYLE,
        output:
            report(REPLICATION["replication_figure"], caption="../captions/replication.rst", category="replication"),
        params:
            *script_code("plot_replication.py"),
            style=FIGURE_SETTINGS,
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/plot_replication.log",
        script:
            "../scripts/plot_replication.py"


rule confirm:
    """The confirmation study: every confirmation run's RESULTS.md, and this run's replication table, section and figure."""
    input:
        CONFIRMATION_REPORTS,
        list(REPLICATION.values()),
