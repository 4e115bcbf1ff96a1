rule report:
    """RESULTS.md: the setup, the verdicts, and every experiment's section with its figure."""
    input:
        script_sources("write_report.py"),
        figures=FIGURES,
        sections=expand(f"{RESULTS}/sections/{{experiment}}.md", experiment=EXPERIMENTS),
        claims=f"{RESULTS}/tables/claims.parquet",
    output:
        f"{RESULTS}/RESULTS.md",
    params:
        config=config,
        commit=CODE_VERSION,
        experiments=EXPERIMENTS,
        left_out=PLAN.left_out,
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/report.log",
    script:
        "../scripts/write_report.py"
