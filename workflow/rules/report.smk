# The previous committed run's claims, when the config names them: RESULTS.md says what moved since.
PREVIOUS_RUN = (
    {"previous_claims": str(REPO / config["report"]["previous_claims"])} if config["report"]["previous_claims"] else {}
)


rule report:
    """RESULTS.md: the setup, the verdicts, every experiment's section with its figure and seed spread, and the
    replication section when the config has confirmation runs."""
    input:
        script_sources("write_report.py"),
        figures=FIGURES,
        sections=expand(f"{RESULTS}/sections/{{experiment}}.md", experiment=EXPERIMENTS),
        claims=f"{RESULTS}/tables/claims.parquet",
        spread=f"{RESULTS}/tables/claim_spread.parquet",
        training=f"{RESULTS}/tables/training.parquet",
        **REPLICATION,
        **PREVIOUS_RUN,
    output:
        f"{RESULTS}/RESULTS.md",
    params:
        config=config,
        commit=CODE_VERSION,
        experiments=EXPERIMENTS,
        left_out=PLAN.left_out,
        changes_note=config["report"]["changes_note"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/report.log",
    benchmark:
        f"{RESULTS}/benchmarks/report.tsv"
    script:
        "../scripts/write_report.py"
