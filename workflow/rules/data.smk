rule eval_set:
    """Fixed evaluation sequences of one offset at every evaluation length."""
    input:
        lengthgen_sources("data.py", "task.py", "seeding.py", "tables.py"),
    output:
        "results/data/eval/offset~{offset}.parquet",
    params:
        seed=config["task"]["eval_seed"],
        lengths=config["task"]["eval_lengths"],
        samples=config["task"]["eval_samples"],
        vocab_size=config["task"]["vocab_size"],
    conda:
        CONDA_ENV
    log:
        "results/logs/eval_set/offset~{offset}.log",
    script:
        "../scripts/make_eval_set.py"
