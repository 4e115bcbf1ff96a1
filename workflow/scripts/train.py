"""Rule train: one head for one (pe, seed, offset)."""
import logging

from lengthgen.jobs import start_job
from lengthgen.model import HeadConfig, save_head
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import TRAINING_CURVE
from lengthgen.tables import write_table
from lengthgen.task import TaskConfig
from lengthgen.training import TrainConfig, train_head

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
run, params = snakemake.params.run, snakemake.params
logging.info("training %s", run)
head_config = HeadConfig(vocab_size=params.task["vocab_size"], pe=run["pe"], **params.model)
task = TaskConfig(offset=run["offset"], **params.task)
model, curve = train_head(head_config, task, TrainConfig(**params.train), run["seed"], params.device)
save_head(model, snakemake.output.model)
write_table(curve.assign(**run), snakemake.output.curve, TRAINING_CURVE)
