"""Rule eval_set: the fixed evaluation sequences of one offset."""
from lengthgen.data import eval_set_frame
from lengthgen.runtime.job import start_job
from lengthgen.tables.core import EVAL_SET
from lengthgen.tables.io import write_table

job = start_job(snakemake.log[0])
task = snakemake.params.task
frame = eval_set_frame(task["eval_seed"], int(snakemake.wildcards.offset), task["eval_lengths"], task["eval_samples"],
                       task["vocab_size"])
write_table(frame, snakemake.output[0], EVAL_SET)
job.finish()
