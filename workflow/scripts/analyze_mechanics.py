"""Rule analyze_mechanics: where each trained head attends, its claim's checks, its section."""
import pandas as pd

from lengthgen import mechanics
from lengthgen.data import eval_sets_from_frame
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0], snakemake.threads)
params, output = snakemake.params, snakemake.output
eval_sets = {offset: eval_sets_from_frame(read_table(path, "eval_set"))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
measured = [mechanics.measure_mechanics(model, eval_sets[run["offset"]], run["offset"], run["seed"],
                                        params.train_length_max)
            for run, model in load_models(params.runs, snakemake.input.models)]
by_kind = {kind: pd.concat([tables[kind] for tables in measured], ignore_index=True) for kind in measured[0]}
for kind, path in ((mechanics.BY_LENGTH, output.by_length), (mechanics.ARGMAX_HISTOGRAM, output.histogram),
                   (mechanics.ATTENTION_PROFILE, output.profile)):
    write_table(by_kind[kind], path, kind)
claims = mechanics.claims_mechanics(by_kind[mechanics.BY_LENGTH])
write_table(claims, output.claims, "claims")
section = mechanics.section_markdown(by_kind[mechanics.BY_LENGTH], claims, params.train_length_max,
                                     params.learned_init_std)
atomic_write_text(section, output.section)
