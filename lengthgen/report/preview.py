"""Render the report's pages from a results folder's committed tables, without rerunning anything.

    python -m lengthgen.report.preview                       # results/ -> /tmp/lengthgen-report
    python -m lengthgen.report.preview --results results --out /tmp/preview --config config.yaml

It calls the same ``results_pages.render_pages`` as the report rule, on the tables the rule reads
(``tables/claims.parquet``, ``claim_spread``, ``training``, ``replication``, ``accuracy_summary`` and the previous run's claims named
by the config). The experiments' sections come from ``<results>/sections/*.md`` where a run left them; a committed
folder has none, so they are cut from its committed RESULTS.md (one ``## `` block per section), which is the one
thing this preview takes from an older report. The config is the one the committed RESULTS.md's run used where
its setup prints it, else ``--config`` with the schema's defaults.
"""

import argparse
import datetime
import re
from pathlib import Path

import yaml

from lengthgen.studies.drift import previous_changes_markdown
from lengthgen.experiments.catalog import plan
from lengthgen.studies.confirmation.replication import SPREAD_KEY
from lengthgen.report.pages import PER_OFFSET_SUFFIX, render_pages, write_pages
from lengthgen.tables.core import ACCURACY_SUMMARY, ALL_CLAIMS, TRAINING_SUMMARY
from lengthgen.studies.confirmation.tables import REPLICATION
from lengthgen.tables.spread import CLAIM_SPREAD
from lengthgen.tables.io import read_table
from lengthgen.report.training import training_markdown

CONFIG_BLOCK = re.compile(r"Configuration used:\n\n```yaml\n(.*?)\n```", flags=re.DOTALL)


def committed_config(results: Path) -> dict:
    for page in (results / "appendix" / "setup.md", results / "RESULTS.md"):
        found = CONFIG_BLOCK.search(page.read_text()) if page.exists() else None
        if found:
            return yaml.safe_load(found.group(1))
    raise FileNotFoundError(f"{results}: no page prints the configuration used (appendix/setup.md, RESULTS.md)")


BACK_LINK = "[Back to the results](../RESULTS.md)\n\n"


def appendix_body(path: Path) -> str:
    """An experiment's committed appendix page as the sections it was written from: its text after the back link,
    figure links relative to the results folder again."""
    return path.read_text().split(BACK_LINK, 1)[-1].replace("](../figures/", "](figures/").rstrip()


def committed_sections(results: Path, names: list[str]) -> dict[str, str]:
    """Each section's markdown: ``sections/<name>.md``; else, from a committed report of pages, its experiment's
    appendix page (all of an experiment's sections, under its first section's name, the others empty); else its
    ``## <name>`` block of an older single-page RESULTS.md (without the verdict line that report appended)."""
    old = (results / "RESULTS.md").read_text() if (results / "RESULTS.md").exists() else ""
    blocks = {block.split("\n", 1)[0].split(":")[0].strip(): "## " + block
              for block in re.split(r"\n## ", "\n" + old)[1:]}
    found, told = {}, set()
    for name in names:
        path = results / "sections" / f"{name}.md"
        experiment = re.sub(PER_OFFSET_SUFFIX, "", name)
        appendix = results / "appendix" / f"{experiment}.md"
        if path.exists():
            text = path.read_text()
        elif appendix.exists():
            text = "" if experiment in told else appendix_body(appendix)
            told.add(experiment)
        else:
            text = blocks.get(name, f"## {name}\n\n(no section found)")
        found[name] = re.split(r"\n\n\*\*Verdict: ", text)[0]
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", default="results", type=Path)
    parser.add_argument("--out", default="/tmp/lengthgen-report", type=Path)
    args = parser.parse_args(argv)
    results = args.results
    config = committed_config(results)
    run_plan = plan(config)
    claims = read_table(results / "tables" / "claims.parquet", ALL_CLAIMS)
    spread = read_table(results / "tables" / "claim_spread.parquet", CLAIM_SPREAD)
    claims = claims.join(spread.drop(columns=SPREAD_KEY))
    replication_path = results / "tables" / "replication.parquet"
    replication = read_table(replication_path, REPLICATION) if replication_path.exists() else None
    sections = committed_sections(results, run_plan.sections)
    accuracy_path = results / "tables" / "accuracy_summary.parquet"
    previous = (config.get("report") or {}).get("previous_claims")
    changes = (previous_changes_markdown(Path(previous), read_table(results / "tables" / "claims.parquet", ALL_CLAIMS),
                                         config["report"].get("changes_note")) if previous else None)
    pages = render_pages(config, sections, claims, run_plan.experiments, commit="(preview)",
                         date=datetime.date.today(), machine="(preview)",
                         training=training_markdown(read_table(results / "tables" / "training.parquet",
                                                               TRAINING_SUMMARY)),
                         changes=changes, left_out=run_plan.left_out, replication=replication,
                         replication_section=committed_sections(results, ["replication"])["replication"]
                         if replication is not None else None,
                         accuracy=read_table(accuracy_path, ACCURACY_SUMMARY) if accuracy_path.exists() else None)
    write_pages({args.out / path: text for path, text in pages.items()})
    print(f"{len(pages)} pages under {args.out}")


if __name__ == "__main__":
    main()
