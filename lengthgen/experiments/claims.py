"""The claims, as data: each claim of the paper's abstract, and each this pipeline adds, with its one primary statistic.

A claim names its primary statistic by the headline an experiment exports (``<experiment>/headlines.py``; one number
per trained run, with the comparison and threshold of the experiment's rule), never by copied text. It also names
its baseline (chance, or another headline: the heads untrained, the rival account, the other encoding), the
preconditions that must hold for it to be testable (the heads fit their training range), and the secondary
statistics its page shows. When its threshold was fixed comes from the rule history (``rule_timing``). Its verdict,
in every run and at every robustness point, is ``lengthgen/checks/judgment.py``'s.

This is the only place a claim's words are written. Torch-free: the workflow and the report read it.
"""

from dataclasses import dataclass

from lengthgen.checks.headlines import Headline
from lengthgen.experiments.multiseed.headlines import HEADLINES

HEADLINES_BY_NAME = {headline.name: headline for headline in HEADLINES}
CHANCE = "chance"


@dataclass(frozen=True)
class Baseline:
    """What the primary statistic is set against, called ``label``: chance (1 / V) where the label is ``CHANCE``; a
    fixed ``value`` (no difference: 0); else the headline ``statistic``'s mean over seeds at the same K and condition."""
    label: str
    statistic: str | None = None
    value: float | None = None
    # A rival account's value of the same statistic, and what that account says: the report says where it does
    # better, glossed with this
    rival: str = ""


@dataclass(frozen=True)
class Claim:
    name: str  # identifier: figure and table keys
    says: str  # the claim in a few words (the claims table's first column)
    paper: str  # what the abstract claims, in its words; or what this pipeline adds to it (beyond)
    page: str  # the experiment whose page tells it
    primary: str  # the headline whose mean over seeds decides it
    measured: str  # what that number is, with its unit
    baseline: Baseline
    preconditions: tuple[str, ...] = ()  # headlines whose own rule must hold at a K for the claim to be judged there
    secondary: tuple[str, ...] = ()  # headlines its page shows beside the primary one
    counterpart: str = ""  # the other encoding's value of the primary statistic: said beside it, shown on its page
    # "" for a claim of the paper; else what this pipeline adds to its claims: a "prediction" from the paper's account,
    # or a "control" of one of them
    beyond: str = ""
    scope: str = ""  # what the primary statistic does not test, said on its page
    threshold_name: str = ""  # the rule's own name in its thresholds file, where the rule history records it apart
    # A secondary statistic measuring a part of the claim's words the primary does not, and those words: said beside
    # the primary in the claim's sentence, deciding nothing
    beside: tuple[str, str] = ()

    @property
    def rule(self) -> Headline:
        return HEADLINES_BY_NAME[self.primary]

    def statistics(self) -> tuple[str, ...]:
        """Every headline the claim reads: primary, baseline, preconditions, secondary."""
        baseline = (self.baseline.statistic,) if self.baseline.statistic else ()
        return (self.primary, *baseline, *self.preconditions, *self.shown())

    def shown(self) -> tuple[str, ...]:
        """The headlines its page shows beside the primary one: the counterpart, then the secondary statistics."""
        return (self.counterpart, *self.secondary) if self.counterpart else self.secondary


CLAIMS = (
    Claim("gap", "rotary heads extrapolate, learned ones do not",
          "on a minimal fixed-offset retrieval task, rotary heads extrapolate past the training range (decaying "
          "gracefully) and learned absolute heads do not", "generalization",
          "generalization: rope accuracy at 4x the training length",
          "rope's accuracy at 4x the training length (share correct)", Baseline(CHANCE),
          preconditions=("generalization: rope lowest accuracy in the training range",),
          counterpart="generalization: learned accuracy at 4x the training length",
          secondary=("generalization: rope accuracy at 32x the training length",),
          beside=("generalization: rope accuracy at 32x the training length", "rope's at 32x"),
          scope="The statistic tests rope's half, its accuracy at 4x the training length. The learned heads' accuracy "
                "there is shown beside it and judges nothing, and whether rope's decay is graceful is not tested here "
                "(the transformer's steps and the dilution law's fit speak to it)."),
    Claim("equivariance", "rotary logits depend on offset alone",
          "rotary encodings make the attention logit a function of relative offset alone, so the rule learned at "
          "training lengths is reproduced at every longer length", "shift",
          "shift: rope float64 attention-logit change (max over shifts)",
          "rope's largest attention-logit change under a position shift (logits; zero in exact arithmetic, so it "
          "checks the code, with the learned heads' change as the contrast)",
          Baseline("learned heads", "shift: learned float64 attention-logit change (max over shifts)"),
          secondary=("errors: share of rope's ranking errors won by a key at an offset never trained",),
          scope="The statistic tests the first half, that the logit is a function of the offset alone (to float64 "
                "rounding: an identity of the code, its evidence the learned heads' change beside it). The second "
                "half does not follow from it: past the range the head meets offsets it never trained on, and most "
                "of rope's wrong answers there are ranking errors won by a key at such an offset (the secondary "
                "statistic below), where training selected no rule."),
    Claim("pinning", "learned heads pin inside the training range",
          "the learned absolute head pins to a fixed absolute position inside the training range", "mechanics",
          "mechanics: learned share of lengths past the range with the modal position inside the training range",
          "share of lengths past the range whose most-attended position lies in the training range",
          # the same inits at every K, measured on each K's own evaluation sequences: so the share moves with K
          Baseline("untrained heads (on each K's own evaluation sequences)",
                   "mechanics: untrained share of lengths past the range with the modal position inside the training "
                   "range"),
          preconditions=("generalization: learned lowest accuracy in the training range",),
          secondary=("mechanics: learned fraction of sequences at the modal position (min over lengths)",),
          beside=("mechanics: learned fraction of sequences at the modal position (min over lengths)",
                  "the share of sequences sent to the length's most common most-attended position (lowest over "
                  "lengths; 1 would be one fixed position)"),
          scope="The statistic tests where the head attends past the range (inside the training range, far more "
                "often than untrained heads), not that it is one fixed position: the most-attended position can move "
                "by more than one position from length to length, and only part of the sequences go to it (the "
                "secondary statistic below, and the checks). The table's rows past the training range are never "
                "trained (they keep their init), so the statistic asks whether the trained rows outscore them: the "
                "untrained heads' share says how often they do by chance."),
    Claim("carrier", "the rotary kernel sits in a few frequency blocks",
          "the learned rotary rule is a low-rank carrier kernel aligned with the target offset", "frequency",
          "frequency: energy share of the top D/16 rotary blocks",
          "share of the learned position kernel's energy in its strongest D/16 of the D/2 rotary blocks (D: the width)",
          # a head's init depends on its seed alone, so the untrained value is the same at every K
          Baseline("untrained heads (the same inits at every K)",
                   "frequency: energy share of the top D/16 rotary blocks, the same heads untrained"),
          secondary=("frequency: alignment of the top D/16 blocks with K",),
          beside=("frequency: alignment of the top D/16 blocks with K",
                  "their alignment with K, weighted by their energy (1: each of them peaks at offset K)"),
          scope="The statistic tests the first half, that the kernel's energy sits in a few frequency blocks. The "
                "second, their alignment with K, is shown beside it and judges nothing; neither number measures how "
                "far the head extrapolates. Nor is \"low-rank\" judged: the appendix gives three measures of the "
                "kernel's rank, trained and untrained (participation ratio, entropy rank, singular values for 90% of "
                "its matrix), which need not agree, and its Rank line reads the last."),
    Claim("dilution law", "the dilution law predicts the decay",
          "the graceful accuracy decay follows an attention-dilution law, predicted from the head's parameters",
          "prop1", "prop1: mean-field accuracy error past the range",
          "error of the law's predicted accuracy past the range (mean absolute; the law's form is this pipeline's "
          "reconstruction, as the paper gives no formula)",
          Baseline("the ranking account", "prop1: ranking accuracy error past the range",
                   rival="which predicts a wrong answer wherever a key holding another token outscores the target, "
                         "and ignores dilution"),
          secondary=("prop1: mean-logit accuracy error past the range",
                     "prop1: mean-field target-attention error past the range"),
          scope="The statistic tests one form of the law, mean_field (exp(logit) averaged over the key token at each "
                "offset, per query token, then over query tokens; the checks below name their form, and the prop1 "
                "appendix defines each), not a formula of the paper's, which gives none."),
    Claim("dilution cause", "the decay is caused by dilution",
          "the decay is caused by attention dilution: past the training range rope's wrong answers are dilution "
          "errors, the target still scoring highest", "errors",
          "errors: rope's share of wrong answers past the range that are dilution errors",
          "dilution errors among rope's wrong answers past the range (share)",
          Baseline("ranking errors (the rest)",
                   "errors: rope's share of wrong answers past the range that are ranking errors"),
          secondary=("errors: share of rope's ranking errors won by a key at an offset never trained",)),
    Claim("linear control", "without softmax, no extrapolation",
          "without softmax normalization, training selects a min-norm interpolant that does not extrapolate",
          "linear", "linear: linear-attention head's accuracy at 4x the training length",
          "the linear-attention head's accuracy at 4x the training length (share correct)", Baseline(CHANCE),
          preconditions=("linear, arm 2 (linear-attention head): lowest accuracy in the training range",),
          scope="The statistic tests the second half, that the linear head does not extrapolate, at its own rotary "
                "base. Whether training selects the min-norm interpolant is a check below, in no verdict."),
    Claim("softmax control", "the shortfall is the softmax's, not the base's",
          "the same head with its softmax, at the same rotary base, seeds and training, extrapolates further than the "
          "linear head: the linear head's shortfall against it is the softmax's, not the base's", "linear",
          "linear: matched softmax head's accuracy at 4x the training length minus the linear head's",
          "the matched softmax head's accuracy at 4x the training length minus the linear head's",
          Baseline("no difference", value=0.0), threshold_name="MIN_SOFTMAX_ADVANTAGE",
          preconditions=("linear, arm 2 (linear-attention head): lowest accuracy in the training range",
                         "linear: matched softmax head's lowest accuracy in the training range"),
          secondary=("linear: matched softmax head's accuracy at 4x the training length",),
          beside=("linear: matched softmax head's accuracy at 4x the training length",
                  "the matched softmax head's own accuracy at 4x"),
          beyond="control"),
    Claim("transformer", "rope's extrapolation transfers to a transformer",
          "the phenomenon, the equivariance and the carrier transfer to a multi-layer, multi-head transformer",
          "transformer", "transformer: rope accuracy at 4x the training length",
          "the rope transformer's accuracy at 4x the training length (share correct)", Baseline(CHANCE),
          preconditions=("transformer: rope lowest accuracy in the training range",),
          counterpart="transformer: learned accuracy at 4x the training length",
          secondary=("transformer: rope's largest step down in accuracy past the range (0: none)",),
          beside=("transformer: rope's largest step down in accuracy past the range (0: none)",
                  "its largest step down in accuracy past the range (0: none)"),
          scope="The statistic tests the phenomenon alone (rope extrapolates, learned does not). The equivariance and "
                "the carrier are checks on this page, in no verdict; pinning, the dilution law and the error split "
                "are not measured on the transformer. Whether its accuracy past the range falls in steps, where the "
                "single head decays gracefully, is the secondary statistic below (0: no step)."),
    Claim("cures", "sharpening attention cures the decay",
          "if the decay is attention dilution, sharpening attention at evaluation time (log-length scaling) undoes "
          "much of it", "cures", "cures: share of rope's lost accuracy won back by log-length scaling",
          "share of rope's lost accuracy past the range won back by log-length scaling",
          Baseline("hard attention (infinite scale; a cure can exceed it)",
                   "cures: share of rope's lost accuracy won back by hard attention (the limit of logit scaling)"),
          beyond="prediction"),
)
CLAIMS_BY_NAME = {claim.name: claim for claim in CLAIMS}


def unknown_statistics(claims=CLAIMS, headlines=HEADLINES_BY_NAME) -> list[str]:
    """Every headline a claim names that no experiment exports (a test keeps this empty)."""
    return [f"{claim.name}: {name}" for claim in claims for name in claim.statistics() if name not in headlines]
