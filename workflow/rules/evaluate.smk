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
        expected=HEAD,
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


rule evaluate_transformer:
    """Accuracy of one transformer at every position of every evaluation length, in one job."""
    input:
        script_sources("evaluate_transformer.py"),
        model=f"{RESULTS}/models/transformer/{TRANSFORMER_RUNS.wildcard_pattern}/model.pt",
        eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    output:
        f"{RESULTS}/evaluations/transformer/{TRANSFORMER_RUNS.wildcard_pattern}.parquet",
    params:
        run=TRANSFORMER_RUNS.instance,
        expected={"vocab_size": config["task"]["vocab_size"], **TRANSFORMER_MODEL},
        eval_samples=config["transformer"]["eval_samples"],
        device=config["device"],
    threads: 1
    resources:
        gres=MODEL_GRES,
        mem_mb=4000,
        runtime=30,
    group:
        "models"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/evaluate_transformer/{TRANSFORMER_RUNS.wildcard_pattern}.log",
    script:
        "../scripts/evaluate_transformer.py"
