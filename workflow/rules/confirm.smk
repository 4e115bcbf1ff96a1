# The confirmation study: every file of confirmation.runs layered over the config as given
# (lengthgen/studies/confirmation/runs.py) and run as this same workflow, a Snakemake module, into
# <results_dir>/confirm/<name>, its rules named confirm_<name>_<rule>; each claim is judged in each of them by rule
# judge_claims (claims.smk). A confirmation run lists no runs of its own, so its module includes no
# further modules: the recursion stops after one level, by the config rather than by a flag.
from lengthgen.studies.confirmation.runs import confirmation_runs

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
