rule report:
    """RESULTS.md: the setup, the verdicts, and every experiment's section with its figure."""
    input:
        lengthgen_sources("report.py", "claims.py"),
        figures=FIGURES,
        sections=expand("results/sections/{experiment}.md", experiment=EXPERIMENTS),
        claims=expand("results/claims/{experiment}.parquet", experiment=EXPERIMENTS),
    output:
        "results/RESULTS.md",
    params:
        config=config,
        commit=CODE_VERSION,
        experiments=EXPERIMENTS,
    conda:
        CONDA_ENV
    log:
        "results/logs/report.log",
    script:
        "../scripts/write_report.py"
