# Training runs every seed of one (pe, offset) side by side in one job (lengthgen/training/loop.py);
# each seed still gets its own model.pt, training_curve.parquet and range_fit.parquet.
# One rule per entry of HEAD_TRAINING_RULES (common.smk): the sweep's heads, the variants' and the
# modified rope heads (linear, log_length).

for training_rule, training in HEAD_TRAINING_RULES.items():
    job = training.run.replace("seed~{seed}/", "")  # one job: every seed of one (pe, offset)

    rule:
        """Train the heads of one job, every seed side by side."""
        name:
            training_rule
        output:
            model=seed_files(f"{RESULTS}/models/{training.family}{training.run}/model.pt", training.seeds),
            curve=seed_files(f"{RESULTS}/models/{training.family}{training.run}/training_curve.parquet", training.seeds),
            fit=seed_files(f"{RESULTS}/models/{training.family}{training.run}/range_fit.parquet", training.seeds),
        wildcard_constraints:
            **({"pe": alternatives(training.encodings)} if training.encodings else {}),
        params:
            *script_code("train.py"),
            encoding=lambda w: encoding_code([getattr(w, "pe", "rope")]),
            runs=lambda w, seeds=training.seeds: [{"pe": getattr(w, "pe", "rope"), "seed": seed, "offset": int(w.offset)}
                                                  for seed in seeds],
            task=MODELS_TASK,
            model=training.model,
            train=training.train,
            device=config["device"],
            cpu_kernels=config["cpu_kernels"],  # other kernels train other weights: a switch retrains
        threads: 1
        resources:
            mem_mb=2000,
            gres=MODEL_GRES,
            runtime=training.runtime,
        group:
            "models"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/{training_rule}/{job}.log",
        script:
            "../scripts/train.py"


# The transformers: a rule of their own, with its own script. (Snakemake records a rule's source lines, so
# merging it into the loop above would make every trained transformer out of date.)
rule train_transformer:
    """Train the transformers of one (pe, offset) on the full-sequence task, every seed side by side."""
    output:
        model=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/model.pt", TRANSFORMER_SEEDS),
        curve=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/training_curve.parquet", TRANSFORMER_SEEDS),
        fit=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/range_fit.parquet", TRANSFORMER_SEEDS),
    params:
        *script_code("train_transformer.py"),
        encoding=lambda w: encoding_code([w.pe]),
        runs=lambda w: [{"pe": w.pe, "seed": seed, "offset": int(w.offset)} for seed in TRANSFORMER_SEEDS],
        task=MODELS_TASK,
        model=TRANSFORMER_TRAINING,
        train=config_slice("transformer", ["steps", "batch_size", "lr", "log_every", "precision", "warmup_fraction"]),
        device=config["device"],
        cpu_kernels=config["cpu_kernels"],  # other kernels train other weights: a switch retrains
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
    script:
        "../scripts/train_transformer.py"


rule training_summary:
    """Every trained model's fit of its training range, in one table (RESULTS.md lists any that does not fit)."""
    input:
        fits=ALL_RANGE_FITS,
    output:
        f"{RESULTS}/tables/training.parquet",
    params:
        *script_code("training_summary.py"),
        encodings=encoding_code(ALL_ENCODINGS),
        families=RANGE_FIT_FAMILIES,
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/training_summary.log",
    script:
        "../scripts/training_summary.py"
