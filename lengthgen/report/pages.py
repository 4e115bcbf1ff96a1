"""The report as pages: RESULTS.md answers on its first screen, each experiment has a page, details go to appendices.

``render_pages`` is a pure function of the run's tables and its config: it returns every page as
``{path relative to the results folder: markdown}``, the paths ``page_paths`` names (the report rule declares the
same ones as its outputs). The pages:

- ``RESULTS.md``: the setup in three lines (read from the config), the bottom line (``bottom_line``, from the
  verdicts: each claim with its number, what holds of a contradicted one, the runs where a holding one differs), the claims table (``lengthgen.report.claims_table``), the verdict vocabulary (``verdicts.DEFINITION``),
  Figure 1 with its numbers, then links to every page and appendix;
- ``experiments/<experiment>.md``: the question, the answer with its number, the figures, one table of its checks
  (at most 6 columns: its own, and the other experiments' checks its claim counts, each labelled with what it is
  to that claim, ``check_labels``), when its rules were fixed, its sanity checks apart, its caveats, a link to its details;
- ``first_screen.rst``: RESULTS.md as reStructuredText, the HTML report's front page (``first_screen_rst``);
- ``appendix/*.md``: each experiment's full section (``appendix/<experiment>.md``), the methods (said once), the
  setup and config, the training table, the claims in detail, the rule history, the changes since the previous run
  and the replication, where the run has them.

No table cell of any page is longer than ``markdown_cells.MAX_CELL``: every page goes through ``fit_cells``.
"""

import datetime
import re
from collections.abc import Mapping

import pandas as pd
import yaml

from lengthgen.checks.check import VERDICT_RULE
from lengthgen.report.claims_table import (FEWEST_SEEDS_FOR_A_RANGE, NOT_RUN, VALUE, claims_table, evidence_count,
                                    measured_text, number, rival_check, rival_value, robustness_cell, run_names)
from lengthgen.report.findings import (BEYOND, FINDINGS, NOT_TESTED, PRECONDITION, REPLICATES, REST, RIVAL,
                                UNTESTABLE_THERE, Finding, compared_in_runs, deciding_check, evidence_of,
                                finding_verdict, findings_markdown, headline_check, outcome_by_run,
                                selections)
from lengthgen.report.first_screen import as_rst
from lengthgen.report.markdown import fit_cells
from lengthgen.studies.confirmation.replication import EXPLORATORY, instance_name
from lengthgen.checks.rule_history import history_markdown, rule_timing
from lengthgen.tables.io import atomic_write_text
from lengthgen.checks.shared_rules import DECIDED_FRACTION, SPREAD_INTERVAL
from lengthgen.checks.verdicts import DEFINITION, DOES_NOT_HOLD, HOLDS, IN_PART, UNTESTABLE, graded

FIXED_APPENDICES = ("methods", "setup", "training", "claims", "rule_history")
FIRST_SCREEN = "first_screen.rst"  # RESULTS.md for the HTML report (``first_screen_rst``)
CHANGES, REPLICATION, ROBUSTNESS = "changes", "replication", "robustness"
PER_OFFSET_SUFFIX = r"_K\d+$"  # a per-offset section's name: <experiment>_K<offset>
FIGURE_LINK = re.compile(r"!\[([^\]]*)\]\(figures/([^)]+)\)")


def page_paths(experiments: list[str], previous_run: bool, replication: bool, robustness: bool = False) -> list[str]:
    """Every page ``render_pages`` writes, relative to the results folder, in a fixed order."""
    appendices = [*FIXED_APPENDICES, *([CHANGES] if previous_run else []), *([REPLICATION] if replication else []),
                  *([ROBUSTNESS] if robustness else [])]
    return ["RESULTS.md", FIRST_SCREEN, *(f"experiments/{name}.md" for name in experiments),
            *(f"appendix/{name}.md" for name in [*appendices, *experiments])]


# ---------------------------------------------------------------------------------------------
# RESULTS.md


INIT_WORDS = {"torch_default": "PyTorch's default init"}


def seeds_line(config: dict) -> str:
    """``10 seeds per model (the transformer 3, the encoding variants 5)``."""
    others = [f"{label} {len(config[section]['seeds'])}" for section, label in
              (("transformer", "the transformer"), ("variants", "the encoding variants"))
              if (config.get(section) or {}).get("seeds")]
    return f"{len(config['sweep']['seed'])} seeds per model" + (f" ({', '.join(others)})" if others else "")


def training_line(config: dict) -> str:
    """``width 64, PyTorch's default init, Adam at peak lr 0.01 for 2000 steps``: the choices a robustness study
    varies."""
    model, train = config["model"], config["train"]
    init = model.get("init")
    words = INIT_WORDS.get(init, f"init {init}") if init else None
    if init == "torch_default" and "learned_init_std" in model:
        words += f" (the learned position table N(0, {model['learned_init_std']:g}²))"
    return ", ".join([f"width {model['d_model']}", *([words] if words else []),
                      f"Adam at peak lr {train['lr']:g} for {train['steps']} steps"])


def setup_lines(config: dict, runs: list[str]) -> list[str]:
    """The task and setup in three lines, every number read from ``config``; ``runs``: the confirmation runs."""
    task, sweep = config["task"], config["sweep"]
    lengths = task["eval_lengths"]
    offsets = ", ".join(str(offset) for offset in sweep["offset"])
    names = ", ".join(run.replace("_", " ") for run in runs)
    confirm = (f"Each claim is judged again, by the same rules, in {len(runs)} confirmation runs ({names}): the "
               f"out-of-sample test, since most thresholds were set or revised after this run's data was seen."
               if runs else "No confirmation runs under this config.")
    return [
        f"**Task.** Read the token K = {offsets} positions back, over V = {task['vocab_size']} symbols "
        f"(chance {number(1 / task['vocab_size'])}), with one attention head.",
        f"**Setup.** {seeds_line(config)}; {training_line(config)}; trained on lengths {task['train_length_min']} "
        f"to {task['train_length_max']}, tested at lengths {min(lengths)} to {max(lengths)}; encodings "
        f"{' and '.join(sweep['pe'])}.",
        f"**Checks.** {confirm} Terms and rules: [methods](appendix/methods.md).",
    ]


HEADLINE_RULE = ("A claim whose headline check (the number that states it) fails does not hold, however many of its "
                 "other checks do.")
# The verdict words as the claims table grades a claim: ``verdicts.DEFINITION``'s, with the headline rule folded in.
CLAIM_VERDICTS = (
    "**Verdicts.** *holds*: every evidence check holds; *holds in part*: some do, its headline check (the number that "
    "states the claim) among them; *does not hold*: its headline check fails, or no evidence check holds (the count "
    "beside it says how many of its other checks do); *untestable*: a precondition failed (the heads did not fit "
    "their training range) or nothing was measured. A precondition gates a verdict and never counts as evidence for "
    "it; sanity checks (tests of the code) are shown apart and count in no verdict.")
TERMS = (
    "**Terms.** *Rope*: rotary position encoding; *learned*: learned absolute position embeddings; *carrier*: the "
    "learned rule as a few rotary frequency blocks whose phases point at offset K; *energy share*: the part of the "
    "rule's weight in its 4 largest blocks (of D/2); *most frequent position*: the position the learned head "
    "attends to most often past the training range; *dilution error*: a wrong answer where the right key still "
    "scores highest but its attention is spread too thin; *ranking error*: one where another key scores higher; "
    "*log-length scaling*: attention logits multiplied by log(n) / log(training length); *hard-attention "
    "ceiling*: the share of the lost accuracy that attending only to the top-scoring key would win back, what logit "
    "scaling wins back in its limit; *replication*: in how many confirmation runs every check of the claim has the outcome "
    "it has here, of those where its preconditions hold; *confirmation runs*: the same experiments on fresh seeds, on a smaller vocabulary and on a "
    "larger one, with other offsets ([replication](appendix/replication.md)).")


def finding_number(finding: Finding, claims: pd.DataFrame, task: dict) -> str:
    """``Measured: 0.0475 at K=1, rule >= 0.5``: the row's headline number beside its rule."""
    check = headline_check(finding.headline, claims)
    measured = capitalized(measured_text(finding.headline, task))
    if check is None:
        return f"{measured}: {NOT_RUN}"
    where = "" if pd.isna(check["offset"]) else f" at {instance_name(check['offset'])}"
    rest = (f"; the rest, {finding.headline.label}, {number(1 - check['value'])}"
            if finding.headline.baseline == REST else "")
    return (f"{measured}: {number(check['value'])}{where}, rule {check['comparison']} {number(check['threshold'])}"
            f"{rest}")


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


ACROSS_RUNS = "fraction of runs meeting the headline's threshold"  # a multiseed check: a headline in every run


def check_words(check: pd.Series) -> str:
    """``rope: largest drop ... = 0.4 at K=2, rule < 0.25``: a check in words; a headline repeated across seeds and
    offsets is named by its claim; one the seed bootstrap leaves undecided says so."""
    where = "" if pd.isna(check["offset"]) else f" at {instance_name(check['offset'])}"
    what = (f"across seeds and offsets, {check['claim'].split(': ', 1)[-1]}: {check['statistic']}"
            if check["experiment"] == "multiseed" else check["statistic"])
    share = check.get("holds_fraction", float("nan"))
    undecided = (f", undecided by the seeds drawn (holds in {share:.0%} of resamples)"
                 if 1 - DECIDED_FRACTION < share < DECIDED_FRACTION else "")
    return (f"{what} = {number(check['value'])}{where}, rule {check['comparison']} {number(check['threshold'])}"
            f"{undecided}")


def worst_check(finding: Finding, claims: pd.DataFrame) -> str:
    """The evidence check furthest past its threshold, in words."""
    return check_words(deciding_check(evidence_of(finding, claims)))


def scope(finding: Finding, claims: pd.DataFrame) -> str:
    """``on 3 seeds at K=1, 2; ``: where a claim rests on fewer seeds than a bootstrap range needs."""
    evidence = evidence_of(finding, claims)
    if evidence.empty or int(evidence["n_seeds"].max()) >= FEWEST_SEEDS_FOR_A_RANGE:
        return ""
    offsets = ", ".join(str(int(offset)) for offset in sorted(evidence["offset"].dropna().unique()))
    return f"on {int(evidence['n_seeds'].max())} seeds" + (f" at K={offsets}" if offsets else "") + "; "


def is_headline(finding: Finding, check: pd.Series) -> bool:
    headline = finding.headline
    return (check["experiment"], check["claim"], check["statistic"]) == (headline.experiment, headline.claim,
                                                                          headline.statistic)


def at_offsets(checks: pd.DataFrame) -> str:
    """``1 at K=1, 2, 3`` where one value holds at every offset, else ``0.3 at K=1, 0.5 at K=2``."""
    values = checks["value"].map(number)
    offsets = checks["offset"].dropna().astype(int).astype(str)
    if values.nunique() == 1 and len(offsets) == len(checks):
        return f"{values.iloc[0]} at K={', '.join(offsets)}"
    return ", ".join(f"{value}" + ("" if pd.isna(offset) else f" at {instance_name(offset)}")
                     for value, offset in zip(values, checks["offset"]))


def differing_runs(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame | None) -> list[str]:
    """Where a claim's outcome differs in a confirmation run: ``in small vocab its headline is 0.606 at K=1 (9 of
    10 seeds fail)`` where its headline (or its headline across seeds and offsets) differs there, ``untestable in
    large vocab`` where a precondition fails there, and the other runs where some other check differs."""
    if replication is None:
        return []
    said, others = [], []
    for run, outcome in outcome_by_run(finding, claims, replication).items():
        if outcome == UNTESTABLE_THERE:
            said.append(f"untestable in {run_names([run])}, where a precondition fails")
            continue
        if outcome == REPLICATES:
            continue
        compared = compared_in_runs(evidence_of(finding, claims), replication[replication["run"] == run])
        differing = compared[compared["replicates"] == "no"]
        headline = differing[[is_headline(finding, row) for _, row in differing.iterrows()]]
        repeated = differing[(differing["experiment"] == "multiseed") & differing["claim"].str.startswith(
            f"{finding.headline.experiment}: ") & differing["statistic"].str.contains(ACROSS_RUNS, regex=False)]
        if not headline.empty:
            check = deciding_check(headline)
            where = "" if pd.isna(check["offset"]) else f" at {instance_name(check['offset'])}"
            seeds = (f" ({int(check['seeds_failing'])} of {int(check['seeds_checked'])} seeds fail)"
                     if check["seeds_checked"] > 0 else "")
            said.append(f"in {run_names([run])} its headline is {number(check['value'])}{where}{seeds}")
        elif len(repeated) == len(differing):
            said.append(f"in {run_names([run])} its headline holds in {number(repeated['value'].min())} of the "
                        f"seed-offset runs")
        else:
            others.append(run)
    return said + ([f"other checks differ in {run_names(others)}"] if others else [])


def longest_range(accuracy: pd.DataFrame | None, task: dict, encoding: str) -> str:
    """``at length 1024 (32x) 0.396 to 0.532``: the encoding's mean accuracy at the longest evaluation length, over
    K."""
    longest = max(task["eval_lengths"])
    rows = (accuracy[(accuracy["experiment"] == "generalization") & (accuracy["pe"] == encoding)
                     & (accuracy["length"] == longest)] if accuracy is not None else None)
    if rows is None or rows.empty:
        return ""
    return (f"at length {longest} ({longest // task['train_length_max']}x) {number(rows['mean'].min())} to "
            f"{number(rows['mean'].max())}")


def in_brief(finding: Finding, row: pd.Series) -> str:
    """``0.683 at K=1; chance 0.0625``: a claim's headline number and baseline, as the table has them."""
    value = row[VALUE]
    where = re.search(r", (K=\d+)", value)
    against = "" if row["baseline"] == "-" else (
        f", verified to float64 rounding (a test of the code); the evidence is the contrast: {row['baseline']}"
        if finding.headline.verified else f", against {row['baseline']}")
    return f"{value.split(' ')[0].rstrip(',')}{' at ' + where.group(1) if where else ''}{against}"


def holding(finding: Finding, row: pd.Series, claims: pd.DataFrame, replication: pd.DataFrame | None,
            accuracy: pd.DataFrame | None, task: dict) -> str:
    """A claim that holds: its number and baseline, the encoding's accuracy at the longest length where the claim
    names one (``Finding.at_longest``), and the confirmation runs where its outcome differs."""
    if row[VALUE] == NOT_RUN:
        return finding.short
    longest = longest_range(accuracy, task, finding.at_longest) if finding.at_longest else ""
    notes = [in_brief(finding, row), *([longest] if longest else []), *differing_runs(finding, claims, replication)]
    return f"{finding.short} ({scope(finding, claims)}{'; '.join(notes)})"


def contradiction(finding: Finding, row: pd.Series, claims: pd.DataFrame, task: dict) -> str:
    """What the data say against a claim that does not fully hold. Where its headline holds: how many checks hold,
    its number against its baseline, and the worst check. Where its headline fails: that number against its rule,
    and what does hold (``Finding.support``)."""
    check = headline_check(finding.headline, claims)
    held, total = evidence_count(finding, claims)
    if check is None or bool(check["holds"]):
        number_here = f"; its number {in_brief(finding, row)}" if check is not None else ""
        return (f"{finding.short} ({scope(finding, claims)}{held} of {total} checks hold{number_here}; worst, "
                f"{worst_check(finding, claims)})")
    where = "" if pd.isna(check["offset"]) else f" at {instance_name(check['offset'])}"
    rest = f", so {finding.headline.label} {number(1 - check['value'])}" if finding.headline.baseline == REST else ""
    support = evidence_of(finding, claims)
    support = support[support["claim"].isin(finding.support)]
    holds = "".join(f"; what holds: {claim} ({at_offsets(rows)}; rule {rows['comparison'].iloc[0]} "
                    f"{number(rows['threshold'].iloc[0])})"
                    for claim, rows in support.groupby("claim", sort=False) if rows["holds"].astype(bool).all())
    return (f"{finding.short}: {scope(finding, claims)}{measured_text(finding.headline, task)} is "
            f"{number(check['value'])}{where}{rest}, against the rule {check['comparison']} "
            f"{number(check['threshold'])} ({held} of {total} checks hold){holds}")


def out_of_reach(finding: Finding, claims: pd.DataFrame) -> str:
    """Where a claim's baseline is what its number reaches in a limit (``Headline.ceiling``) and its threshold lies
    far above that, how near the number comes; the rule is not rejudged, since a rule set against the ceiling now
    would be one set after the data."""
    headline = finding.headline
    check = headline_check(headline, claims)
    rival = rival_check(headline, check, claims) if check is not None and headline.baseline == RIVAL else None
    if not headline.ceiling or rival is None or check["comparison"] not in (">=", ">"):
        return ""
    ceiling = rival_value(headline, rival)
    if ceiling >= check["threshold"] or ceiling <= 0:
        return ""
    return (f" Its rule ({check['comparison']} {number(check['threshold'])}) lies far above the {headline.label} "
            f"{number(ceiling)}, what logit scaling wins back in its limit; the number reaches "
            f"{check['value'] / ceiling:.0%} of it. The rule stands: one judged against the ceiling now would be set "
            f"after the data.")


def verdict_lines(findings: list[tuple[Finding, pd.Series]], verdicts: dict[str, str], claims: pd.DataFrame,
                  replication: pd.DataFrame | None, accuracy: pd.DataFrame | None, task: dict) -> list[str]:
    """One bullet per verdict some claim of ``findings`` has, each claim in exactly one, with its number."""
    lines = []
    for verdict, title in BOTTOM_LINE:
        named = [(finding, row) for finding, row in findings if verdicts[finding.name] == verdict]
        if verdict == HOLDS:
            said = [holding(finding, row, claims, replication, accuracy, task) for finding, row in named]
        elif verdict in (IN_PART, DOES_NOT_HOLD):
            said = [contradiction(finding, row, claims, task) for finding, row in named]
        else:
            said = [finding.short for finding, _ in named]
        lines += [f"- **{title}.** " + capitalized("; ".join(said)) + "."] if said else []
    return lines


BOTTOM_LINE = ((HOLDS, "Reproduces"), (IN_PART, "Mixed"), (DOES_NOT_HOLD, "Contradicted"),
               (UNTESTABLE, "Untestable (a precondition failed)"), (NOT_TESTED, "Not run"))


def bottom_line(claims: pd.DataFrame, replication: pd.DataFrame | None, task: dict, table: pd.DataFrame,
                accuracy: pd.DataFrame | None = None, findings: tuple[Finding, ...] = FINDINGS) -> list[str]:
    """The paper's claims under three exclusive verdicts (reproduces, mixed, contradicted; untestable and not run
    where any is), each with the number that says so; this pipeline's own predictions apart, beyond the paper; and
    the claims whose outcome is the same in every confirmation run, with that outcome. ``table``: the claims table
    of ``findings``."""
    verdicts = {finding.name: finding_verdict(finding, claims) for finding in findings}
    rows = list(zip(findings, (row for _, row in table.iterrows())))
    lines = verdict_lines([(finding, row) for finding, row in rows if not finding.beyond], verdicts, claims,
                          replication, accuracy, task)
    for finding, row in rows:
        if finding.beyond and verdicts[finding.name] not in (NOT_TESTED, UNTESTABLE):
            said = (holding(finding, row, claims, replication, accuracy, task) if verdicts[finding.name] == HOLDS
                    else contradiction(finding, row, claims, task))
            lines.append(f"- **Beyond the paper ({verdicts[finding.name]}).** {capitalized(said)}; baseline: "
                         f"{row['baseline']}.{out_of_reach(finding, claims)}")
    if replication is not None:
        runs = len([run for run in dict.fromkeys(replication["run"]) if run != EXPLORATORY])
        same = [f"{finding.short} ({verdicts[finding.name]})" for finding, row in rows
                if re.fullmatch(r"(\d+) of \1 runs", row["replication"]) and row["replication"] != "0 of 0 runs"]
        lines.append(f"- **Same outcome in all {runs} confirmation runs:** {len(same)} of {len(findings)} claims"
                     + (f": {'; '.join(same)}." if same else "."))
    return lines


def longest_length_numbers(accuracy: pd.DataFrame | None, task: dict) -> str:
    """`` At length 1024 (32x): rope 0.4 (K=1), ...``: rope's mean accuracy at the longest evaluation length."""
    if accuracy is None:
        return ""
    longest = max(task["eval_lengths"])
    rope = accuracy[(accuracy["experiment"] == "generalization") & (accuracy["pe"] == "rope")
                    & (accuracy["length"] == longest)]
    if rope.empty:
        return ""
    values = ", ".join(f"{number(row.mean)} ({instance_name(row.offset)})" for row in rope.itertuples())
    return f" At the longest length, {longest} ({longest // task['train_length_max']}x), rope: {values}."


def figure_one(claims: pd.DataFrame, config: dict, accuracy: pd.DataFrame | None = None) -> list[str]:
    """Figure 1, the generalization figure, with a caption carrying its numbers; nothing where it did not run."""
    rope = claims[(claims["experiment"] == "generalization") & claims["statistic"].str.startswith("rope: mean accuracy "
                                                                                                   "at the longest")]
    learned = claims[(claims["experiment"] == "generalization")
                     & claims["statistic"].str.startswith("learned: largest distance of mean accuracy from chance")]
    if rope.empty or learned.empty:
        return []
    task = config["task"]
    far = 4 * task["train_length_max"]
    at_length = ", ".join(f"{number(row.value)} ({instance_name(row.offset)})" for row in rope.itertuples())
    return ["![Figure 1: accuracy against evaluation length](figures/generalization.png)",
            f"**Figure 1.** Accuracy against evaluation length, mean and 95% interval over "
            f"{len(config['sweep']['seed'])} seeds, one panel per K; grey: training range, dashed: chance "
            f"{number(1 / task['vocab_size'])}. Rope at length {far} (4x the longest training length): {at_length}."
            f"{longest_length_numbers(accuracy, task)} Learned heads past the range stay within "
            f"{number(learned['value'].max())} of chance."]


def told_by(experiment: str) -> Finding | None:
    """The claim whose page is this experiment's, if any."""
    return next((finding for finding in FINDINGS if finding.page == experiment), None)


def page_title(sections: list[str], experiment: str) -> str:
    """An experiment page's heading: its section's (``prop1: the attention-dilution law``), or, where that has no
    words after the name, the name and the claim the page tells."""
    title = title_of(sections, experiment)
    finding = told_by(experiment)
    return title if ":" in title or finding is None else f"{title}: {finding.short}"


def plain_title(sections: list[str], experiment: str) -> str:
    """An experiment's name in words: its page heading's words after the colon, else its name without
    underscores."""
    title = page_title(sections, experiment)
    return title.split(":", 1)[1].strip() if ":" in title else experiment.split("_")[0].replace("_", " ")


def results_markdown(config: dict, claims: pd.DataFrame, replication: pd.DataFrame | None, table: pd.DataFrame,
                     grouped: dict[str, list[str]], appendices: list[str], left_out: dict[str, str],
                     robustness: Mapping[str, tuple[int, int, int]] | None, accuracy: pd.DataFrame | None) -> str:
    """RESULTS.md (module doc); ``table``: the claims table."""
    experiments = list(grouped)
    runs = [] if replication is None else [run for run in dict.fromkeys(replication["run"]) if run != EXPLORATORY]
    bottom = bottom_line(claims, replication, config["task"], table, accuracy)
    table = table.copy()
    table["page"] = [cell if finding.page in experiments else NOT_RUN for cell, finding in zip(table["page"], FINDINGS)]
    told = {finding.page for finding in FINDINGS}
    links = {name: f"[{plain_title(grouped[name], name)}](experiments/{name}.md)" for name in experiments}
    no_study = [] if robustness is not None else ["Robustness study (other inits, widths, learning rates and "
                                                  "training ranges): not run under this config."]
    return "\n\n".join([
        "# Results: does rotary length generalization reproduce?",
        "\n".join(setup_lines(config, runs)),
        "**Bottom line.**\n" + "\n".join(bottom),
        table.to_markdown(index=False, disable_numparse=True),
        *no_study,
        CLAIM_VERDICTS,
        TERMS,
        *figure_one(claims, config, accuracy),
        "## Pages",
        "The claims above: " + "; ".join(links[name] for name in experiments if name in told) + ".",
        *(["Further experiments: " + "; ".join(links[name] for name in experiments if name not in told) + "."]
          if set(experiments) - told else []),
        "Appendices: " + ", ".join(f"[{name.replace('_', ' ')}](appendix/{name}.md)" for name in appendices) + ".",
        *([("Not run under this config: " + "; ".join(f"{name.replace('_', ' ')}: {reason}"
                                                      for name, reason in left_out.items()) + ".")]
          if left_out else []),
    ]) + "\n"


# ---------------------------------------------------------------------------------------------
# Experiment pages


def rebased(markdown: str, depth: int = 1) -> str:
    """``markdown`` with its figure links relative to a page ``depth`` folders below the results folder."""
    return FIGURE_LINK.sub(lambda found: f"![{found.group(1)}]({'../' * depth}figures/{found.group(2)})", markdown)


def figures_of(sections: list[str]) -> list[str]:
    return [found.group(0) for text in sections for found in FIGURE_LINK.finditer(text)]


def title_of(sections: list[str], experiment: str) -> str:
    """The heading of an experiment's first section, without its offset (``shift_K1``: ``shift``)."""
    first = sections[0].splitlines()[0] if sections else ""
    title = first.removeprefix("## ").strip() if first.startswith("## ") else experiment
    return re.sub(PER_OFFSET_SUFFIX.rstrip("$") + r"\b", "", title)


def checks_table(checks: pd.DataFrame, labels: pd.Series) -> str:
    """The page's one table: each evidence check with its value, interval and rule (6 columns), its claim followed
    by its label (``check_labels``)."""
    evidence = checks[checks["kind"] == "evidence"].copy()
    label = labels.reindex(evidence.index).fillna("")
    evidence["claim"] = evidence["claim"] + label.map(lambda text: f" ({text})" if text else "")
    interval = (evidence.apply(lambda row: f" [{number(row['spread_low'])}, {number(row['spread_high'])}]", axis=1)
                if "spread_low" in evidence else "")
    escaped = {column: evidence[column].str.replace("|", "\\|", regex=False) for column in ("claim", "statistic", "rule")}
    table = pd.DataFrame({**{column: escaped[column] for column in ("claim", "statistic")},
                          "K": evidence["offset"].map(instance_name),
                          "value [95% interval]": evidence["value"].map(number) + interval, "rule": escaped["rule"],
                          "holds": evidence["holds"].map({True: "yes", False: "no"})})
    return table.to_markdown(index=False, disable_numparse=True)


def page_checks(experiment: str, claims: pd.DataFrame) -> pd.DataFrame:
    """The checks an experiment's page shows: its own, then those of other experiments that the claim it tells
    counts (the multiseed repeats of its headlines, another experiment's predictions), so that its table shows
    every check its answer counts."""
    own = claims[claims["experiment"] == experiment]
    finding = told_by(experiment)
    borrowed = evidence_of(finding, claims) if finding is not None else claims.iloc[:0]
    return pd.concat([own, borrowed[borrowed["experiment"] != experiment]])


def check_labels(experiment: str, checks: pd.DataFrame, claims: pd.DataFrame) -> pd.Series:
    """Per check of a page, what it is to the claim the page tells: ``precondition`` (it gates, it is no evidence),
    ``from multiseed`` (another experiment's check the claim counts), ``this pipeline's hypothesis, in no verdict``,
    ``counts for: <claim>`` (another claim's), or ``in no claim's verdict``; no label for the claim's own evidence.
    A page that tells no claim labels only the checks some claim counts."""
    finding = told_by(experiment)
    labels = pd.Series("", index=checks.index, dtype=object)
    claimed = pd.Series(False, index=checks.index)
    for other in sorted(FINDINGS, key=lambda candidate: candidate is not finding):  # the page's claim first
        for part, rows in selections(other, claims):
            rows = rows.index.intersection(checks.index)
            free = rows[~claimed[rows].to_numpy()]
            if other is finding:
                labels[rows] = {PRECONDITION: "precondition", BEYOND: "this pipeline's hypothesis, in no verdict"}.get(
                    part.tests, "" if part.experiment == experiment else f"from {part.experiment}")
                claimed[rows] = True
            elif part.tests not in (PRECONDITION, BEYOND):
                labels[free] = f"counts for: {other.short}"
                claimed[free] = True
    if finding is not None:
        labels[~claimed] = "in no claim's verdict"
    already = checks["claim"].str.contains("(precondition)", regex=False)
    return labels.mask(already & (labels == "precondition"), "")


def sanity_sentence(checks: pd.DataFrame) -> str:
    sanity = checks[checks["kind"] == "sanity"]
    if sanity.empty:
        return "No sanity checks."
    failing = sanity[~sanity["holds"].astype(bool)]
    held = f"{len(sanity) - len(failing)} of {len(sanity)} hold"
    if failing.empty:
        return f"**Sanity checks** (tests of the code, in no verdict): {held}."
    return (f"**Sanity checks** (tests of the code, in no verdict): {held}; a failing one is a bug to fix before "
            "this page can be read: " + "; ".join(f"{row.claim} ({instance_name(row.offset)}): {number(row.value)}, "
                                                  f"rule {row.rule}" for row in failing.itertuples()) + ".")


def caveats(checks: pd.DataFrame) -> str:
    """How far the seed bootstrap decides the page's checks, and each one it leaves open."""
    if "holds_fraction" not in checks or checks.empty or int(checks["n_seeds"].max()) < 2:
        return "**Caveats.** One seed: no seed-to-seed spread to measure."
    share = checks["holds_fraction"]
    open_checks = checks[(share < DECIDED_FRACTION) & (share > 1 - DECIDED_FRACTION)]
    text = (f"**Caveats.** {len(checks) - len(open_checks)} of {len(checks)} checks have the same outcome in at "
            f"least {DECIDED_FRACTION:.0%} of seed resamples.")
    if open_checks.empty:
        return text
    return text + " Open, decided by the seeds drawn: " + "; ".join(
        f"{row.claim} ({instance_name(row.offset)}): {number(row.value)}, {SPREAD_INTERVAL:.0%} interval "
        f"[{number(row.spread_low)}, {number(row.spread_high)}], holds in {row.holds_fraction:.0%} of resamples"
        for row in open_checks.itertuples()) + "."


def answer(experiment: str, checks: pd.DataFrame, claims: pd.DataFrame, task: dict) -> list[str]:
    """The question and the one-sentence answer: the claim this page tells, else the experiment's own checks."""
    finding = told_by(experiment)
    if finding is not None:
        held, total = evidence_count(finding, claims)
        question = finding.question or f"Does this hold: {finding.paper}?"
        return [f"**Question.** {question}",
                f"**Answer: {finding_verdict(finding, claims)}** ({held} of {total} evidence checks hold). "
                f"{finding_number(finding, claims, task)}."]
    evidence = checks[checks["kind"] == "evidence"]
    return [f"**Answer: {graded(evidence['holds'].astype(bool))}** ({int(evidence['holds'].sum())} of "
            f"{len(evidence)} evidence checks hold; beyond the claims of the paper)."]


def experiment_page(experiment: str, sections: list[str], checks: pd.DataFrame, claims: pd.DataFrame,
                    task: dict) -> str:
    shown = page_checks(experiment, claims)
    return "\n\n".join([
        f"# {page_title(sections, experiment)}",
        "[Back to the results](../RESULTS.md)",
        *answer(experiment, checks, claims, task),
        *(rebased(figure) for figure in figures_of(sections)),
        (checks_table(shown, check_labels(experiment, shown, claims)) if (shown["kind"] == "evidence").any()
         else "No evidence checks."),
        f"**How it was tested.** Each check is a rule fixed in code. When this experiment's rules were set: "
        f"{rule_timing(experiment)} ([rule history](../appendix/rule_history.md)). "
        f"Verdict words and the seed bootstrap: [methods](../appendix/methods.md).",
        sanity_sentence(checks),
        caveats(checks),
        f"Every table and number of this experiment: [details](../appendix/{experiment}.md).",
    ]) + "\n"


# ---------------------------------------------------------------------------------------------
# Appendices


def methods_markdown() -> str:
    return "\n\n".join([
        "# Methods", "[Back to the results](../RESULTS.md)", f"{DEFINITION} {HEADLINE_RULE}",
        f"**Checks.** Each claim is split into checks, each a statistic compared with a threshold fixed in code. An "
        f"*evidence* check is one a plausible world could fail; a *sanity* check only a bug can fail (an identity of "
        f"the code, an impossibility), so it counts in no verdict. A *precondition* (the heads fit their training "
        f"range) gates a claim's verdict. An experiment's verdict: {VERDICT_RULE}.",
        f"**Seed bootstrap.** The run's seeds are resampled with replacement and every check recomputed; a value's "
        f"*95% interval* is the central {SPREAD_INTERVAL:.0%} of its resampled values, and a check is *decided* when "
        f"it has the same outcome in at least {DECIDED_FRACTION:.0%} of resamples. For a minimum (maximum) over "
        f"seeds a resample cannot go below (above) the value measured, so its interval starts (ends) there.",
        "**Claims table.** *value*: the headline check at the offset closest to its threshold (or furthest past it "
        "where it fails), with its 95% interval and number of seeds; for the worst seed's value (a minimum or maximum "
        "over seeds) the bootstrap range it spans instead, and no range under 5 seeds; *baseline*: chance (1/V), the "
        "same heads untrained, or the rival account's value; *threshold (when set)*: the headline's threshold, and "
        "whether the experiment's rules were set before its data was seen (from the rule history); *verdict*: as "
        "above, and a claim whose headline check fails does not hold, however many of its other checks do; "
        "*replication*: in how many confirmation runs every evidence check of the claim has the outcome it has "
        "here, of the runs where its preconditions hold (where one fails, the claim is untestable in that run); *robustness*: at how many points of the robustness study the claim holds, where that study ran (judged "
        "on its checks there: the multiseed repeats of its headlines run at this point alone).",
        "**Terms.** *K*: the offset, how far back the token to retrieve lies; *V*: the vocabulary size; *rope*: "
        "rotary position encoding; *learned*: learned absolute position embeddings; *dilution error*: a wrong answer "
        "where the right key still scores highest but its attention weight is spread too thin; *ranking error*: a "
        "wrong answer where another key scores higher than the right one; *the dilution law*: the prediction of "
        "rope's accuracy past the training range from the head's parameters by attention dilution.",
    ]) + "\n"


def setup_markdown(config: dict, commit: str, date: datetime.date, machine: str) -> str:
    dump = yaml.safe_dump(config, sort_keys=False, default_flow_style=None).strip()
    return "\n\n".join([
        "# Setup", "[Back to the results](../RESULTS.md)",
        "Generated by the lengthgen workflow from its own runs; do not edit by hand (`snakemake --cores 8` "
        "rewrites every page).",
        f"- code: git commit `{commit}`\n- date: {date.isoformat()}\n- machine: {machine}",
        "Configuration used:\n\n```yaml\n" + dump + "\n```"]) + "\n"


def appendix_page(title: str, body: str) -> str:
    return f"# {title}\n\n[Back to the results](../RESULTS.md)\n\n{rebased(body).rstrip()}\n"


def sections_by_experiment(sections: dict[str, str], claims: pd.DataFrame,
                           experiments: list[str]) -> dict[str, list[str]]:
    """Each experiment's sections' markdown, in report order: a section belongs to the experiment of its checks,
    or, without checks, to the experiment it is named for (``shift_K1``: ``shift``)."""
    owner = dict(zip(claims["section"], claims["experiment"]))
    grouped = {name: [] for name in experiments}
    for section, text in sections.items():
        grouped[owner.get(section, re.sub(PER_OFFSET_SUFFIX, "", section))].append(text)
    return grouped


def differences_in_run(finding: Finding, claims: pd.DataFrame, replication: pd.DataFrame, run: str,
                       outcome: str) -> str:
    """``fresh seeds: 1 (rule): <the check>``: how many of the claim's checks differ in ``run``, by cause, the check
    named where it is one; or that the claim is untestable there, with the failing precondition."""
    name = run_names([run])
    in_run = replication[replication["run"] == run]
    if outcome == UNTESTABLE_THERE:
        gates = [rows for part, rows in selections(finding, in_run) if part.tests == PRECONDITION]
        failing = pd.concat(gates).pipe(lambda rows: rows[~rows["holds"].astype(bool)])
        return f"{name}: untestable, a precondition fails ({check_words(deciding_check(failing))})"
    compared = compared_in_runs(evidence_of(finding, claims), in_run)
    differing = compared[compared["replicates"] == "no"]
    causes = ", ".join(differing["cause"].value_counts().index)
    named = f": {check_words(differing.iloc[0])}" if len(differing) == 1 else ""
    return f"{name}: {len(differing)} ({causes}){named}"


def replication_by_claim(claims: pd.DataFrame, replication: pd.DataFrame, table: pd.DataFrame) -> str:
    """The claims table's replication, claim by claim (the unit of the results page), with the checks that do not
    replicate in each run, or that the claim is untestable there; the experiment-by-experiment account follows it.
    ``table``: the claims table."""
    rows = []
    for finding, cell in zip(FINDINGS, table["replication"]):
        outcomes = outcome_by_run(finding, claims, replication)
        broken = "; ".join(differences_in_run(finding, claims, replication, run, outcome)
                           for run, outcome in outcomes.items() if outcome != REPLICATES) or "-"
        rows.append([finding.short, finding_verdict(finding, claims), cell, broken])
    return "\n\n".join([
        "## By claim",
        "As on the results page: a claim replicates in a run when every one of its evidence checks has there the "
        "outcome it has in this run, and is untestable in a run where one of its preconditions fails. The last "
        "column counts, per run, the checks that do not replicate, by cause (defined below).",
        pd.DataFrame(rows, columns=["claim", "verdict here", "same outcome in", "checks that differ, per run (cause)"])
        .to_markdown(index=False, disable_numparse=True),
        "## By experiment"])


def robustness_by_claim(robustness: Mapping[str, tuple[int, int, int]]) -> str:
    """The claims table's robustness column, claim by claim, before the study's own check-by-check account."""
    lines = [f"- {finding.short}: {robustness_cell(finding, robustness)}" for finding in FINDINGS
             if finding.name in robustness]
    return "\n\n".join(["## By claim", "As on the results page (a claim's verdict at each point, by the same rule):",
                         "\n".join(lines) or "No claim of the results page is run whole by the study.",
                         "## By experiment and check"])


def render_pages(config: dict, sections: dict[str, str], claims: pd.DataFrame, experiments: list[str], *,
                 commit: str, date: datetime.date, machine: str, training: str, changes: str | None = None,
                 left_out: dict[str, str] | None = None, replication: pd.DataFrame | None = None,
                 replication_section: str | None = None,
                 robustness: Mapping[str, tuple[int, int, int]] | None = None,
                 robustness_section: str | None = None, accuracy: pd.DataFrame | None = None) -> dict[str, str]:
    """Every page (module doc), by its path relative to the results folder. ``sections``: each section's markdown;
    ``claims``: ``all_claims`` joined with ``claim_spread``; ``experiments``: those that ran, in report order;
    ``training``: the training section; ``changes``: the changes since the previous run; ``replication`` and
    ``replication_section``: the replication table and section; ``robustness``: claim -> (points held, points), and
    ``robustness_section`` the robustness study's section (``lengthgen/studies/robustness/section.py``); ``accuracy``: the
    ``accuracy_summary`` table, for Figure 1's caption."""
    paths = page_paths(experiments, changes is not None, replication is not None, robustness_section is not None)
    appendices = [path.removeprefix("appendix/").removesuffix(".md") for path in paths if path.startswith("appendix/")
                  and path.removeprefix("appendix/").removesuffix(".md") not in experiments]
    grouped = sections_by_experiment(sections, claims, experiments)
    table = claims_table(claims, replication, config["task"], robustness)
    pages = {"RESULTS.md": results_markdown(config, claims, replication, table, grouped, appendices, left_out or {},
                                            robustness, accuracy),
             "appendix/methods.md": methods_markdown(),
             "appendix/setup.md": setup_markdown(config, commit, date, machine),
             "appendix/training.md": appendix_page("Training", training.removeprefix("## Training")),
             "appendix/claims.md": appendix_page("Claims in detail", findings_markdown(claims, replication, left_out)),
             "appendix/rule_history.md": appendix_page("Rule history", history_markdown())}
    if changes is not None:
        pages["appendix/changes.md"] = appendix_page("Changes since the previous run", changes)
    if replication_section is not None:
        pages["appendix/replication.md"] = appendix_page(
            "Replication", replication_by_claim(claims, replication, table) + "\n\n" + replication_section)
    if robustness_section is not None:
        pages[f"appendix/{ROBUSTNESS}.md"] = appendix_page(
            "Robustness", robustness_by_claim(robustness or {}) + "\n\n" + robustness_section)
    for experiment in experiments:
        checks = claims[claims["experiment"] == experiment]
        pages[f"experiments/{experiment}.md"] = experiment_page(experiment, grouped[experiment], checks, claims,
                                                                config["task"])
        pages[f"appendix/{experiment}.md"] = appendix_page(title_of(grouped[experiment], experiment),
                                                           "\n\n".join(grouped[experiment]))
    pages = {path: fit_cells(pages[path]) for path in pages}
    pages[FIRST_SCREEN] = as_rst(pages["RESULTS.md"], config["results_dir"])
    return {path: pages[path] for path in paths}


def write_pages(pages: dict[str, str]) -> None:
    """Each page at its path, each written atomically."""
    for path, text in pages.items():
        atomic_write_text(text, path)
