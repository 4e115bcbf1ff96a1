"""Rule analyze_mechanics: where each trained head attends, its claim's checks and their seed spread, its section."""
import pandas as pd

from lengthgen.bootstrap import seed_bootstrap
from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import mechanics
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS, EVAL_SET
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.mechanics import MECHANICS_ARGMAX_HISTOGRAM, MECHANICS_ATTENTION_PROFILE, MECHANICS_BY_LENGTH
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
eval_sets = {offset: eval_sets_from_frame(read_table(path, EVAL_SET))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
measured = [mechanics.measure_mechanics(model, eval_sets[run["offset"]], run["offset"], run["seed"],
                                        params.train_length_max)
            for run, model in load_models(params.runs, snakemake.input.models, params.expected)]
by_kind = {kind: pd.concat([tables[kind] for tables in measured], ignore_index=True) for kind in measured[0]}
for kind, path in ((MECHANICS_BY_LENGTH, output.by_length), (MECHANICS_ARGMAX_HISTOGRAM, output.histogram),
                   (MECHANICS_ATTENTION_PROFILE, output.profile)):
    write_table(by_kind[kind], path, kind)
claims = mechanics.claims_mechanics(by_kind[MECHANICS_BY_LENGTH])
write_table(claims, output.claims, CLAIMS)
write_table(seed_bootstrap(mechanics.claims_mechanics, {"by_length": by_kind[MECHANICS_BY_LENGTH]}, **params.bootstrap),
            output.spread, CLAIM_SPREAD)
section = mechanics.section_markdown(by_kind[MECHANICS_BY_LENGTH], claims, params.train_length_max,
                                     params.learned_init_std)
atomic_write_text(section, output.section)
