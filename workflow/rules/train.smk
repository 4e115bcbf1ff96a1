rule train:
    """Train one head per (pe, seed, offset); weights and a per-step training curve."""
    input:
        script_sources("train.py"),
    output:
        model=f"{RESULTS}/models/{RUNS.wildcard_pattern}/model.pt",
        curve=f"{RESULTS}/models/{RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=RUNS.instance,
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model=config_slice("model"),
        train=config_slice("train"),
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
        f"{RESULTS}/logs/train/{RUNS.wildcard_pattern}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train/{RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"


rule train_linear:
    """The linear-attention control for one (seed, offset): same head and script, no softmax."""
    input:
        script_sources("train.py"),
    output:
        model=f"{RESULTS}/models/linear/{LINEAR_RUNS.wildcard_pattern}/model.pt",
        curve=f"{RESULTS}/models/linear/{LINEAR_RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=lambda w: {"pe": "rope", **LINEAR_RUNS.instance(w)},
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model={**config_slice("model"), "attention": "linear"},
        train=config_slice("linear"),
        device=config["device"],
    threads: 1
    resources:
        mem_mb=2000,
        gres=MODEL_GRES,
        runtime=60,
    group:
        "models"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/train_linear/{LINEAR_RUNS.wildcard_pattern}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train_linear/{LINEAR_RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"
