rule accuracy_by_length:
    """The tidy table: one row per (model, evaluation length)."""
    input:
        lengthgen_sources("tables.py"),
        evaluations=expand(f"results/evaluations/{{run}}.parquet", run=RUNS.instance_patterns),
    output:
        "results/tables/accuracy_by_length.parquet",
    conda:
        CONDA_ENV
    log:
        "results/logs/accuracy_by_length.log",
    script:
        "../scripts/combine_tables.py"


rule analyze_base:
    """Mean and 95% interval over seeds, the base claim's checks, and its RESULTS.md section."""
    input:
        lengthgen_sources("base.py", "claims.py", "stats.py", "tables.py"),
        accuracy="results/tables/accuracy_by_length.parquet",
    output:
        summary="results/tables/accuracy_summary.parquet",
        claims="results/claims/base.parquet",
        section="results/sections/base.md",
    params:
        vocab_size=config["task"]["vocab_size"],
        train_length_max=config["task"]["train_length_max"],
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_base.log",
    script:
        "../scripts/analyze_base.py"


rule analyze_mechanics:
    """Where each trained head attends, at every evaluation length."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "runs.py", "mechanics.py", "data.py", "claims.py"),
        models=model_files(sweep_runs(pe=["rope", "learned"])),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
    output:
        by_length="results/tables/mechanics_by_length.parquet",
        histogram="results/tables/mechanics_argmax_histogram.parquet",
        profile="results/tables/mechanics_attention_profile.parquet",
        claims="results/claims/mechanics.parquet",
        section="results/sections/mechanics.md",
    params:
        runs=sweep_runs(pe=["rope", "learned"]),
        offsets=config["sweep"]["offset"],
        train_length_max=config["task"]["train_length_max"],
        learned_init_std=config["model"]["learned_init_std"],
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_mechanics.log",
    script:
        "../scripts/analyze_mechanics.py"


rule analyze_shift:
    """Largest logit change when every position id is shifted, float32 and float64."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "runs.py", "shift.py", "data.py", "training.py", "claims.py"),
        models=lambda w: model_files(sweep_runs(offset=[int(w.offset)])),
        eval_set="results/data/eval/offset~{offset}.parquet",
    output:
        changes="results/tables/shift_changes_K{offset}.parquet",
        claims="results/claims/shift_K{offset}.parquet",
        section="results/sections/shift_K{offset}.md",
    params:
        runs=lambda w: sweep_runs(offset=[int(w.offset)]),
        shifts=config["shift"]["shifts"],
        lengths=config["shift"]["lengths"],
        untrained=[pe for pe in config["shift"]["pe_at_init"] if pe not in config["sweep"]["pe"]],
        seeds=config["sweep"]["seed"],
        head={
            "vocab_size": config["task"]["vocab_size"],
            "d_model": config["model"]["d_model"],
            "max_positions": config["model"]["max_positions"],
            "rope_base": config["model"]["rope_base"],
        },
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_shift/K{offset}.log",
    script:
        "../scripts/analyze_shift.py"


rule analyze_prop1:
    """The dilution law: target attention and accuracy predicted from parameters vs measured."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "runs.py", "dilution.py", "kernel.py", "seeding.py", "claims.py"),
        models=model_files(sweep_runs(pe=["rope"])),
        accuracy="results/tables/accuracy_by_length.parquet",
    output:
        comparison="results/tables/prop1_prediction.parquet",
        errors="results/tables/prop1_error.parquet",
        claims="results/claims/prop1.parquet",
        section="results/sections/prop1.md",
    params:
        runs=sweep_runs(pe=["rope"]),
        lengths=config["task"]["eval_lengths"],
        n_samples=config["prop1"]["n_samples"],
        train_length_max=config["task"]["train_length_max"],
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_prop1.log",
    script:
        "../scripts/analyze_prop1.py"


rule analyze_frequency:
    """The content-averaged RoPE kernel, decomposed into its rotary frequency blocks."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "runs.py", "frequency.py", "kernel.py", "claims.py"),
        models=model_files(sweep_runs(pe=["rope"])),
    output:
        blocks="results/tables/frequency_blocks.parquet",
        summary="results/tables/frequency_summary.parquet",
        singular="results/tables/frequency_singular_values.parquet",
        claims="results/claims/frequency.parquet",
        section="results/sections/frequency.md",
    params:
        runs=sweep_runs(pe=["rope"]),
        train_length_max=config["task"]["train_length_max"],
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_frequency.log",
    script:
        "../scripts/analyze_frequency.py"


rule analyze_linear:
    """The linear control: accuracy and weights vs length, and its kernel vs the min-norm one."""
    input:
        lengthgen_sources(*MODEL_SOURCES, "runs.py", "linear_control.py", "data.py", "claims.py"),
        models=expand(f"results/models/linear/{{run}}/model.pt", run=LINEAR_RUNS.instance_patterns),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
    output:
        by_length="results/tables/linear_by_length.parquet",
        kernels="results/tables/linear_kernel.parquet",
        comparison="results/tables/linear_kernel_comparison.parquet",
        dilution="results/tables/linear_kernel_dilution.parquet",
        claims="results/claims/linear.parquet",
        section="results/sections/linear.md",
    params:
        runs=LINEAR_RUNS.dataframe.to_dict("records"),
        offsets=config["sweep"]["offset"],
        lengths=config["task"]["eval_lengths"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
        training=config_slice("linear"),
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_linear.log",
    script:
        "../scripts/analyze_linear.py"


rule analyze_multiseed:
    """Every headline per (offset, seed) with its 95% interval; all claims in one table."""
    input:
        lengthgen_sources("multiseed.py", "stats.py", "claims.py", "tables.py"),
        accuracy_by_length="results/tables/accuracy_by_length.parquet",
        mechanics_by_length="results/tables/mechanics_by_length.parquet",
        shift_changes=expand("results/tables/shift_changes_K{offset}.parquet", offset=config["shift"]["offsets"]),
        prop1_prediction="results/tables/prop1_prediction.parquet",
        frequency_summary="results/tables/frequency_summary.parquet",
        linear_by_length="results/tables/linear_by_length.parquet",
        claims=[f"results/claims/{name}.parquet" for name in EXPERIMENTS if name != "multiseed"],
    output:
        by_seed="results/tables/headline_by_seed.parquet",
        summary="results/tables/headline_summary.parquet",
        claims="results/claims/multiseed.parquet",
        all_claims="results/tables/claims.parquet",
        section="results/sections/multiseed.md",
    params:
        settings={
            "vocab_size": config["task"]["vocab_size"],
            "train_length_max": config["task"]["train_length_max"],
        },
    conda:
        CONDA_ENV
    log:
        "results/logs/analyze_multiseed.log",
    script:
        "../scripts/analyze_multiseed.py"
