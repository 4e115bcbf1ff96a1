from lengthgen.report.pages import FIRST_SCREEN, page_paths

# The previous committed run's claims, when the config names them: the changes appendix says what moved since.
PREVIOUS_RUN = (
    {"previous_claims": str(REPO / config["report"]["previous_claims"])} if config["report"]["previous_claims"] else {}
)
# Every page of the report, relative to the results folder (RESULTS.md first).
REPORT_PAGES = page_paths(PLAN.experiments, bool(PREVIOUS_RUN), bool(CONFIRMATION) and JUDGED,
                          bool(ROBUSTNESS) and JUDGED)


rule report:
    """The report: RESULTS.md (setup, bottom line, claims table, Figure 1), a page per experiment and the
    appendices (methods, setup, training, claims in detail, rule history, changes, replication, each experiment's
    full section), every one written atomically."""
    input:
        figures=FIGURES,
        claim_figures=list(CLAIM_FIGURES.values()) if JUDGED else [],
        sections=expand(f"{RESULTS}/sections/{{experiment}}.md", experiment=EXPERIMENTS),
        claims=f"{RESULTS}/tables/claims.parquet",
        spread=f"{RESULTS}/tables/claim_spread.parquet",
        training=f"{RESULTS}/tables/training.parquet",
        # Rope's accuracy at the longest length, for Figure 1's caption.
        **({"accuracy": f"{RESULTS}/tables/accuracy_summary.parquet"} if "generalization" in PLAN.experiments else {}),
        # Every claim judged in every condition: this run, the confirmation runs, the robustness points.
        **JUDGMENTS,
        **PREVIOUS_RUN,
        # The mechanism across the robustness points, for its appendix.
        **({"robustness_section": ROBUSTNESS_OUTPUTS["robustness_section"]} if ROBUSTNESS_OUTPUTS else {}),
    output:
        # The first screen in reStructuredText is the HTML report's front page (workflow/captions/workflow.rst).
        [report(f"{RESULTS}/{page}", category="results") if page == FIRST_SCREEN else f"{RESULTS}/{page}"
         for page in REPORT_PAGES],
    params:
        *script_code("write_report.py"),
        encodings=encoding_code(families.every_encoding(config)),
        config=config,
        commit=CODE_VERSION,
        sections=EXPERIMENTS,
        experiments=PLAN.experiments,
        pages=REPORT_PAGES,
        left_out=PLAN.left_out,
        changes_note=config["report"]["changes_note"],
    group:
        "summary"
    conda:
        CONDA_ENV
    log:
        f"{RESULTS}/logs/report.log",
    script:
        "../scripts/write_report.py"
