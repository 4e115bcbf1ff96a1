rule accuracy_by_length:
    """The tidy table: one row per (model, evaluation length)."""
    input:
        script_sources("combine_tables.py"),
        evaluations=expand(f"{RESULTS}/evaluations/{{run}}.parquet", run=RUNS.instance_patterns),
    output:
        f"{RESULTS}/tables/accuracy_by_length.parquet",
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/accuracy_by_length.log",
    script:
        "../scripts/combine_tables.py"


rule analyze_base:
    """Mean and 95% interval over seeds, the base claim's checks, and its RESULTS.md section."""
    input:
        script_sources("analyze_base.py"),
        accuracy=f"{RESULTS}/tables/accuracy_by_length.parquet",
    output:
        summary=f"{RESULTS}/tables/accuracy_summary.parquet",
        claims=f"{RESULTS}/claims/base.parquet",
        section=f"{RESULTS}/sections/base.md",
    params:
        vocab_size=config["task"]["vocab_size"],
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_base.log",
    script:
        "../scripts/analyze_base.py"


rule analyze_mechanics:
    """Where each trained head attends, at every evaluation length."""
    input:
        script_sources("analyze_mechanics.py"),
        models=model_files(sweep_runs(pe=["rope", "learned"])),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
    output:
        by_length=f"{RESULTS}/tables/mechanics_by_length.parquet",
        histogram=f"{RESULTS}/tables/mechanics_argmax_histogram.parquet",
        profile=f"{RESULTS}/tables/mechanics_attention_profile.parquet",
        claims=f"{RESULTS}/claims/mechanics.parquet",
        section=f"{RESULTS}/sections/mechanics.md",
    params:
        runs=sweep_runs(pe=["rope", "learned"]),
        offsets=config["sweep"]["offset"],
        train_length_max=config["task"]["train_length_max"],
        learned_init_std=config["model"]["learned_init_std"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_mechanics.log",
    script:
        "../scripts/analyze_mechanics.py"


rule analyze_shift:
    """Largest logit change when every position id is shifted, float32 and float64."""
    input:
        script_sources("analyze_shift.py"),
        models=lambda w: model_files(sweep_runs(offset=[int(w.offset)])),
        eval_set=f"{RESULTS}/data/eval/offset~{{offset}}.parquet",
    output:
        changes=f"{RESULTS}/tables/shift_changes_K{{offset}}.parquet",
        claims=f"{RESULTS}/claims/shift_K{{offset}}.parquet",
        section=f"{RESULTS}/sections/shift_K{{offset}}.md",
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
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_shift/K{{offset}}.log",
    script:
        "../scripts/analyze_shift.py"


rule analyze_prop1:
    """The dilution law: target attention and accuracy predicted from parameters vs measured."""
    input:
        script_sources("analyze_prop1.py"),
        models=model_files(sweep_runs(pe=["rope"])),
        accuracy=f"{RESULTS}/tables/accuracy_by_length.parquet",
    output:
        comparison=f"{RESULTS}/tables/prop1_prediction.parquet",
        errors=f"{RESULTS}/tables/prop1_error.parquet",
        claims=f"{RESULTS}/claims/prop1.parquet",
        section=f"{RESULTS}/sections/prop1.md",
    params:
        runs=sweep_runs(pe=["rope"]),
        lengths=config["task"]["eval_lengths"],
        n_samples=config["prop1"]["n_samples"],
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_prop1.log",
    script:
        "../scripts/analyze_prop1.py"


rule analyze_frequency:
    """The content-averaged RoPE kernel, decomposed into its rotary frequency blocks."""
    input:
        script_sources("analyze_frequency.py"),
        models=model_files(sweep_runs(pe=["rope"])),
    output:
        blocks=f"{RESULTS}/tables/frequency_blocks.parquet",
        summary=f"{RESULTS}/tables/frequency_summary.parquet",
        singular=f"{RESULTS}/tables/frequency_singular_values.parquet",
        claims=f"{RESULTS}/claims/frequency.parquet",
        section=f"{RESULTS}/sections/frequency.md",
    params:
        runs=sweep_runs(pe=["rope"]),
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_frequency.log",
    script:
        "../scripts/analyze_frequency.py"


rule analyze_linear:
    """The linear control: accuracy and weights vs length, and its kernel vs the min-norm one."""
    input:
        script_sources("analyze_linear.py"),
        models=expand(f"{RESULTS}/models/linear/{{run}}/model.pt", run=LINEAR_RUNS.instance_patterns),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
    output:
        by_length=f"{RESULTS}/tables/linear_by_length.parquet",
        kernels=f"{RESULTS}/tables/linear_kernel.parquet",
        comparison=f"{RESULTS}/tables/linear_kernel_comparison.parquet",
        dilution=f"{RESULTS}/tables/linear_kernel_dilution.parquet",
        claims=f"{RESULTS}/claims/linear.parquet",
        section=f"{RESULTS}/sections/linear.md",
    params:
        runs=LINEAR_RUNS.dataframe.to_dict("records"),
        offsets=config["sweep"]["offset"],
        lengths=config["task"]["eval_lengths"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
        training=config_slice("linear"),
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_linear.log",
    script:
        "../scripts/analyze_linear.py"


rule analyze_multiseed:
    """Every headline per (offset, seed) with its 95% interval; all claims in one table."""
    input:
        script_sources("analyze_multiseed.py"),
        accuracy_by_length=f"{RESULTS}/tables/accuracy_by_length.parquet",
        mechanics_by_length=f"{RESULTS}/tables/mechanics_by_length.parquet",
        shift_changes=expand(f"{RESULTS}/tables/shift_changes_K{{offset}}.parquet", offset=config["shift"]["offsets"]),
        prop1_prediction=f"{RESULTS}/tables/prop1_prediction.parquet",
        frequency_summary=f"{RESULTS}/tables/frequency_summary.parquet",
        linear_by_length=f"{RESULTS}/tables/linear_by_length.parquet",
        claims=[f"{RESULTS}/claims/{name}.parquet" for name in EXPERIMENTS if name != "multiseed"],
    output:
        by_seed=f"{RESULTS}/tables/headline_by_seed.parquet",
        summary=f"{RESULTS}/tables/headline_summary.parquet",
        claims=f"{RESULTS}/claims/multiseed.parquet",
        all_claims=f"{RESULTS}/tables/claims.parquet",
        section=f"{RESULTS}/sections/multiseed.md",
    params:
        settings={
            "vocab_size": config["task"]["vocab_size"],
            "train_length_max": config["task"]["train_length_max"],
        },
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_multiseed.log",
    script:
        "../scripts/analyze_multiseed.py"
