rule eval_set:
    """Fixed evaluation sequences of one offset at every evaluation length."""
    output:
        f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    params:
        *script_code("make_eval_set.py"),
        task=job_task(config, "eval_sets"),
    group:
        "eval_sets"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/eval_set/offset~{{offset}}.log",
    script:
        "../scripts/make_eval_set.py"
