rule train:
    """Train one head per (pe, seed, offset); weights and a per-step training curve."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "task.py", "training.py", "seeding.py", "jobs.py"),
    output:
        model=f"results/models/{RUNS.wildcard_pattern}/model.pt",
        curve=f"results/models/{RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=RUNS.instance,
        task={key: config["task"][key] for key in ("vocab_size", "train_length_min", "train_length_max")},
        model=config["model"],
        train=config["train"],
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    log:
        f"results/logs/train/{RUNS.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/train/{RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"
