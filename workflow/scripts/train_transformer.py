"""Rule train_transformer: the transformers of one (pe, offset), every seed side by side, on the full-sequence task."""
from lengthgen.runtime.job import start_job
from lengthgen.runtime.device import check_cpu_kernels, configure_torch
from lengthgen.training.loop import train_and_save, train_transformers
from lengthgen.models.transformer import TransformerConfig

job = start_job(snakemake.log[0])
configure_torch(snakemake.threads)
check_cpu_kernels(snakemake.params.cpu_kernels)
runs, params = snakemake.params.runs, snakemake.params
config = TransformerConfig(vocab_size=params.task["vocab_size"], pe=runs[0]["pe"], **params.model)
train_and_save(train_transformers, config, runs, params.task, params.train, params.device, snakemake.output)
job.finish()
