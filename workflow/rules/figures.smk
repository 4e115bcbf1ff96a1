FIGURES = ["results/figures/base.png"]


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
        "results/figures/base.png",
    params:
        dpi=config["figures"]["dpi"],
        vocab_size=config["task"]["vocab_size"],
        train_lengths=[config["task"]["train_length_min"], config["task"]["train_length_max"]],
    log:
        "results/logs/plot_base.log",
    script:
        "../scripts/plot_base.py"
