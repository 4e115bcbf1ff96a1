FIGURES = [
    "results/figures/base.png",
    "results/figures/mechanics.png",
    *expand("results/figures/shift_equivariance_K{offset}.png", offset=config["shift"]["offsets"]),
    *expand("results/figures/prop1_validation_K{offset}.png", offset=config["sweep"]["offset"]),
    "results/figures/frequency_rank.png",
    "results/figures/linear_control.png",
    "results/figures/multiseed_results.png",
]


rule plot_all:
    """Every figure, without the report."""
    input:
        FIGURES,


rule plot_base:
    input:
        lengthgen_sources("plots/__init__.py", "plots/base.py"),
        summary="results/tables/accuracy_summary.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/base.png", caption="../report/base.rst", category="base"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_base.log",
    script:
        "../scripts/plot_base.py"


rule plot_mechanics:
    input:
        lengthgen_sources("plots/__init__.py", "plots/mechanics.py"),
        by_length="results/tables/mechanics_by_length.parquet",
        histogram="results/tables/mechanics_argmax_histogram.parquet",
        profile="results/tables/mechanics_attention_profile.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/mechanics.png", caption="../report/mechanics.rst", category="mechanics"),
    params:
        dpi=config["figures"]["dpi"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_mechanics.log",
    script:
        "../scripts/plot_mechanics.py"


rule plot_shift:
    input:
        lengthgen_sources("plots/__init__.py", "plots/shift.py"),
        changes="results/tables/shift_changes_K{offset}.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/shift_equivariance_K{offset}.png", caption="../report/shift.rst", category="shift"),
    params:
        dpi=config["figures"]["dpi"],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_shift/K{offset}.log",
    script:
        "../scripts/plot_shift.py"


rule plot_prop1:
    input:
        lengthgen_sources("plots/__init__.py", "plots/dilution.py"),
        comparison="results/tables/prop1_prediction.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/prop1_validation_K{offset}.png", caption="../report/prop1.rst", category="prop1"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_prop1/K{offset}.log",
    script:
        "../scripts/plot_prop1.py"


rule plot_frequency:
    input:
        lengthgen_sources("plots/__init__.py", "plots/frequency.py"),
        blocks="results/tables/frequency_blocks.parquet",
        summary="results/tables/frequency_summary.parquet",
        singular="results/tables/frequency_singular_values.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/frequency_rank.png", caption="../report/frequency.rst", category="frequency"),
    params:
        dpi=config["figures"]["dpi"],
        train_length_max=config["task"]["train_length_max"],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_frequency.log",
    script:
        "../scripts/plot_frequency.py"


rule plot_linear:
    input:
        lengthgen_sources("plots/__init__.py", "plots/linear_control.py"),
        by_length="results/tables/linear_by_length.parquet",
        kernels="results/tables/linear_kernel.parquet",
        comparison="results/tables/linear_kernel_comparison.parquet",
        dilution="results/tables/linear_kernel_dilution.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/linear_control.png", caption="../report/linear.rst", category="linear"),
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_linear.log",
    script:
        "../scripts/plot_linear.py"


rule plot_multiseed:
    input:
        lengthgen_sources("plots/__init__.py", "plots/multiseed.py"),
        by_seed="results/tables/headline_by_seed.parquet",
        summary="results/tables/headline_summary.parquet",
        style=FIGURE_STYLE,
    output:
        report("results/figures/multiseed_results.png", caption="../report/multiseed.rst", category="multiseed"),
    params:
        dpi=config["figures"]["dpi"],
    conda:
        CONDA_ENV
    log:
        "results/logs/plot_multiseed.log",
    script:
        "../scripts/plot_multiseed.py"
