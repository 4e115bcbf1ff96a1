"""The report's pages, rendered from the committed run's tables: RESULTS.md answers on its first screen, every
number of its claims table, bottom line and Figure 1 is read from (or recomputed from) the tables, and no table
cell of any page is a paragraph."""

import datetime
import re

import docutils.core
import pandas as pd
import pytest

from conftest import REPO, markdown_rows
from lengthgen.claims import check, with_keys
from lengthgen.claims_table import NOT_RUN, claims_table, number
from lengthgen.experiments.catalog import plan
from lengthgen.findings import FINDINGS, counted_checks, replicates_in_run, selections
from lengthgen.markdown_cells import MAX_CELL, fit_cells, row_cells, table_cells
from lengthgen.replication import SPREAD_KEY
from lengthgen.report_preview import committed_config, committed_sections
from lengthgen.results_pages import FIRST_SCREEN, page_paths, render_pages
from lengthgen.table_schemas.core import ALL_CLAIMS
from lengthgen.table_schemas.replication import REPLICATION
from lengthgen.table_schemas.spread import CLAIM_SPREAD
from lengthgen.tables import read_table
from lengthgen.verdicts import UNTESTABLE

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
    pages = render_pages(config, committed_sections(RESULTS, run_plan.sections), claims, run_plan.experiments,
                         commit="abc", date=datetime.date(2026, 1, 1), machine="a machine",
                         training="## Training\n\nfits", changes="## Changes since the previous run\n\nnone",
                         left_out=run_plan.left_out, replication=replication, replication_section="## replication")
    return config, claims, replication, pages, run_plan


def headline_rows(finding, claims):
    headline = finding.headline
    return claims[(claims["experiment"] == headline.experiment) & (claims["claim"] == headline.claim)
                  & (claims["statistic"] == headline.statistic)]


def disagreements(results_md: str, claims: pd.DataFrame, replication: pd.DataFrame | None, config: dict) -> list[str]:
    """Every number of RESULTS.md's claims table, bottom line and Figure 1 caption that its tables do not give."""
    found = []
    by_short = {finding.short: finding for finding in FINDINGS}
    rows = markdown_rows(results_md, CLAIMS_HEADER)
    chance = number(1 / config["task"]["vocab_size"])
    for cells in rows:
        finding = by_short[cells[0]]
        if cells[2] == NOT_RUN:
            continue
        value = re.fullmatch(r"(\S+) \[(\S+), (\S+)\] \(n=(\d+)\)(?:, K=(\d+))?", cells[2])
        source = headline_rows(finding, claims)
        match = source[[(number(row.value), number(row.spread_low), number(row.spread_high), str(row.n_seeds),
                         None if pd.isna(row.offset) else str(int(row.offset))) == value.groups()
                        for row in source.itertuples()]] if value else source.iloc[:0]
        if match.empty:
            found.append(f"{cells[0]}: value {cells[2]!r} is no row of its headline check")
            continue
        row = match.iloc[0]
        baseline_numbers = {chance, number(1 - row["value"]), *DECIMAL.findall(row["rule"]),
                            *claims.loc[claims["experiment"] == finding.headline.experiment, "value"].map(number)}
        found += [f"{cells[0]}: baseline {token}" for token in DECIMAL.findall(cells[3]) if token not in baseline_numbers]
        if not cells[4].startswith(f"{row['comparison']} {number(row['threshold'])},"):
            found.append(f"{cells[0]}: rule {cells[4]!r}, threshold {row['threshold']}")
        selected = selections(finding, claims)
        evidence = counted_checks(selected, claims).query("kind == 'evidence'")
        if f"({int(evidence['holds'].sum())} of {len(evidence)} checks)" not in cells[5]:
            found.append(f"{cells[0]}: verdict {cells[5]!r}, {int(evidence['holds'].sum())} of {len(evidence)} hold")
        if replication is not None:
            in_run = replicates_in_run(counted_checks(selected, claims), replication)
            if cells[6] != f"{int(in_run.sum())} of {len(in_run)} runs":
                found.append(f"{cells[0]}: replication {cells[6]!r}, recomputed {int(in_run.sum())} of {len(in_run)}")
    table_numbers = {token for cells in rows for cell in cells for token in DECIMAL.findall(cell)}
    table_numbers |= set(claims["threshold"].map(number))
    bottom = results_md.split("**Bottom line.**")[1].split("\n\n")[0]
    found += [f"bottom line: {token}" for token in DECIMAL.findall(bottom) if token not in table_numbers]
    caption = next((line for line in results_md.splitlines() if line.startswith("**Figure 1.**")), "")
    generalization = set(claims.loc[claims["experiment"] == "generalization", "value"].map(number)) | {chance}
    found += [f"Figure 1: {token}" for token in DECIMAL.findall(caption) if token not in generalization]
    return found


def test_results_md_is_short_and_its_first_screen_holds_the_setup_the_bottom_line_and_the_claims_table(committed):
    config, claims, _, pages, _ = committed
    lines = pages["RESULTS.md"].splitlines()
    assert len(lines) <= 150
    first_screen = "\n".join(lines[:40])
    task = config["task"]
    assert f"V = {task['vocab_size']} " in first_screen and f"lengths {task['train_length_min']} to " in first_screen
    assert f"to {max(task['eval_lengths'])};" in first_screen and f"{len(config['sweep']['seed'])} seeds" in first_screen
    assert "**Bottom line.**" in first_screen and "![Figure 1" in first_screen
    rows = markdown_rows(first_screen, CLAIMS_HEADER)
    assert [cells[0] for cells in rows] == [finding.short for finding in FINDINGS]
    assert all(cells[7] == NOT_RUN for cells in rows)  # no robustness study given
    # No jargon: no code path, commit hash, issue number or code name in the first screen's words (links aside).
    words = re.sub(r"\]\([^)]*\)", "]", first_screen)
    assert not re.search(r"\.py\b|`|\b[0-9a-f]{7,40}\b|issue \d|arm [12]|prop1|mean_field|_", words)


def test_every_number_of_the_first_screen_is_read_from_its_tables(committed):
    config, claims, replication, pages, _ = committed
    assert disagreements(pages["RESULTS.md"], claims, replication, config) == []


def test_the_number_check_catches_a_number_its_tables_do_not_give(committed):
    config, claims, replication, pages, _ = committed
    text = pages["RESULTS.md"]
    value = markdown_rows(text, CLAIMS_HEADER)[0][2].split(" ")[0]
    tampered = text.replace(f"| {value} [", f"| {float(value) + 0.01:.3g} [", 1)
    assert tampered != text and disagreements(tampered, claims, replication, config)
    caption = next(line for line in text.splitlines() if line.startswith("**Figure 1.**"))
    assert disagreements(text.replace(caption, caption + " 0.777777."), claims, replication, config)


def test_every_page_is_written_no_cell_is_a_paragraph_and_an_experiment_page_has_one_narrow_table(committed):
    _, _, _, pages, run_plan = committed
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


def test_a_failing_precondition_makes_a_claim_untestable_and_never_counts_as_its_evidence():
    fitting = claims_table(claims_of(generalization=gap_checks(1.0, 0.7)), None, 16).iloc[0]
    assert fitting["verdict"] == "holds (1 of 1 checks)"  # the precondition is not counted
    assert fitting["value [95% interval] (n)"] == "0.7 [0.69, 0.71] (n=5), K=1"
    assert fitting["baseline"] == "chance 0.0625" and fitting["replication"] == "no confirmation runs"
    unfit = claims_table(claims_of(generalization=gap_checks(0.5, 0.7)), None, 16).iloc[0]
    assert unfit["verdict"] == f"{UNTESTABLE} (1 of 1 checks)"


def test_the_robustness_hook_fills_its_column_and_a_claim_that_did_not_run_says_so():
    table = claims_table(claims_of(generalization=gap_checks(1.0, 0.7)), None, 16, robustness={"the gap": (11, 12)})
    assert table.loc[0, "robustness"] == "holds at 11 of 12 points"
    assert table.loc[1, "robustness"] == NOT_RUN and table.loc[1, "value [95% interval] (n)"] == NOT_RUN


def test_a_long_cell_moves_to_a_numbered_note_under_its_table():
    long = "x" * (MAX_CELL + 1)
    text = fit_cells(f"| a | b |\n|:--|:--|\n| {long} | short |\n| {long}y | z |\n\nafter\n")
    assert text == (f"| a | b |\n|:--|:--|\n| see note 1 | short |\n| see note 2 | z |\n\n1. {long}\n2. {long}y\n"
                    "\nafter\n")
    assert max(map(len, table_cells(text))) <= MAX_CELL


def test_the_html_reports_first_screen_is_results_md_with_its_table_and_links(committed):
    config, _, _, pages, _ = committed
    html = docutils.core.publish_parts(pages[FIRST_SCREEN], writer="html")["html_body"]
    assert "system-message" not in html  # valid reStructuredText, nothing docutils had to report
    rows = markdown_rows(pages["RESULTS.md"], CLAIMS_HEADER)
    assert html.count("<tr>") == len(rows) + 1 and all(f"<td>{cells[2]}</td>" in html for cells in rows)
    assert f'href="{config["results_dir"]}/experiments/generalization.md"' in html and "Bottom line." in html
