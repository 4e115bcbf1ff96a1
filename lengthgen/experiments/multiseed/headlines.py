"""Every experiment's headlines (``<name>/headlines.py``), in the catalog's order: what the multiseed experiment reads
in every run, and what the claims (``lengthgen/experiments/claims.py``) name. Apart from its analysis so that its
figure and section text load no scipy."""

from lengthgen.experiments.cures import headlines as cures
from lengthgen.experiments.errors import headlines as errors
from lengthgen.experiments.frequency import headlines as frequency
from lengthgen.experiments.generalization import headlines as generalization
from lengthgen.experiments.linear import headlines as linear
from lengthgen.experiments.mechanics import headlines as mechanics
from lengthgen.experiments.prop1 import headlines as prop1
from lengthgen.experiments.shift import headlines as shift
from lengthgen.experiments.transformer import headlines as transformer

HEADLINES = [*generalization.HEADLINES, *mechanics.HEADLINES, *shift.HEADLINES, *prop1.HEADLINES,
             *frequency.HEADLINES, *linear.HEADLINES, *cures.HEADLINES, *errors.HEADLINES, *transformer.HEADLINES]
