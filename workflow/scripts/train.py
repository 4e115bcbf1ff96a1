"""Rules train_<family>: the models of one (pe, offset), every seed side by side, by the family's trainer
(lengthgen/experiments/families.py): single heads on the last position's target, transformers on the full sequence."""
from lengthgen.runtime.job import start_job
from lengthgen.models.head import HeadConfig
from lengthgen.models.transformer import TransformerConfig
from lengthgen.runtime.device import check_cpu_kernels, configure_torch
from lengthgen.training.loop import train_and_save, train_heads, train_transformers

TRAINERS = {"head": (HeadConfig, train_heads), "transformer": (TransformerConfig, train_transformers)}

job = start_job(snakemake.log[0])
configure_torch(snakemake.threads)
check_cpu_kernels(snakemake.params.cpu_kernels)
runs, params = snakemake.params.runs, snakemake.params
config_class, train_models = TRAINERS[params.trainer]
model_config = config_class(vocab_size=params.task["vocab_size"], pe=runs[0]["pe"], **params.model)
train_and_save(train_models, model_config, runs, params.task, params.train, params.device, snakemake.output)
job.finish()
