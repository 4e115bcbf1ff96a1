"""How a head may scale its attention logits and its position ids with the sequence length n.

Each scale is a factor of (n, L), L the reference length (the longest training length), and
equals 1 at n = L. They are the cures of attention dilution that the ``cures`` experiment
applies to trained heads at evaluation time, and the log-length head it trains with one:

- logit scales, multiplying every attention logit of a sequence of length n:
  - ``log_length``: log(n) / log(L), at every n (Chiang & Cholak 2022, "Overcoming a theoretical
    limitation of self-attention"; Scalable-Softmax, Nakanishi 2025, uses s log(n) with s
    learned, which a head's query and key weights absorb up to the constant 1 / log(L));
  - ``yarn``: YaRN's attention temperature (Peng et al. 2023, arXiv:2309.00071, section 3.4):
    softmax(q.k / (t sqrt(D))) with sqrt(1/t) = 0.1 ln(s) + 1, s = n / L the extension factor,
    so the logits are multiplied by 1/t = (0.1 ln(n / L) + 1)^2; 1 for n <= L, as in the
    reference implementations (``yarn_get_mscale`` returns 1 for s <= 1). YaRN fixes s once
    for a target context; here s follows each evaluation length. Only the temperature is
    applied, not YaRN's per-frequency interpolation.
- position scales, multiplying every position id:
  - ``interpolate``: position interpolation (Chen et al. 2023, arXiv:2306.15595), for n > L
    positions p -> p (L - 1) / (n - 1), so that 0 .. n - 1 covers exactly the trained range
    0 .. L - 1. Chen et al. write p L / n; with (L - 1) / (n - 1) the last position lands on
    the last trained row of a learned table instead of between it and an untrained one. The
    factor is smaller than theirs by (n - L) / (L (n - 1)) of it, which grows with n towards
    1 / L: at L = 32, 1.6% at n = 2L, 3% from n = 777 on, 3.03% at n = 1024. Positions become
    fractional: rotary angles take them as they are, a learned table interpolates linearly
    between its rows.

This module imports nothing heavy, so sections and figures can name the formulas.
"""

import math
from collections.abc import Callable


def log_length(length: int, reference_length: int) -> float:
    return math.log(length) / math.log(reference_length)


def yarn_temperature(length: int, reference_length: int) -> float:
    if length <= reference_length:
        return 1.0
    return (0.1 * math.log(length / reference_length) + 1.0) ** 2


def interpolation(length: int, reference_length: int) -> float:
    if length <= reference_length:
        return 1.0
    return (reference_length - 1) / (length - 1)


def unscaled(length: int, reference_length: int) -> float:
    return 1.0


# name -> factor(n, L); "none" leaves the head as trained.
LOGIT_SCALES: dict[str, Callable[[int, int], float]] = {
    "none": unscaled, "log_length": log_length, "yarn": yarn_temperature}
POSITION_SCALES: dict[str, Callable[[int, int], float]] = {"none": unscaled, "interpolate": interpolation}
FORMULAS = {
    "log_length": "logits x log(n) / log(L)",
    "yarn": "YaRN's attention temperature alone, logits x (0.1 ln(n / L) + 1)^2 for n > L (not YaRN's per-frequency "
            "interpolation)",
    "interpolate": "position interpolation, positions x (L - 1) / (n - 1) for n > L (Chen et al. write L / n: this "
                   "form puts the last position on the last trained one)",
}


def interpolation_shortfall(length: int, reference_length: int) -> float:
    """How much smaller ``interpolation``'s factor is than Chen et al.'s L / n, relative to theirs:
    1 - n (L - 1) / (L (n - 1)) = (n - L) / (L (n - 1)) for n > L, rising towards 1 / L."""
    if length <= reference_length:
        return 0.0
    return 1.0 - interpolation(length, reference_length) / (reference_length / length)


def check_scales(logit_scale: str, position_scale: str, reference_length: int | None) -> None:
    """A clear error for an unknown scale, or a scale without the length it refers to."""
    for kind, name, known in (("logit_scale", logit_scale, LOGIT_SCALES), ("position_scale", position_scale,
                                                                            POSITION_SCALES)):
        if name not in known:
            raise ValueError(f"{kind} must be one of {sorted(known)}, got {name!r}")
    scaled = logit_scale != "none" or position_scale != "none"
    if scaled and (reference_length is None or reference_length < 2):
        raise ValueError(f"logit_scale={logit_scale!r}, position_scale={position_scale!r} need a reference_length "
                         f">= 2 (the longest training length), got {reference_length!r}")
