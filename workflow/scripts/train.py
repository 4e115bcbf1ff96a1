"""Rule train: one head for one (pe, seed, offset)."""
from lengthgen.jobs import start_job
from lengthgen.model import HeadConfig
from lengthgen.runtime import configure_torch
from lengthgen.training import train_and_save, train_head

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
run, params = snakemake.params.run, snakemake.params
head_config = HeadConfig(vocab_size=params.task["vocab_size"], pe=run["pe"], **params.model)
train_and_save(train_head, head_config, run, params.task, params.train, params.device, snakemake.output)
