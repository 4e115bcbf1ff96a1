"""When each claim rule was fixed, and what data had been looked at by then: ``docs/rule_history.yaml``, read.

A confirmation tests a rule only if the rule was fixed before its data was seen; a rule chosen or
changed after looking at a run's data may fit that run. The record is plain data beside the docs, since it
holds what git cannot say; this module reads it, prints it (the report's rule-history appendix) and grades each
experiment's rules from it (``rule_timing``). Jobs that import this module list the file among their inputs
(``lengthgen/pipeline/sources.py``, ``READ_AT_IMPORT``), so an edit to it reruns the report.
"""

from pathlib import Path
from typing import NamedTuple

import pandas as pd
import yaml

HISTORY_FILE = Path(__file__).resolve().parents[2] / "docs" / "rule_history.yaml"


class RuleChange(NamedTuple):
    rules: str  # the rules (names in the thresholds files) and the experiment they judge
    commit: str  # where they were fixed or changed
    data_seen: str  # the data that had been looked at when they were
    experiments: tuple[str, ...]  # the experiments whose checks these rules decide
    blind: bool | None  # fixed before any run's data they judge was seen; None where that is not recorded


FIELD_TYPES = {"rules": str, "commit": str, "data_seen": str, "experiments": list, "blind": (bool, type(None))}


def read_history(path: Path = HISTORY_FILE) -> tuple[RuleChange, ...]:
    """The record's entries, in order; a ValueError names the file, the entry and the field that is wrong (a
    commit such as 1e5a0b2 must be quoted, or YAML reads it as a number)."""
    entries = yaml.safe_load(path.read_text())
    changes = []
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or set(entry) != set(FIELD_TYPES):
            raise ValueError(f"{path}: entry {number} must have exactly the fields {', '.join(FIELD_TYPES)}")
        for field, kind in FIELD_TYPES.items():
            if not isinstance(entry[field], kind):
                raise ValueError(f"{path}: entry {number}: {field} is {entry[field]!r}, which is not a {kind}")
        changes.append(RuleChange(**{**entry, "experiments": tuple(entry["experiments"])}))
    return tuple(changes)


RULE_HISTORY = read_history()


def changes_naming(rule: str, experiment: str, history: tuple[RuleChange, ...] = RULE_HISTORY) -> list[RuleChange]:
    """The changes of ``experiment``'s rules whose text names ``rule`` (a name in its thresholds file), in order."""
    return [change for change in history if experiment in change.experiments and rule in change.rules]


def history_markdown(history: tuple[RuleChange, ...] = RULE_HISTORY) -> str:
    lines = ["**When each rule was fixed, and what had been looked at by then** (from `git log -p` of the thresholds "
             "files and the commit messages; `docs/rule_history.yaml`):", ""]
    table = pd.DataFrame([[change.rules, change.commit, change.data_seen] for change in history],
                         columns=["rules", "fixed in", "data looked at before"])
    return "\n".join(lines + [table.to_markdown(index=False, disable_numparse=True)])


# When an experiment's rules were fixed, relative to the data they judge (``rule_timing``).
BEFORE, REVISED_AFTER, AFTER, NOT_RECORDED = "set before the data", "set before, revised after the data", \
    "set after the data", "timing not recorded"
UNRECORDED_REVISED_AFTER = "set at a time not recorded, revised after the data"


def rule_timing(experiment: str, history: tuple[RuleChange, ...] = RULE_HISTORY, rule: str = "") -> str:
    """Whether ``experiment``'s rules (those whose record names ``rule``, where given) were fixed before its data was
    seen: *before the data* where every change of them was blind, *after the data* where even the first was not, *set
    before, revised after* where a later change was not. A change after the data decides it whatever the record does
    not say of the others: *set at a time not recorded, revised after* where the first does not say; *not recorded*
    where no change is known to be after the data and one does not say (or none names the experiment)."""
    changes = [change for change in history if experiment in change.experiments and rule in change.rules]
    if any(change.blind is False for change in changes):
        first = changes[0].blind
        return AFTER if first is False else REVISED_AFTER if first else UNRECORDED_REVISED_AFTER
    if not changes or any(change.blind is None for change in changes):
        return NOT_RECORDED
    return BEFORE
