"""The registry: names with parameters, each encoding's defining formula, and the mechanism
properties each class states (checked here against what the code does)."""

import math
from collections import Counter
from itertools import combinations

import pytest
import torch
import torch.nn.functional as F
from scipy import stats

from lengthgen.models.encodings import ENCODINGS, EncodingConfig, build_encoding, resolve_encoding, rotary_frequencies
from lengthgen.models.encodings.nope import NoPositionalEncoding
from lengthgen.models.encodings.randomized import DEFAULT_NOISE_MAX_LENGTH, sorted_random_subsets
from lengthgen.models.encodings.t5 import causal_offset_bucket
from lengthgen.models.encodings_table import encoding_description
from lengthgen.models.head import HeadConfig
from lengthgen.runtime.seeding import generator
from lengthgen.training.loop import init_head

VOCAB = 8
# Every registered encoding, and one name with parameters per encoding that takes them.
NAMES = sorted(ENCODINGS) + ["rope@base=100", "alibi@slope=0.5", "fire@threshold=8", "fire_fixed@threshold=8",
                             "randomized_rope@noise_max_length=2000"]


def head(pe: str, seed: int = 0, trained_positions: int = 256, **kwargs):
    config = HeadConfig(vocab_size=VOCAB, d_model=16, pe=pe, trained_positions=trained_positions, learned_init_std=1.0,
                        **kwargs)
    return init_head(config, seed).double()


def heads_with_any_parameters(pe: str, **kwargs):
    """Three heads of encoding ``pe``: one at its init, two with every parameter drawn N(0, 1)."""
    models = []
    for seed in range(3):
        model = head(pe, seed, **kwargs)
        if seed:
            rng = generator("parameters", seed)
            with torch.no_grad():
                for parameter in model.parameters():
                    parameter.copy_(torch.randn(parameter.shape, generator=rng))
        models.append(model)
    return models


def draws_positions(pe: str) -> bool:
    return encoding_description(pe)["random_positions"]


def attention_logits(model, tokens, shift=0, rng_seed=0):
    """The logits over keys, at the encoding's own positions (drawn ones for a randomized encoding)."""
    positions = model.encoding.sample_positions(*tokens.shape, generator("test positions", rng_seed))
    return model.attention(tokens, shift, positions)[0]


# --- names with parameters ------------------------------------------------------------------------

def test_a_name_with_parameters_builds_the_class_with_them():
    cls, parameters = resolve_encoding("rope@base=100")
    assert cls is ENCODINGS["rope"] and parameters == {"base": 100.0}
    encoding = build_encoding("rope@base=1e6", EncodingConfig(d_model=8, trained_positions=16))
    assert torch.equal(encoding.theta, rotary_frequencies(8, 1e6))
    assert torch.equal(build_encoding("rope", EncodingConfig(8, 16, rope_base=50.0)).theta, rotary_frequencies(8, 50.0))


@pytest.mark.parametrize("name, message", [
    ("rotary", "unknown positional encoding 'rotary'.*rope"),
    ("rope@bse=100", "rope has no parameter 'bse' \\(parameters: base\\)"),
    ("learned@base=100", "learned has no parameter 'base' \\(parameters: none\\)"),
    ("rope@base=1e", "base=1e is not a number"),
    ("Rope", r"'Rope' is not of the form name or name@key=value,key=value \(lower-case names, numeric values\)$"),
    ("rope@base", "not of the form"),
])
def test_bad_names_say_what_is_wrong(name, message):
    with pytest.raises(ValueError, match=message):
        resolve_encoding(name)


def test_a_width_that_heads_do_not_divide_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"^d_model \(10\) must be a multiple of n_heads \(4\)$"):
        EncodingConfig(d_model=10, trained_positions=8, n_heads=4)


@pytest.mark.parametrize("pe", ["rope", "randomized_rope"])
def test_rotary_refuses_an_odd_head_width_by_its_value(pe):
    """Rotary pairs the coordinates of each head: 6 wide in 2 heads leaves heads of 3, which the error names."""
    with pytest.raises(ValueError, match=r"rope needs an even head width \(d_model / n_heads\), got 3"):
        build_encoding(pe, EncodingConfig(d_model=6, trained_positions=8, n_heads=2))


# --- each encoding's defining formula -------------------------------------------------------------

def test_alibi_bias_is_minus_slope_times_offset_with_the_single_head_slope_by_default():
    queries, keys = torch.tensor([9]), torch.arange(10)
    assert torch.equal(build_encoding("alibi", EncodingConfig(8, 16)).logit_bias(queries, keys)[0],
                       -(9 - keys).float() / 256)
    assert torch.equal(build_encoding("alibi@slope=0.5", EncodingConfig(8, 16)).logit_bias(queries, keys)[0],
                       -(9 - keys).float() / 2)
    learned = build_encoding("alibi_learned", EncodingConfig(8, 16))
    assert [name for name, _ in learned.named_parameters()] == ["slope"] and learned.slope.item() == 2 ** -8
    assert not list(build_encoding("alibi", EncodingConfig(8, 16)).parameters())


def test_t5_buckets_are_exact_below_16_then_log_spaced_and_shared_from_113():
    offsets = torch.arange(0, 100_001)
    buckets = causal_offset_bucket(offsets)
    assert torch.equal(buckets[:16], torch.arange(16))
    assert (buckets.diff() >= 0).all() and buckets.max() == 31
    # Log-spaced: bucket 16 + floor(16 log(d / 16) / log 8), computed here independently in float64.
    middle = torch.arange(16, 113)
    expected = 16 + torch.floor(16 * torch.log(middle.double() / 16) / math.log(8)).long()
    assert torch.equal(buckets[16:113], expected)
    assert buckets[112] == 30 and (buckets[113:] == 31).all()
    assert torch.equal(causal_offset_bucket(torch.tensor([-5, -1])), torch.tensor([0, 0]))  # future keys: offset 0


def test_t5_bias_is_the_bucket_parameter():
    encoding = build_encoding("t5", EncodingConfig(8, 16))
    bias = encoding.logit_bias(torch.tensor([200]), torch.tensor([200, 199, 180, 100, 0]))[0]
    assert torch.equal(bias, encoding.bucket_bias[torch.tensor([0, 1, 17, 30, 31])])


def test_fire_bias_is_f_of_log_offset_over_log_of_the_thresholded_query_position():
    torch.manual_seed(0)
    encoding = build_encoding("fire", EncodingConfig(8, 16)).double()
    with torch.no_grad():
        encoding.c.fill_(0.3)
        encoding.threshold_scale.fill_(-0.05)  # L = |s| * 512 = 25.6, learned through s
    queries, keys = torch.tensor([10, 700]), torch.arange(701)
    offsets = (queries[:, None] - keys[None, :]).double()
    normalizer = torch.tensor([0.05 * 512, 700.0], dtype=torch.float64)[:, None]
    fraction = torch.log(0.3 * offsets.abs() + 1) / (torch.log(0.3 * normalizer + 1) + 1e-6)
    expected = encoding.mlp(fraction[..., None])[..., 0]
    torch.testing.assert_close(encoding.logit_bias(queries, keys), expected, rtol=0, atol=1e-12)


def test_fire_fixed_keeps_its_threshold_and_is_fire_s_formula():
    """The same bias as ``fire`` with the multiplier s at 1 for good: L is no parameter, so training keeps it."""
    learned, fixed = (build_encoding(pe, EncodingConfig(8, 16)).double() for pe in ("fire", "fire_fixed@threshold=64"))
    assert set(dict(learned.named_parameters())) - set(dict(fixed.named_parameters())) == {"threshold_scale"}
    assert fixed.threshold_scale.item() == 1.0
    fixed.load_state_dict(learned.state_dict(), strict=False)  # c and f as the learned one's
    with torch.no_grad():
        learned.threshold_scale.fill_(64 / 512)
    queries, keys = torch.tensor([10, 700]), torch.arange(701)
    torch.testing.assert_close(fixed.logit_bias(queries, keys), learned.logit_bias(queries, keys), rtol=0, atol=1e-12)


def test_fire_is_a_function_of_the_offset_only_below_its_threshold():
    model = head("fire")
    tokens = torch.randint(VOCAB, (4, 20), generator=generator("fire tokens"))
    below, also_below, above = (model.attention(tokens, shift)[0] for shift in (0, 400, 5000))
    torch.testing.assert_close(below, also_below, rtol=0, atol=1e-9)
    assert (below - above).abs().max() > 1e-3


# (30, 900) redraws rows with repeats that fall anywhere in the row, not only next to its smallest id.
@pytest.mark.parametrize("size, population", [(2, 8), (6, 8), (30, 900), (40, 1024), (1024, 1024)])
def test_random_position_rows_are_sorted_distinct_in_range_and_seeded(size, population):
    rows = sorted_random_subsets(50, size, population, generator("subsets", 0))
    assert rows.shape == (50, size) and rows.min() >= 0 and rows.max() < population
    assert (rows.diff(dim=-1) > 0).all()
    assert torch.equal(rows, sorted_random_subsets(50, size, population, generator("subsets", 0)))
    with pytest.raises(ValueError, match="exceeds noise_max_length"):
        sorted_random_subsets(1, population + 1, population, generator("subsets", 0))


def test_a_row_drawn_alone_redraws_a_repeat_wherever_it_falls():
    """One sequence at a time (a batch of one row): 30 ids of 900 repeat one about 2 times in 5 (of 20 rows here, 4 only
    away from their smallest id), and every row comes back distinct."""
    for seed in range(20):
        row = sorted_random_subsets(1, 30, 900, generator("one row", seed))
        assert row.shape == (1, 30) and (row.diff(dim=-1) > 0).all()


@pytest.mark.parametrize("size", [2, 6])  # both ways of drawing: with redraws (2 of 8), by the largest draws (6 of 8)
def test_random_position_rows_are_uniform_over_subsets(size):
    rows = sorted_random_subsets(28_000, size, 8, generator("uniformity", size))
    counts = Counter(map(tuple, rows.tolist()))
    assert set(counts) == set(combinations(range(8), size))
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3


def test_randomized_learned_has_a_row_per_possible_position_id():
    encoding = build_encoding("randomized_learned@noise_max_length=300", EncodingConfig(8, 64))
    assert encoding.table.shape == (300, 8) and encoding.noise_max_length == 300
    assert build_encoding("randomized_rope", EncodingConfig(8, 64)).noise_max_length == DEFAULT_NOISE_MAX_LENGTH
    for pe in ("randomized_rope", "randomized_learned"):  # the registry's description states the default
        assert f"noise_max_length = {DEFAULT_NOISE_MAX_LENGTH}" in encoding_description(pe)["summary"]
    with pytest.raises(ValueError, match="positive integer"):
        build_encoding("randomized_rope@noise_max_length=2.5", EncodingConfig(8, 64))


def test_noise_max_length_is_any_positive_integer():
    """A range of one id is the smallest there is: a sequence of length 1 always gets id 0. Zero or below is refused."""
    encoding = build_encoding("randomized_learned@noise_max_length=1", EncodingConfig(8, 64))
    assert encoding.table.shape == (1, 8)
    assert encoding.sample_positions(3, 1, generator("one id", 0)).tolist() == [[0], [0], [0]]
    for bad in ("0", "-3"):
        with pytest.raises(ValueError, match=f"positive integer, got {float(bad)}"):
            build_encoding(f"randomized_rope@noise_max_length={bad}", EncodingConfig(8, 64))


# --- the mechanism properties each class states ---------------------------------------------------

@pytest.mark.parametrize("pe", NAMES)
def test_offset_only_is_what_a_shift_of_every_position_id_does(pe):
    """offset_only: shifting every position id leaves the logits unchanged, whatever the parameters;
    else, for an encoding of fixed positions, some shift changes them for some parameters. Randomized
    encodings depend on random ids, not on the token offset: two draws give two sets of logits."""
    tokens = torch.randint(VOCAB, (4, 24), generator=generator("shift tokens"))
    changes = []
    for model in heads_with_any_parameters(pe, trained_positions=64):  # shifted ids past the table draw their rows
        if draws_positions(pe):
            changes.append((attention_logits(model, tokens, rng_seed=0) - attention_logits(model, tokens, rng_seed=1)).abs().max())
        else:
            changes.append(max((attention_logits(model, tokens) - attention_logits(model, tokens, shift)).abs().max()
                               for shift in (1, 37, 1000, 100_000)))
    if encoding_description(pe)["offset_only"]:
        assert max(changes) < 1e-9
    else:
        assert max(changes) > 1e-3


BOUNDED = [name for name in NAMES if encoding_description(name)["offset_only_up_to"] is not None]


@pytest.mark.parametrize("pe", BOUNDED)
def test_offset_only_up_to_is_what_a_shift_below_that_length_does(pe):
    """offset_only_up_to L: shifting every position id while the last query stays at most L leaves the logits
    unchanged, whatever the parameters; a shift taking the queries past L changes them. FIRE with its threshold
    fixed: below L its normalizer psi(max(L, i)) is psi(L) for every query."""
    bound = int(encoding_description(pe)["offset_only_up_to"])
    tokens = torch.randint(VOCAB, (4, 6), generator=generator("bounded shift tokens"))
    last_inside = bound - tokens.shape[1] + 1  # the shift that puts the last query at position L
    for model in heads_with_any_parameters(pe, trained_positions=64):
        logits = attention_logits(model, tokens)
        for shift in (1, last_inside):
            torch.testing.assert_close(attention_logits(model, tokens, shift), logits, rtol=0, atol=1e-9)
        assert (attention_logits(model, tokens, 10 * bound) - logits).abs().max() > 1e-3


def test_fire_with_its_threshold_fixed_is_offset_only_up_to_it_and_fire_learning_it_is_not():
    assert [encoding_description(pe)["offset_only_up_to"] for pe in ("fire_fixed", "fire_fixed@threshold=8")] == [512, 8]
    assert encoding_description("fire")["offset_only_up_to"] is None  # its L moves with training
    assert sorted(BOUNDED) == ["fire_fixed", "fire_fixed@threshold=8"]


def gradient_support(model, tokens, offset=2):
    """Per parameter, which entries get a nonzero gradient from the loss on ``tokens``."""
    positions = model.encoding.sample_positions(*tokens.shape, generator("support positions", tokens.shape[1]))
    logits, _ = model.predict(tokens, positions=positions)
    gradients = torch.autograd.grad(F.cross_entropy(logits, tokens[:, -1 - offset]), list(model.parameters()),
                                    allow_unused=True)
    return [torch.zeros_like(p, dtype=torch.bool) if g is None else g != 0
            for p, g in zip(model.parameters(), gradients)]


@pytest.mark.parametrize("pe", NAMES)
def test_trained_past_range_is_whether_only_longer_sequences_reach_some_parameter(pe):
    """trained_past_range: every parameter entry that a long sequence's loss reaches is also reached
    by training-range sequences (lengths 4..12); otherwise some entry is reached only past the range."""
    model = head(pe, trained_positions=1024)
    rng = generator("support tokens")
    reached_in_range = None
    for length in range(4, 13):  # enough sequences that randomized ids cover [0, noise_max_length)
        support = gradient_support(model, torch.randint(VOCAB, (1024, length), generator=rng))
        reached_in_range = support if reached_in_range is None else [a | b for a, b in zip(reached_in_range, support)]
    reached_long = gradient_support(model, torch.randint(VOCAB, (16, 1000), generator=rng))
    only_long = sum(int((long & ~short).sum()) for long, short in zip(reached_long, reached_in_range))
    assert (only_long == 0) == encoding_description(pe)["trained_past_range"], f"{only_long} entries reached only past the range"


@pytest.mark.parametrize("pe", NAMES)
def test_monotone_in_offset_is_what_a_sequence_of_one_repeated_token_shows(pe):
    """With every token the same, only the position term varies over the keys: a monotone one gives
    logits monotone in the offset whatever the parameters (a learned slope of either sign); a term
    that is not monotone shows it for some parameters."""
    tokens = torch.full((1, 64), 3)
    monotone = []
    for model in heads_with_any_parameters(pe):
        steps = attention_logits(model, tokens)[0].diff()
        monotone.append(bool((steps >= -1e-12).all() or (steps <= 1e-12).all()))
    assert all(monotone) if encoding_description(pe)["monotone_in_offset"] else not all(monotone)


# --- Mutation testing (docs/mutation.md): the rotation's direction, pinned on its own ------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_rope_rotates_each_block_counterclockwise_by_position_times_its_frequency(dtype):
    """Block i of (x_2i, x_2i+1) as x_2i + i x_2i+1 is multiplied by exp(i p theta_i): the unit vector (1, 0) goes
    to (cos p theta_i, sin p theta_i), and (0, 1) to (-sin p theta_i, cos p theta_i)."""
    encoding = build_encoding("rope@base=100", EncodingConfig(d_model=4, trained_positions=16))
    theta = [1.0, 100.0 ** -0.5]  # base^(-2i/D) for i = 0, 1 with D = 4
    positions = torch.tensor([0, 1, 3])
    east = torch.tensor([[1.0, 0.0, 1.0, 0.0]] * 3, dtype=dtype)
    north = torch.tensor([[0.0, 1.0, 0.0, 1.0]] * 3, dtype=dtype)
    tolerance = 1e-12 if dtype == torch.float64 else 1e-6
    for row, p in enumerate(positions.tolist()):
        expected_east = [math.cos(p * theta[0]), math.sin(p * theta[0]), math.cos(p * theta[1]), math.sin(p * theta[1])]
        expected_north = [-math.sin(p * theta[0]), math.cos(p * theta[0]), -math.sin(p * theta[1]),
                          math.cos(p * theta[1])]
        assert encoding.rotate(east, positions)[row].tolist() == pytest.approx(expected_east, abs=tolerance)
        assert encoding.rotate(north, positions)[row].tolist() == pytest.approx(expected_north, abs=tolerance)
    assert encoding.rotate(east, positions).dtype == dtype


# --- Mutation testing: formulas and settings not pinned above -----------------------------------------------------

def test_sinusoidal_term_is_sin_and_cos_of_position_times_frequency_interleaved():
    """Vaswani et al.: PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(p / 10000^(2i/D)), computed by hand."""
    encoding = build_encoding("sinusoidal", EncodingConfig(d_model=6, trained_positions=16))
    positions = [0, 1, 5, 1000]
    term = encoding.position_embedding(torch.tensor(positions))
    for row, p in enumerate(positions):
        expected = [f(p / 10000 ** (2 * i / 6)) for i in range(3) for f in (math.sin, math.cos)]
        assert term[row].tolist() == pytest.approx(expected, abs=1e-12)
    assert term.dtype == torch.float64 and encoding.position_embedding(torch.tensor([2.5]))[0, 0].item() == pytest.approx(
        math.sin(2.5), abs=1e-15)


@pytest.mark.parametrize("pe, weights", [
    ("sinusoidal", set()), ("rope", set()), ("alibi", set()), ("alibi_learned", {"slope"}),
    ("fire", {"c", "threshold_scale"}), ("fire_fixed", {"c"}),
])
def test_a_checkpoint_holds_an_encodings_weights_and_none_of_its_constants(pe, weights):
    """Fixed frequencies, a fixed slope, a fixed threshold and its initial value are settings of the name, not
    weights: the saved state holds only what training may change (a head saved before a constant was added still
    loads)."""
    saved = {name.removeprefix("encoding.") for name in head(pe).state_dict() if name.startswith("encoding.")}
    assert {name for name in saved if not name.startswith("mlp.")} == weights


@pytest.mark.parametrize("pe", ["sinusoidal", "rope"])
def test_fixed_frequencies_follow_the_positions_device(pe):
    """The frequencies are moved to wherever the position ids are (here the meta device, which holds shapes only)."""
    encoding = build_encoding(pe, EncodingConfig(d_model=8, trained_positions=16))
    positions = torch.arange(5, device="meta")
    out = encoding.position_embedding(positions) if pe == "sinusoidal" else encoding.rotate(torch.zeros(5, 8, device="meta"), positions)
    assert out.device.type == "meta" and out.shape == (5, 8)


def test_t5_bucket_biases_start_normal_with_standard_deviation_one_over_root_d_model():
    """As huggingface's T5: bucket_bias ~ N(0, (d_model^-1/2)^2), one draw per bucket, 32 buckets."""
    torch.manual_seed(11)
    encoding = build_encoding("t5", EncodingConfig(d_model=16, trained_positions=16))
    torch.manual_seed(11)
    assert torch.equal(encoding.bucket_bias.detach(), torch.randn(32) / 4)


def test_t5_refuses_fractional_positions_by_name():
    encoding = build_encoding("t5", EncodingConfig(d_model=8, trained_positions=16))
    with pytest.raises(ValueError, match=r"^t5 buckets integer offsets; fractional positions \(position interpolation\) "
                                         r"have none$"):
        encoding.logit_bias(torch.tensor([3.5]), torch.tensor([0.0, 1.75, 3.5]))


def test_register_adds_a_new_name_and_refuses_one_taken():
    from lengthgen.models.encodings import register
    try:
        assert register("test_only_nope")(NoPositionalEncoding) is NoPositionalEncoding
        assert ENCODINGS["test_only_nope"] is NoPositionalEncoding
        assert isinstance(build_encoding("test_only_nope", EncodingConfig(8, 16)), NoPositionalEncoding)
    finally:
        ENCODINGS.pop("test_only_nope", None)
    with pytest.raises(ValueError, match="^positional encoding 'rope' is registered twice$"):
        register("rope")(NoPositionalEncoding)
    assert ENCODINGS["rope"].__name__ == "Rotary"


def test_a_name_sets_several_parameters_and_an_unknown_one_lists_them_all(monkeypatch):
    """A user's encoding with two parameters: the name sets both, comma-separated, and a key it does not
    take is refused with every parameter it does take."""

    class TwoParameters(NoPositionalEncoding):
        def __init__(self, config, *, scale=1.0, width=2.0):
            super().__init__(config)

    monkeypatch.setitem(ENCODINGS, "two_parameters", TwoParameters)
    assert resolve_encoding("two_parameters@scale=0.5,width=3") == (TwoParameters, {"scale": 0.5, "width": 3.0})
    with pytest.raises(ValueError, match=r"two_parameters has no parameter 'depth' \(parameters: scale, width\)$"):
        resolve_encoding("two_parameters@depth=1")


def test_an_unknown_encoding_is_refused_with_every_registered_name():
    with pytest.raises(ValueError) as refused:
        resolve_encoding("rotary")
    message, allowed = str(refused.value).split("; allowed: ")
    assert message == "unknown positional encoding 'rotary'"
    assert allowed.split(", ") == sorted(ENCODINGS)


def test_encoding_description_states_the_declared_properties_and_the_class_s_first_paragraph():
    for pe in ENCODINGS:
        description = encoding_description(pe)
        assert set(description) == {"summary", "offset_only", "trained_past_range", "monotone_in_offset",
                                    "random_positions", "offset_only_up_to"}
        assert description["random_positions"] == pe.startswith("randomized")
        assert ENCODINGS[pe].__doc__.split()[:3] == description["summary"].split()[:3]
    assert encoding_description("nope")["summary"] == "No positional encoding (NoPE): the head sees a bag of tokens."
    assert encoding_description("rope@base=100")["summary"].endswith("unless the name sets it (``rope@base=100``).")


def test_alibi_and_fire_biases_keep_the_encodings_dtype_at_fractional_positions():
    """Under position interpolation the ids are float64; a float32 encoding still gives a float32 bias (fire's MLP
    takes only its own dtype), with the formula's values."""
    queries, keys = torch.tensor([3.5], dtype=torch.float64), torch.tensor([0.0, 1.75, 3.5], dtype=torch.float64)
    alibi = build_encoding("alibi@slope=0.5", EncodingConfig(8, 16)).logit_bias(queries, keys)
    assert alibi.dtype == torch.float32 and alibi[0].tolist() == [-1.75, -0.875, 0.0]
    fire = build_encoding("fire@threshold=2", EncodingConfig(8, 16))
    bias = fire.logit_bias(queries, keys)
    fraction = torch.log(0.1 * (3.5 - keys.float()) + 1) / (math.log(0.1 * 3.5 + 1) + 1e-6)  # max(L = 2, i = 3.5)
    assert bias.dtype == torch.float32
    torch.testing.assert_close(bias[0], fire.mlp(fraction[:, None])[:, 0], rtol=0, atol=1e-6)


def test_fire_is_f_of_one_input_through_32_relu_units_and_starts_at_threshold_512():
    """f: 1 -> 32 -> 1 (the paper's MLP); the learned multiplier s starts at 1, so L = 512 at init: queries below
    512 see the same bias at equal offsets, queries past it a squeezed one."""
    fire = build_encoding("fire", EncodingConfig(8, 16))
    assert [tuple(p.shape) for p in fire.mlp.parameters()] == [(32, 1), (32,), (1, 32), (1,)]
    assert fire.threshold_scale.item() == 1.0
    keys = torch.arange(6)
    def bias(query):
        return fire.logit_bias(torch.tensor([query]), query - keys)[0]
    torch.testing.assert_close(bias(100), bias(511), rtol=0, atol=1e-6)
    with torch.no_grad():
        fire.mlp[0].weight.fill_(1.0)  # one increasing unit, so the squeeze shows
        fire.mlp[0].bias.zero_()
        fire.mlp[2].weight.fill_(1.0)
    assert (bias(700) - bias(600)).abs().max() > 1e-4


def test_randomized_rope_rotates_fractional_ids_by_the_rope_formula():
    """Ids off the table (fractional, from a position scale) are rotated by angle p theta_i as rope does."""
    encoding = build_encoding("randomized_rope@noise_max_length=16", EncodingConfig(d_model=4, trained_positions=16))
    positions = torch.tensor([0.5, 2.25], dtype=torch.float64)
    east = torch.tensor([[1.0, 0.0, 1.0, 0.0]] * 2, dtype=torch.float64)
    rotated = encoding.rotate(east, positions)
    for row, p in enumerate(positions.tolist()):
        angles = [p, p * 10000.0 ** -0.5]
        assert rotated[row].tolist() == pytest.approx([f(a) for a in angles for f in (math.cos, math.sin)], abs=1e-12)


@pytest.mark.parametrize("size, population, by_largest", [(3, 5, True), (3, 6, False), (4, 11, True), (4, 12, False)])
def test_random_position_rows_are_drawn_by_the_largest_draws_exactly_when_repeats_would_be_common(size, population,
                                                                                                  by_largest):
    """The documented switch: a row of ``size`` ids repeats one more often than not once size (size - 1) exceeds the
    population; then the rows are the ``size`` largest of ``population`` uniform float64 draws, else a draw with
    replacement, sorted, kept where it has no repeat."""
    rows = sorted_random_subsets(200, size, population, generator("switch", size, population))
    rng = generator("switch", size, population)
    if by_largest:
        expected = torch.rand(200, population, generator=rng, dtype=torch.float64).topk(size, dim=-1).indices.sort(-1).values
        assert torch.equal(rows, expected)
    else:
        first = torch.randint(population, (200, size), generator=rng).sort(-1).values
        kept = (first.diff(dim=-1) > 0).all(-1)
        assert 0 < int(kept.sum()) < 200 and torch.equal(rows[kept], first[kept])


def test_learned_rows_drawn_past_the_stored_ones_join_the_table_on_its_device():
    """Rows past the table are drawn on the CPU and moved to the table's device (here meta: shapes only)."""
    encoding = build_encoding("learned", EncodingConfig(d_model=8, trained_positions=4)).to("meta")
    rows = encoding.position_embedding(torch.tensor([0, 3, 6, 9]))
    assert rows.device.type == "meta" and rows.shape == (4, 8)
