"""Rule analyze_<experiment>: one experiment's tables, checks, seed spread and RESULTS.md section
(lengthgen/experiments/runner.py runs the experiment's module on its declared inputs)."""
from lengthgen.experiments.runner import load_inputs, run_experiment
from lengthgen.runtime.job import start_job

job = start_job(snakemake.log[0])
params = snakemake.params


def files(name):
    found = getattr(snakemake.input, name)
    return [found] if isinstance(found, str) else list(found)


inputs = load_inputs(params.reads, {name: files(name) for name in params.reads}, params.details, params.device,
                     snakemake.threads)
run_experiment(params.experiment, params.section, inputs, params.settings, params.bootstrap,
               dict(snakemake.output.items()))
job.finish()
