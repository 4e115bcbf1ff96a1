# Training runs every seed of one (pe, offset) side by side in one job (lengthgen/training.py);
# each seed still gets its own model.pt, training_curve.parquet and range_fit.parquet. A rule's
# seed list is fixed, so encodings whose runs have other seeds get a rule of their own.

for batch_rule, (encodings, seeds) in HEAD_BATCHES.items():

    rule:
        """Train the heads of one (pe, offset), every seed of this rule's encodings side by side."""
        name:
            f"train_{batch_rule}"
        input:
            script_sources("train.py"),
        output:
            model=seed_files(f"{RESULTS}/models/{RUN_FOLDER}/model.pt", seeds),
            curve=seed_files(f"{RESULTS}/models/{RUN_FOLDER}/training_curve.parquet", seeds),
            fit=seed_files(f"{RESULTS}/models/{RUN_FOLDER}/range_fit.parquet", seeds),
        wildcard_constraints:
            pe=alternatives(encodings),
        params:
            runs=lambda w, seeds=seeds: [{"pe": w.pe, "seed": seed, "offset": int(w.offset)} for seed in seeds],
            task=MODELS_TASK,
            model=HEAD_TRAINING,
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
            f"{RESULTS}/logs/train/pe~{{pe}}/offset~{{offset}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/train_{batch_rule}/pe~{{pe}}/offset~{{offset}}.tsv"
        script:
            "../scripts/train.py"


for modified, (options, settings, seeds) in MODIFIED_HEADS.items():

    rule:
        """The sweep's RoPE head with one option changed (MODIFIED_HEADS), every seed of one offset side by side."""
        name:
            f"train_{modified}"
        input:
            script_sources("train.py"),
        output:
            model=seed_files(f"{RESULTS}/models/{modified}/{SEED_OFFSET_FOLDER}/model.pt", seeds),
            curve=seed_files(f"{RESULTS}/models/{modified}/{SEED_OFFSET_FOLDER}/training_curve.parquet", seeds),
            fit=seed_files(f"{RESULTS}/models/{modified}/{SEED_OFFSET_FOLDER}/range_fit.parquet", seeds),
        params:
            runs=lambda w, seeds=seeds: [{"pe": "rope", "seed": seed, "offset": int(w.offset)} for seed in seeds],
            task=MODELS_TASK,
            model={**HEAD_TRAINING, **options},
            train=settings,
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
            f"{RESULTS}/logs/train_{modified}/offset~{{offset}}.log",
        benchmark:
            f"{RESULTS}/benchmarks/train_{modified}/offset~{{offset}}.tsv"
        script:
            "../scripts/train.py"


rule train_transformer:
    """Train the transformers of one (pe, offset) on the full-sequence task, every seed side by side."""
    input:
        script_sources("train_transformer.py"),
    output:
        model=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/model.pt", TRANSFORMER_SEEDS),
        curve=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/training_curve.parquet", TRANSFORMER_SEEDS),
        fit=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/range_fit.parquet", TRANSFORMER_SEEDS),
    params:
        runs=lambda w: [{"pe": w.pe, "seed": seed, "offset": int(w.offset)} for seed in TRANSFORMER_SEEDS],
        task=MODELS_TASK,
        model=TRANSFORMER_TRAINING,
        train=config_slice("transformer", ["steps", "batch_size", "lr", "log_every", "precision", "warmup_fraction"]),
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
        f"{RESULTS}/logs/train_transformer/pe~{{pe}}/offset~{{offset}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/train_transformer/pe~{{pe}}/offset~{{offset}}.tsv"
    script:
        "../scripts/train_transformer.py"


rule training_summary:
    """Every trained model's fit of its training range, in one table (RESULTS.md lists any that does not fit)."""
    input:
        script_sources("training_summary.py"),
        fits=ALL_RANGE_FITS,
    output:
        f"{RESULTS}/tables/training.parquet",
    params:
        families=RANGE_FIT_FAMILIES,
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/training_summary.log",
    benchmark:
        f"{RESULTS}/benchmarks/training_summary.tsv"
    script:
        "../scripts/training_summary.py"
