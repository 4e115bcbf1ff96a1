"""The report as pages: RESULTS.md answers on its first screen, each experiment has a page, details go to appendices.

``render_pages`` is a pure function of the run's tables and its config: it returns every page as
``{path relative to the results folder: markdown}``, the paths ``page_paths`` names (the report rule declares the
same ones as its outputs). The pages:

- ``RESULTS.md``: the setup in three lines (read from the config), the bottom line (``bottom_line``, from the
  verdicts), the claims table (``lengthgen.claims_table``), the verdict vocabulary (``verdicts.DEFINITION``),
  Figure 1 with its numbers, then links to every page and appendix;
- ``experiments/<experiment>.md``: the question, the answer with its number, the figures, one table of its checks
  (at most 6 columns), when its rules were fixed, its sanity checks apart, its caveats, a link to its details;
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

from lengthgen.claims import VERDICT_RULE
from lengthgen.claims_table import NOT_RUN, claims_table, headline_check, number
from lengthgen.findings import FINDINGS, NOT_TESTED, REST, Finding, findings_markdown, row_verdict, selections
from lengthgen.first_screen_rst import as_rst
from lengthgen.markdown_cells import fit_cells
from lengthgen.replication import EXPLORATORY, instance_name
from lengthgen.rule_history import history_markdown, rule_timing
from lengthgen.tables import atomic_write_text
from lengthgen.thresholds import DECIDED_FRACTION, SPREAD_INTERVAL
from lengthgen.verdicts import DEFINITION, DOES_NOT_HOLD, HOLDS, IN_PART, UNTESTABLE, graded

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


def setup_lines(config: dict, runs: list[str]) -> list[str]:
    """The task and setup in three lines, every number read from ``config``; ``runs``: the confirmation runs."""
    task, sweep = config["task"], config["sweep"]
    lengths = task["eval_lengths"]
    offsets = ", ".join(str(offset) for offset in sweep["offset"])
    names = ", ".join(run.replace("_", " ") for run in runs)
    confirm = (f"Each claim is judged again in {len(runs)} confirmation runs ({names}) by the same rules."
               if runs else "No confirmation runs under this config.")
    return [
        f"**Task.** Read the token K = {offsets} positions back, over V = {task['vocab_size']} symbols "
        f"(chance {number(1 / task['vocab_size'])}), with one attention head.",
        f"**Setup.** {len(sweep['seed'])} seeds per model, trained on lengths {task['train_length_min']} to "
        f"{task['train_length_max']}, tested at lengths {min(lengths)} to {max(lengths)}; encodings "
        f"{' and '.join(sweep['pe'])}.",
        f"**Checks.** {confirm} Terms and rules: [methods](appendix/methods.md).",
    ]


def finding_number(finding: Finding, claims: pd.DataFrame) -> str:
    """``measured: 0.0475 at K=1, rule >= 0.5``: the row's headline number beside its rule."""
    check = headline_check(finding.headline, claims)
    if check is None:
        return f"{finding.headline.measured}: {NOT_RUN}"
    where = "" if pd.isna(check["offset"]) else f" at {instance_name(check['offset'])}"
    return (f"{finding.headline.measured}: {number(check['value'])}{where}, rule {check['comparison']} "
            f"{number(check['threshold'])}")


BOTTOM_LINE = ((HOLDS, "Reproduces"), (IN_PART, "Reproduces in part"), (DOES_NOT_HOLD, "Does not reproduce"),
               (UNTESTABLE, "Untestable (a precondition failed)"), (NOT_TESTED, "Not run"))


def contradiction(finding: Finding, claims: pd.DataFrame) -> str | None:
    """Where a claim's headline check fails, what the data say instead, with its number; else None."""
    check = headline_check(finding.headline, claims)
    if check is None or bool(check["holds"]):
        return None
    rest = (f"; the rest, {finding.headline.label}, {number(1 - check['value'])}"
            if finding.headline.baseline == REST else "")
    return (f"{finding.short}: {finding.headline.measured} is {number(check['value'])}, against the rule "
            f"{check['comparison']} {number(check['threshold'])}{rest}")


def in_brief(finding: Finding, row: pd.Series) -> str:
    """``claim (0.683 at K=1; chance 0.0625)``: a claim with its headline number and baseline, as the table has them."""
    if row["value [95% interval] (n)"] == NOT_RUN:
        return finding.short
    value = row["value [95% interval] (n)"]
    where = value.split(", ")[-1] if ", K=" in value else ""
    against = f"; {row['baseline']}" if row["baseline"] != "-" else ""
    return f"{finding.short} ({value.split(' ')[0]}{' at ' + where if where else ''}{against})"


def bottom_line(claims: pd.DataFrame, replication: pd.DataFrame | None, vocab_size: int,
                findings: tuple[Finding, ...] = FINDINGS) -> list[str]:
    """One line per verdict some claim has (the claims with it, each with its headline number), the headline
    numbers that contradict the paper, and the claims that replicate in every confirmation run."""
    verdicts = {finding.name: row_verdict(selections(finding, claims), claims) for finding in findings}
    table = claims_table(claims, replication, vocab_size, findings=findings)
    lines = []
    for verdict, title in BOTTOM_LINE:
        named = [in_brief(finding, row) for finding, (_, row) in zip(findings, table.iterrows())
                 if verdicts[finding.name] == verdict]
        if named and verdict != IN_PART:
            lines.append(f"- **{title}:** " + "; ".join(named) + ".")
        elif named:  # their numbers are said below where the headline fails, in the table where it holds
            lines.append(f"- **{title}:** " + "; ".join(finding.short for finding in findings
                                                        if verdicts[finding.name] == verdict) + ".")
    against = [text for text in (contradiction(finding, claims) for finding in findings) if text]
    if against:
        lines.append("- **Where the data contradict the paper:** " + "; ".join(against) + ".")
    if replication is not None:
        everywhere = [short for short, cell in zip(table["claim"], table["replication"])
                      if re.fullmatch(r"(\d+) of \1 runs", cell)]
        lines.append(f"- **Replicated in every confirmation run:** {len(everywhere)} of {len(findings)} claims"
                     + (f" ({'; '.join(everywhere)})." if everywhere else "."))
    return lines


def figure_one(claims: pd.DataFrame, config: dict) -> list[str]:
    """Figure 1, the generalization figure, with a caption carrying its numbers; nothing where it did not run."""
    rope = claims[(claims["experiment"] == "generalization") & claims["statistic"].str.startswith("rope: mean accuracy "
                                                                                                   "at the longest")]
    learned = claims[(claims["experiment"] == "generalization")
                     & claims["statistic"].str.startswith("learned: largest distance of mean accuracy from chance")]
    if rope.empty or learned.empty:
        return []
    at_length = ", ".join(f"{number(row.value)} ({instance_name(row.offset)})" for row in rope.itertuples())
    return ["![Figure 1: accuracy against evaluation length](figures/generalization.png)",
            f"**Figure 1.** Accuracy against evaluation length, mean and 95% interval over "
            f"{len(config['sweep']['seed'])} seeds, one panel per K; grey: training range, dashed: chance "
            f"{number(1 / config['task']['vocab_size'])}. Rope at the longest length up to 4x the training range: "
            f"{at_length}. Learned heads past the range stay within {number(learned['value'].max())} of chance."]


def plain_title(sections: list[str], experiment: str) -> str:
    """An experiment's name in words: its section heading's words after the colon (``prop1: the attention-dilution
    law``), else its name without underscores."""
    title = title_of(sections, experiment)
    return title.split(":", 1)[1].strip() if ":" in title else experiment.split("_")[0].replace("_", " ")


def results_markdown(config: dict, claims: pd.DataFrame, replication: pd.DataFrame | None,
                     grouped: dict[str, list[str]], appendices: list[str], left_out: dict[str, str],
                     robustness: Mapping[str, tuple[int, int]] | None) -> str:
    experiments = list(grouped)
    runs = [] if replication is None else [run for run in dict.fromkeys(replication["run"]) if run != EXPLORATORY]
    table = claims_table(claims, replication, config["task"]["vocab_size"], robustness)
    table["page"] = [cell if finding.page in experiments else NOT_RUN for cell, finding in zip(table["page"], FINDINGS)]
    told = {finding.page for finding in FINDINGS}
    links = {name: f"[{plain_title(grouped[name], name)}](experiments/{name}.md)" for name in experiments}
    return "\n\n".join([
        "# Results: does rotary length generalization reproduce?",
        "\n".join(setup_lines(config, runs)),
        "**Bottom line.**\n" + "\n".join(bottom_line(claims, replication, config["task"]["vocab_size"])),
        table.to_markdown(index=False, disable_numparse=True),
        DEFINITION,
        *figure_one(claims, config),
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


def checks_table(checks: pd.DataFrame) -> str:
    """The page's one table: each evidence check with its value, interval and rule (6 columns)."""
    evidence = checks[checks["kind"] == "evidence"]
    interval = (evidence.apply(lambda row: f" [{number(row['spread_low'])}, {number(row['spread_high'])}]", axis=1)
                if "spread_low" in evidence else "")
    escaped = {column: evidence[column].str.replace("|", "\\|", regex=False) for column in ("claim", "statistic", "rule")}
    table = pd.DataFrame({**{column: escaped[column] for column in ("claim", "statistic")},
                          "K": evidence["offset"].map(instance_name),
                          "value [95% interval]": evidence["value"].map(number) + interval, "rule": escaped["rule"],
                          "holds": evidence["holds"].map({True: "yes", False: "no"})})
    return table.to_markdown(index=False, disable_numparse=True)


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


def answer(experiment: str, checks: pd.DataFrame, claims: pd.DataFrame) -> list[str]:
    """The question and the one-sentence answer: the claim this page tells, else the experiment's own checks."""
    told = [finding for finding in FINDINGS if finding.page == experiment]
    if told:
        finding = told[0]
        verdict = row_verdict(selections(finding, claims), claims)
        return [f"**Question.** Does this hold: {finding.paper}?",
                f"**Answer: {verdict}.** {finding_number(finding, claims)}."]
    evidence = checks[checks["kind"] == "evidence"]
    return [f"**Answer: {graded(evidence['holds'].astype(bool))}** ({int(evidence['holds'].sum())} of "
            f"{len(evidence)} evidence checks hold; beyond the claims of the paper)."]


def experiment_page(experiment: str, sections: list[str], checks: pd.DataFrame, claims: pd.DataFrame) -> str:
    return "\n\n".join([
        f"# {title_of(sections, experiment)}",
        "[Back to the results](../RESULTS.md)",
        *answer(experiment, checks, claims),
        *(rebased(figure) for figure in figures_of(sections)),
        checks_table(checks) if (checks["kind"] == "evidence").any() else "No evidence checks.",
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
        "# Methods", "[Back to the results](../RESULTS.md)", DEFINITION,
        f"**Checks.** Each claim is split into checks, each a statistic compared with a threshold fixed in code. An "
        f"*evidence* check is one a plausible world could fail; a *sanity* check only a bug can fail (an identity of "
        f"the code, an impossibility), so it counts in no verdict. A *precondition* (the heads fit their training "
        f"range) gates a claim's verdict. An experiment's verdict: {VERDICT_RULE}.",
        f"**Seed bootstrap.** The run's seeds are resampled with replacement and every check recomputed; a value's "
        f"*95% interval* is the central {SPREAD_INTERVAL:.0%} of its resampled values, and a check is *decided* when "
        f"it has the same outcome in at least {DECIDED_FRACTION:.0%} of resamples. For a minimum (maximum) over "
        f"seeds a resample cannot go below (above) the value measured, so its interval starts (ends) there.",
        "**Claims table.** *value*: the headline check at the offset closest to its threshold (or furthest past it "
        "where it fails), with its interval and number of seeds n; *baseline*: chance (1/V), the same heads "
        "untrained, or the rival account's value; *rule (fixed)*: the threshold, and whether the experiment's rules "
        "were fixed before its data was seen (from the rule history); *replication*: in how many confirmation runs "
        "every evidence check of the claim replicates; *robustness*: how many points of a robustness study it holds "
        "at (not run unless that study ran).",
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


def render_pages(config: dict, sections: dict[str, str], claims: pd.DataFrame, experiments: list[str], *,
                 commit: str, date: datetime.date, machine: str, training: str, changes: str | None = None,
                 left_out: dict[str, str] | None = None, replication: pd.DataFrame | None = None,
                 replication_section: str | None = None,
                 robustness: Mapping[str, tuple[int, int]] | None = None,
                 robustness_section: str | None = None) -> dict[str, str]:
    """Every page (module doc), by its path relative to the results folder. ``sections``: each section's markdown;
    ``claims``: ``all_claims`` joined with ``claim_spread``; ``experiments``: those that ran, in report order;
    ``training``: the training section; ``changes``: the changes since the previous run; ``replication`` and
    ``replication_section``: the replication table and section; ``robustness``: claim -> (points held, points), and
    ``robustness_section`` the robustness study's section (``lengthgen/robustness/section.py``)."""
    paths = page_paths(experiments, changes is not None, replication is not None, robustness_section is not None)
    appendices = [path.removeprefix("appendix/").removesuffix(".md") for path in paths if path.startswith("appendix/")
                  and path.removeprefix("appendix/").removesuffix(".md") not in experiments]
    grouped = sections_by_experiment(sections, claims, experiments)
    pages = {"RESULTS.md": results_markdown(config, claims, replication, grouped, appendices, left_out or {},
                                            robustness),
             "appendix/methods.md": methods_markdown(),
             "appendix/setup.md": setup_markdown(config, commit, date, machine),
             "appendix/training.md": appendix_page("Training", training.removeprefix("## Training")),
             "appendix/claims.md": appendix_page("Claims in detail", findings_markdown(claims, replication, left_out)),
             "appendix/rule_history.md": appendix_page("Rule history", history_markdown())}
    if changes is not None:
        pages["appendix/changes.md"] = appendix_page("Changes since the previous run", changes)
    if replication_section is not None:
        pages["appendix/replication.md"] = appendix_page("Replication", replication_section)
    if robustness_section is not None:
        pages[f"appendix/{ROBUSTNESS}.md"] = appendix_page("Robustness", robustness_section)
    for experiment in experiments:
        checks = claims[claims["experiment"] == experiment]
        pages[f"experiments/{experiment}.md"] = experiment_page(experiment, grouped[experiment], checks, claims)
        pages[f"appendix/{experiment}.md"] = appendix_page(title_of(grouped[experiment], experiment),
                                                           "\n\n".join(grouped[experiment]))
    pages = {path: fit_cells(pages[path]) for path in pages}
    pages[FIRST_SCREEN] = as_rst(pages["RESULTS.md"], config["results_dir"])
    return {path: pages[path] for path in paths}


def write_pages(pages: dict[str, str]) -> None:
    """Each page at its path, each written atomically."""
    for path, text in pages.items():
        atomic_write_text(text, path)
