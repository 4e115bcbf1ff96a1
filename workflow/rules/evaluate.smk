# One evaluation rule per model family with an evaluation table (lengthgen/experiments/families.py), a job per
# (pe, offset) of the models its family trains, every seed: evaluate_sweep and evaluate_variants score the single
# heads at every evaluation length, evaluate_transformer scores the transformers at every position.
for family in [each for each in FAMILIES.values() if each.trainer == "head" and each.evaluation_table
               and families.trained_encodings(each.name, config)]:
    run = families.run_path(family.name)
    seeds = families.trained_seeds(family.name, config)

    rule:
        """Every evaluation length of the heads of one (pe, offset), every seed of this rule's encodings, in one job."""
        name:
            f"evaluate_{family.name}"
        input:
            models=seed_files(f"{RESULTS}/models/{run}/model.pt", seeds),
            eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
        output:
            seed_files(f"{RESULTS}/evaluations/{run}.parquet", seeds),
        wildcard_constraints:
            pe=alternatives(families.trained_encodings(family.name, config)),
        params:
            *script_code("evaluate.py"),
            encoding=lambda w, name=family.name: job_encoding_code(name, w),
            runs=lambda w, name=family.name: families.job_runs(name, config, dict(w.items())),
            expected=families.expected_settings(family.name, config),
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
        models=seed_files(f"{RESULTS}/models/{families.run_path('transformer')}/model.pt",
                          families.trained_seeds("transformer", config)),
        eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    output:
        seed_files(f"{RESULTS}/evaluations/{families.run_path('transformer')}.parquet",
                   families.trained_seeds("transformer", config)),
    params:
        *script_code("evaluate_transformer.py"),
        encoding=lambda w: job_encoding_code("transformer", w),
        runs=lambda w: families.job_runs("transformer", config, dict(w.items())),
        expected=families.expected_settings("transformer", config),
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
