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


rule train_modified:
    """The sweep's RoPE head with one option changed (MODIFIED_HEADS), per (seed, offset): same script."""
    input:
        script_sources("train.py"),
    output:
        model=f"{RESULTS}/models/{{modified}}/{LINEAR_RUNS.wildcard_pattern}/model.pt",
        curve=f"{RESULTS}/models/{{modified}}/{LINEAR_RUNS.wildcard_pattern}/training_curve.parquet",
    wildcard_constraints:
        modified="|".join(MODIFIED_HEADS),
    params:
        run=lambda w: {"pe": "rope", "seed": int(w.seed), "offset": int(w.offset)},
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model=lambda w: {**config_slice("model"), **MODIFIED_HEADS[w.modified][0]},
        train=lambda w: MODIFIED_HEADS[w.modified][1],
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
        f"{RESULTS}/logs/train_modified/{{modified}}/{LINEAR_RUNS.wildcard_pattern}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train_modified/{{modified}}/{LINEAR_RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train.py"


rule train_transformer:
    """Train one transformer per (pe, seed, offset) on the full-sequence task, by the heads' training loop."""
    input:
        script_sources("train_transformer.py"),
    output:
        model=f"{RESULTS}/models/transformer/{TRANSFORMER_RUNS.wildcard_pattern}/model.pt",
        curve=f"{RESULTS}/models/transformer/{TRANSFORMER_RUNS.wildcard_pattern}/training_curve.parquet",
    params:
        run=TRANSFORMER_RUNS.instance,
        task=config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        model=TRANSFORMER_MODEL,
        train=config_slice("transformer", ["steps", "batch_size", "lr", "log_every", "precision"]),
        device=config["device"],
    threads: 1
    resources:
        gres=MODEL_GRES,
        mem_mb=2000,
        runtime=60,
    group:
        "models"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/train_transformer/{TRANSFORMER_RUNS.wildcard_pattern}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train_transformer/{TRANSFORMER_RUNS.wildcard_pattern}.tsv"
    script:
        "../scripts/train_transformer.py"
