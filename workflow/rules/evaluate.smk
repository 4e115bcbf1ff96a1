rule evaluate:
    """Every evaluation length of one trained model, in one job."""
    input:
        script_sources("evaluate.py"),
        model=f"{RESULTS}/models/{RUNS.wildcard_pattern}/model.pt",
        eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    output:
        f"{RESULTS}/evaluations/{RUNS.wildcard_pattern}.parquet",
    params:
        run=RUNS.instance,
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        gres=MODEL_GRES,
        runtime=30,
    group:
        "models"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/evaluate/{RUNS.wildcard_pattern}.log",
    script:
        "../scripts/evaluate.py"
