"""Verdicts: each claim is a list of checks (statistic, value, rule, holds) fixed in advance.

An experiment's verdict is *confirmed* when every check holds, *not confirmed* when none
does, and *mixed* otherwise. Each experiment's module builds its checks with ``check``,
applying the thresholds of ``lengthgen.rules``.
"""

import re

import pandas as pd

VERDICT_RULE = "confirmed if every check holds, not confirmed if none holds, mixed otherwise"

# Check identities (``check_identities``): what stays the same when the seeds, the task or the offsets change.
_OFFSET = re.compile(r",?\s*\bK=(\d+)\b:?")
_SHIFT_SECTION = re.compile(r"_K\d+$")
_ENCODING_WITH_PARAMETERS = re.compile(r"\w+@[^\s,:;)]+")  # rope@base=100: its numbers name it
_NUMBER = re.compile(r"(?<![A-Za-z_\d])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")  # not inside a name: float64


def check(experiment: str, claim: str, statistic: str, value: float, rule: str, holds: bool) -> dict:
    return {"experiment": experiment, "claim": claim, "statistic": statistic, "value": float(value),
            "rule": rule, "holds": bool(holds)}


def verdict(checks: pd.DataFrame) -> str:
    if checks["holds"].all():
        return "confirmed"
    if not checks["holds"].any():
        return "not confirmed"
    return "mixed"


def with_verdicts(checks: pd.DataFrame) -> pd.DataFrame:
    """Every experiment's checks, each with its experiment's verdict (the ``all_claims`` table)."""
    verdicts = checks.groupby("experiment", sort=False).apply(verdict, include_groups=False)
    return checks.assign(verdict=checks["experiment"].map(verdicts))


def checks_markdown(checks: pd.DataFrame) -> str:
    """The checks as a markdown table: claim, statistic, value, rule, holds."""
    lines = ["| claim | statistic | value | rule | holds |", "|---|---|---|---|---|"]
    for row in checks.itertuples():
        lines.append(f"| {row.claim} | {row.statistic} | {row.value:.4g} | {row.rule} | {'yes' if row.holds else 'no'} |")
    return "\n".join(lines)


def check_identity(experiment: str, claim: str, statistic: str) -> tuple[str, str, str]:
    """(experiment family, check, instance) of one check, the same in every run that measures it.

    The family drops the offset of a per-offset section (``shift_K1`` -> ``shift``); the instance
    is the offset the check names (``K=1``), or ``all`` for a check pooled over offsets; the check
    is ``claim | statistic`` without the offset and with every number written ``#``, because
    numbers there follow the run's settings (``n=128`` is 4 x train_length_max, ``over 5 seeds``)
    or its data (``(untrained: 0.95 to 0.97)``), while the registry names that carry numbers
    (``rope@base=100``) stay as they are.
    """
    text = f"{claim} | {statistic}"
    offsets = _OFFSET.findall(text)
    names = _ENCODING_WITH_PARAMETERS.findall(text)
    text = _ENCODING_WITH_PARAMETERS.sub("\0", _OFFSET.sub(" ", text))
    text = _NUMBER.sub("#", text)
    for name in names:
        text = text.replace("\0", name, 1)
    text = " ".join(text.split()).strip(" |")
    return experiment_family(experiment), text, f"K={offsets[0]}" if offsets else "all"


def experiment_family(section: str) -> str:
    """The experiment a RESULTS.md section belongs to: ``shift_K1`` -> ``shift``, ``base`` -> ``base``."""
    return _SHIFT_SECTION.sub("", section)


def identity_keys(checks: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Each row's ``check_identity``; a second check with the same identity in one table gets `` (2)``
    appended to its check, so that every row's identity is unique."""
    keys, seen = [], {}
    for experiment, claim, statistic in zip(checks["experiment"], checks["claim"], checks["statistic"]):
        family, text, instance = check_identity(experiment, claim, statistic)
        seen[family, text, instance] = repeat = seen.get((family, text, instance), 0) + 1
        keys.append((family, text if repeat == 1 else f"{text} ({repeat})", instance))
    return keys


def check_identities(checks: pd.DataFrame) -> pd.DataFrame:
    """``checks`` with columns family, check, instance (``identity_keys``)."""
    identities = pd.DataFrame(identity_keys(checks), columns=["family", "check", "instance"], index=checks.index)
    return checks.assign(**identities)
