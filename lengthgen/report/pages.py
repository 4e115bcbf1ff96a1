"""The report as pages, a pure function of the run's tables and config (``render_pages``: ``{path relative to the
results folder: markdown}`` for the paths ``page_paths`` names): RESULTS.md (setup, one sentence per claim, the claims
table, Figure 1, what moves the answers, links) and its reStructuredText twin, a page per experiment (its claims
judged, forest plots, figures, checks) and the appendices. Every verdict and number is the judgments tables', put in
words by ``claim_text``; ``fit_cells`` keeps every table cell under ``markdown.MAX_CELL``.
"""

import datetime
import re

import pandas as pd
import yaml

from lengthgen.checks.check import checks_markdown
from lengthgen.checks.headlines import FOUR_X
from lengthgen.checks.judgment import DEFINITION, MIN_SEEDS, N_RESAMPLES, UNTESTABLE, across_offsets
from lengthgen.checks.rule_history import history_markdown, rule_timing
from lengthgen.experiments.claims import CLAIMS, CLAIMS_BY_NAME, HEADLINES_BY_NAME, Claim
from lengthgen.experiments.generalization.headlines import LONGEST_FACTOR
from lengthgen.report import claim_text
from lengthgen.report.claim_text import capitalized, number, of_claim, per_offset, thresholds_text
from lengthgen.report.first_screen import as_rst
from lengthgen.report.markdown import fit_cells
from lengthgen.studies.judgments.judge import THIS_RUN, rope_far_accuracy

FIRST_SCREEN = "first_screen.rst"  # RESULTS.md for the HTML report
CHANGES, REPLICATION, ROBUSTNESS = "changes", "replication", "robustness"
PER_OFFSET_SUFFIX = r"_K\d+"  # a per-offset section's name: <experiment>_K<offset>
FIGURE_LINK = re.compile(r"!\[([^\]]*)\]\(figures/([^)]+)\)")
BACK = "[Back to the results](../RESULTS.md)"
INIT_WORDS = {"torch_default": "PyTorch's default init"}
METHODS = [
    "**Primary statistics.** Each claim names one statistic its experiment exports (one number per trained run: "
    "offset K and seed), a threshold fixed in code, and a baseline drawn beside it (chance 1/V, the heads untrained, "
    "the other encoding or a rival account). The mean over seeds and its interval decide; the seeds that clear the "
    "threshold alone, the worst seed and every check are shown and decide nothing.",
    "**Conditions.** The same rule judges this run, each confirmation run (other seeds or another vocabulary) and each "
    "robustness setting (one or two training choices varied), each from its own seeds and with its own task's "
    "chance. A confirmation run whose data nobody had seen when the rules were fixed is the out-of-sample test.",
    "**Terms.** *Checks*: each experiment's other statistics against thresholds, shown as secondary evidence, "
    "*evidence* where a plausible world could fail one, *sanity* where only a bug can; *K*: the offset, how far "
    "back the token to retrieve lies; *V*: the vocabulary size; *rope*: rotary "
    "position encoding; *learned*: learned absolute position embeddings; *dilution error*: a wrong answer where the "
    "right key still scores highest but its attention weight is spread too thin; *ranking error*: a wrong answer "
    "where another key scores higher than the right one; *the dilution law*: the prediction of rope's accuracy past "
    "the training range from the head's parameters by attention dilution; *log-length scaling*: attention logits "
    "multiplied by log(n) / log(training length); *hard-attention limit*: what logit scaling wins back as its scale "
    "grows (attending to the top-scoring key alone).",
]


def intervals(config: dict) -> str:
    """The methods page's two seed bootstraps, each with its resample count: the code's for a claim's verdict, the
    config's for a check's spread."""
    return (
        "**Intervals.** A claim's interval is the seed bootstrap of its mean: the seeds drawn with replacement "
        f"{N_RESAMPLES:,} times (a fixed generator), the central 95% of the resampled means. With 3 seeds (the "
        "transformer) it spans nearly their whole range, so a verdict there is often inconclusive. Each check has a "
        f"seed bootstrap of its own, {config['bootstrap']['resamples']:,} resamples (the config's "
        "`bootstrap.resamples`; each recomputes the experiment's checks): its statistic's spread and the share of "
        "resamples in which it holds (`tables/claim_spread.parquet`), which say whether other seeds could flip it. The "
        "figures' bands (Student-t over seeds) and the checks' spreads describe; neither judges.")


def page_paths(experiments: list[str], previous_run: bool, replication: bool, robustness: bool = False) -> list[str]:
    """Every page ``render_pages`` writes, relative to the results folder, in a fixed order."""
    studies = ((CHANGES, previous_run), (REPLICATION, replication), (ROBUSTNESS, robustness))
    appendices = ["methods", "setup", "training", "claims", "rule_history",
                  *[name for name, runs in studies if runs], *experiments]
    return ["RESULTS.md", FIRST_SCREEN, *(f"experiments/{name}.md" for name in experiments),
            *(f"appendix/{name}.md" for name in appendices)]


def setup_lines(config: dict, judgments: pd.DataFrame) -> list[str]:
    """The task, the setup and how claims are judged, in three lines, every number read from ``config``."""
    task, sweep, model, train = config["task"], config["sweep"], config["model"], config["train"]
    variant_seeds = len((config.get("variants") or {}).get("seeds") or sweep["seed"])
    init = INIT_WORDS.get(model.get("init"), f"init {model.get('init')}")
    if model.get("init") == "torch_default" and "learned_init_std" in model:
        init += f" (the learned position table N(0, {model['learned_init_std']:g}²))"
    confirmations = judgments[judgments["kind"] == "confirmation"]
    runs = confirmations.drop_duplicates("condition")
    # each run's offsets beside its name: the runs test different K, and "holds in 2 of 3 runs" counts runs
    offsets = confirmations.groupby("condition")["offset"].unique()
    named = lambda run: f"{run.replace('_', ' ')} at K={', '.join(map(str, sorted(offsets[run])))}"
    when = {True: "whose data were seen before the claims' rules were last revised",
            False: "added after them, the out-of-sample test"}
    again = [f"{len(group)} {when[seen]} ({'; '.join(map(named, group['condition']))})"
             for seen, group in runs.groupby("seen", sort=False)]
    points = judgments.loc[judgments["kind"] == "robustness", "condition"].nunique()
    return [
        f"**Task.** Read the token K = {', '.join(map(str, sweep['offset']))} positions back, over V = "
        f"{task['vocab_size']} symbols (chance {number(1 / task['vocab_size'])}), with one attention head (and a "
        "small transformer).",
        f"**Setup.** Trained on lengths {task['train_length_min']} to {task['train_length_max']}, tested at lengths "
        f"{min(task['eval_lengths'])} to {max(task['eval_lengths'])}{multiples_named(task)}; encodings "
        f"{' and '.join(sweep['pe'])}. "
        f"The heads: {len(sweep['seed'])} seeds per model (the encoding variants {variant_seeds}), width "
        f"{model['d_model']}, {init}, Adam at peak lr {train['lr']:g} for {train['steps']} steps."
        + transformer_setup(config),
        "**Judged.** Each claim by one number per trained run: its mean over seeds with a 95% seed-bootstrap "
        "interval, per K, against a threshold set in code (when it was set, before or after the data: the table's "
        "rule column; [methods](appendix/methods.md))."
        + (f" The same rule in each confirmation run: {'; '.join(again)}." if again else " No confirmation runs.")
        + (f" Robustness counts {points + 1} settings: this run and {points} at other settings "
           "([robustness](appendix/robustness.md))." if points else ""),
    ]


# Below this many seeds a seed-bootstrap interval is little more than the seeds' range: said where the transformer has
# fewer
FEW_SEEDS = 5


def multiples_named(task: dict) -> str:
    """`` ("4x" and "32x" below: lengths 128 and 1024, 4 and 32 times the longest training length)``: the multiples
    the claims are read at, those this run's evaluation lengths reach (a shorter span leaves out "32x")."""
    longest = task["train_length_max"]
    factors = [factor for factor in (FOUR_X, LONGEST_FACTOR) if factor * longest in task["eval_lengths"]]
    if not factors:
        return ""
    named = " and ".join(f'"{factor}x"' for factor in factors)
    lengths = " and ".join(str(factor * longest) for factor in factors)
    times = " and ".join(str(factor) for factor in factors)
    return f" ({named} below: {'lengths' if len(factors) > 1 else 'length'} {lengths}, {times} times the longest " \
           "training length)"


def transformer_setup(config: dict) -> str:
    """The transformer's own seeds, shape and training, which are not the heads'; "" where it does not run."""
    transformer = config.get("transformer") or {}
    if not transformer.get("seeds"):
        return ""
    seeds = len(transformer["seeds"])
    few = f" (with {seeds} seeds, its intervals are close to the seeds' own range)" if seeds < FEW_SEEDS else ""
    return (f" The transformer: {seeds} seeds, {transformer['n_layers']} layers of {transformer['n_heads']} heads, "
            f"width {transformer['d_model']}, Adam at lr {transformer['lr']:g} for {transformer['steps']} steps{few}.")


def figure_one(config: dict, accuracy: pd.DataFrame | None) -> list[str]:
    """Figure 1, the generalization figure, with a caption carrying its numbers; nothing where it did not run."""
    if accuracy is None:
        return []
    task, chance = config["task"], 1 / config["task"]["vocab_size"]
    shown = accuracy[accuracy["experiment"] == "generalization"]
    rope, learned = shown[shown["pe"] == "rope"], shown[(shown["pe"] == "learned")
                                                       & (shown["length"] > task["train_length_max"])]
    at = [f"at {length} ({length // task['train_length_max']}x): {per_offset(rows['mean'], rows['offset'])}"
          for length in dict.fromkeys([FOUR_X * task["train_length_max"], max(task["eval_lengths"])])
          for rows in [rope[rope["length"] == length].sort_values("offset")]]
    return ["![Figure 1: accuracy against evaluation length](figures/generalization.png)",
            f"**Figure 1.** Accuracy against evaluation length, mean and 95% Student-t interval over "
            f"{len(config['sweep']['seed'])} seeds (a band for display: the verdicts use the seed bootstrap of the "
            "Judged line), one panel per K; grey: training range, dashed: chance "
            f"{number(chance)}. Rope {'; '.join(at)}. Learned heads past the range: at most "
            f"{number((learned['mean'] - chance).abs().max())} from chance."]


def moving_answers(secondary: pd.DataFrame, judgments: pd.DataFrame) -> list[str]:
    """What moves rope's accuracy at 32x most: the settings with the highest and lowest mean over K, and this run's;
    over the K where rope fits its range (where it does not, the gap claim is untestable)."""
    far = rope_far_accuracy(secondary, judgments)
    means = far[far["verdict"] != UNTESTABLE].groupby("condition", sort=False)["mean"].mean()
    if len(means) < 2:
        return []
    settings = judgments.drop_duplicates("condition").set_index("condition")["settings"]
    ranked = means.drop(THIS_RUN, errors="ignore").sort_values(ascending=False)
    # each setting by the name the robustness lines above use, with the values it sets
    listed = lambda part: ", ".join(f"{number(value)} at {name} ({settings[name]})"
                                    for name, value in part.items())
    return [f"**What moves the answers.** Rope's accuracy at 32x the training length (mean over K) is "
            f"{number(means.get(THIS_RUN, float('nan')))} in this run; across the robustness settings, highest "
            f"{listed(ranked.head(2))}; lowest {listed(ranked.tail(2)[::-1])}. Choices the paper leaves open (the init "
            "scale, the width, the learning rate) move how far rope extrapolates "
            "([figure](figures/claims/rope_at_32x.png), [robustness](appendix/robustness.md))."]


def beyond_the_paper(secondary: pd.DataFrame) -> list[str]:
    """The finding the paper's account does not predict, from the dilution-cause claim's baseline in this run: rope's
    wrong answers past the range are ranking errors. Its secondary statistic, where their winning keys lie, is expected
    from the head's fit of its range (errors' ``MIN_UNSEEN_WINNER_SHARE``), so it is said as measured, not as a second
    finding."""
    cause = CLAIMS_BY_NAME["dilution cause"]
    here = secondary[secondary["condition"] == THIS_RUN].sort_values("offset")
    ranking, unseen = (here[here["statistic"] == name] for name in (cause.baseline.statistic, cause.secondary[0]))
    if ranking.empty or unseen.empty:
        return []
    return [f"**Beyond the paper.** Most of rope's wrong answers past the range are not diluted attention but ranking "
            f"errors, another key outscoring the target (their share, mean over seeds: "
            f"{per_offset(ranking['mean'], ranking['offset'])}). The logit "
            "is the same function of the offset at every length (what the shift claim tests), but training shaped that "
            "function only at the offsets it saw: the keys that win those errors lie at offsets never seen in "
            f"training (share, mean over seeds: {per_offset(unseen['mean'], unseen['offset'])}). That share is "
            "expected, not a second finding: a head that fits its range ranks the target above the keys at nearly "
            "every offset it trained on, and those logits are the same past the range "
            "([errors](experiments/errors.md))."]


def results_markdown(config: dict, judgments: pd.DataFrame, secondary: pd.DataFrame, grouped: dict[str, list[str]],
                     appendices: list[str], left_out: dict[str, str], accuracy: pd.DataFrame | None) -> str:
    """RESULTS.md (module doc)."""
    told = {claim.page for claim in CLAIMS}
    links = {name: f"[{title_of(grouped[name], name)}](experiments/{name}.md)" for name in grouped}
    further = [links[name] for name in grouped if name not in told]
    return "\n\n".join([
        "# Results: does rotary length generalization reproduce?",
        "\n".join(setup_lines(config, judgments)),
        f"**What we found.** {claim_text.tally(judgments, CLAIMS)}\n"
        + "\n".join(claim_text.claim_sentence(judgments, secondary, claim, config) for claim in CLAIMS),
        claim_text.claims_table(judgments, CLAIMS, list(grouped)).to_markdown(index=False, disable_numparse=True),
        *figure_one(config, accuracy),
        *moving_answers(secondary, judgments),
        *beyond_the_paper(secondary),
        "**Pages.** Claims: " + "; ".join(links[name] for name in grouped if name in told) + ". "
        + (f"Further experiments: {'; '.join(further)}. " if further else "")
        + "Appendices: " + ", ".join(f"[{name.replace('_', ' ')}](appendix/{name}.md)" for name in appendices) + ".",
        *([f"Not run under this config: {'; '.join(f'{name}: {why}' for name, why in left_out.items())}."]
          if left_out else []),
    ]) + "\n"


def title_of(sections: list[str], experiment: str) -> str:
    """The heading of an experiment's first section, without its offset (``shift_K1``: ``shift``)."""
    first = sections[0].splitlines()[0] if sections else ""
    title = first.removeprefix("## ").strip() if first.startswith("## ") else experiment
    return re.sub(PER_OFFSET_SUFFIX + r"\b", "", title)


def claim_block(claim: Claim, judgments: pd.DataFrame, secondary: pd.DataFrame, config: dict) -> list[str]:
    """The claim a page tells: its words, rule, preconditions, verdicts, judgment per K, forest plot, secondaries."""
    here, said = of_claim(judgments, claim, THIS_RUN), capitalized(claim.paper)
    if here.empty:
        return [f"**Claim.** {said}.", "Not judged under this config: its statistic was not measured."]
    extra = claim_text.secondary_table(secondary, claim)
    verdict, evidence = claim_text.verdict_and_evidence(judgments, secondary, claim, config)
    preconditions = "; ".join(f"{name} {HEADLINES_BY_NAME[name].comparison} "
                              f"{number(HEADLINES_BY_NAME[name].threshold(config['task']))}"
                              for name in claim.preconditions)
    return [
        f"**Claim.** {said}{claim_text.beyond_tag(claim)}.",
        f"**Rule.** At each K, the mean over seeds of the number below, its whole 95% seed-bootstrap interval "
        f"{claim.rule.comparison} {number(here['threshold'].iloc[0])} "
        f"({rule_timing(claim.page, rule=claim.threshold_name)}, [rule history](../appendix/rule_history.md)).",
        *([f"**What it does not test.** {claim.scope}"] if claim.scope else []),
        "**Preconditions** (judged by the same rule; where one does not hold at a K, the claim is untestable there): "
        f"{preconditions}." if preconditions else "**Preconditions:** none declared.",
        # the claim judged, in the pipeline's words: the paper's sentence above can say more than its statistic tests
        f"**Judged here: {claim.says}. Verdict in this run: {verdict}.** {evidence}",
        claim_text.judgment_table(here),
        f"![{claim.says}: every run and setting](../figures/claims/{claim.name.replace(' ', '_')}.png)",
        *([f"**Secondary statistics** (shown, in no verdict):\n\n{extra}"] if extra else []),
    ]


# How to read the claims appendix's tables: which seeds a row counts, and what "untestable" leaves standing.
CLAIMS_APPENDIX_KEY = (
    "Per claim, each run and setting, per K: the mean over seeds of the claim's statistic with its 95% seed-bootstrap "
    "interval, and its rule's verdict. **seeds**: the seeds with a value of the statistic; a seed without one (for "
    "example a share of wrong answers, where the seed makes none past the range) is left out, and a K where no seed "
    f"has one has no row. Fewer than {MIN_SEEDS} seeds: inconclusive. **seeds clearing**: the seeds whose own value "
    "clears the threshold, shown and deciding nothing. **untestable**: a precondition of the claim (named on its "
    "page) does not hold at that K; the mean is shown, and judges nothing.")


def experiment_page(experiment: str, sections: list[str], checks: pd.DataFrame, judgments: pd.DataFrame,
                    secondary: pd.DataFrame, config: dict) -> str:
    claims = [claim for claim in CLAIMS if claim.page == experiment]
    title = title_of(sections, experiment)
    return "\n\n".join([
        f"# {title if ':' in title or not claims else title + ': ' + '; '.join(claim.says for claim in claims)}", BACK,
        *(line for claim in claims for line in claim_block(claim, judgments, secondary, config)),
        *([] if claims else
          ["Beyond the claims of the paper: no verdict, the checks below describe what was measured."]),
        *(rebased(found.group(0)) for text in sections for found in FIGURE_LINK.finditer(text)),
        *(["**Checks** (each a rule fixed in code; secondary evidence, counted in no verdict; a check compares one "
           "value with its threshold, so it can read yes where a verdict, which needs the whole interval past the "
           "threshold, reads inconclusive):",
           checks_markdown(checks)] if not checks.empty else []),
        f"Every table and number of this experiment: [details](../appendix/{experiment}.md).",
    ]) + "\n"


def rebased(markdown: str) -> str:
    """``markdown`` with its figure links relative to a page one folder below the results folder."""
    return FIGURE_LINK.sub(lambda found: f"![{found.group(1)}](../figures/{found.group(2)})", markdown)


def appendix_page(title: str, *parts: str) -> str:
    return "\n\n".join([f"# {title}", BACK, *(rebased(part).strip() for part in parts if part)]) + "\n"


def conditions_appendix(judgments: pd.DataFrame, kinds: tuple[str, ...], lead: str) -> str:
    """``lead``, what each condition of ``kinds`` changes, and each claim's verdict there (columns, this run first)."""
    rows = judgments[judgments["kind"].isin(kinds)]
    listed = rows[rows["kind"] != "run"].drop_duplicates("condition")
    names = sorted(dict.fromkeys(rows["condition"]), key=lambda name: name != THIS_RUN)
    grid = {claim.says: [across_offsets(of_claim(rows, claim, name)) if len(of_claim(rows, claim, name)) else "-"
                         for name in names] for claim in CLAIMS if not of_claim(rows, claim).empty}
    labels = [name + ("" if rows.loc[rows["condition"] == name, "seen"].iloc[0] else " (out of sample)")
              for name in names]
    return "\n\n".join([lead, "\n".join(
        f"- {row.condition}: {row.changes or 'the same settings'}"
        + ("" if row.seen else " (its data unseen when the rules were fixed: the out-of-sample test)")
        for row in listed.itertuples()), pd.DataFrame(grid, index=labels).T.rename_axis("claim").reset_index()
        .to_markdown(index=False, disable_numparse=True)])


def render_pages(config: dict, sections: dict[str, str], checks: pd.DataFrame, experiments: list[str], *,
                 judgments: pd.DataFrame, secondary: pd.DataFrame, commit: str, date: datetime.date, machine: str,
                 training: str, pages: list[str], changes: str | None = None, left_out: dict[str, str] | None = None,
                 robustness_section: str | None = None, accuracy: pd.DataFrame | None = None) -> dict[str, str]:
    """Every page of ``pages`` (``page_paths``) by path; ``checks``: ``all_claims``; ``experiments``: those that ran,
    in report order; ``judgments``, ``secondary``, ``accuracy``: the tables of those names."""
    owner = dict(zip(checks["section"], checks["experiment"]))  # a section without checks: the one it is named for
    grouped = {name: [] for name in experiments}
    for section, text in sections.items():
        grouped[owner.get(section, re.sub(PER_OFFSET_SUFFIX + "$", "", section))].append(text)
    appendices = [path[len("appendix/"):-len(".md")] for path in pages if path.startswith("appendix/")]
    dump = yaml.safe_dump(config, sort_keys=False, default_flow_style=None).strip()
    rendered = {
        "RESULTS.md": results_markdown(config, judgments, secondary, grouped,
                                       [name for name in appendices if name not in experiments], left_out or {},
                                       accuracy),
        "appendix/methods.md": appendix_page("Methods", DEFINITION, intervals(config), *METHODS),
        "appendix/setup.md": appendix_page(
            "Setup", "Generated by the lengthgen workflow from its own runs; do not edit by hand "
            "(`snakemake --cores 8` rewrites every page).",
            f"- code: git commit `{commit}`\n- date: {date.isoformat()}\n- machine: {machine}",
            f"Configuration used:\n\n```yaml\n{dump}\n```"),
        "appendix/training.md": appendix_page("Training", training.removeprefix("## Training")),
        "appendix/claims.md": appendix_page("Every claim in every run and setting", CLAIMS_APPENDIX_KEY, *(
            part for claim in CLAIMS for rows in [of_claim(judgments, claim)] if len(rows) for part in (
                f"## {claim.says}", f"{claim.measured}; rule {claim.rule.comparison} {thresholds_text(rows)}; baseline "
                f"{claim.baseline.label}.",
                claim_text.judgment_table(rows)))),
        "appendix/rule_history.md": appendix_page("Rule history", history_markdown()),
        f"appendix/{CHANGES}.md": appendix_page("Changes since the previous run", changes or ""),
        f"appendix/{REPLICATION}.md": appendix_page("Confirmation runs", conditions_appendix(
            judgments, ("confirmation",), "Each claim judged by its one rule in each confirmation run, from that "
            "run's own seeds; per K, with means and intervals, in [claims](claims.md). The runs:")),
        f"appendix/{ROBUSTNESS}.md": appendix_page("Robustness", conditions_appendix(
            judgments, ("run", "robustness"), "Each claim judged by its one rule at each robustness setting (one "
            "or two training choices varied from this run's), from that setting's own seeds. This run is the default "
            "setting, the first column; the report's count of settings includes it. The settings:"),
            "![rope's accuracy at 32x over the settings](figures/claims/rope_at_32x.png)", robustness_section or "")}
    for experiment in experiments:
        rendered[f"experiments/{experiment}.md"] = experiment_page(
            experiment, grouped[experiment], checks[checks["experiment"] == experiment], judgments, secondary, config)
        rendered[f"appendix/{experiment}.md"] = appendix_page(title_of(grouped[experiment], experiment),
                                                              *grouped[experiment])
    rendered = {path: fit_cells(text) for path, text in rendered.items()}
    rendered[FIRST_SCREEN] = as_rst(rendered["RESULTS.md"], config["results_dir"])
    return {path: rendered[path] for path in pages}
