"""Markdown table cells, each kept short enough to read in its column: ``fit_cells`` moves a longer one to a note."""

import re

MAX_CELL = 160
CELL_SEPARATOR = re.compile(r"(?<!\\)\|")  # a pipe that is not escaped as \|
SEPARATOR_ROW = re.compile(r"^\|[\s:|-]+\|$")


def is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|")


def is_row(line: str) -> bool:
    """A table line holding cells, not the separator under the header."""
    return is_table_line(line) and not SEPARATOR_ROW.match(line.strip())


def row_cells(line: str) -> list[str]:
    """The cells of one markdown table row, stripped."""
    return [cell.strip() for cell in CELL_SEPARATOR.split(line.strip().strip("|"))]


def table_cells(markdown: str) -> list[str]:
    """Every cell of every table row of ``markdown`` (separator rows left out)."""
    return [cell for line in markdown.splitlines() if is_row(line) for cell in row_cells(line)]


def fit_cells(markdown: str, limit: int = MAX_CELL) -> str:
    """``markdown`` with every table cell over ``limit`` characters moved to a note under its table."""
    lines, notes, out, written = markdown.splitlines(), [], [], 0
    for index, line in enumerate(lines):
        if is_row(line):
            cells = row_cells(line)
            for position, cell in enumerate(cells):
                if len(cell) > limit:
                    notes.append(cell)
                    cells[position] = f"see note {len(notes)}"
            line = "| " + " | ".join(cells) + " |"
        out.append(line)
        table_ends = is_table_line(line) and (index + 1 == len(lines) or not is_table_line(lines[index + 1]))
        if table_ends and len(notes) > written:
            out += ["", *(f"{number}. {note}" for number, note in enumerate(notes[written:], start=written + 1))]
            written = len(notes)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")
