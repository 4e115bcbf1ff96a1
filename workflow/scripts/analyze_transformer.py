"""Rule analyze_transformer: the phenomenon, the equivariance and the carrier in the transformers."""
import pandas as pd

from lengthgen.bootstrap import seed_bootstrap
from lengthgen.data import eval_sets_from_frame
from lengthgen.experiments import shift
from lengthgen.experiments import transformer as experiment
from lengthgen.jobs import start_job
from lengthgen.runs import load_models
from lengthgen.runtime import configure_torch, resolve_device
from lengthgen.schemas.core import CLAIMS, EVAL_SET
from lengthgen.schemas.shift import SHIFT_CHANGES
from lengthgen.schemas.spread import CLAIM_SPREAD
from lengthgen.schemas.transformer import (TRANSFORMER_BLOCKS, TRANSFORMER_BY_POSITION, TRANSFORMER_CARRIER,
                                           TRANSFORMER_HEADS, TRANSFORMER_WINDOWS)
from lengthgen.tables import atomic_write_text, read_table, read_tables, write_table
from lengthgen.transformer import load_transformer

start_job(snakemake.log[0])
configure_torch(snakemake.threads)
params, output, settings = snakemake.params, snakemake.output, snakemake.params.settings
n_samples, train_length_max = settings["eval_samples"], settings["train_length_max"]
by_position = read_tables(snakemake.input.evaluations, TRANSFORMER_BY_POSITION)
windows = experiment.accuracy_windows(by_position, train_length_max)
eval_sets = {offset: eval_sets_from_frame(read_table(path, EVAL_SET))
             for offset, path in zip(params.offsets, snakemake.input.eval_sets)}
changes, carriers = [], []
device = resolve_device(params.device)
for run, model in load_models(params.runs, snakemake.input.models, params.expected,
                              lambda path, expected: load_transformer(path, device, expected)):
    offset, seed = run["offset"], run["seed"]
    sets = eval_sets[offset]
    token_sets = {length: sets[length][0][:n_samples] for length in params.shift_lengths}
    changes.append(shift.measure_shift(model, token_sets, params.shifts, offset, seed))
    if run["pe"] == "rope":
        # In-range sequences: by causality, the first train_length_max tokens of the 4x set are one.
        in_range = sets[4 * train_length_max][0][:n_samples, :train_length_max]
        carriers.append(experiment.analyze_carrier(model, in_range, offset, seed, train_length_max))
changes = pd.concat(changes, ignore_index=True)
heads, blocks, carrier = (pd.concat([found[kind] for found in carriers], ignore_index=True)
                          for kind in ("heads", "blocks", "carrier"))


def claims_of(windows, changes, carrier):
    return experiment.claims_transformer(windows, changes, carrier, settings["vocab_size"], train_length_max)


claims = claims_of(windows, changes, carrier)
write_table(seed_bootstrap(claims_of, {"windows": windows, "changes": changes, "carrier": carrier}, **params.bootstrap),
            output.spread, CLAIM_SPREAD)
for frame, path, kind in ((by_position, output.by_position, TRANSFORMER_BY_POSITION),
                          (windows, output.windows, TRANSFORMER_WINDOWS), (changes, output.changes, SHIFT_CHANGES),
                          (heads, output.heads, TRANSFORMER_HEADS), (blocks, output.blocks, TRANSFORMER_BLOCKS),
                          (carrier, output.carrier, TRANSFORMER_CARRIER), (claims, output.claims, CLAIMS)):
    write_table(frame, path, kind)
atomic_write_text(experiment.section_markdown(windows, changes, heads, carrier, claims, settings), output.section)
