for batch_rule, (encodings, seeds) in HEAD_BATCHES.items():

    rule:
        """Every evaluation length of the heads of one (pe, offset), every seed of this rule's encodings, in one job."""
        name:
            f"evaluate_{batch_rule}"
        input:
            models=seed_files(f"{RESULTS}/models/{RUN_FOLDER}/model.pt", seeds),
            eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
        output:
            seed_files(f"{RESULTS}/evaluations/{RUN_FOLDER}.parquet", seeds),
        wildcard_constraints:
            pe=alternatives(encodings),
        params:
            *script_code("evaluate.py"),
            encoding=lambda w: encoding_code([w.pe]),
            runs=lambda w, seeds=seeds: [{"pe": w.pe, "seed": seed, "offset": int(w.offset)} for seed in seeds],
            expected=HEAD,
            task=MODELS_TASK,
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
            f"{RESULTS}/logs/evaluate/pe~{{pe}}/offset~{{offset}}.log",
        script:
            "../scripts/evaluate.py"


rule evaluate_transformer:
    """Accuracy of the transformers of one (pe, offset) at every position of every evaluation length, in one job."""
    input:
        models=seed_files(f"{RESULTS}/models/transformer/{RUN_FOLDER}/model.pt", TRANSFORMER_SEEDS),
        eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    output:
        seed_files(f"{RESULTS}/evaluations/transformer/{RUN_FOLDER}.parquet", TRANSFORMER_SEEDS),
    params:
        *script_code("evaluate_transformer.py"),
        encoding=lambda w: encoding_code([w.pe]),
        runs=lambda w: [{"pe": w.pe, "seed": seed, "offset": int(w.offset)} for seed in TRANSFORMER_SEEDS],
        expected=family_expected("transformer"),
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
        f"{RESULTS}/logs/evaluate_transformer/pe~{{pe}}/offset~{{offset}}.log",
    script:
        "../scripts/evaluate_transformer.py"
