# Every claim (lengthgen/experiments/claims.py) judged by its one rule (lengthgen/checks/judgment.py) in every
# condition: this run, each confirmation run, each robustness point, each from its own headline_by_seed table (the
# multiseed experiment's). Then one forest plot per claim over all of them, and rope's accuracy at 32x over the
# robustness settings.
from lengthgen.experiments.claims import CLAIMS
from lengthgen.studies.judgments.judge import conditions_of

try:
    CONDITIONS = conditions_of(config, CONFIRMATION, ROBUSTNESS)
except ValueError as error:
    sys.exit(f"Config error: {error}")
CONDITION_FOLDERS = [RESULTS, *(run.results_dir for run in CONFIRMATION.values()),
                     *(point.results_dir for point in ROBUSTNESS.values())]
JUDGED = "multiseed" in PLAN.experiments
CLAIM_FIGURES = {claim.name: f"{RESULTS}/figures/claims/{claim.name.replace(' ', '_')}.png" for claim in CLAIMS}
JUDGMENTS = (
    {
        "judgments": f"{RESULTS}/tables/claim_judgments.parquet",
        "secondary": f"{RESULTS}/tables/claim_secondary.parquet",
    }
    if JUDGED
    else {}
)


if JUDGED:

    rule judge_claims:
        """Every claim in every condition, per K: its primary statistic's mean and seed-bootstrap interval, the verdict."""
        input:
            by_seed=[f"{folder}/tables/headline_by_seed.parquet" for folder in CONDITION_FOLDERS],
        output:
            judgments=JUDGMENTS["judgments"],
            secondary=JUDGMENTS["secondary"],
        params:
            *script_code("judge_claims.py"),
            conditions=CONDITIONS,
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/judge_claims.log",
        script:
            "../scripts/judge_claims.py"

    rule plot_claims:
        """One forest plot per claim, and rope's accuracy at 32x over the robustness settings."""
        input:
            **JUDGMENTS,
            style=FIGURE_STYLE,
        output:
            claims=[report(path, caption="../captions/claims.rst", category="claims") for path in CLAIM_FIGURES.values()],
            longest=report(f"{RESULTS}/figures/claims/rope_at_32x.png", caption="../captions/claims.rst",
                           category="claims"),
        params:
            *script_code("plot_claims.py"),
            conditions=[condition["name"] for condition in CONDITIONS],
            robustness=["this run", *ROBUSTNESS],
            chance=shared_chance(config, ROBUSTNESS),  # the 32x figure's chance line, where the settings share it
            style=FIGURE_SETTINGS,
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/plot_claims.log",
        script:
            "../scripts/plot_claims.py"


rule confirm:
    """The confirmation study: every confirmation run's RESULTS.md, and every claim judged in each."""
    input:
        CONFIRMATION_REPORTS,
        list(JUDGMENTS.values()),
