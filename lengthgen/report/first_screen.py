"""RESULTS.md as reStructuredText, the HTML report's front page (``workflow/captions/workflow.rst`` includes it): the
markdown RESULTS.md uses turned into its equivalent, links into the results folder, the figure left out."""

import re

from tabulate import tabulate

from lengthgen.report.markdown import SEPARATOR_ROW, row_cells

LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")
IMAGE = re.compile(r"^!\[[^\]]*\]\([^)]+\)$")


def links(text: str, results_dir: str) -> str:
    """Markdown links as anonymous reStructuredText ones, relative to the folder the report is made in."""
    return LINK.sub(lambda found: f"`{found.group(1)} <{results_dir}/{found.group(2)}>`__", text)


def block_rst(block: str, results_dir: str) -> str:
    lines = block.splitlines()
    if block.startswith("# ") or block.startswith("## "):
        title = block.lstrip("#").strip()
        return f"{title}\n{('=' if block.startswith('# ') else '-') * len(title)}"
    if all(line.startswith("|") for line in lines):
        rows = [[links(cell, results_dir) for cell in row_cells(line)] for line in lines
                if not SEPARATOR_ROW.match(line.strip())]
        return tabulate(rows[1:], headers=rows[0], tablefmt="grid", disable_numparse=True)
    if IMAGE.match(block.strip()):
        return ""
    text = [links(line, results_dir) for line in lines]
    items = [line for line in text if line.startswith("- ")]
    if items:  # a paragraph, then its list
        lead = [line for line in text if not line.startswith("- ")]
        return "\n\n".join([*([" ".join(lead)] if lead else []), "\n".join(items)])
    return text[0] if len(text) == 1 else "\n".join(f"| {line}" for line in text)  # lines kept as lines


def as_rst(markdown: str, results_dir: str) -> str:
    """RESULTS.md (``markdown``) as reStructuredText, its links relative to the folder above ``results_dir``."""
    blocks = [block_rst(block, results_dir) for block in markdown.strip().split("\n\n")]
    return "\n\n".join(block for block in blocks if block) + "\n"
