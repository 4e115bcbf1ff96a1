"""frequency: the block decomposition of the content-averaged kernel against hand-built heads."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import markdown_rows, bootstrap_both_ways
from lengthgen.tables import io as tables
from lengthgen.checks.check import with_keys
from lengthgen.experiments.frequency import analysis as frequency
from lengthgen.experiments.frequency.analysis import (analyze_coefficients, analyze_head, block_spectrum, entropy_rank,
                                             participation_ratio, position_kernel_matrix, rank_for_share)
from lengthgen.science.kernel import cosine_sum, logit_kernel, mean_block_coefficients, rotary_blocks
from lengthgen.models.head import AttentionHead, HeadConfig
from lengthgen.experiments.frequency import figures as plots
from lengthgen.experiments.frequency.figures import carrier_kernel
from lengthgen.experiments.frequency.headlines import HEADLINES
from lengthgen.experiments.frequency import section as prose
from lengthgen.tables.registry import schema_named
from lengthgen.tables.core import CLAIMS
from lengthgen.experiments.frequency.tables import FREQUENCY_BLOCKS, FREQUENCY_SUMMARY
from lengthgen.training.loop import init_head

D_MODEL = 8
THETA = [10_000 ** (-2 * i / D_MODEL) for i in range(D_MODEL // 2)]


def polar(radius: float, angle: float) -> complex:
    return radius * complex(math.cos(angle), math.sin(angle))


def two_frequency_head(blocks: dict[int, tuple[complex, complex]], content_scale: float = 0.0,
                       vocab_size: int = 4) -> AttentionHead:
    """Query and key biases set per block to (zq, zk). With ``content_scale`` > 0, token embeddings
    are +-e rows (zero mean over tokens) and the projections random: token content then changes
    every logit, but the content-averaged query and key are still exactly the biases.
    """
    model = init_head(HeadConfig(vocab_size, D_MODEL, "rope", trained_positions=256), 0).double()
    with torch.no_grad():
        model.query.bias.zero_()
        model.key.bias.zero_()
        for block, (zq, zk) in blocks.items():
            model.query.bias[2 * block], model.query.bias[2 * block + 1] = zq.real, zq.imag
            model.key.bias[2 * block], model.key.bias[2 * block + 1] = zk.real, zk.imag
        half = torch.randn(vocab_size // 2, D_MODEL, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        model.token_embedding.weight.copy_(content_scale * torch.cat([half, -half]))
    return model.eval()


KNOWN = {1: (polar(2.0, 0.3), polar(1.5, -0.4)), 3: (polar(0.5, 1.0), polar(4.0, 2.5))}
SCALE = 1 / math.sqrt(D_MODEL)
AMPLITUDES = {1: 2.0 * 1.5 * SCALE, 3: 0.5 * 4.0 * SCALE}
PHASES = {1: 0.3 + 0.4, 3: 1.0 - 2.5}


@pytest.mark.parametrize("content_scale", [0.0, 1.0])
def test_two_known_frequencies_are_recovered_exactly(content_scale):
    offset = 2
    model = two_frequency_head(KNOWN, content_scale)
    blocks, summary, _ = analyze_head(model, offset=offset, seed=0, train_length_max=32)
    energy = {block: amplitude**2 for block, amplitude in AMPLITUDES.items()}
    total = sum(energy.values())
    for block in range(D_MODEL // 2):
        row = blocks.loc[blocks["block"] == block].iloc[0]
        assert row["theta"] == pytest.approx(THETA[block])
        assert row["energy"] == pytest.approx(energy.get(block, 0.0), abs=1e-12)
        assert row["energy_share"] == pytest.approx(energy.get(block, 0.0) / total, abs=1e-12)
        if block in KNOWN:
            assert row["amplitude"] == pytest.approx(AMPLITUDES[block])
            assert row["phase"] == pytest.approx(PHASES[block])
            assert row["alignment"] == pytest.approx(math.cos(offset * THETA[block] + PHASES[block]))
    assert blocks.set_index("block").loc[[1, 3], "energy_rank"].tolist() == [0, 1]
    row = summary.iloc[0]
    assert row["top1_share"] == pytest.approx(energy[1] / total)
    assert row["top2_share"] == pytest.approx(1.0) and row["top4_share"] == pytest.approx(1.0)
    assert row["participation_ratio"] == pytest.approx(total**2 / (energy[1] ** 2 + energy[3] ** 2))
    tables.to_arrow(blocks, FREQUENCY_BLOCKS)
    tables.to_arrow(summary, FREQUENCY_SUMMARY)


def test_content_changes_logits_but_not_the_content_average():
    with_content = logit_kernel(two_frequency_head(KNOWN, 1.0), 20)
    without = logit_kernel(two_frequency_head(KNOWN, 0.0), 20)
    assert (with_content - without).abs().max() > 0.1
    assert torch.allclose(with_content.mean(dim=(0, 1)), without[0, 0], atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_cosine_sum_of_mean_coefficients_is_the_content_average_of_the_kernel(seed):
    model = init_head(HeadConfig(5, 8, "rope", trained_positions=64), seed).double()
    blocks = rotary_blocks(model)
    carrier = cosine_sum(mean_block_coefficients(blocks), blocks.theta, torch.arange(40))
    assert torch.allclose(carrier, logit_kernel(model, 40).mean(dim=(0, 1)), atol=1e-12)


def test_blocks_phased_to_peak_at_offset_are_fully_aligned_and_peak_there():
    offset = 3
    theta = torch.tensor(THETA, dtype=torch.float64)
    amplitudes = torch.tensor([3.0, 2.0, 1.0, 0.5], dtype=torch.float64)
    coefficients = torch.polar(amplitudes, -offset * theta)  # phi_i = -K theta_i
    spectrum, summary, _ = analyze_coefficients(coefficients, theta, offset, train_length_max=32)
    assert np.allclose(spectrum["alignment"], 1.0)
    assert summary["top4_alignment"] == pytest.approx(1.0)
    assert summary["amplitude_alignment"] == pytest.approx(1.0)
    assert summary["peak_delta"] == offset


def test_antialigned_block_has_alignment_minus_one():
    theta = torch.tensor(THETA, dtype=torch.float64)
    coefficients = torch.polar(torch.tensor([1.0, 0, 0, 0], dtype=torch.float64), math.pi - 2 * theta)
    spectrum = block_spectrum(coefficients, theta, offset=2)
    assert spectrum.loc[0, "alignment"] == pytest.approx(-1.0)


def test_position_kernel_matrix_is_toeplitz_with_rank_two_per_block():
    theta = torch.tensor(THETA, dtype=torch.float64)
    # Blocks 0 and 1 (theta = 1 and 0.1) turn enough over 12 positions to be well conditioned.
    coefficients = torch.tensor([polar(1.0, 0.7), polar(0.6, -1.2), 0, 0], dtype=torch.complex128)
    matrix = position_kernel_matrix(coefficients, theta, 12)
    kernel = cosine_sum(coefficients, theta, torch.arange(-11, 12))
    assert matrix[5, 2] == kernel[11 + 3] and matrix[2, 5] == kernel[11 - 3]
    sigma = torch.linalg.svdvals(matrix)
    assert (sigma[:4] > 1e-2 * sigma[0]).all() and (sigma[4:] < 1e-10 * sigma[0]).all()
    _, summary, singular = analyze_coefficients(coefficients, theta, 1, train_length_max=12)
    assert summary["singular_rank90"] <= 4
    assert singular["energy_share"].sum() == pytest.approx(1.0)


def test_effective_ranks_of_uniform_shares_are_the_count():
    assert participation_ratio([0.25] * 4) == pytest.approx(4.0)
    assert entropy_rank([0.25] * 4 + [0.0] * 3) == pytest.approx(4.0)
    assert participation_ratio([1.0, 0.0]) == pytest.approx(1.0) == entropy_rank([1.0, 0.0])


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=32).filter(lambda values: sum(values) > 1e-3))
def test_participation_ratio_is_at_most_the_entropy_rank(values):
    shares = np.array(values) / sum(values)
    support = int((shares > 0).sum())
    assert 1 - 1e-9 <= participation_ratio(shares) <= entropy_rank(shares) + 1e-9 <= support + 2e-9


def test_rank_for_share():
    assert rank_for_share([0.5, 0.3, 0.15, 0.05], 0.8) == 2
    assert rank_for_share([0.5, 0.3, 0.15, 0.05], 0.9) == 3
    assert rank_for_share([1.0, 0.0], 0.9) == 1


def keyed_checks(summary, untrained):
    checks = frequency.checks({"frequency_summary": summary, "frequency_untrained_summary": untrained}, SETTINGS)
    return with_keys(checks, "frequency", "frequency")


SETTINGS = {"task": {"vocab_size": 4, "train_length_min": 4, "train_length_max": 16, "eval_lengths": [16, 64]}}


def test_checks_take_the_worst_seed():
    summary = pd.DataFrame({"offset": [1, 1, 2, 2], "seed": [0, 1, 0, 1], "top_share": [0.95, 0.85, 0.9, 0.7],
                            "top_alignment": [0.99, 0.9, 0.95, 0.97], "top_blocks": 4, "n_blocks": 32})
    untrained = summary.assign(top_share=[0.5, 0.6, 0.55, 0.65], top_alignment=0.1)
    checks = keyed_checks(summary, untrained)
    tables.to_arrow(checks, CLAIMS)
    assert checks["offset"].tolist() == [1, 1, 1, 2, 2, 2]
    # per offset: the share, the share over the untrained heads (lowest trained - highest untrained), the alignment
    assert checks["value"].tolist() == pytest.approx([0.85, 0.25, 0.9, 0.7, 0.05, 0.95])
    assert checks["holds"].tolist() == [True, True, True, False, True, True]
    assert (checks["kind"] == "evidence").all()
    assert checks["threshold"].tolist() == [0.8, 0.0, 0.8] * 2
    # the same three statistics at every offset, with the baseline beside the threshold, not in the name
    assert checks["statistic"].nunique() == 3 and checks["claim"].nunique() == 1
    assert "(top 4 of 32 blocks; untrained: 0.5 to 0.6; 2 seeds)" in checks["rule"].iloc[0]
    assert "(top 4 of 32 blocks; untrained: 0.55 to 0.65; 2 seeds)" in checks["rule"].iloc[3]
    assert "2 seeds, by chance <= 2^-2 = 0.25" in checks["rule"].iloc[1]


def test_a_share_the_untrained_heads_reach_is_not_learned():
    """A trained head above the absolute bar still fails when an untrained head of the same seeds is as
    concentrated: the bar alone would pass a head training never concentrated."""
    summary = pd.DataFrame({"offset": [1, 1], "seed": [0, 1], "top_share": [0.95, 0.85], "top_alignment": 0.95,
                            "top_blocks": 4, "n_blocks": 32})
    untrained = summary.assign(top_share=[0.86, 0.5], top_alignment=0.1)
    checks = keyed_checks(summary, untrained)
    assert checks["holds"].tolist() == [True, False, True]
    assert checks["value"].iloc[1] == pytest.approx(0.85 - 0.86)
    assert checks["comparison"].iloc[1] == ">"
    untouched = keyed_checks(summary, summary)  # training changed nothing: not even a tie passes
    assert not untouched["holds"].iloc[1]


def test_the_bootstrap_by_seed_sums_takes_the_worst_of_the_drawn_seeds_as_recomputing_does():
    """Seed 2's trained share (offset 1) and alignment (offset 2) fail their bars, and seed 1's untrained head at
    offset 1 is above seed 2's trained one: each outcome turns on which seeds a resample draws, trained and untrained
    alike (seed 0 has no untrained row at offset 2: a resample without seeds 1 and 2 has no untrained maximum there)."""
    summary = pd.DataFrame({"offset": [1, 1, 1, 2, 2, 2], "seed": [0, 1, 2] * 2,
                            "top_share": [0.95, 0.9, 0.75, 0.9, 0.85, 0.95],
                            "top_alignment": [0.99, 0.9, 0.95, 0.9, 0.85, 0.6], "top_blocks": 4, "n_blocks": 32})
    untrained = summary.assign(top_share=[0.5, 0.8, 0.6, 0.1, 0.7, 0.9]).drop(index=3)  # seed 0 at offset 2
    tables = {"frequency_summary": summary, "frequency_untrained_summary": untrained}
    by_sums, redone = bootstrap_both_ways(
        lambda frequency_summary, frequency_untrained_summary: keyed_checks(frequency_summary,
                                                                            frequency_untrained_summary), tables)
    pd.testing.assert_frame_equal(by_sums, redone)  # extremes and their difference: exact, intervals too
    varies = [True, True, False, False, True, True]  # seed 2's share, its margin, its alignment; K=2's margin
    assert by_sums["holds_fraction"].between(0, 1, inclusive="neither").tolist() == varies
    assert by_sums["seeds_failing"].tolist() == [1, pd.NA, 0, 0, pd.NA, 1]


def hand_built_runs():
    """(run, model) pairs as the runner's ModelSet yields them: one hand-built head per (offset, seed)."""
    return [({"pe": "rope", "offset": offset, "seed": seed}, two_frequency_head(KNOWN, 1.0))
            for offset in (1, 2) for seed in (0, 1)]


def test_analyze_decomposes_each_head_trained_and_at_its_seeded_init():
    measured = frequency.analyze({"models": hand_built_runs()}, SETTINGS)
    for name, frame in measured.items():
        tables.to_arrow(frame, schema_named(name))  # raises if a column is missing or mistyped
    config = two_frequency_head(KNOWN).config
    untrained = measured["frequency_untrained_summary"].set_index(["offset", "seed"])
    for offset, seed in [(1, 0), (2, 1)]:
        at_init = analyze_head(init_head(config, seed), offset, seed, 16)[1].set_index(["offset", "seed"])
        pd.testing.assert_frame_equal(untrained.loc[[(offset, seed)]], at_init)
    assert measured["frequency_summary"]["top2_share"].to_numpy() == pytest.approx(1.0)  # the two known blocks
    assert (measured["frequency_summary"]["top_blocks"] == 1).all()  # D = 8: max(1, 8 / 16) = 1 block judged
    assert len(measured["frequency_singular_values"]) == 4 * 16


def test_section_from_hand_built_heads():
    measured = frequency.analyze({"models": hand_built_runs()}, SETTINGS)
    checks = keyed_checks(measured["frequency_summary"], measured["frequency_untrained_summary"])
    section = prose.section(measured, checks, SETTINGS)
    assert section.startswith("## frequency") and "figures/frequency_rank.png" in section
    rows = markdown_rows(section, "|K|head|seeds|")
    assert [row[:3] for row in rows] == [["1", "trained", "2"], ["1", "untrained", "2"], ["2", "trained", "2"],
                                        ["2", "untrained", "2"]]
    share = measured["frequency_untrained_summary"].query("offset == 1")["top_share"]
    assert rows[1][5] == f"{share.mean():.3g} [{share.min():.3g}, {share.max():.3g}]"  # the top-1 share column
    assert "top-1 share (D/16)" in section and "top-1 alignment" in section
    assert len(markdown_rows(section, "|claim|K|statistic|")) == 6
    # each seed's peak offset, the seeds peaking elsewhere than K named; the rank trained against untrained
    trained = measured["frequency_summary"].sort_values("seed")
    for offset, heads in trained.groupby("offset"):
        elsewhere = heads[heads["peak_delta"] != offset]
        named = ", ".join(f"seed {row.seed} at {row.peak_delta}" for row in elsewhere.itertuples()) or "none"
        assert (f"K={offset}: {', '.join(map(str, heads['peak_delta']))} (peaking elsewhere than K: {named})"
                in section)
    lowered = trained["singular_rank90"].mean() < measured["frequency_untrained_summary"]["singular_rank90"].mean()
    assert ("Training lowers the rank" if lowered else "Training does not lower the rank") in section
    assert "the top 1 of 4 blocks (max(1, D/16)) hold at least" in section  # D = 8
    # the rule above the checks is what they test, not a statement that the heads meet it
    assert "**What the checks test**: whether the top 1 of 4 blocks" in section and "As measured" not in section
    assert "low-rank carrier aligned" not in section and "concentrates its energy in a few frequency blocks" in section


def test_figure_from_hand_built_heads():
    measured = frequency.analyze({"models": hand_built_runs()}, SETTINGS)
    head = measured["frequency_blocks"].query("offset == 1 and seed == 0")
    expected = logit_kernel(two_frequency_head(KNOWN, 1.0), 16).mean(dim=(0, 1)).numpy()
    assert np.allclose(carrier_kernel(head, np.arange(16)), expected)
    figures = plots.draw(measured, SETTINGS)
    assert set(figures) == {"frequency_rank"}
    energy, concentration, alignment, kernel, singular, claim = figures["frequency_rank"].axes
    first = kernel.get_lines()[0]  # the head of offset 1, seed 0, over deltas 0..2L-1, divided by its max |s|
    carrier = carrier_kernel(head, np.arange(32))
    assert np.allclose(first.get_ydata(), carrier / np.abs(carrier).max())
    for line in concentration.get_lines()[:4]:  # every head's cumulative share reaches 1 by its 2 blocks
        assert line.get_ydata()[1:] == pytest.approx(1.0)
    filled = [collection for collection in claim.collections if len(collection.get_facecolors())]
    hollow = [collection for collection in claim.collections if not len(collection.get_facecolors())]
    for collections, heads in ((filled, measured["frequency_summary"]),
                               (hollow, measured["frequency_untrained_summary"])):
        points = np.concatenate([collection.get_offsets() for collection in collections])
        assert sorted(map(tuple, points)) == sorted(zip(heads["top_share"], heads["top_alignment"]))
    legend = figures["frequency_rank"].legends[0]  # one legend, under every panel
    assert legend.get_window_extent().y1 <= min(ax.get_window_extent().y0 for ax in (kernel, singular, claim))


# --- hand-made cases: every summary statistic and every check text, worked out by hand ------------------------

HAND_THETA = [1.0, 0.5, 0.25, 0.125]
HAND_AMPLITUDES = [0.1, 0.4, 0.2, 0.3]  # energies 0.01, 0.16, 0.04, 0.09: total 0.3, below 1
HAND_PHASES = [0.0, -1.0, math.pi, 0.5]
HAND_OFFSET = 2


def hand_coefficients(amplitudes=HAND_AMPLITUDES, phases=HAND_PHASES):
    return (torch.tensor([polar(a, p) for a, p in zip(amplitudes, phases)], dtype=torch.complex128),
            torch.tensor(HAND_THETA, dtype=torch.float64))


def test_block_statistics_of_a_hand_made_spectrum():
    """Four blocks whose energies (0.01, 0.16, 0.04, 0.09) sum to 0.3 and whose alignments cos(K theta + phi) at
    K = 2 are cos 2, 1, -cos 0.5, cos 0.75: each summary statistic by hand."""
    coefficients, theta = hand_coefficients()
    spectrum, summary, _ = analyze_coefficients(coefficients, theta, HAND_OFFSET, train_length_max=8)
    energy = [0.01, 0.16, 0.04, 0.09]
    alignment = [math.cos(2.0), 1.0, -math.cos(0.5), math.cos(0.75)]
    assert spectrum["energy"].tolist() == pytest.approx(energy)
    assert spectrum["energy_share"].tolist() == pytest.approx([e / 0.3 for e in energy])  # a total below 1 is shared
    assert spectrum["energy_rank"].tolist() == [3, 0, 2, 1]
    assert spectrum["alignment"].tolist() == pytest.approx(alignment)
    assert summary["n_blocks"] == 4
    assert summary["top1_share"] == pytest.approx(0.16 / 0.3)
    assert summary["top2_share"] == pytest.approx(0.25 / 0.3)
    assert summary["top4_share"] == pytest.approx(1.0)
    shares = [e / 0.3 for e in energy]
    assert summary["participation_ratio"] == pytest.approx(1 / sum(p * p for p in shares))
    assert summary["entropy_rank"] == pytest.approx(math.exp(-sum(p * math.log(p) for p in shares)))
    # top 1: block 1 alone, fully aligned; top 4: every block, weighted by its energy
    assert summary["top1_alignment"] == pytest.approx(1.0)
    assert summary["top4_alignment"] == pytest.approx(sum(e * a for e, a in zip(energy, alignment)) / 0.3)
    assert frequency.top_alignment(spectrum, 2) == pytest.approx((0.16 + 0.09 * math.cos(0.75)) / 0.25)
    # s(K) / sum A_i, with amplitudes (not energies) as weights; the amplitudes sum to 1.0
    assert summary["amplitude_alignment"] == pytest.approx(
        sum(a * c for a, c in zip(HAND_AMPLITUDES, alignment)) / sum(HAND_AMPLITUDES))


def test_peak_and_singular_rank_of_a_hand_made_kernel():
    """The peak of s(delta) = sum A_i cos(delta theta_i + phi_i) over the training offsets 0..L-1, and the
    singular values of M[m, n] = s(m - n), from numpy on the formula."""
    coefficients, theta = hand_coefficients()
    length = 8
    deltas = np.arange(-(length - 1), length)
    s = sum(a * np.cos(deltas * t + p) for a, t, p in zip(HAND_AMPLITUDES, HAND_THETA, HAND_PHASES))
    _, summary, singular = analyze_coefficients(coefficients, theta, HAND_OFFSET, train_length_max=length)
    assert summary["peak_delta"] == int(np.argmax(s[length - 1:]))
    matrix = np.array([[s[m - n + length - 1] for n in range(length)] for m in range(length)])
    sigma = np.linalg.svd(matrix, compute_uv=False)
    assert singular["index"].tolist() == list(range(length))
    assert singular["singular_value"].to_numpy() == pytest.approx(sigma, abs=1e-12)
    assert singular["energy_share"].to_numpy() == pytest.approx(sigma**2 / (sigma**2).sum(), abs=1e-12)
    cumulative = np.cumsum(sigma**2) / (sigma**2).sum()
    assert summary["singular_rank90"] == 1 + next(i for i, c in enumerate(cumulative) if c >= 0.9)


def test_singular_shares_of_a_kernel_with_little_energy_are_still_shares():
    """A kernel whose ||M||_F^2 is far below 1 is no zero kernel: its shares sum to 1; only M = 0 has none."""
    coefficients, theta = hand_coefficients([1e-3, 0.0, 0.0, 0.0], [0.0] * 4)
    _, summary, singular = analyze_coefficients(coefficients, theta, HAND_OFFSET, train_length_max=4)
    assert singular["energy_share"].sum() == pytest.approx(1.0)
    assert summary["top1_share"] == 1.0
    zero, theta = hand_coefficients([0.0] * 4, [0.0] * 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0: the shares of nothing are NaN by construction, without a warning
        spectrum = block_spectrum(zero, theta, HAND_OFFSET)
        singular = frequency.singular_values(position_kernel_matrix(zero, theta, 4))
    for shares in (spectrum["energy_share"], singular["energy_share"]):
        assert shares.dtype == np.float64 and shares.isna().all()


def test_equally_energetic_blocks_rank_in_block_order():
    """Ties in energy rank by block index, so "the top n blocks" is always the same n blocks: 40 blocks whose
    energies alternate 1, 4, 1, 4, ... rank the twenty of energy 4 first, each group in block order."""
    n_blocks = 40
    coefficients = torch.tensor([1, 2, -1, 2j, 1j, -2, -1j, -2j] * (n_blocks // 8), dtype=torch.complex128)
    theta = torch.linspace(1.0, 0.01, n_blocks, dtype=torch.float64)
    spectrum = block_spectrum(coefficients, theta, offset=1)
    assert spectrum["energy"].tolist() == [1.0, 4.0] * (n_blocks // 2)  # |z|^2 exactly
    assert spectrum["energy_rank"].tolist() == [rank for pair in zip(range(20, 40), range(20)) for rank in pair]
    assert spectrum["energy_rank"].dtype.kind == "i"
    assert frequency.top_share(spectrum, 4) == pytest.approx(16 / 100)


def test_top4_alignment_of_many_blocks_takes_the_top_four_only():
    """Of the 40 blocks above, the top 4 are blocks 1, 3, 5 and 7 (energy 4 each: 2, 2j, -2, -2j); the summary's
    top-4 alignment is the mean of their cos(K theta + phi), and no fifth block enters it."""
    n_blocks = 40
    coefficients = torch.tensor([1, 2, -1, 2j, 1j, -2, -1j, -2j] * (n_blocks // 8), dtype=torch.complex128)
    theta = torch.linspace(1.0, 0.01, n_blocks, dtype=torch.float64)
    _, summary, _ = analyze_coefficients(coefficients, theta, 1, train_length_max=8)
    phases = {1: 0.0, 3: math.pi / 2, 5: math.pi, 7: -math.pi / 2}
    expected = np.mean([math.cos(float(theta[block]) + phase) for block, phase in phases.items()])
    assert summary["top4_alignment"] == pytest.approx(expected)
    assert summary["top4_share"] == pytest.approx(16 / 100) and summary["top1_share"] == pytest.approx(4 / 100)


@pytest.mark.parametrize("n_blocks, n_top", [(4, 1), (16, 2), (64, 8)])
def test_the_checks_judge_the_top_d_over_16_blocks_at_every_width(n_blocks, n_top):
    """A hand-made kernel whose block i has energy n - i (n = D/2 blocks), aligned with K at odd blocks and against it
    at even ones: at D = 8, 32 and 128 the summary judges the top max(1, D/16) = 1, 2 and 8 blocks, their share
    (n + (n - 1) + ... over n (n + 1) / 2) and energy-weighted alignment by hand."""
    offset = 2
    theta = torch.tensor([10_000 ** (-2 * i / (2 * n_blocks)) for i in range(n_blocks)], dtype=torch.float64)
    energy = [float(n_blocks - i) for i in range(n_blocks)]
    signs = [-1.0 if i % 2 == 0 else 1.0 for i in range(n_blocks)]
    phases = [-offset * float(t) + (math.pi if sign < 0 else 0.0) for t, sign in zip(theta, signs)]
    coefficients = torch.tensor([polar(math.sqrt(e), p) for e, p in zip(energy, phases)], dtype=torch.complex128)
    assert frequency.top_block_count(n_blocks) == n_top
    _, summary, _ = analyze_coefficients(coefficients, theta, offset, train_length_max=8)
    top = energy[:n_top]
    assert summary["top_blocks"] == n_top and summary["n_blocks"] == n_blocks
    assert summary["top_share"] == pytest.approx(sum(top) / sum(energy))
    assert summary["top_alignment"] == pytest.approx(sum(e * sign for e, sign in zip(top, signs)) / sum(top))
    checks = keyed_checks(pd.DataFrame([{"offset": offset, "seed": 0, **summary}]),
                          pd.DataFrame([{"offset": offset, "seed": 0, **summary, "top_share": 0.0}]))
    assert checks["rule"].iloc[0].startswith(f">= 0.8 (top {n_top} of {n_blocks} blocks; ")
    assert checks["value"].iloc[0] == pytest.approx(summary["top_share"])


def test_headlines_are_named_for_the_top_d_over_16_blocks_and_read_their_columns():
    """The headlines the carrier claim refers to by name, and the columns each run's value comes from."""
    assert [headline.name for headline in HEADLINES] == [
        "frequency: energy share of the top D/16 rotary blocks",
        "frequency: energy share of the top D/16 rotary blocks, the same heads untrained",
        "frequency: energy share of the top D/16 rotary blocks over the highest of the same heads untrained",
        "frequency: alignment of the top D/16 blocks with K"]
    frame = pd.DataFrame([dict(source="frequency_summary", offset=1, seed=0, top_share=0.9, top_alignment=0.3,
                               top4_share=0.1, top4_alignment=0.1),
                          dict(source="frequency_untrained_summary", offset=1, seed=0, top_share=0.6,
                               top_alignment=0.0, top4_share=0.95, top4_alignment=0.9)])
    values = [headline.per_run(frame[frame["source"].isin(headline.sources)], {}) for headline in HEADLINES]
    assert [float(value.iloc[0]) for value in values] == pytest.approx([0.9, 0.6, 0.9 - 0.6, 0.3])


def test_check_texts_are_the_keys_drift_matches_and_the_rules_a_reader_sees():
    """Offsets given out of order come back ascending; the claim, statistic, comparison, threshold, kind,
    per-seed flag and rule of every check, by hand (the untrained rows of another offset are left out)."""
    summary = pd.DataFrame({"offset": [3, 3, 3, 1, 1], "seed": [0, 1, 2, 0, 1],
                            "top_share": [0.9, 0.95, 0.93, 0.82, 0.88],
                            "top_alignment": [0.85, 0.9, 0.95, 0.7, 0.99], "top_blocks": 8, "n_blocks": 64})
    untrained = pd.DataFrame({"offset": [3, 3, 3, 1, 1, 7], "seed": [0, 1, 2, 0, 1, 0],
                              "top_share": [0.3, 0.4, 0.35, 0.2, 0.5, 0.99],
                              "top_alignment": [0.1, 0.2, 0.15, 0.3, -0.4, 0.99]})
    checks = keyed_checks(summary, untrained)
    claim = "the learned rule concentrates its energy in a few frequency blocks, aligned with K"
    statistics = ["lowest energy share of the top D/16 rotary blocks over seeds",
                  "lowest energy share of the top D/16 rotary blocks over seeds minus the highest of the same heads "
                  "untrained",
                  "lowest energy-weighted alignment cos(K theta + phi) of the top D/16 blocks over seeds"]
    assert (checks["claim"] == claim).all()
    assert checks["offset"].tolist() == [1, 1, 1, 3, 3, 3]
    assert checks["statistic"].tolist() == statistics * 2
    assert checks["comparison"].tolist() == [">=", ">", ">="] * 2
    assert checks["threshold"].tolist() == [0.8, 0.0, 0.8] * 2
    assert checks["per_seed"].tolist() == [True, False, True] * 2
    assert (checks["kind"] == "evidence").all()
    assert checks["value"].tolist() == pytest.approx([0.82, 0.82 - 0.5, 0.7, 0.9, 0.9 - 0.4, 0.85])
    assert checks["holds"].tolist() == [True, True, False, True, True, True]
    assert checks["rule"].tolist() == [
        ">= 0.8 (top 8 of 64 blocks; untrained: 0.2 to 0.5; 2 seeds)",
        "> 0 (trained: 0.82 to 0.88; untrained: 0.2 to 0.5; 2 seeds, by chance <= 2^-2 = 0.25)",
        ">= 0.8 (top 8 of 64 blocks; untrained: -0.4 to 0.3; 2 seeds)",
        ">= 0.8 (top 8 of 64 blocks; untrained: 0.3 to 0.4; 3 seeds)",
        "> 0 (trained: 0.9 to 0.95; untrained: 0.3 to 0.4; 3 seeds, by chance <= 2^-3 = 0.12)",  # 2 significant digits
        ">= 0.8 (top 8 of 64 blocks; untrained: 0.1 to 0.2; 3 seeds)",
    ]
