# lengthgen: data -> train per (pe, seed, offset) -> evaluate -> analyze -> figures -> RESULTS.md,
# the confirmation runs (workflow/rules/confirm.smk) and the robustness points (workflow/rules/robustness.smk), each
# this same workflow as a module.
import copy
import os

from snakemake.utils import min_version

min_version("9.0")


# The defaults; a --configfile given on the command line is layered over them, key by key.
configfile: os.path.join(workflow.basedir, "config.yaml")


# The config as given (config.yaml, then every --configfile), before settings are derived from it:
# the confirmation runs are layered over it.
CONFIG_AS_GIVEN = copy.deepcopy(config)


report: "workflow/captions/workflow.rst"


include: "workflow/rules/common.smk"


wildcard_constraints:
    pe=ENCODING_NAME_PATTERN,  # a registry name, with parameters if any: rope@base=100
    seed=r"\d+",
    offset=r"\d+",


include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/confirm.smk"
include: "workflow/rules/robustness.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        f"{RESULTS}/RESULTS.md",
        CONFIRMATION_REPORTS,
        list(ROBUSTNESS_OUTPUTS.values()),
