"""Rule train_transformer: one transformer for one (pe, seed, offset), on the full-sequence task."""
from lengthgen.jobs import start_job
from lengthgen.runtime import configure_torch
from lengthgen.training import train_and_save
from lengthgen.transformer import TransformerConfig, train_transformer

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
run, params = snakemake.params.run, snakemake.params
config = TransformerConfig(vocab_size=params.task["vocab_size"], pe=run["pe"], **params.model)
train_and_save(train_transformer, config, run, params.task, params.train, params.device, snakemake.output)
