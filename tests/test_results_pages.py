"""The report's pages, rendered from the committed run's tables: RESULTS.md answers on its first screen, every
number of its claims table, bottom line and Figure 1 is read from (or recomputed from) the tables, and no table
cell of any page is a paragraph."""

import datetime
import re

import docutils.core
import pandas as pd
import pytest

from conftest import REPO, markdown_rows
from lengthgen.checks.check import check, with_keys
from lengthgen.report.claims_table import NOT_RUN, VALUE, claims_table, number
from lengthgen.experiments.catalog import plan
from lengthgen.report.findings import FINDINGS, counted_checks, finding_verdict, replicates_in_run, selections
from lengthgen.report.markdown import MAX_CELL, fit_cells, row_cells, table_cells
from lengthgen.studies.confirmation.replication import SPREAD_KEY
from lengthgen.report.preview import committed_config, committed_sections
from lengthgen.report.pages import FIRST_SCREEN, page_paths, render_pages
from lengthgen.tables.core import ACCURACY_SUMMARY, ALL_CLAIMS
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import read_table
from lengthgen.checks.verdicts import DOES_NOT_HOLD, HOLDS, IN_PART, UNTESTABLE

RESULTS = REPO / "results"
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?|(?<![\w.])-?\d+e[-+]?\d+")  # measured numbers, not counts
CLAIMS_HEADER = "|claim|measured|"


@pytest.fixture(scope="module")
def committed():
    """The committed run's config, claims (joined with their spread), replication table and pages."""
    config = committed_config(RESULTS)
    run_plan = plan(config)
    claims = read_table(RESULTS / "tables" / "claims.parquet", ALL_CLAIMS)
    spread = read_table(RESULTS / "tables" / "claim_spread.parquet", CLAIM_SPREAD)
    claims = claims.join(spread.drop(columns=SPREAD_KEY))
    replication = read_table(RESULTS / "tables" / "replication.parquet", REPLICATION)
    accuracy = read_table(RESULTS / "tables" / "accuracy_summary.parquet", ACCURACY_SUMMARY)
    pages = render_pages(config, committed_sections(RESULTS, run_plan.sections), claims, run_plan.experiments,
                         commit="abc", date=datetime.date(2026, 1, 1), machine="a machine",
                         training="## Training\n\nfits", changes="## Changes since the previous run\n\nnone",
                         left_out=run_plan.left_out, replication=replication, replication_section="## replication",
                         accuracy=accuracy)
    return config, claims, replication, pages, run_plan, accuracy


def headline_rows(finding, claims):
    headline = finding.headline
    return claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == headline.claim)
                  & (claims["statistic"] == headline.statistic)]


# A value cell: a mean with its interval, or a worst seed's value with its bootstrap range (none under 5 seeds).
VALUE_CELL = re.compile(r"(\S+) \[(\S+), (\S+)\] \((\d+) seeds\)(?:, K=(\d+))?(?:, logits up to \S+)?|"
                        r"(\S+), worst of (\d+) seeds(?: \(bootstrap range (\S+) to (\S+)\))?(?:, K=(\d+))?"
                        r"(?:, logits up to \S+)?")


def value_of(cell: str) -> tuple | None:
    """(value, low, high, seeds, K) as the cell states them; None for a spread it does not state."""
    found = VALUE_CELL.fullmatch(cell)
    if found is None:
        return None
    mean, worst = found.groups()[:5], found.groups()[5:]
    return mean if mean[0] is not None else (worst[0], worst[2], worst[3], worst[1], worst[4])


def matches(row, stated: tuple) -> bool:
    value, low, high, seeds, offset = stated
    return (number(row.value) == value and (low is None or (number(row.spread_low), number(row.spread_high)) == (low, high))
            and str(row.n_seeds) == seeds and (None if pd.isna(row.offset) else str(int(row.offset))) == offset)


def gate_fails(finding, run_checks: pd.DataFrame) -> bool:
    """Whether a precondition of ``finding`` fails among one run's checks: its precondition parts' claims, read
    from the catalog's declaration, not through ``findings.selections``."""
    failing = run_checks[~run_checks["holds"].astype(bool)]
    return any(((failing["experiment"] == part.experiment) & failing["claim"].str.startswith(part.claim_prefix)
                & failing["statistic"].str.startswith(part.statistic_prefix)).any()
               for part in finding.parts if part.tests == "precondition")


def disagreements(results_md: str, claims: pd.DataFrame, replication: pd.DataFrame | None, config: dict,
                  accuracy: pd.DataFrame) -> list[str]:
    """Every number of RESULTS.md's claims table, bottom line and Figure 1 caption that its tables do not give."""
    found = []
    by_short = {finding.short: finding for finding in FINDINGS}
    rows = markdown_rows(results_md, CLAIMS_HEADER)
    chance = number(1 / config["task"]["vocab_size"])
    rule_numbers = {token for rule in claims["rule"] for token in DECIMAL.findall(rule)}
    rule_numbers |= {token.lstrip("+") for token in rule_numbers}
    for cells in rows:
        finding = by_short[cells[0]]
        if cells[2] == NOT_RUN:
            continue
        stated = value_of(cells[2])
        source = headline_rows(finding, claims)
        match = source[[matches(row, stated) for row in source.itertuples()]] if stated else source.iloc[:0]
        if match.empty:
            found.append(f"{cells[0]}: value {cells[2]!r} is no row of its headline check")
            continue
        row = match.iloc[0]
        experiment = claims[claims["experiment"] == finding.headline.experiment]
        baseline_numbers = {chance, number(1 - row["value"]), *rule_numbers, *experiment["value"].map(number)}
        found += [f"{cells[0]}: baseline {token}" for token in DECIMAL.findall(cells[3]) if token not in baseline_numbers]
        if not cells[4].startswith(f"{row['comparison']} {number(row['threshold'])},"):
            found.append(f"{cells[0]}: rule {cells[4]!r}, threshold {row['threshold']}")
        selected = selections(finding, claims)
        evidence = counted_checks(selected, claims).query("kind == 'evidence'")
        if not cells[5].startswith(finding_verdict(finding, claims)) or \
                f"{int(evidence['holds'].sum())} of {len(evidence)} checks hold)" not in cells[5]:
            found.append(f"{cells[0]}: verdict {cells[5]!r}, {int(evidence['holds'].sum())} of {len(evidence)} hold")
        if replication is not None:
            in_run = replicates_in_run(counted_checks(selected, claims), replication)
            untestable = [run for run in in_run.index if gate_fails(finding, replication[replication["run"] == run])]
            testable = in_run.drop(untestable)
            expected = f"{int(testable.sum())} of {len(testable)} runs" + (
                f" (untestable in {', '.join(run.replace('_', ' ') for run in untestable)})" if untestable else "")
            if cells[6] != expected:
                found.append(f"{cells[0]}: replication {cells[6]!r}, recomputed {expected!r}")
    table_numbers = {token for cells in rows for cell in cells for token in DECIMAL.findall(cell)}
    table_numbers |= set(claims["threshold"].map(number)) | set(claims["value"].map(number)) | rule_numbers
    table_numbers |= set((1 - claims["value"]).map(number))
    if replication is not None:  # a claim's headline in a confirmation run where it differs
        table_numbers |= set(replication["value"].map(number))
    longest = accuracy[(accuracy["experiment"] == "generalization") & (accuracy["length"] == accuracy["length"].max())]
    table_numbers |= set(longest["mean"].map(number))
    bottom = results_md.split("**Bottom line.**")[1].split("\n\n")[0]
    found += [f"bottom line: {token}" for token in DECIMAL.findall(bottom) if token not in table_numbers]
    caption = next((line for line in results_md.splitlines() if line.startswith("**Figure 1.**")), "")
    generalization = set(claims.loc[claims["experiment"] == "generalization", "value"].map(number)) | {chance}
    generalization |= set(accuracy.loc[accuracy["experiment"] == "generalization", "mean"].map(number))
    found += [f"Figure 1: {token}" for token in DECIMAL.findall(caption) if token not in generalization]
    return found


def test_results_md_is_short_and_its_first_screen_holds_the_setup_the_bottom_line_and_the_claims_table(committed):
    config, claims, _, pages, _, _ = committed
    lines = pages["RESULTS.md"].splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:40])
    task = config["task"]
    assert f"V = {task['vocab_size']} " in first_screen and f"lengths {task['train_length_min']} to " in first_screen
    assert f"to {max(task['eval_lengths'])};" in first_screen and f"{len(config['sweep']['seed'])} seeds" in first_screen
    assert "**Bottom line.**" in first_screen and "![Figure 1" in first_screen
    rows = markdown_rows(first_screen, CLAIMS_HEADER)
    assert [cells[0] for cells in rows] == [finding.short for finding in FINDINGS]
    header = next(line for line in first_screen.splitlines() if line.replace(" ", "").startswith(CLAIMS_HEADER))
    assert "robustness" not in header  # no robustness study given: said once, below the table
    assert pages["RESULTS.md"].count("not run under this config") == 1
    # No jargon: no code path, commit hash, issue number or code name in the first screen's words (links aside).
    words = re.sub(r"\]\([^)]*\)", "]", first_screen)
    assert not re.search(r"\.py\b|`|\b[0-9a-f]{7,40}\b|issue \d|arm [12]|prop1|mean_field|_", words)


def test_every_number_of_the_first_screen_is_read_from_its_tables(committed):
    config, claims, replication, pages, _, accuracy = committed
    assert disagreements(pages["RESULTS.md"], claims, replication, config, accuracy) == []


def test_the_number_check_catches_a_number_its_tables_do_not_give(committed):
    config, claims, replication, pages, _, accuracy = committed
    text = pages["RESULTS.md"]
    value = markdown_rows(text, CLAIMS_HEADER)[0][2].split(" ")[0]
    tampered = text.replace(f"| {value} [", f"| {float(value) + 0.01:.3g} [", 1)
    assert tampered != text and disagreements(tampered, claims, replication, config, accuracy)
    caption = next(line for line in text.splitlines() if line.startswith("**Figure 1.**"))
    assert disagreements(text.replace(caption, caption + " 0.777777."), claims, replication, config, accuracy)
    verdict = markdown_rows(text, CLAIMS_HEADER)[2][5]  # pinning: its headline fails
    assert verdict.startswith(DOES_NOT_HOLD)
    assert disagreements(text.replace(f"| {verdict} |", f"| {verdict.replace(DOES_NOT_HOLD, IN_PART)} |"), claims,
                         replication, config, accuracy)


def test_every_page_is_written_no_cell_is_a_paragraph_and_an_experiment_page_has_one_narrow_table(committed):
    _, _, _, pages, run_plan, _ = committed
    assert list(pages) == page_paths(run_plan.experiments, True, True)
    for path, text in pages.items():
        assert not path.endswith(".md") or max(map(len, table_cells(text)), default=0) <= MAX_CELL, path
    for experiment in run_plan.experiments:
        page = pages[f"experiments/{experiment}.md"]
        headers = [line for index, line in enumerate(page.splitlines()) if line.startswith("|")
                   and page.splitlines()[index - 1] == ""]
        assert len(headers) <= 1 and all(len(row_cells(header)) <= 6 for header in headers), experiment
        assert f"(../appendix/{experiment}.md)" in page and "(../figures/" in page


def claims_of(**experiments: list[dict]) -> pd.DataFrame:
    claims = pd.concat([with_keys(checks, name, name) for name, checks in experiments.items()], ignore_index=True)
    return claims.assign(spread_low=claims["value"] - 0.01, spread_high=claims["value"] + 0.01, n_seeds=5,
                         holds_fraction=1.0)


def gap_checks(in_range: float, far: float) -> list[dict]:
    return [check("both encodings fit the training range", "rope: lowest mean accuracy in training range", in_range,
                  ">=", 0.99, offset=1),
            check("rope stays well above chance at 4x the training length",
                  "rope: mean accuracy at the longest length <= 4x the training maximum", far, ">=", 0.3125, offset=1)]


TASK = {"vocab_size": 16, "train_length_max": 32}


def test_a_failing_precondition_makes_a_claim_untestable_and_never_counts_as_its_evidence():
    fitting = claims_table(claims_of(generalization=gap_checks(1.0, 0.7)), None, TASK).iloc[0]
    assert fitting["verdict"] == "holds (1 of 1 checks hold)"  # the precondition is not counted
    assert fitting[VALUE] == "0.7 [0.69, 0.71] (5 seeds), K=1"
    assert fitting["measured"].startswith("rope accuracy at length 128, 4x the longest training length")
    assert fitting["baseline"] == "chance 0.0625" and fitting["replication"] == "no confirmation runs"
    unfit = claims_table(claims_of(generalization=gap_checks(0.5, 0.7)), None, TASK).iloc[0]
    assert unfit["verdict"] == f"{UNTESTABLE} (1 of 1 checks hold)"


def pinning_checks(share: float, mass: float) -> list[dict]:
    return [check("learned head sends most sequences to the modal position", "min over (seed, length) past the range "
                  "of the fraction of sequences at the modal position", share, ">=", 0.5, offset=1,
                  rule=">= 0.5 (untrained heads: 0.012, fail)"),
            check("learned head keeps most attention mass inside the training range", "min mass", mass, ">=", 0.5,
                  offset=1)]


def test_a_claim_whose_headline_fails_does_not_hold_however_many_other_checks_do():
    """The headline states the claim: failing, the claim does not hold; failing elsewhere, it holds in part."""
    headline_fails = claims_table(claims_of(mechanics=pinning_checks(0.37, 0.9)), None, TASK).iloc[2]
    assert headline_fails["claim"] == "learned heads pin to one position"
    assert headline_fails["verdict"] == f"{DOES_NOT_HOLD} (1 of 2 checks hold)"
    # A worst seed's value gives its bootstrap range, which starts at it, not an interval around a mean.
    assert headline_fails[VALUE] == "0.37, worst of 5 seeds (bootstrap range 0.36 to 0.38), K=1"
    other_fails = claims_table(claims_of(mechanics=pinning_checks(0.6, 0.2)), None, TASK).iloc[2]
    assert other_fails["verdict"] == f"{IN_PART} (1 of 2 checks hold)"
    few_seeds = claims_table(claims_of(mechanics=pinning_checks(0.6, 0.9)).assign(n_seeds=3), None, TASK).iloc[2]
    assert few_seeds[VALUE] == "0.6, worst of 3 seeds, K=1" and few_seeds["verdict"].startswith(HOLDS)


def test_the_bottom_line_names_each_claim_under_one_verdict(committed):
    config, claims, _, pages, _, _ = committed
    bottom = pages["RESULTS.md"].split("**Bottom line.**")[1].split("\n\n")[0]
    bullets = {line.split("**")[1]: line.lower() for line in bottom.splitlines() if line.startswith("- **")}
    for finding in FINDINGS:
        under = [title for title, line in bullets.items() if finding.short in line and not title.startswith("Same")]
        assert len(under) == 1, (finding.short, under)
        expected = f"Beyond the paper ({finding_verdict(finding, claims)})." if finding.beyond else None
        assert expected is None or under == [expected]


def test_the_robustness_hook_fills_its_column_and_a_claim_outside_the_study_says_so():
    table = claims_table(claims_of(generalization=gap_checks(1.0, 0.7)), None, TASK,
                         robustness={"the gap": (7, 12, 4)})
    assert table.loc[0, "robustness"] == "holds at 7 of 12 points (untestable at 4)"
    assert table.loc[1, "robustness"] == "not in the study" and table.loc[1, VALUE] == NOT_RUN
    assert "robustness" not in claims_table(claims_of(generalization=gap_checks(1.0, 0.7)), None, TASK)


def test_a_long_cell_moves_to_a_numbered_note_under_its_table():
    long = "x" * (MAX_CELL + 1)
    text = fit_cells(f"| a | b |\n|:--|:--|\n| {long} | short |\n| {long}y | z |\n\nafter\n")
    assert text == (f"| a | b |\n|:--|:--|\n| see note 1 | short |\n| see note 2 | z |\n\n1. {long}\n2. {long}y\n"
                    "\nafter\n")
    assert max(map(len, table_cells(text))) <= MAX_CELL


def test_the_html_reports_first_screen_is_results_md_with_its_table_and_links(committed):
    config, _, _, pages, _, _ = committed
    html = docutils.core.publish_parts(pages[FIRST_SCREEN], writer="html")["html_body"]
    assert "system-message" not in html  # valid reStructuredText, nothing docutils had to report
    rows = markdown_rows(pages["RESULTS.md"], CLAIMS_HEADER)
    assert html.count("<tr>") == len(rows) + 1 and all(f"<td>{cells[2]}</td>" in html for cells in rows)
    assert f'href="{config["results_dir"]}/experiments/generalization.md"' in html and "Bottom line." in html


def test_an_experiment_pages_table_shows_every_check_its_answer_counts_and_labels_the_others(committed):
    """The answer's "k of n evidence checks hold" counts the rows of the page's table that carry no label, or the
    label of another experiment's check the claim counts; a precondition, another claim's check or this pipeline's
    hypothesis says so beside its claim."""
    _, claims, _, pages, run_plan, _ = committed
    for finding in FINDINGS:
        if finding.page not in run_plan.experiments:
            continue
        page = pages[f"experiments/{finding.page}.md"]
        held, total = map(int, re.search(r"\((\d+) of (\d+) evidence checks hold\)", page).groups())
        rows = markdown_rows(page, "|claim|statistic|")
        counted = [cells for cells in rows if not re.search(r"\((precondition|counts for: .*|this pipeline's "
                                                            r"hypothesis, in no verdict|in no claim's verdict)\)$",
                                                            cells[0])]
        assert (sum(cells[5] == "yes" for cells in counted), len(counted)) == (held, total), finding.page
        borrowed = {part.experiment for part in finding.parts if part.experiment != finding.page
                    and part.tests != "precondition" and (part.select(claims)["kind"] == "evidence").any()}
        assert all(any(cells[0].endswith(f"(from {name})") for cells in rows) for name in borrowed), finding.page


def test_a_contradicted_claim_says_what_of_it_does_hold_and_a_rule_above_the_ceiling_is_said_so():
    from lengthgen.report.pages import contradiction, out_of_reach
    pinning = next(finding for finding in FINDINGS if finding.name == "pinning")
    inside = "learned modal argmax position lies inside the training range"
    assert pinning.support == (inside,)
    checks = pinning_checks(0.37, 0.9) + [check(inside, "fraction inside", 1.0, "==", 1, offset=1)]
    row = claims_table(claims_of(mechanics=checks), None, TASK).iloc[2]
    said = contradiction(pinning, row, claims_of(mechanics=checks), TASK)
    assert said.endswith(f"(2 of 3 checks hold); what holds: {inside} (1 at K=1; rule == 1)")
    checks[-1] = check(inside, "fraction inside", 0.5, "==", 1, offset=1)
    assert "what holds" not in contradiction(pinning, row, claims_of(mechanics=checks), TASK)
    cures = next(finding for finding in FINDINGS if finding.headline.ceiling)

    def cured(threshold: float, ceiling: float) -> pd.DataFrame:
        headline = cures.headline
        return claims_of(cures=[check(headline.claim, headline.statistic, 0.07, ">=", threshold),
                                check(*headline.rival, 0.01, "<=", 0.1, rule=f"<= 0.1 (hard-attention ceiling {ceiling})")])
    assert "lies far above the hard-attention ceiling 0.08, what logit scaling wins back in its limit" in \
        out_of_reach(cures, cured(0.5, 0.08))
    assert "the number reaches 88% of it" in out_of_reach(cures, cured(0.5, 0.08))
    assert out_of_reach(cures, cured(0.05, 0.08)) == ""
