rule evaluate:
    """Every evaluation length of one trained model, in one job."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "evaluation.py", "data.py", "base.py", "jobs.py"),
        model=f"results/models/{RUNS.wildcard_pattern}/model.pt",
        eval_set="results/data/eval/offset~{offset}.parquet",
    output:
        f"results/evaluations/{RUNS.wildcard_pattern}.parquet",
    params:
        run=RUNS.instance,
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        CONDA_ENV
    log:
        f"results/logs/evaluate/{RUNS.wildcard_pattern}.log",
    script:
        "../scripts/evaluate.py"
