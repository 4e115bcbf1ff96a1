# Each section's figures, keyed like EXPERIMENTS; only those of the experiments that run are built.
FIGURES_BY_SECTION = {
    "base": [f"{RESULTS}/figures/base.png"],
    "mechanics": [f"{RESULTS}/figures/mechanics.png"],
    **{f"shift_K{offset}": [f"{RESULTS}/figures/shift_equivariance_K{offset}.png"] for offset in config["shift"]["offsets"]},
    "prop1": expand(f"{RESULTS}/figures/prop1_validation_K{{offset}}.png", offset=config["sweep"]["offset"]),
    "frequency": [f"{RESULTS}/figures/frequency_rank.png"],
    "linear": [f"{RESULTS}/figures/linear_control.png"],
    "variants": [f"{RESULTS}/figures/pe_variants.png"],
    "cures": [f"{RESULTS}/figures/dilution_cures.png"],
    "transformer": [f"{RESULTS}/figures/transformer_shift.png", f"{RESULTS}/figures/transformer.png"],
    "multiseed": [f"{RESULTS}/figures/multiseed_results.png"],
}
FIGURES = [figure for section in EXPERIMENTS for figure in FIGURES_BY_SECTION[section]]


rule plot_all:
    """Every figure, without the report."""
    input:
        FIGURES,


rule transformer:
    """The transformer experiment alone: its section and figures (e.g. under configs/transformer_gpu.yaml)."""
    input:
        f"{RESULTS}/sections/transformer.md",
        FIGURES_BY_SECTION["transformer"],


rule plot_base:
    input:
        script_sources("plot_base.py"),
        summary=f"{RESULTS}/tables/accuracy_summary.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/base.png", caption="../report/base.rst", category="base"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_base.log",
    script:
        "../scripts/plot_base.py"


rule plot_mechanics:
    input:
        script_sources("plot_mechanics.py"),
        by_length=f"{RESULTS}/tables/mechanics_by_length.parquet",
        histogram=f"{RESULTS}/tables/mechanics_argmax_histogram.parquet",
        profile=f"{RESULTS}/tables/mechanics_attention_profile.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/mechanics.png", caption="../report/mechanics.rst", category="mechanics"),
    params:
        dpi=config["figures"]["dpi"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_mechanics.log",
    script:
        "../scripts/plot_mechanics.py"


rule plot_shift:
    input:
        script_sources("plot_shift.py"),
        changes=f"{RESULTS}/tables/shift_changes_K{{offset}}.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/shift_equivariance_K{{offset}}.png", caption="../report/shift.rst", category="shift"),
    params:
        dpi=config["figures"]["dpi"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_shift/K{{offset}}.log",
    script:
        "../scripts/plot_shift.py"


rule plot_prop1:
    input:
        script_sources("plot_prop1.py"),
        comparison=f"{RESULTS}/tables/prop1_prediction.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/prop1_validation_K{{offset}}.png", caption="../report/prop1.rst", category="prop1"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_prop1/K{{offset}}.log",
    script:
        "../scripts/plot_prop1.py"


rule plot_frequency:
    input:
        script_sources("plot_frequency.py"),
        blocks=f"{RESULTS}/tables/frequency_blocks.parquet",
        summary=f"{RESULTS}/tables/frequency_summary.parquet",
        singular=f"{RESULTS}/tables/frequency_singular_values.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/frequency_rank.png", caption="../report/frequency.rst", category="frequency"),
    params:
        dpi=config["figures"]["dpi"],
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_frequency.log",
    script:
        "../scripts/plot_frequency.py"


rule plot_linear:
    input:
        script_sources("plot_linear.py"),
        by_length=f"{RESULTS}/tables/linear_by_length.parquet",
        kernels=f"{RESULTS}/tables/linear_kernel.parquet",
        comparison=f"{RESULTS}/tables/linear_comparison.parquet",
        cutoffs=f"{RESULTS}/tables/linear_cutoffs.parquet",
        convergence=f"{RESULTS}/tables/linear_convergence.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/linear_control.png", caption="../report/linear.rst", category="linear"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_linear.log",
    script:
        "../scripts/plot_linear.py"


rule plot_variants:
    input:
        script_sources("plot_variants.py"),
        summary=f"{RESULTS}/tables/variants_summary.parquet",
        classes=f"{RESULTS}/tables/variants_classes.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/pe_variants.png", caption="../report/variants.rst", category="variants"),
    params:
        dpi=config["figures"]["dpi"],
        encodings=config["variants"]["pe"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_variants.log",
    script:
        "../scripts/plot_variants.py"


rule plot_cures:
    input:
        script_sources("plot_cures.py"),
        by_length=f"{RESULTS}/tables/cures_by_length.parquet",
        predictions=f"{RESULTS}/tables/cures_prediction.parquet",
        recovery=f"{RESULTS}/tables/cures_recovery.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/dilution_cures.png", caption="../report/cures.rst", category="cures"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_cures.log",
    script:
        "../scripts/plot_cures.py"


rule plot_transformer:
    input:
        script_sources("plot_transformer.py"),
        changes=f"{RESULTS}/tables/transformer_shift_changes.parquet",
        by_position=f"{RESULTS}/tables/transformer_by_position.parquet",
        heads=f"{RESULTS}/tables/transformer_heads.parquet",
        blocks=f"{RESULTS}/tables/transformer_blocks.parquet",
        carrier=f"{RESULTS}/tables/transformer_carrier.parquet",
        style=FIGURE_STYLE,
    output:
        shift=report(
            f"{RESULTS}/figures/transformer_shift.png",
            caption="../report/transformer_shift.rst",
            category="transformer",
        ),
        accuracy=report(
            f"{RESULTS}/figures/transformer.png", caption="../report/transformer.rst", category="transformer"
        ),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_length_max=config["task"]["train_length_max"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_transformer.log",
    script:
        "../scripts/plot_transformer.py"


rule plot_multiseed:
    input:
        script_sources("plot_multiseed.py"),
        by_seed=f"{RESULTS}/tables/headline_by_seed.parquet",
        summary=f"{RESULTS}/tables/headline_summary.parquet",
        style=FIGURE_STYLE,
    output:
        report(f"{RESULTS}/figures/multiseed_results.png", caption="../report/multiseed.rst", category="multiseed"),
    params:
        dpi=config["figures"]["dpi"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/plot_multiseed.log",
    script:
        "../scripts/plot_multiseed.py"
