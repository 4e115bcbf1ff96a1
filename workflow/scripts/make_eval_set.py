"""Rule eval_set: the fixed evaluation sequences of one offset."""
from lengthgen.data import eval_set_frame
from lengthgen.jobs import start_job
from lengthgen.tables import write_table

start_job(snakemake.log[0], snakemake.threads)
params = snakemake.params
frame = eval_set_frame(params.seed, int(snakemake.wildcards.offset), params.lengths, params.samples, params.vocab_size)
write_table(frame, snakemake.output[0], "eval_set")
