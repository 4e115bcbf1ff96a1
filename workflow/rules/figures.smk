# Each section's figures, keyed like EXPERIMENTS; only those of the experiments that run are built.
FIGURES_BY_SECTION = {
    section: [f"{RESULTS}/figures/{figure}.png" for figure in JOBS.figures(experiment, offset)]
    for experiment in PLAN.running
    for section, offset in JOBS.sections(experiment).items()
}
FIGURES = [figure for section in EXPERIMENTS for figure in FIGURES_BY_SECTION[section]]
# Every figure's dpi, set once: layered over the style file (workflow/matplotlibrc) by every figure job.
FIGURE_SETTINGS = {"savefig.dpi": config["figures"]["dpi"]}


rule plot_all:
    """Every figure, without the report."""
    input:
        FIGURES,


# One figure job per experiment that runs (per offset for a per-offset experiment): from its tables and checks,
# its plot module (lengthgen/experiments/<name>/figures.py) draws its figures and its section module
# (section.py) writes its section text, so that editing either reruns no analysis. And a target named like the experiment
# (`snakemake transformer`): its sections and figures, and only what they need.
for experiment in PLAN.running:

    rule:
        """One experiment alone: its sections and figures."""
        name:
            experiment.name
        input:
            [f"{RESULTS}/sections/{section}.md" for section in JOBS.sections(experiment)],
            [figure for section in JOBS.sections(experiment) for figure in FIGURES_BY_SECTION[section]],

    rule:
        name:
            f"plot_{experiment.name}"
        input:
            unpack(per_job(experiment, lambda offset, experiment=experiment: {
                "style": FIGURE_STYLE,
                "claims": f"{RESULTS}/claims/{section_name(experiment, offset)}.parquet",
                **{name: path for name, (path, _) in JOBS.figure_tables(experiment, offset).items()},
            })),
        output:
            figures=[report(f"{RESULTS}/figures/{figure}.png", caption=JOBS.caption(experiment, figure),
                            category=experiment.name) for figure in JOBS.figures(experiment)],
            section=f"{RESULTS}/sections/{section_name(experiment, '{offset}')}.md",
        params:
            *JOBS.code(experiment, "plot.py"),
            experiment=experiment.name,
            figures=per_job(experiment, lambda offset, experiment=experiment: JOBS.figures(experiment, offset)),
            schemas=per_job(experiment, lambda offset, experiment=experiment: {
                name: schema for name, (_, schema) in JOBS.figure_tables(experiment, offset).items()}),
            settings=per_job(experiment, lambda offset, experiment=experiment: JOBS.settings(experiment, offset)),
            style=FIGURE_SETTINGS,
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            JOBS.log(f"plot_{experiment.name}", experiment),
        script:
            "../scripts/plot.py"


