rule accuracy_by_length:
    """The tidy table: one row per (model, evaluation length)."""
    input:
        script_sources("combine_tables.py"),
        evaluations=evaluation_files(sweep_runs()),
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
        spread=f"{RESULTS}/spread/base.parquet",
        section=f"{RESULTS}/sections/base.md",
    params:
        bootstrap=bootstrap_settings("base"),
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
        spread=f"{RESULTS}/spread/mechanics.parquet",
        section=f"{RESULTS}/sections/mechanics.md",
    params:
        bootstrap=bootstrap_settings("mechanics"),
        runs=sweep_runs(pe=["rope", "learned"]),
        expected=HEAD,
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
        spread=f"{RESULTS}/spread/shift_K{{offset}}.parquet",
        section=f"{RESULTS}/sections/shift_K{{offset}}.md",
    params:
        bootstrap=lambda w: bootstrap_settings(f"shift_K{w.offset}"),
        runs=lambda w: sweep_runs(offset=[int(w.offset)]),
        shifts=config["shift"]["shifts"],
        lengths=config["shift"]["lengths"],
        untrained=[pe for pe in config["shift"]["pe_at_init"] if pe not in config["sweep"]["pe"]],
        seeds=config["sweep"]["seed"],
        expected=HEAD,
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
        spread=f"{RESULTS}/spread/prop1.parquet",
        section=f"{RESULTS}/sections/prop1.md",
    params:
        bootstrap=bootstrap_settings("prop1"),
        runs=sweep_runs(pe=["rope"]),
        expected=HEAD,
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
    """The content-averaged RoPE kernel, decomposed into its rotary frequency blocks (trained and at init)."""
    input:
        script_sources("analyze_frequency.py"),
        models=model_files(sweep_runs(pe=["rope"])),
    output:
        blocks=f"{RESULTS}/tables/frequency_blocks.parquet",
        summary=f"{RESULTS}/tables/frequency_summary.parquet",
        untrained=f"{RESULTS}/tables/frequency_untrained_summary.parquet",
        singular=f"{RESULTS}/tables/frequency_singular_values.parquet",
        claims=f"{RESULTS}/claims/frequency.parquet",
        spread=f"{RESULTS}/spread/frequency.parquet",
        section=f"{RESULTS}/sections/frequency.md",
    params:
        bootstrap=bootstrap_settings("frequency"),
        runs=sweep_runs(pe=["rope"]),
        expected=HEAD,
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
    """The linear control: arm 1, the min-norm control (trained here: seconds), and arm 2, the
    linear-attention heads; accuracy and weights vs length, kernels vs the min-norm interpolant."""
    input:
        script_sources("analyze_linear.py"),
        models=modified_model_files("linear"),
        curves=modified_model_files("linear", "training_curve.parquet"),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
    output:
        by_length=f"{RESULTS}/tables/linear_by_length.parquet",
        kernels=f"{RESULTS}/tables/linear_kernel.parquet",
        cutoffs=f"{RESULTS}/tables/linear_cutoffs.parquet",
        comparison=f"{RESULTS}/tables/linear_comparison.parquet",
        convergence=f"{RESULTS}/tables/linear_convergence.parquet",
        progress=f"{RESULTS}/tables/linear_training_progress.parquet",
        claims=f"{RESULTS}/claims/linear.parquet",
        spread=f"{RESULTS}/spread/linear.parquet",
        section=f"{RESULTS}/sections/linear.md",
    params:
        bootstrap=bootstrap_settings("linear"),
        runs=modified_runs("linear"),
        expected=modified_head("linear"),
        offsets=config["sweep"]["offset"],
        lengths=config["task"]["eval_lengths"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
        control=dict(sorted(config["linear"]["min_norm"].items())),
        head=config_slice("linear", ["steps", "batch_size", "lr"]),
        model=config_slice("model", ["d_model", "rope_base"]),
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_linear.log",
    script:
        "../scripts/analyze_linear.py"


rule analyze_variants:
    """Every encoding of variants.pe: accuracy over seeds, its class past the range, the account's checks."""
    input:
        script_sources("analyze_variants.py"),
        evaluations=evaluation_files(variant_runs()),
        fits=range_fit_files(variant_runs()),
    output:
        summary=f"{RESULTS}/tables/variants_summary.parquet",
        classes=f"{RESULTS}/tables/variants_classes.parquet",
        claims=f"{RESULTS}/claims/variants.parquet",
        spread=f"{RESULTS}/spread/variants.parquet",
        section=f"{RESULTS}/sections/variants.md",
    params:
        bootstrap=bootstrap_settings("variants"),
        encodings=config["variants"]["pe"],
        # What the registry states about each encoding, read here from its source (lengthgen/encoding_catalog.py),
        # so that neither the job nor the workflow's parse needs torch.
        descriptions={pe: encoding_description(pe) for pe in config["variants"]["pe"]},
        vocab_size=config["task"]["vocab_size"],
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_variants.log",
    script:
        "../scripts/analyze_variants.py"


rule analyze_cures:
    """Evaluation-time cures of dilution on the base heads, the law's predictions, the log-length head."""
    input:
        script_sources("analyze_cures.py"),
        models=model_files(sweep_runs(pe=["rope", "learned"])),
        trained=modified_model_files("log_length"),
        eval_sets=eval_set_files(config["sweep"]["offset"]),
        prop1_prediction=f"{RESULTS}/tables/prop1_prediction.parquet",
    output:
        by_length=f"{RESULTS}/tables/cures_by_length.parquet",
        predictions=f"{RESULTS}/tables/cures_prediction.parquet",
        recovery=f"{RESULTS}/tables/cures_recovery.parquet",
        claims=f"{RESULTS}/claims/cures.parquet",
        spread=f"{RESULTS}/spread/cures.parquet",
        section=f"{RESULTS}/sections/cures.md",
    params:
        bootstrap=bootstrap_settings("cures"),
        runs=sweep_runs(pe=["rope", "learned"]),
        expected=HEAD,
        trained_runs=modified_runs("log_length"),
        trained_expected=modified_head("log_length"),
        offsets=config["sweep"]["offset"],
        lengths=config["task"]["eval_lengths"],
        n_samples=config["prop1"]["n_samples"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_cures.log",
    script:
        "../scripts/analyze_cures.py"


rule analyze_transformer:
    """The three findings in the transformer: accuracy by position, shift equivariance, the retrieval head's carrier."""
    input:
        script_sources("analyze_transformer.py"),
        models=expand(
            f"{RESULTS}/models/transformer/{{run}}/model.pt", run=TRANSFORMER_RUNS.instance_patterns
        ),
        evaluations=expand(
            f"{RESULTS}/evaluations/transformer/{{run}}.parquet", run=TRANSFORMER_RUNS.instance_patterns
        ),
        eval_sets=eval_set_files(config["transformer"]["offsets"]),
    output:
        by_position=f"{RESULTS}/tables/transformer_by_position.parquet",
        windows=f"{RESULTS}/tables/transformer_windows.parquet",
        changes=f"{RESULTS}/tables/transformer_shift_changes.parquet",
        heads=f"{RESULTS}/tables/transformer_heads.parquet",
        blocks=f"{RESULTS}/tables/transformer_blocks.parquet",
        carrier=f"{RESULTS}/tables/transformer_carrier.parquet",
        claims=f"{RESULTS}/claims/transformer.parquet",
        spread=f"{RESULTS}/spread/transformer.parquet",
        section=f"{RESULTS}/sections/transformer.md",
    params:
        bootstrap=bootstrap_settings("transformer"),
        runs=TRANSFORMER_RUNS.dataframe.to_dict("records"),
        expected={"vocab_size": config["task"]["vocab_size"], **TRANSFORMER_TRAINING},
        offsets=config["transformer"]["offsets"],
        shifts=config["shift"]["shifts"],
        shift_lengths=config["shift"]["lengths"],
        device=config["device"],
        settings={
            **config_slice(
                "transformer",
                ["n_layers", "n_heads", "d_model", "steps", "batch_size", "lr", "precision", "eval_samples"],
            ),
            **config_slice("task", ["vocab_size", "train_length_min", "train_length_max"]),
        },
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/analyze_transformer.log",
    script:
        "../scripts/analyze_transformer.py"


# The tables each experiment's multiseed headlines are read from (experiments.multiseed.HEADLINES).
HEADLINE_TABLES = {
    "base": [f"{RESULTS}/tables/accuracy_by_length.parquet"],
    "mechanics": [f"{RESULTS}/tables/mechanics_by_length.parquet"],
    "shift": expand(f"{RESULTS}/tables/shift_changes_K{{offset}}.parquet", offset=config["shift"]["offsets"]),
    "prop1": [f"{RESULTS}/tables/prop1_prediction.parquet"],
    "frequency": [f"{RESULTS}/tables/frequency_summary.parquet"],
    "linear": [f"{RESULTS}/tables/linear_by_length.parquet"],
}
HEADLINE_EXPERIMENTS = [name for name in PLAN.experiments if name in HEADLINE_TABLES]


rule analyze_multiseed:
    """Every headline of the experiments that run, per (offset, seed), with its 95% interval."""
    input:
        script_sources("analyze_multiseed.py"),
        **{name: HEADLINE_TABLES[name] for name in HEADLINE_EXPERIMENTS},
    output:
        by_seed=f"{RESULTS}/tables/headline_by_seed.parquet",
        summary=f"{RESULTS}/tables/headline_summary.parquet",
        claims=f"{RESULTS}/claims/multiseed.parquet",
        spread=f"{RESULTS}/spread/multiseed.parquet",
        section=f"{RESULTS}/sections/multiseed.md",
    params:
        bootstrap=bootstrap_settings("multiseed"),
        experiments=HEADLINE_EXPERIMENTS,
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


rule all_claims:
    """Every check of every experiment that runs, with its experiment's verdict, in one table; their seed
    spreads in another, row for row."""
    input:
        script_sources("combine_claims.py"),
        claims=expand(f"{RESULTS}/claims/{{section}}.parquet", section=EXPERIMENTS),
        spreads=expand(f"{RESULTS}/spread/{{section}}.parquet", section=EXPERIMENTS),
    output:
        claims=f"{RESULTS}/tables/claims.parquet",
        spread=f"{RESULTS}/tables/claim_spread.parquet",
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/all_claims.log",
    script:
        "../scripts/combine_claims.py"
