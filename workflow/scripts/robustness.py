"""Rule robustness: the mechanism at each point of the study, and its section."""
import pandas as pd

from lengthgen.experiments.errors.tables import ERRORS_BY_LENGTH
from lengthgen.experiments.prop1.tables import PROP1_ERROR, PROP1_KERNEL
from lengthgen.runtime.job import start_job
from lengthgen.studies.robustness import analysis
from lengthgen.studies.robustness.section import section
from lengthgen.studies.robustness.tables import ROBUSTNESS_MECHANISM
from lengthgen.tables.io import atomic_write_text, read_table, write_table

job = start_job(snakemake.log[0])
inputs, params, output = snakemake.input, snakemake.params, snakemake.output
points = list(params.points)
mechanism = pd.DataFrame([
    analysis.point_mechanism(point, read_table(errors, ERRORS_BY_LENGTH), read_table(kernel, PROP1_KERNEL),
                             read_table(prop1_error, PROP1_ERROR))
    for point, errors, kernel, prop1_error in zip(points, inputs.errors, inputs.kernels, inputs.prop1_errors)])
write_table(mechanism, output.mechanism, ROBUSTNESS_MECHANISM)
atomic_write_text(section(mechanism, points), output.section)
job.finish()
