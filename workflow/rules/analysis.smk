rule accuracy_by_length:
    """The tidy table: one row per (model, evaluation length)."""
    input:
        lengthgen_sources("tables.py"),
        evaluations=expand(f"results/evaluations/{{run}}.parquet", run=RUNS.instance_patterns),
    output:
        "results/tables/accuracy_by_length.parquet",
    log:
        "results/logs/accuracy_by_length.log",
    script:
        "../scripts/combine_tables.py"


rule analyze_base:
    """Mean and 95% interval over seeds, the base claim's checks, and its RESULTS.md section."""
    input:
        lengthgen_sources("base.py", "claims.py", "stats.py", "tables.py"),
        accuracy="results/tables/accuracy_by_length.parquet",
    output:
        summary="results/tables/accuracy_summary.parquet",
        claims="results/claims/base.parquet",
        section="results/sections/base.md",
    params:
        vocab_size=config["task"]["vocab_size"],
        train_length_max=config["task"]["train_length_max"],
    log:
        "results/logs/analyze_base.log",
    script:
        "../scripts/analyze_base.py"
