"""Rule analyze_shift: logit changes under a shift of every position id, for one offset."""
import pandas as pd

from lengthgen.bootstrap import seed_bootstrap
from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import shift
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch
from lengthgen.schemas.core import CLAIMS, EVAL_SET
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.tables import atomic_write_text, read_table, write_table

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output = snakemake.params, snakemake.output
offset = int(snakemake.wildcards.offset)
eval_sets = eval_sets_from_frame(read_table(snakemake.input.eval_set, EVAL_SET))
token_sets = {length: eval_sets[length] for length in params.lengths}
changes = [shift.measure_shift(model, token_sets, params.shifts, offset, run["seed"])
           for run, model in load_models(params.runs, snakemake.input.models, params.expected)]
# Encodings the sweep did not train are measured at their seeded initialization.
changes += [shift.measure_shift(shift.untrained_head(pe, seed=seed, **params.expected), token_sets, params.shifts,
                                offset, seed, trained=False)
            for pe in params.untrained for seed in params.seeds]
changes = pd.concat(changes, ignore_index=True)
claims = shift.claims_shift(changes, offset)
write_table(seed_bootstrap(lambda changes: shift.claims_shift(changes, offset), {"changes": changes}, **params.bootstrap),
            output.spread, CLAIM_SPREAD)
write_table(changes, output.changes, SHIFT_CHANGES)
write_table(claims, output.claims, CLAIMS)
atomic_write_text(shift.section_markdown(changes, claims, offset), output.section)
