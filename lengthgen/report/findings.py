"""What this reproduction finds: one row per claim of the paper's abstract, decided by this run's checks.

Each claim of the abstract, and the cures this pipeline adds (``FINDINGS``), names the checks that decide it by their key (``claims.KEY``): the
experiments that test it and, where an experiment tests more than this claim, the start of the claim names that
count (the multiseed experiment's headlines begin with the name of the experiment they repeat across seeds and
offsets, which is the abstract's "confirmed across seeds and offsets"). Per row:

- its *verdict* is ``verdicts.gated`` over those checks (evidence only, gated by its preconditions), and *does
  not hold* where its headline check (the number that states the claim) is evidence and fails
  (``finding_verdict``); *not tested under this config* where none of them ran;
- its *replication* is ``replication.replication_verdict`` over the confirmation runs, from the same checks'
  rows of the replication table: the row replicates in a run when every one of its evidence checks compared
  there replicates;
- its *sentence* gives the number that decides it: where every evidence check holds, the one closest to its
  threshold; where some fail, the one furthest past it, and the sentence says that the data contradict the
  paper. Distances are ``replication.margin`` (relative to the threshold). An experiment a row names that has
  no checks in this run is said to be not tested, with the reason the catalog gives.

Each part says what its checks test (``Part.tests``): the paper's claim (``CLAIM``); for an account of a
mechanism, its predictions against the measurements (``PREDICTION``: fits and orders, which a rival account can
pass too) apart from the direct tests of the mechanism against its rival (``MECHANISM``); or this pipeline's own
hypothesis (``BEYOND``), shown beside the row and counted in neither its verdict nor its replication; or a
*precondition* (``PRECONDITION``: the heads fit their training range), which gates the row's verdict (one failing
makes it *untestable*, ``verdicts.gated``) and never counts as evidence for it: a precondition's checks are taken
out of the row's other parts. A row with
direct tests of its mechanism says the two kinds apart: predictions can hold while the mechanism fails, and the
sentence then says which of the mechanism's tests contradict the paper's account, and what that failure means
(``Part.if_failing``), with their values.

Torch-free: it reads the claims and replication tables.
"""

from dataclasses import dataclass

import pandas as pd

from lengthgen.checks.check import VERDICT_RULE
from lengthgen.studies.confirmation.replication import CHECK, EXPLORATORY, instance_name, margins, replication_verdict
from lengthgen.checks.verdicts import DOES_NOT_HOLD, HOLDS, IN_PART, gated

NOT_TESTED = "not tested under this config"
NO_CONFIRMATION = "no confirmation runs"


# What a part's checks test (module doc).
CLAIM, PREDICTION, MECHANISM, BEYOND, PRECONDITION = TESTS = ("claim", "prediction", "mechanism", "beyond",
                                                             "precondition")


@dataclass(frozen=True)
class Part:
    """The checks of one experiment that bear on a claim: those whose claim name starts with ``claim_prefix``
    (every one of the experiment's when it is empty) and whose statistic starts with ``statistic_prefix``; what
    they test (``tests``); for a test of a mechanism, what its failing checks say instead (``if_failing``)."""
    experiment: str
    claim_prefix: str = ""
    tests: str = CLAIM
    if_failing: str = ""
    statistic_prefix: str = ""

    def __post_init__(self):
        if self.tests not in TESTS:
            raise ValueError(f"unknown part kind {self.tests!r}; one of {', '.join(TESTS)}")
        if (self.tests == MECHANISM) != bool(self.if_failing):
            raise ValueError(f"part {self.name()}: a test of a mechanism, and only one, says what its failure means")

    def name(self) -> str:
        return f"`{self.experiment}`" + (f" ({self.claim_prefix.rstrip(':')})" if self.claim_prefix else "")

    def select(self, checks: pd.DataFrame) -> pd.DataFrame:
        return checks[(checks["experiment"] == self.experiment) & checks["claim"].str.startswith(self.claim_prefix)
                      & checks["statistic"].str.startswith(self.statistic_prefix)]


# The baseline a claim's headline number is set against (``Headline.baseline``).
CHANCE, UNTRAINED, RIVAL, REST, NONE = BASELINES = ("chance", "untrained", "rival", "rest", "none")


@dataclass(frozen=True)
class Headline:
    """The one number of a claim's row in the claims table: the check ``experiment`` / ``claim`` / ``statistic``
    (at the offset that decides it, ``deciding_check``), what it measures with its unit (``measured``), and the
    baseline it is set against: ``CHANCE`` (1 / V, from the config), ``UNTRAINED`` (the same statistic on the heads
    at init, which the check's rule states), ``RIVAL`` (the value of the check ``rival`` = (claim, statistic) of
    the same experiment at the same offset), ``REST`` (one minus the value: the share the rival account takes) or
    ``NONE``; ``label`` names the rival (or the rest). ``rival_in_rule``: where the baseline is a number the rival
    check's rule states rather than its value (a regex whose group is that number: the hard-attention ceiling).
    ``worst_seed``: the number is the worst seed's (a minimum or maximum over seeds), so its bootstrap interval is a
    range that starts (ends) at the value, not an interval around a mean. ``verified``: the number verifies a theorem
    of the code to its precision (a sanity check), reported as such; the claim's evidence is then the contrast the
    baseline gives. ``context``: a regex on the check's rule whose group states the number's scale (the logits'
    size beside a logit change). ``ceiling``: the baseline is what the number reaches in a limit (the hard-attention
    ceiling: what logit scaling wins back as its scale grows), said beside a threshold far above it."""
    experiment: str
    claim: str
    statistic: str
    measured: str
    baseline: str = NONE
    label: str = ""
    rival: tuple[str, str] | None = None
    rival_in_rule: str = ""
    worst_seed: bool = False
    verified: bool = False
    context: str = ""
    ceiling: bool = False

    def __post_init__(self):
        if self.baseline not in BASELINES:
            raise ValueError(f"unknown baseline {self.baseline!r}; one of {', '.join(BASELINES)}")
        if (self.baseline == RIVAL) != (self.rival is not None):
            raise ValueError(f"headline {self.claim!r}: a rival baseline, and only one, names its rival check")


@dataclass(frozen=True)
class Finding:
    name: str
    paper: str  # what the abstract claims, in its words
    parts: tuple[Part, ...]
    headline: Headline
    short: str  # the claim in a few words, for the claims table
    page: str  # the experiment whose page tells it
    question: str = ""  # the question its page asks, where "does this hold: <paper>?" is not it
    beyond: bool = False  # this pipeline's own prediction from the paper's account, not a claim of the paper
    # Claims of its checks whose values the first screen states beside a failing headline: what does hold.
    support: tuple[str, ...] = ()
    at_longest: str = ""  # the encoding whose accuracy at the longest evaluation length the first screen states


FINDINGS = (
    Finding("the gap", "on a minimal fixed-offset retrieval task, rotary heads extrapolate past the training range "
            "(decaying gracefully) and learned absolute heads do not",
            (Part("generalization", "both encodings fit the training range", PRECONDITION),
             Part("multiseed", "generalization: learned lowest accuracy in the training range", PRECONDITION),
             Part("generalization"), Part("multiseed", "generalization:")),
            Headline("generalization", "rope stays well above chance at 4x the training length",
                     "rope: mean accuracy at the longest length <= 4x the training maximum",
                     "rope accuracy at length {far}, 4x the longest training length (share correct)", CHANCE),
            "rotary heads extrapolate, learned ones do not", "generalization", at_longest="rope"),
    # Rope's invariance is a theorem of the code: its headline is verified to float64 precision, and the evidence
    # that the test can fail is the learned head's logits moving under the same shift, beside their size.
    Finding("equivariance", "rotary encodings make the attention logit a function of relative offset alone, so the "
            "rule learned at training lengths is reproduced at every longer length",
            (Part("shift"), Part("multiseed", "shift:")),
            Headline("shift", "rope attention logits depend on relative offset alone",
                     "max over seeds, lengths and shifts of the float64 max abs attention logit change",
                     "rope's largest logit change under a position shift (logits)", RIVAL, "learned head",
                     ("learned attention logits change under a position shift",
                      "min over seeds of the max over defined shifts and lengths of the float64 max abs attention logit "
                      "change"), worst_seed=True, verified=True, context=r"logits up to ([0-9.e+-]+)"),
            "rotary logits depend on offset alone", "shift"),
    Finding("pinning", "the learned absolute head pins to a fixed absolute position inside the training range",
            (Part("mechanics"), Part("multiseed", "mechanics:")),
            Headline("mechanics", "learned head sends most sequences to the modal position",
                     "min over (seed, length) past the range of the fraction of sequences at the modal position",
                     "learned head's share of sequences at its most frequent position", UNTRAINED,
                     worst_seed=True),
            "learned heads pin to one position", "mechanics",
            support=("learned modal argmax position lies inside the training range",)),
    Finding("the carrier", "the learned rotary rule is a low-rank carrier kernel aligned with the target offset, "
            "across seeds and offsets",
            (Part("frequency"), Part("multiseed", "frequency:")),
            Headline("frequency", "the learned rule is a low-rank carrier aligned with K",
                     "lowest top-4 energy share over seeds", "energy share of the top 4 rotary blocks", UNTRAINED,
                     worst_seed=True),
            "the rotary rule is a low-rank carrier", "frequency"),
    # The paper's dilution account makes two claims, judged apart: that the law's predictions fit the decay curve
    # (prop1's MAE checks, rope_bases' order and the multiseed headline), which the rival ranking account can pass
    # too, and that dilution causes the decay (prop1's comparison with ranking, errors' split of the wrong answers),
    # the direct tests of the mechanism against that rival. errors' other claim, where the ranking errors' winning
    # keys lie, is about the rival account and decides nothing here; so is rope_bases' check of the ranking account.
    Finding("the dilution law", "the graceful accuracy decay follows an attention-dilution law, predicted from the "
            "head's parameters, across seeds and offsets",
            (Part("prop1", "graceful decay follows the dilution law", PREDICTION),
             Part("rope_bases", "the dilution law", PREDICTION), Part("multiseed", "prop1:", PREDICTION)),
            Headline("prop1", "graceful decay follows the dilution law",
                     "mean_field: MAE of predicted accuracy past the training range",
                     "error of the law's predicted accuracy past the range (mean absolute)", RIVAL,
                     "the ranking account", ("dilution rather than ranking errors sets rope's accuracy past the range",
                                             "accuracy MAE past the training range, mean_field minus ranking"),
                     rival_in_rule=r"ranking ([0-9.e+-]+)"),
            "the dilution law fits the decay curve", "prop1"),
    Finding("the dilution mechanism", "the decay is caused by attention dilution: past the training range rope's "
            "wrong answers are dilution errors, and the dilution law predicts its accuracy better than the rival "
            "ranking account",
            (Part("prop1", "dilution rather than ranking errors", MECHANISM,
                  "the ranking predictor predicts rope's accuracy past the range better than the dilution law"),
             Part("errors", "rope's wrong answers past the training range are mostly dilution errors", MECHANISM,
                  "most of rope's wrong answers past the range are ranking errors, not dilution errors")),
            Headline("errors", "rope's wrong answers past the training range are mostly dilution errors",
                     "rope: share of wrong answers past the training range that are dilution errors",
                     "rope's wrong answers past the range that are dilution errors (share)", REST,
                     "ranking errors (the rival account)"),
            "the decay is caused by dilution", "errors",
            question=("Are rope's wrong answers past the training range mostly dilution errors, as the paper's "
                      "account of the decay says, or ranking errors?")),
    Finding("the linear control", "without softmax normalization, training selects a min-norm interpolant that "
            "does not extrapolate",
            (Part("linear", "arm 2 (linear-attention head): fits the training range", PRECONDITION),
             Part("multiseed", "linear, arm 2 (linear-attention head): lowest accuracy in the training range",
                  PRECONDITION),
             Part("linear"), Part("multiseed", "linear")),
            Headline("linear", "arm 2 (linear-attention head): does not extrapolate",
                     "mean accuracy at 4x the longest training length",
                     "linear-attention head's accuracy at length {far}, 4x the longest training length (share correct)", CHANCE),
            "without softmax, no extrapolation", "linear"),
    # The transformer's claims by name (FINDINGS in lengthgen/experiments/transformer/summaries.py); its steps
    # finding, that the retrieval head's kernel predicts where the accuracy steps down, is this pipeline's
    # hypothesis, not the paper's.
    Finding("transfer to the transformer", "the phenomenon, the equivariance and the carrier transfer to a "
            "multi-layer, multi-head transformer on the full-sequence task",
            (Part("transformer", "phenomenon"), Part("transformer", "equivariance"), Part("transformer", "carrier"),
             Part("transformer", "phenomenon", PRECONDITION,
                  statistic_prefix="rope: lowest accuracy over seeds and in-range"),
             Part("transformer", "phenomenon", PRECONDITION,
                  statistic_prefix="learned: lowest accuracy over seeds and in-range"),
             Part("transformer", "steps", BEYOND)),
            Headline("transformer", "phenomenon", "rope: lowest accuracy over seeds, last window at 4x the training maximum",
                     "the rope transformer's accuracy at length {far}, 4x the longest training length", CHANCE, worst_seed=True),
            "it all transfers to a transformer", "transformer"),
    # Beyond the abstract: if the decay is dilution, sharpening attention at evaluation time should undo much of it.
    Finding("the sharpening cures", "if the decay is attention dilution, sharpening attention at evaluation time "
            "(log-length scaling, YaRN) undoes much of it",
            (Part("cures", "the log-length head fits the training range", PRECONDITION), Part("cures")),
            Headline("cures", "log_length undoes much of rope's decay",
                     "mean(cured - uncured) / mean(1 - uncured) of rope accuracy past the training range",
                     "share of rope's lost accuracy won back by log-length scaling", RIVAL,
                     "hard-attention ceiling", ("the dilution law predicts how much of rope's decay log_length undoes",
                                                "mean_field: absolute error of the predicted fraction of rope's lost "
                                                "accuracy won back past the training range"),
                     rival_in_rule=r"hard-attention ceiling ([-+0-9.e]+)", ceiling=True),
            "sharpening attention cures the decay", "cures", beyond=True),
)


def deciding_check(checks: pd.DataFrame) -> pd.Series:
    """The check whose number decides ``checks``: the failing one furthest past its threshold (a NaN value is
    furthest), else the holding one closest to it. An equality that holds has no distance to show, so it decides
    only where nothing else holds."""
    distance = margins(checks).set_axis(checks.index).fillna(-float("inf"))
    failing = checks[~checks["holds"].astype(bool)]
    if not failing.empty:
        return checks.loc[distance[failing.index].idxmin()]
    inequalities = checks[checks["comparison"] != "=="]
    candidates = inequalities if not inequalities.empty else checks
    return checks.loc[distance[candidates.index].idxmin()]


def describe(check: pd.Series) -> str:
    """``prop1, graceful decay follows the dilution law (K=2): mean_field: MAE ... = 0.0244 (rule <= 0.1)``"""
    where = "" if pd.isna(check["offset"]) else f" ({instance_name(check['offset'])})"
    return (f"`{check['experiment']}`, {check['claim']}{where}: {check['statistic']} = {check['value']:.3g} "
            f"(rule {check['rule']})")


def evidence_sentence(evidence: pd.DataFrame) -> str:
    held, total = int(evidence["holds"].sum()), len(evidence)
    decisive = describe(deciding_check(evidence))
    if held == total:
        return f"{total} of {total} evidence checks hold; the closest to its threshold is {decisive}"
    if held == 0:
        return (f"the data contradict the paper: none of the {total} evidence checks holds; the furthest from its "
                f"threshold is {decisive}")
    return (f"the data contradict the paper in part: {total - held} of {total} evidence checks fail; the furthest "
            f"from its threshold is {decisive}")


def sanity_clause(sanity: pd.DataFrame) -> str:
    """The row's sanity checks (tests of the code, in no verdict): the weakest, or the failing one, which is a
    bug to fix before the row can be read."""
    decisive = describe(deciding_check(sanity))
    if sanity["holds"].all():
        return f"its sanity checks (tests of the code, in no verdict) hold, the closest to its threshold being {decisive}"
    return f"a sanity check fails, a bug to fix before this row can be read: {decisive}"


def listed_offsets(checks: pd.DataFrame) -> str:
    """``= 0.0475 (K=1), 0.244 (K=2)``: one statistic's values at its offsets."""
    return "= " + ", ".join(f"{row.value:.3g}" + ("" if pd.isna(row.offset) else f" ({instance_name(row.offset)})")
                            for row in checks.itertuples())


def mechanism_sentence(evidence: pd.DataFrame, parts: list[tuple[Part, pd.DataFrame]]) -> str:
    """The direct tests of a mechanism: whether they hold, and where they fail what that means, with the failing
    values of each statistic."""
    held, total = int(evidence["holds"].sum()), len(evidence)
    if held == total:
        return (f"the direct tests of its mechanism hold: {total} of {total}; the closest to its threshold is "
                f"{describe(deciding_check(evidence))}")
    meanings = []
    for part, rows in parts:
        failing = rows[(rows["kind"] == "evidence") & ~rows["holds"].astype(bool)]
        values = "; ".join(f"`{part.experiment}`, {statistic} {listed_offsets(group)}"
                           for statistic, group in failing.groupby("statistic", sort=False))
        meanings += [f"{part.if_failing}: {values}"] if not failing.empty else []
    count = f"none of the {total} holds" if held == 0 else f"{total - held} of {total} fail"
    return f"the direct tests of its mechanism contradict the paper's account: {count} ({'; '.join(meanings)})"


def predictions_sentence(evidence: pd.DataFrame) -> str:
    """The checks of an account's predictions against the measurements (which a rival account can pass too)."""
    held, total = int(evidence["holds"].sum()), len(evidence)
    decisive = describe(deciding_check(evidence))
    if held == total:
        return (f"its predictions against the measurements hold: {total} of {total} evidence checks; the closest "
                f"to its threshold is {decisive}")
    return (f"its predictions against the measurements hold in {held} of {total} evidence checks; the furthest "
            f"from its threshold is {decisive}")


def beyond_clause(part: Part, rows: pd.DataFrame) -> str:
    """A part that tests this pipeline's own hypothesis: its evidence, apart from the row's verdict."""
    evidence = rows[rows["kind"] == "evidence"]
    held, total = int(evidence["holds"].sum()), len(evidence)
    nearest = "the closest to its threshold" if held == total else "the furthest from its threshold"
    return (f"beyond the paper, this pipeline's own hypothesis {part.name()} (in no verdict): {held} of {total} "
            f"evidence checks hold; {nearest} is {describe(deciding_check(evidence))}")


def evidence_clauses(selected: list[tuple[Part, pd.DataFrame]]) -> list[str]:
    """The row's evidence in words: one clause, or, where it has direct tests of a mechanism, its predictions and
    its mechanism apart."""
    evidence = {part: rows[rows["kind"] == "evidence"] for part, rows in selected}
    mechanism = [(part, rows) for part, rows in selected if part.tests == MECHANISM and not evidence[part].empty]
    if not mechanism:
        counted = [rows for rows in evidence.values() if not rows.empty]
        return [evidence_sentence(pd.concat(counted))] if counted else []
    others = [rows for part, rows in evidence.items() if part.tests != MECHANISM and not rows.empty]
    said = mechanism_sentence(pd.concat(evidence[part] for part, _ in mechanism), mechanism)
    contrast = others and "contradict" in said  # the predictions hold apart from the mechanism
    return ([predictions_sentence(pd.concat(others))] if others else []) + [("but " if contrast else "") + said]


def precondition_clauses(selected: list[tuple[Part, pd.DataFrame]]) -> list[str]:
    """Where a precondition fails, that the row cannot be read, with the failing check; nothing where all hold."""
    rows = [rows for part, rows in selected if part.tests == PRECONDITION and not rows.empty]
    preconditions = pd.concat(rows) if rows else pd.DataFrame(columns=["holds"])
    failing = preconditions[~preconditions["holds"].astype(bool)]
    if failing.empty:
        return []
    return [f"untestable: a precondition fails, so its evidence cannot be read ({describe(deciding_check(failing))})"]


def sentence(selected: list[tuple[Part, pd.DataFrame]], left_out: dict[str, str]) -> str:
    """One sentence: the deciding evidence (predictions and mechanism apart where the row has both), the row's
    sanity check, this pipeline's own hypotheses beside it, and the parts this config leaves out."""
    counted = [(part, rows) for part, rows in selected if part.tests not in (BEYOND, PRECONDITION) and not rows.empty]
    checks = pd.concat([rows for _, rows in counted]) if counted else pd.DataFrame(columns=["kind"])
    sanity = checks[checks["kind"] == "sanity"]
    clauses = precondition_clauses(selected)
    clauses += evidence_clauses(counted) or (["no evidence check"] if not checks.empty else [])
    clauses += [sanity_clause(sanity)] if not sanity.empty else []
    clauses += [beyond_clause(part, rows) for part, rows in selected
                if part.tests == BEYOND and not rows[rows["kind"] == "evidence"].empty]
    # A hypothesis of this pipeline is said where it has checks; the steps' have none in a run without a step.
    missing = [part for part, rows in selected if rows.empty and part.tests not in (BEYOND, PRECONDITION)]
    if missing:
        reasons = ", ".join(part.name() + (f" ({left_out[part.experiment]})" if part.experiment in left_out else
                                           " (no checks in this run)") for part in missing)
        clauses.append(f"{NOT_TESTED}: {reasons}")
    text = "; ".join(clauses)
    return text[0].upper() + text[1:] + "."


def compared_in_runs(checks: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The replication table's rows of ``checks``' evidence, one per (confirmation run, check) that compares it."""
    keys = checks.loc[checks["kind"] == "evidence", CHECK].drop_duplicates()
    compared = table[(table["run"] != EXPLORATORY) & (table["kind"] == "evidence")
                     & table["replicates"].isin(["yes", "no"])]  # empty where the run does not compare the check
    return compared.merge(keys, on=CHECK).drop_duplicates(["run", *CHECK])


def replicates_in_run(checks: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """Per confirmation run that compares any of ``checks``' evidence: whether every one compared there replicates."""
    compared = compared_in_runs(checks, table)
    return compared.assign(replicates=compared["replicates"] == "yes").groupby("run")["replicates"].all()


def replication_of(finding: Finding, claims: pd.DataFrame, table: pd.DataFrame | None) -> str:
    """The row's replication over the confirmation runs where it can be read (``replication.replication_verdict``
    over ``outcome_by_run``), with the causes of the checks that do not replicate and the runs where it is
    untestable."""
    if table is None:
        return NO_CONFIRMATION
    outcomes = outcome_by_run(finding, claims, table)
    untestable = list(outcomes.index[outcomes == UNTESTABLE_THERE])
    status = replication_verdict(outcomes.drop(untestable) == REPLICATES)
    compared = compared_in_runs(counted_checks(selections(finding, claims), claims), table)
    causes = compared.loc[(compared["replicates"] == "no") & ~compared["run"].isin(untestable), "cause"].value_counts()
    notes = [*(f"{count} by {cause}" for cause, count in causes.items()),
             *([f"untestable in {', '.join(run.replace('_', ' ') for run in untestable)}"] if untestable else [])]
    return status + (f" ({', '.join(notes)})" if notes else "")


def tested_by(selected: list[tuple[Part, pd.DataFrame]]) -> list[str]:
    """The experiments whose checks count in the row, each once, with the claims of its parts that ran when
    they are not all of its checks: ``prop1`` (a; b)."""
    prefixes: dict[str, list[str]] = {}
    for part, rows in selected:
        if part.tests not in (BEYOND, PRECONDITION) and not rows.empty:
            prefixes.setdefault(part.experiment, []).append(part.claim_prefix.rstrip(":"))
    return [f"`{experiment}`" + (f" ({'; '.join(claims)})" if all(claims) else "")
            for experiment, claims in prefixes.items()]


def selections(finding: Finding, claims: pd.DataFrame) -> list[tuple[Part, pd.DataFrame]]:
    """Each part of ``finding`` with its checks; a precondition's checks are taken out of every other part, so that
    they gate the row and count as no evidence for it."""
    preconditions = [part.select(claims) for part in finding.parts if part.tests == PRECONDITION]
    gate = pd.concat(preconditions).index if preconditions else claims.index[:0]
    return [(part, part.select(claims) if part.tests == PRECONDITION else part.select(claims).drop(gate, errors="ignore"))
            for part in finding.parts]


def counted_checks(selected: list[tuple[Part, pd.DataFrame]], claims: pd.DataFrame) -> pd.DataFrame:
    """The checks a row's verdict counts: those of its parts that test the paper's claim, its predictions or its
    mechanism (not this pipeline's own hypotheses, nor its preconditions)."""
    counted = [rows for part, rows in selected if part.tests not in (BEYOND, PRECONDITION)]
    return pd.concat(counted) if counted else claims.iloc[:0]


def evidence_of(finding: Finding, claims: pd.DataFrame) -> pd.DataFrame:
    """The evidence checks a claim's verdict counts (``counted_checks``, evidence only)."""
    counted = counted_checks(selections(finding, claims), claims)
    return counted[counted["kind"] == "evidence"]


def precondition_fails(finding: Finding, checks: pd.DataFrame) -> bool:
    """Whether one of ``finding``'s preconditions fails among ``checks`` (one run's): its claim is untestable there."""
    gates = [rows for part, rows in selections(finding, checks) if part.tests == PRECONDITION and not rows.empty]
    return bool(gates) and not pd.concat(gates)["holds"].astype(bool).all()


REPLICATES, DIFFERS, UNTESTABLE_THERE = "replicates", "differs", "untestable"


def outcome_by_run(finding: Finding, claims: pd.DataFrame, table: pd.DataFrame) -> pd.Series:
    """Per confirmation run that compares any of the claim's evidence: ``UNTESTABLE_THERE`` where one of its
    preconditions fails in that run (its evidence there cannot be read), else ``REPLICATES`` when every evidence
    check compared there replicates, else ``DIFFERS``."""
    replicates = replicates_in_run(counted_checks(selections(finding, claims), claims), table)
    return pd.Series({run: UNTESTABLE_THERE if precondition_fails(finding, table[table["run"] == run])
                      else REPLICATES if same else DIFFERS for run, same in replicates.items()}, dtype=object)


def row_verdict(selected: list[tuple[Part, pd.DataFrame]], claims: pd.DataFrame) -> str:
    """``verdicts.gated``: the counted evidence, unless a precondition fails; not tested where nothing ran."""
    checks = counted_checks(selected, claims)
    if checks.empty:
        return NOT_TESTED
    gate = [rows for part, rows in selected if part.tests == PRECONDITION]
    preconditions = pd.concat(gate)["holds"] if gate else pd.Series([], dtype=bool)
    return gated(checks.loc[checks["kind"] == "evidence", "holds"].astype(bool), preconditions.astype(bool))


def headline_check(headline: Headline, claims: pd.DataFrame) -> pd.Series | None:
    """The headline's check at the offset that decides it (``deciding_check``); None where it was not measured."""
    rows = claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == headline.claim)
                  & (claims["statistic"] == headline.statistic)]
    return None if rows.empty else deciding_check(rows)


def finding_verdict(finding: Finding, claims: pd.DataFrame) -> str:
    """The claim's verdict: ``row_verdict`` of its checks, except that a claim whose headline check is evidence and
    fails does not hold, however many of its other checks do. The headline is the number that states the claim (the
    pinned share, the dilution errors' share), so "holds in part" beside it would grade the claim by its
    supporting checks while its own number contradicts it; where the verdict is not gated, the claims table says
    how many of those checks hold."""
    verdict = row_verdict(selections(finding, claims), claims)
    check = headline_check(finding.headline, claims)
    failed = check is not None and check["kind"] == "evidence" and not bool(check["holds"])
    return DOES_NOT_HOLD if failed and verdict in (HOLDS, IN_PART) else verdict


def finding_row(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None,
                left_out: dict[str, str]) -> dict:
    """One row of ``findings_table``; the parts that test this pipeline's own hypothesis count in neither its
    verdict nor its replication, and its preconditions gate its verdict."""
    selected = selections(finding, claims)
    checks = counted_checks(selected, claims)
    return {"finding": finding.name, "paper": finding.paper, "tested_by": tested_by(selected),
            "verdict": finding_verdict(finding, claims),
            "replication": replication_of(finding, claims, replication) if not checks.empty else NOT_TESTED,
            "sentence": sentence(selected, left_out)}


def findings_table(claims: pd.DataFrame, replication: pd.DataFrame | None = None,
                   left_out: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per claim of the abstract: finding, paper (the claim), tested_by (the parts that ran), verdict,
    replication and sentence. ``claims``: the ``all_claims`` table; ``replication``: the replication table, when
    the config has confirmation runs; ``left_out``: experiment -> why this config does not run it."""
    return pd.DataFrame([finding_row(finding, claims, replication, left_out or {}) for finding in FINDINGS])


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def findings_markdown(claims: pd.DataFrame, replication: pd.DataFrame | None = None,
                      left_out: dict[str, str] | None = None) -> str:
    """The section "What this reproduction finds"."""
    rows = findings_table(claims, replication, left_out)
    table = pd.DataFrame([[f"**{row.finding}**: {row.paper}", ", ".join(row.tested_by) or "-", f"**{row.verdict}**",
                           f"{row.replication}", _escape(row.sentence)] for row in rows.itertuples()],
                         columns=["the paper claims", "tested by", "verdict", "replication", "what decides it"])
    return "\n\n".join([
        "## What this reproduction finds",
        f"One row per claim of the paper's abstract. Its verdict counts the evidence checks of the experiments that "
        f"test it ({VERDICT_RULE}); its replication is over the confirmation runs (the rule of the replication "
        f"section, applied to this row's checks); what decides it is the check furthest past its threshold where "
        f"some fail, else the one closest to it (distances relative to the threshold). Where a row has direct tests "
        f"of the mechanism it names, against a rival account, they are said apart from the checks of its "
        f"predictions, which the rival can pass too; this pipeline's own hypotheses are said beside a row, in no "
        f"verdict. The multiseed checks a row counts are the headlines of its experiments, in every seed at every "
        f"offset.",
        table.to_markdown(index=False, disable_numparse=True),
    ])
