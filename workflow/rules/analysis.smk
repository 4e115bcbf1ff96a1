rule accuracy_by_length:
    """The tidy table: one row per (model, evaluation length)."""
    input:
        evaluations=in_results(families.evaluation_files("sweep", config)),
    output:
        f"{RESULTS}/tables/accuracy_by_length.parquet",
    params:
        *script_code("combine_tables.py"),
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/accuracy_by_length.log",
    script:
        "../scripts/combine_tables.py"


# One analysis job per experiment that runs (per offset for a per-offset experiment), made from its
# declaration in lengthgen/experiments/catalog.py: its declared inputs, its settings, its tables, its
# checks and seed spread (its section text is written by its figure job, plot_<name>).
for experiment in PLAN.running:
    section = section_name(experiment, "{offset}")

    rule:
        name:
            f"analyze_{experiment.name}"
        input:
            unpack(per_job(experiment, lambda offset, experiment=experiment: {
                **{name: JOBS.source_files(source, offset) for name, source in experiment.reads.items()},
            })),
        output:
            **JOBS.tables(experiment),
            claims=f"{RESULTS}/claims/{section}.parquet",
            spread=f"{RESULTS}/spread/{section}.parquet",
        params:
            *JOBS.code(experiment, "analyze.py"),
            experiment=experiment.name,
            section=per_job(experiment, lambda offset, experiment=experiment: section_name(experiment, offset)),
            reads={name: as_plain(source) for name, source in experiment.reads.items()},
            details=per_job(experiment, lambda offset, experiment=experiment: {
                name: JOBS.source_details(source, offset) for name, source in experiment.reads.items()}),
            settings=per_job(experiment, lambda offset, experiment=experiment: JOBS.settings(experiment, offset)),
            bootstrap=per_job(experiment, lambda offset, experiment=experiment: JOBS.bootstrap(
                section_name(experiment, offset))),
            device=config["device"],
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            JOBS.log(f"analyze_{experiment.name}", experiment),
        script:
            "../scripts/analyze.py"


rule all_claims:
    """Every check of every experiment that runs, in one table; their seed spreads in another, row for row."""
    input:
        claims=expand(f"{RESULTS}/claims/{{section}}.parquet", section=EXPERIMENTS),
        spreads=expand(f"{RESULTS}/spread/{{section}}.parquet", section=EXPERIMENTS),
    output:
        claims=f"{RESULTS}/tables/claims.parquet",
        spread=f"{RESULTS}/tables/claim_spread.parquet",
    params:
        *script_code("combine_claims.py"),
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/all_claims.log",
    script:
        "../scripts/combine_claims.py"
