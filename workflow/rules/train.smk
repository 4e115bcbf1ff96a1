# One training rule per model family (lengthgen/experiments/families.py): train_sweep, train_variants, train_linear,
# train_linear_softmax, train_log_length, train_transformer. A job trains every seed of one (pe, offset) side by side with its family's
# trainer (lengthgen/training/loop.py); each seed still gets its own model.pt, training_curve.parquet and
# range_fit.parquet. A family whose runs others train (variants the sweep shares) trains only the rest.
for family in [each for each in FAMILIES.values() if families.trained_encodings(each.name, config)]:
    run = f"{RESULTS}/models/{families.run_path(family.name)}"
    seeds = families.trained_seeds(family.name, config)

    rule:
        """Train the models of one job, every seed side by side."""
        name:
            f"train_{family.name}"
        output:
            model=seed_files(f"{run}/model.pt", seeds),
            curve=seed_files(f"{run}/training_curve.parquet", seeds),
            fit=seed_files(f"{run}/range_fit.parquet", seeds),
        wildcard_constraints:
            **({"pe": alternatives(families.trained_encodings(family.name, config))} if "{pe}" in run else {}),
        params:
            *script_code("train.py"),
            encoding=lambda w, name=family.name: job_encoding_code(name, w),
            trainer=family.trainer,
            runs=lambda w, name=family.name: families.job_runs(name, config, dict(w.items())),
            task=MODELS_TASK,
            model=families.model_settings(family.name, config),
            train=families.train_settings(family.name, config),
            device=config["device"],
            cpu_kernels=config["cpu_kernels"],  # other kernels train other weights: a switch retrains
        threads: 1
        resources:
            mem_mb=2000,
            gres=MODEL_GRES,
            runtime=family.runtime,
        group:
            "models"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/train_{family.name}/{family.run_folder.replace('seed~{seed}/', '')}.log",
        script:
            "../scripts/train.py"


rule training_summary:
    """Every trained model's fit of its training range, in one table (RESULTS.md lists any that does not fit)."""
    input:
        fits=[path for paths in families.range_fit_files(config).values() for path in in_results(paths)],
    output:
        f"{RESULTS}/tables/training.parquet",
    params:
        *script_code("training_summary.py"),
        encodings=encoding_code(families.every_encoding(config)),
        families={family: in_results(paths) for family, paths in families.range_fit_files(config).items()},
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/training_summary.log",
    script:
        "../scripts/training_summary.py"
