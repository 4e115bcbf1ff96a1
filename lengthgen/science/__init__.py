"""The shared science: the logit kernel, the dilution law and its rival, the min-norm control, the
variants' predictions."""
