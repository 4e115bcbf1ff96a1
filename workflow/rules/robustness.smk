# The robustness study: every point of robustness.points layered over the config as given (lengthgen/studies/robustness/
# points.py) and run as this same workflow, a Snakemake module, into <results_dir>/robustness/<point>, its rules named
# robust_<point>_<rule>; only the study's experiments run there, and only the jobs they need (the sweep's training,
# one stacked job per (encoding, offset)). Each claim is judged at every point by rule judge_claims (claims.smk); rule
# robustness measures the mechanism at each. This run is the default point: its tables are read, nothing is retrained. A point runs no
# points of its own, so its module includes no further modules.
from lengthgen.studies.robustness.points import DEFAULT_POINT, POINT_PREFIX, robustness_points, shared_chance

try:
    ROBUSTNESS = robustness_points(CONFIG_AS_GIVEN, config, CONFIG_SCHEMA)
except ConfigError as error:
    sys.exit(f"Config error: {error}")

for ROBUSTNESS_NAME, ROBUSTNESS_POINT in ROBUSTNESS.items():
    # Module and rule-prefix names as variables: Snakemake resolves both at `use rule` (dynamic modules).
    ROBUSTNESS_MODULE = f"{POINT_PREFIX}{ROBUSTNESS_NAME}"
    ROBUSTNESS_RULES = f"{POINT_PREFIX}{ROBUSTNESS_NAME}_"

    module:
        name:
            ROBUSTNESS_MODULE
        snakefile:
            "../../Snakefile"
        config:
            ROBUSTNESS_POINT.config

    use rule * from ROBUSTNESS_MODULE as ROBUSTNESS_RULES*


# Every point's results folder, the default (this run) first, then in config order.
ROBUSTNESS_FOLDERS = {DEFAULT_POINT: RESULTS, **{name: point.results_dir for name, point in ROBUSTNESS.items()}}
ROBUSTNESS_OUTPUTS = (
    {
        "robustness_mechanism": f"{RESULTS}/tables/robustness_mechanism.parquet",
        "robustness_section": f"{RESULTS}/sections/robustness.md",
    }
    if ROBUSTNESS
    else {}
)


if ROBUSTNESS:

    rule robustness:
        """The mechanism at each point of the study, and its section."""
        input:
            errors=point_tables(ROBUSTNESS_FOLDERS, "errors_by_length"),
            kernels=point_tables(ROBUSTNESS_FOLDERS, "prop1_kernel"),
            prop1_errors=point_tables(ROBUSTNESS_FOLDERS, "prop1_error"),
        output:
            mechanism=ROBUSTNESS_OUTPUTS["robustness_mechanism"],
            section=ROBUSTNESS_OUTPUTS["robustness_section"],
        params:
            *script_code("robustness.py"),
            points=list(ROBUSTNESS_FOLDERS),
        group:
            "summary"
        conda:
            CONDA_ENV
        log:
            f"{RESULTS}/logs/robustness.log",
        script:
            "../scripts/robustness.py"
