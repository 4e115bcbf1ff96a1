"""Whether a trained model fits its training range: the rules, fixed before the runs that they
judge, and the record they give (``fit_record``). Training imports this module, so it holds the
rules and nothing else: an edit here retrains every model. What reports the records (the table,
its reasons, the filter for past-range claims) is ``lengthgen.report.training``."""


# Whether a model fits its training range, by rules fixed before any run that they judge:
# - FIT_ACCURACY: accuracy on held-out sequences at every training length. The task is deterministic
#   and a head that has learned the rule is exact, so 0.99 (at most 1 wrong answer in 100) is the bar
#   of a fitted range, the same as the generalization experiment's in-range claim.
# - SETTLED_LOSS: the mean training loss of the last progress window (train.log_every steps), in
#   nats. Below 0.1 the model gives the answer about 90% of its probability on average: it sits in
#   a minimum, not in a loss spike (a spiking head measured 4.4 nats at its last step).
FIT_ACCURACY = 0.99
SETTLED_LOSS = 0.1


def fit_record(heldout_accuracy: float, final_loss: float) -> dict:
    """A model's range fit by the rules above: the two measures, and whether each rule holds."""
    fitted, settled = heldout_accuracy >= FIT_ACCURACY, final_loss <= SETTLED_LOSS
    return {"heldout_accuracy": heldout_accuracy, "final_loss": final_loss, "fitted": fitted, "settled": settled,
            "converged": fitted and settled}
