"""`snakemake --report report.html` on the tiny run: every figure, its caption, and the rule graph."""

import base64
import json
import re

import docutils.core

from conftest import REPO, snakemake


def script_json(html: str, name: str):
    """The JSON value the report assigns to ``var <name>`` in one of its scripts."""
    return json.loads(re.search(rf"var {name} = (\{{.*?\}});\n", html, flags=re.DOTALL).group(1))


def rule_graph_edges(dot: str) -> set[tuple[str, str]]:
    """(from rule, to rule) pairs of `snakemake --rulegraph` output."""
    labels = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, flags=re.MULTILINE))
    return {(labels[a], labels[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.MULTILINE)}


def test_html_report_holds_every_figure_with_its_caption_and_the_rule_graph(smoke_run, tmp_path):
    report = tmp_path / "report.html"
    snakemake(smoke_run, "--report", str(report))
    html = report.read_text()

    # This run's figures and each confirmation run's (results/confirm/<name>/figures), drawn by its module's rules.
    figures = sorted(path for pattern in ("figures/*.png", "figures/claims/*.png", "confirm/*/figures/*.png",
                                          "confirm/*/figures/claims/*.png")
                     for path in (smoke_run / "results").glob(pattern))
    assert {"generalization.png", "gap.png", "rope_at_32x.png"} <= {figure.name for figure in figures}
    assert any("confirm" in figure.parts for figure in figures)
    results = script_json(html, "results")
    # Every figure, and each run's first screen (RESULTS.md in reStructuredText), which the front page includes.
    first_screens = sorted((smoke_run / "results").rglob("first_screen.rst"))
    assert set(results) == {str(path.relative_to(smoke_run)) for path in [*figures, *first_screens]}
    front = json.loads(re.search(r"var workflow_desc = (\".*?\");\n", html, flags=re.DOTALL).group(1))  # the front page
    assert "What we found" in front and 'href="results/experiments/generalization.md"' in front
    assert front.count("What we found") == 1  # this run's, not its confirmation runs' too
    for figure in figures:
        entry = results[str(figure.relative_to(smoke_run))]
        media_type, data = entry["data_uri"].split(",", 1)
        assert media_type.startswith("data:image/png;") and data == base64.b64encode(figure.read_bytes()).decode()
        # Its caption is lengthgen/experiments/<name>/<figure>.rst where a rule draws several figures, else
        # lengthgen/experiments/<name>/caption.rst for the rule plot_<name> that draws it (the studies' beside
        # the experiments, the claims' forest plots: workflow/captions/claims.rst).
        rule = re.sub(r"^confirm_\w+?_plot_", "plot_", entry["job_properties"]["rule"])  # a module's rule
        folder = REPO / "lengthgen" / "experiments" / rule.removeprefix("plot_")
        caption_file = folder / f"{figure.stem}.rst"
        if not caption_file.exists():
            caption_file = folder / "caption.rst"
        if rule == "plot_claims":
            caption_file = REPO / "workflow" / "captions" / "claims.rst"
        caption = docutils.core.publish_parts(caption_file.read_text(), writer="html")["fragment"]
        assert entry["caption"].strip() == caption.strip(), figure.name

    # Snakemake draws the rule graph in the page itself (vega), no graphviz needed; it must be
    # the workflow's: the rules and dependencies of `snakemake --rulegraph`.
    dot = snakemake(smoke_run, "--rulegraph").stdout
    graph = {data["name"]: data["values"] for data in script_json(html, "rulegraph_spec")["data"]}
    links = graph["link-data"] + graph["link-data-direct"]
    edges = rule_graph_edges(dot)
    assert {node["rule"] for node in graph["node-data"]} == {rule for edge in edges for rule in edge}
    assert {(link["sourcerule"], link["targetrule"]) for link in links} == edges
