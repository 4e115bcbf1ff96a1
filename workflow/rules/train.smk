rule train:
    """Train one head per (pe, seed, offset); weights and a per-step training curve."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "task.py", "training.py", "seeding.py", "jobs.py"),
    output:
        model=f"results/models/{RUNS.wildcard_pattern}/model.pt",
        curve=f"results/models/{RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=RUNS.instance,
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model=config_slice("model"),
        train=config_slice("train"),
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        CONDA_ENV
    log:
        f"results/logs/train/{RUNS.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/train/{RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"


rule train_linear:
    """The linear-attention control for one (seed, offset): same head and script, no softmax."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "task.py", "training.py", "seeding.py", "jobs.py"),
    output:
        model=f"results/models/linear/{LINEAR_RUNS.wildcard_pattern}/model.pt",
        curve=f"results/models/linear/{LINEAR_RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=lambda w: {"pe": "rope", **LINEAR_RUNS.instance(w)},
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model={**config_slice("model"), "attention": "linear"},
        train=config_slice("linear"),
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    conda:
        CONDA_ENV
    log:
        f"results/logs/train_linear/{LINEAR_RUNS.wildcard_pattern}.log",
    benchmark:
        f"results/benchmarks/train_linear/{LINEAR_RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"
