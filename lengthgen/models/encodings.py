"""Positional encodings, registered by name, with the properties of their mechanism.

An encoding can act at three places of an attention head, and each hook defaults to
doing nothing. The same entry serves the single head (``lengthgen.models.head``) and every
attention layer of the transformer (``lengthgen.models.transformer``):

- ``position_embedding(positions)``: the term added to the token embeddings, (..., D) for
  position ids (...) (absolute encodings). Returning the term rather than the sum lets the head
  use linearity: a projection of (token + position) is the projection of each, computed once per
  token and once per position (``model.AttentionHead.token_tables``);
- ``rotate(x, positions)``: applied to queries and keys (rotary encodings), per head: x is
  (..., T, head_dim);
- ``logit_bias(query_positions, key_positions)``: added to the attention logits, (..., Tq, Tk)
  shared by every head (the transformer also takes (n_heads, Tq, Tk)).

A fourth hook says where the positions come from: ``sample_positions(batch_size, length, rng)``
returns None (every sequence at 0..T-1, the default) or (B, T) position ids drawn per sequence
from ``rng`` (randomized encodings; the single head only).

Positions are int64 tensors of absolute position ids, so a test can shift them all; every hook
takes them of any leading shape, (T,) shared by a batch or (B, T) per sequence. Under position
interpolation (``lengthgen.models.length_scaling``) they are fractional, float64.

A registered name may carry parameters, ``name@key=value,key=value`` (``rope@base=100``): they
are the keyword-only arguments of the class, so a variant is a config line, not a new class.

Adding an encoding means writing one small class and decorating it with ``@register("name")``;
the model, the workflow and the config checks pick it up.
"""

import inspect
import math
from dataclasses import dataclass, replace
from typing import Callable

import torch
from torch import nn

from lengthgen.models.init import Init, initialize
from lengthgen.models.names import parse_name
from lengthgen.runtime.seeding import generator


@dataclass(frozen=True)
class EncodingConfig:
    """What an encoding may need to know about the model it sits in.

    ``d_model`` is the width of the token embeddings (what ``position_embedding`` adds to);
    queries and keys are split into ``n_heads`` heads of ``head_dim`` each (what ``rotate`` sees).
    ``trained_positions``: positions 0..trained_positions-1 are those training reaches (the
    longest training sequence), the rows a learned table stores. ``init_seed`` seeds the init of
    whatever an encoding draws row by row (the learned table), so a row past the stored ones is
    drawn at evaluation with the numbers a longer table would have held. ``init_std``: the std of a
    named normal init (``model.init``, ``lengthgen/models/init.py``), which every weight of the
    encoding is drawn with (the learned table, t5's buckets, FIRE's MLP; biases zero); None: each
    encoding's own init.
    """

    d_model: int
    trained_positions: int
    rope_base: float = 1e4
    learned_init_std: float = 0.02
    n_heads: int = 1
    init_seed: int = 0
    init_std: float | None = None

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of n_heads ({self.n_heads})")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


class PositionalEncoding(nn.Module):
    """Base class: every hook is the identity.

    Each encoding also states three properties of its mechanism, from which the variants
    experiment predicts its class before the run (``tests/test_encodings.py`` checks each
    statement against the implementation):
    """

    # The attention logit depends on the query and key positions only through their offset i - j,
    # for every value of the parameters (so shifting every position id changes nothing).
    offset_only: bool = False
    # Every parameter that shapes the logit at lengths past the training range also gets gradient
    # from sequences inside it (no parameter is reached only by longer sequences, left at its init).
    trained_past_range: bool = True
    # The position-dependent part of the logit is monotone in the offset: it can favour nearer (or
    # farther) keys, never one offset over both of its neighbours.
    monotone_in_offset: bool = False

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (..., D), added to the token embeddings

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x  # (..., T, head_dim)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor | None:
        return None  # or (..., Tq, Tk)

    def sample_positions(self, batch_size: int, length: int, rng: torch.Generator) -> torch.Tensor | None:
        return None  # or (B, T) position ids, one row per sequence


ENCODINGS: dict[str, Callable[..., PositionalEncoding]] = {}


def register(name: str):
    """Class decorator adding an encoding to ``ENCODINGS`` under ``name``."""

    def add(cls):
        if name in ENCODINGS:
            raise ValueError(f"positional encoding {name!r} is registered twice")
        ENCODINGS[name] = cls
        return cls

    return add


def encoding_parameters(cls) -> list[str]:
    """The parameters a registered name may set: the class's keyword-only arguments."""
    return [parameter.name for parameter in inspect.signature(cls).parameters.values()
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY]


def resolve_encoding(name: str) -> tuple[type, dict[str, float]]:
    """(class, parameters) of a registry name such as ``rope`` or ``rope@base=100``; a clear
    error names what is wrong (the form, an unknown encoding, or an unknown parameter: ``names.parse_name``)."""
    registry = {registered: tuple(encoding_parameters(cls)) for registered, cls in ENCODINGS.items()}
    registered, parameters = parse_name(name, "positional encoding", registry)
    return ENCODINGS[registered], parameters


def build_encoding(name: str, config: EncodingConfig) -> PositionalEncoding:
    """The encoding registered as ``name``, with the parameters the name carries."""
    cls, parameters = resolve_encoding(name)
    return cls(config, **parameters)


def rotary_frequencies(d_model: int, base: float) -> torch.Tensor:
    """theta_i = base^(-2i/d) for the d/2 rotary blocks, in float64. Shape (D/2,)."""
    return base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def query_key_offsets(query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
    """i - j for every (query, key) pair, in exact integers. (..., Tq), (..., Tk) -> (..., Tq, Tk)."""
    return query_positions[..., :, None] - key_positions[..., None, :]


@register("nope")
class NoPositionalEncoding(PositionalEncoding):
    """No positional encoding (NoPE): the head sees a bag of tokens."""

    offset_only = True  # trivially: the logit does not depend on positions
    monotone_in_offset = True  # the position part is constant

    def __init__(self, config: EncodingConfig):
        super().__init__()


@register("rope")
class Rotary(PositionalEncoding):
    """Rotary encoding (Su et al. 2021): block i of (x_2i, x_2i+1) is rotated by angle p * theta_i,
    theta_i = base^(-2i/D), with ``base`` = model.rope_base unless the name sets it (``rope@base=100``).

    Applied per head, so the frequencies are those of the head's width: theta_i =
    base^(-2i/head_dim) for its head_dim/2 blocks (with one head, head_dim = d_model).

    q_m . k_n then depends on m - n only. The angles are formed in float64 from the
    integer positions, so even position ids near 1e5 rotate by the exact angle and
    the equivariance holds to rounding of the final dtype.
    """

    offset_only = True

    def __init__(self, config: EncodingConfig, *, base: float | None = None):
        super().__init__()
        if config.head_dim % 2:
            raise ValueError(f"rope needs an even head width (d_model / n_heads), got {config.head_dim}")
        base = config.rope_base if base is None else base
        self.register_buffer("theta", rotary_frequencies(config.head_dim, base), persistent=False)

    def rotate(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        complex_dtype = torch.complex128 if x.dtype == torch.float64 else torch.complex64
        # Block (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1: the rotation is one product.
        blocks = torch.view_as_complex(x.unflatten(-1, (-1, 2)))  # (..., T, D/2)
        return torch.view_as_real(blocks * self.phasors(positions, complex_dtype)).flatten(-2)

    def phasors(self, positions: torch.Tensor, dtype: torch.dtype = torch.complex128) -> torch.Tensor:
        """e^{i p theta_i} per position id p, formed in complex128, as ``dtype``. (..., T) -> (..., T, D/2).

        Per id, without data-dependent shapes, so that seeds train side by side under vmap."""
        angles = positions.to(torch.float64)[..., None] * self.theta.to(positions.device)  # (..., T, D/2)
        return torch.polar(torch.ones_like(angles), angles).to(dtype)


@register("learned")
class LearnedAbsolute(PositionalEncoding):
    """Learned absolute positions (as in BERT and GPT-2): a learned table, row p added to the
    embedding of the token at position p.

    The table stores the rows training reaches (``trained_positions``); rows past them never get
    a gradient, which is what lets the head memorize absolute positions, so they are not stored:
    row p is drawn when read, from its own seeded init N(0, learned_init_std^2), the numbers a
    table of any length would have held there. So evaluating at longer lengths changes no weight.
    A fractional position p (position interpolation) gets the linear interpolation of rows
    floor(p) and floor(p) + 1.
    """

    trained_past_range = False  # rows past the longest training sequence

    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.init_seed, self.d_model = config.init_seed, config.d_model
        self.init_std = config.learned_init_std if config.init_std is None else config.init_std
        self.table = nn.Parameter(torch.stack([self.initial_row(p) for p in range(config.trained_positions)]))
        self._untrained_rows: dict[int, torch.Tensor] = {}

    def initial_row(self, position: int) -> torch.Tensor:
        """Row ``position`` at its init: drawn from a generator of its own, so a table's rows do not
        depend on how many there are."""
        return torch.randn(self.d_model, generator=generator("learned_row", self.init_seed, position)) * self.init_std

    def rows(self, positions: torch.Tensor) -> torch.Tensor:
        """Table rows at integer ``positions`` (...) -> (..., D): stored rows, or drawn past them."""
        if float(positions.min()) < 0:
            raise IndexError(f"learned encoding: negative position id {int(positions.min())}")
        stored = len(self.table)
        if int(positions.max()) < stored:
            return self.table[positions]
        drawn_ids = positions[positions >= stored].unique()
        for position in drawn_ids.tolist():
            if position not in self._untrained_rows:
                self._untrained_rows[position] = self.initial_row(position)
        drawn = torch.stack([self._untrained_rows[p] for p in drawn_ids.tolist()]).to(self.table)
        index = torch.where(positions < stored, positions, stored + torch.searchsorted(drawn_ids, positions))
        return torch.cat([self.table, drawn])[index]

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        if not positions.is_floating_point():
            return self.rows(positions)  # (..., D)
        below = positions.floor()
        fraction = (positions - below).to(self.table.dtype)[..., None]  # (..., 1)
        rows = below.long()
        return self.rows(rows) * (1 - fraction) + self.rows(rows + 1) * fraction  # (..., D)


@register("sinusoidal")
class Sinusoidal(PositionalEncoding):
    """The fixed sin/cos absolute encoding of Vaswani et al. (2017), added to the embeddings:
    (sin p theta_i, cos p theta_i) with theta_i = 10000^(-2i/D)."""

    def __init__(self, config: EncodingConfig):
        super().__init__()
        self.register_buffer("theta", rotary_frequencies(config.d_model, 1e4), persistent=False)

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        angles = positions.to(torch.float64)[..., None] * self.theta.to(positions.device)  # (..., D/2)
        return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (..., D), float64


@register("alibi")
class ALiBi(PositionalEncoding):
    """ALiBi (Press et al., ICLR 2022, "Train Short, Test Long"): logit bias -m (i - j) for query
    position i and key position j <= i, with a fixed slope m.

    The paper's slopes for n heads are m_k = 2^(-8k/n), k = 1..n, so its single-head slope is
    m = 2^-8 = 1/256: the default here, being the published rule. At 1/256 the bias moves a logit
    by 0.125 across a 32-token training range, small next to the logits a trained head reaches,
    so at these lengths ``alibi`` is all but NoPE. Slopes at which the bias does matter over 32
    tokens are set on the name: ``alibi@slope=0.5``, the steepest slope of an 8-head model (2^-1:
    16 logits across the training range), and ``alibi@slope=1``, the limit the steepest slope
    2^(-8/n) of an n-head model approaches as n grows; ``alibi_learned`` lets training choose it.
    """

    offset_only = True
    monotone_in_offset = True  # linear in the offset
    learned_slope = False

    def __init__(self, config: EncodingConfig, *, slope: float = 2.0 ** -8):
        super().__init__()
        slope = torch.tensor(float(slope))
        if self.learned_slope:
            self.slope = nn.Parameter(slope)
        else:
            self.register_buffer("slope", slope, persistent=False)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        return -self.slope * query_key_offsets(query_positions, key_positions).to(self.slope.dtype)


@register("alibi_learned")
class LearnedSlopeALiBi(ALiBi):
    """ALiBi's bias -m (i - j) with the slope m a learned scalar, initialized at the single-head
    slope 2^-8 and free to take any value (a negative slope favours far keys; the bias stays
    linear, so monotone, in the offset either way)."""

    learned_slope = True


def causal_offset_bucket(offsets: torch.Tensor, num_buckets: int = 32, max_distance: int = 128) -> torch.Tensor:
    """T5's bucket of each causal offset i - j >= 0, as huggingface transformers'
    ``T5Attention._relative_position_bucket(j - i, bidirectional=False, num_buckets, max_distance)``.

    Offsets below num_buckets / 2 get a bucket each; larger ones share the other half of the buckets,
    log-spaced up to ``max_distance``, computed in float32 as there; everything from
    16 * 8^(15/16) = 112.4 on (at the defaults) lands in the last bucket.
    """
    max_exact = num_buckets // 2
    offsets = offsets.clamp(min=0)
    # Clamped below at max_exact only to keep log() finite where torch.where discards the value anyway.
    large = max_exact + (torch.log(offsets.clamp(min=max_exact).float() / max_exact)
                         / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)
    return torch.where(offsets < max_exact, offsets, large.clamp(max=num_buckets - 1))


@register("t5")
class T5RelativeBias(PositionalEncoding):
    """T5's relative position bias (Raffel et al., JMLR 2020): a learned scalar per bucket of the
    causal offset i - j (32 buckets, max distance 128, ``causal_offset_bucket``), added to the
    logits. Initialized N(0, d_model^-1/2) as huggingface's T5 does (N(0, init_std^2) under a named normal init).

    Buckets of offsets longer than any training sequence get no gradient and keep their init.
    """

    offset_only = True
    trained_past_range = False  # the buckets of offsets past the training range

    def __init__(self, config: EncodingConfig):
        super().__init__()
        std = config.d_model ** -0.5 if config.init_std is None else config.init_std
        self.bucket_bias = nn.Parameter(torch.randn(32) * std)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        if query_positions.is_floating_point():
            raise ValueError("t5 buckets integer offsets; fractional positions (position interpolation) have none")
        return self.bucket_bias[causal_offset_bucket(query_key_offsets(query_positions, key_positions))]


@register("fire")
class FIRE(PositionalEncoding):
    """FIRE (Li et al., ICLR 2024, arXiv:2310.04418): logit bias b(i, j) = f(psi(i - j) / psi(max(L, i)))
    with psi(x) = log(c x + 1) and f a ReLU MLP 1 -> 32 -> 1.

    As in the paper's reference code: c is learned from 0.1 (used as |c|), the threshold is
    L = |s| * 512 with the multiplier s learned from 1, and the denominator carries + 1e-6.
    Below the threshold (i < L) the bias is a function of the offset alone; past it the
    offsets are squeezed into [0, 1] as the query position grows (progressive interpolation).
    ``fire@threshold=32`` sets another initial L; ``fire_fixed`` keeps L where it starts.
    """

    # The normalizer psi(max(L, i)) depends on the query position once i > L; and ReLU units of f
    # whose kink lies beyond every offset seen in training get no gradient, yet shape f past it.
    trained_past_range = False
    learned_threshold = True

    def __init__(self, config: EncodingConfig, *, threshold: float = 512.0):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
        if config.init_std is not None:  # a named normal init draws the MLP; c and the threshold keep their values
            initialize([self.mlp], Init("normal", config.init_std))
        self.c = nn.Parameter(torch.tensor(0.1))
        if self.learned_threshold:
            self.threshold_scale = nn.Parameter(torch.tensor(1.0))
        else:
            self.register_buffer("threshold_scale", torch.tensor(1.0), persistent=False)
        self.register_buffer("initial_threshold", torch.tensor(float(threshold)), persistent=False)

    def logit_bias(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        dtype = self.c.dtype
        offsets = query_key_offsets(query_positions, key_positions).to(dtype)  # (..., Tq, Tk)
        threshold = (self.threshold_scale * self.initial_threshold).abs()
        normalizer = torch.maximum(query_positions.to(dtype), threshold)[..., :, None]  # (..., Tq, 1)
        fraction = self.psi(offsets) / (self.psi(normalizer) + 1e-6)
        return self.mlp(fraction[..., None])[..., 0]

    def psi(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.abs(self.c * x) + 1)


@register("fire_fixed")
class FixedThresholdFIRE(FIRE):
    """FIRE's bias f(psi(i - j) / psi(max(L, i))) with the threshold L fixed at its initial value
    (512 unless the name sets it, ``fire_fixed@threshold=64``), c and f learned as in ``fire``.

    Learned, L follows the training loss down to about the longest training length (29-36 from
    512 in the default runs), which moves the bias's peak with the query position past it. Fixed
    at 512, the normalizer psi(L) is one constant for every query position below L: the bias is a
    function of the offset alone up to length 512, and squeezed only past it.
    """

    learned_threshold = False


class RandomizedPositions(PositionalEncoding):
    """Randomized positions (Ruoss et al., ACL 2023, google-deepmind/randomized_positional_encodings):
    each sequence of length n gets as position ids a sorted uniform random subset of
    [0, noise_max_length), by default [0, 4096): four times the longest default evaluation length
    (1024), as Ruoss et al. take a range well above the longest test length, so that even the
    longest evaluation sequence draws a sparse subset rather than every id (``@noise_max_length=N``
    sets another; the config checks that it covers every evaluation length). It is a setting of
    the encoding, not of the evaluation: changing the evaluation lengths retrains nothing.

    Drawn afresh for every sequence, in training and at evaluation alike: the reference code has
    no train/eval switch and samples at evaluation too (it draws one subset per batch; here each
    sequence gets its own, so an evaluation averages over as many draws as sequences).
    """

    def sample_positions(self, batch_size: int, length: int, rng: torch.Generator) -> torch.Tensor:
        return sorted_random_subsets(batch_size, length, self.noise_max_length, rng)


def sorted_random_subsets(batch_size: int, size: int, population: int, rng: torch.Generator) -> torch.Tensor:
    """(batch_size, size) int64: each row a uniform random subset of [0, population), sorted.

    Two exact ways, by cost. Short rows (duplicates rare): draw with replacement and redraw every
    row that repeats a value, which leaves the uniform distribution over sets of distinct values.
    Long rows: the indices of the ``size`` largest of ``population`` uniform draws, in float64 so
    that ties (which would bias the choice) are vanishingly rare.
    """
    if size > population:
        raise ValueError(f"sequence length {size} exceeds noise_max_length {population}")
    if size * (size - 1) > population:  # a row would repeat a value more often than not
        draws = torch.rand(batch_size, population, generator=rng, dtype=torch.float64)
        return draws.topk(size, dim=-1).indices.sort(dim=-1).values
    rows = torch.randint(population, (batch_size, size), generator=rng).sort(dim=-1).values
    repeats = (rows[:, 1:] == rows[:, :-1]).any(dim=-1)
    while repeats.any():
        rows[repeats] = torch.randint(population, (int(repeats.sum()), size), generator=rng).sort(dim=-1).values
        repeats = (rows[:, 1:] == rows[:, :-1]).any(dim=-1)
    return rows


# The randomized encodings' range of position ids unless the name sets one (``@noise_max_length=``):
# four times the longest default evaluation length (1024). At a range equal to it, a sequence of that
# length draws every id, 0..1023, the ids of no training sequence; at twice it, half of them.
DEFAULT_NOISE_MAX_LENGTH = 4096


def noise_max_length_of(noise_max_length: float | None) -> int:
    """The randomized encodings' range of position ids: ``DEFAULT_NOISE_MAX_LENGTH`` unless the name sets it."""
    if noise_max_length is None:
        return DEFAULT_NOISE_MAX_LENGTH
    if noise_max_length != int(noise_max_length) or noise_max_length < 1:
        raise ValueError(f"noise_max_length must be a positive integer, got {noise_max_length}")
    return int(noise_max_length)


@register("randomized_rope")
class RandomizedRotary(RandomizedPositions, Rotary):
    """Randomized rotary positions (Ruoss et al. 2023): ``rope`` applied at position ids drawn per
    sequence as a sorted random subset of [0, noise_max_length), noise_max_length = 4096 (four times
    the longest default evaluation length, 1024) unless the name sets it. The logit is a function of
    the id gap, which for a fixed token offset is random."""

    offset_only = False

    def __init__(self, config: EncodingConfig, *, noise_max_length: float | None = None):
        Rotary.__init__(self, config)
        self.noise_max_length = noise_max_length_of(noise_max_length)
        # Every id a sequence can draw, rotated once (the same numbers as Rotary.phasors): a batch of
        # per-sequence ids looks them up instead of taking B x T sines and cosines per step. Kept in
        # each complex dtype, so that a float32 head reads (B, T, D/2) complex64 values, not twice as many
        # bytes of complex128 converted after (the same numbers: the conversion is per element). Plain
        # attributes, not buffers: constants of the encoding, like noise_max_length.
        table = Rotary.phasors(self, torch.arange(self.noise_max_length))
        self.phasor_tables = {dtype: table.to(dtype) for dtype in (torch.complex128, torch.complex64)}

    def phasors(self, positions: torch.Tensor, dtype: torch.dtype = torch.complex128) -> torch.Tensor:
        if positions.is_floating_point():
            return Rotary.phasors(self, positions, dtype)
        return self.phasor_tables[dtype].to(positions.device)[positions]


@register("randomized_learned")
class RandomizedLearned(RandomizedPositions, LearnedAbsolute):
    """Randomized learned positions (Ruoss et al. 2023): a ``learned`` table of noise_max_length rows,
    read at position ids drawn per sequence as a sorted random subset of [0, noise_max_length),
    noise_max_length = 4096 (four times the longest default evaluation length, 1024) unless the name
    sets it.
    Every row is drawn during training, so every row is trained."""

    trained_past_range = True

    def __init__(self, config: EncodingConfig, *, noise_max_length: float | None = None):
        noise_max_length = noise_max_length_of(noise_max_length)
        LearnedAbsolute.__init__(self, replace(config, trained_positions=noise_max_length))
        self.noise_max_length = noise_max_length

    def position_embedding(self, positions: torch.Tensor) -> torch.Tensor:
        # Every id is below noise_max_length, a stored row: a plain gather, also under vmap.
        return self.table[positions]


def encoding_description(name: str) -> dict:
    """What the registry states about the encoding ``name``, as plain data for jobs that load no
    model: the first paragraph of its class docstring (formula and source), its three mechanism
    properties, and whether it draws its position ids at random."""
    cls, _ = resolve_encoding(name)
    return {
        "summary": " ".join(inspect.cleandoc(cls.__doc__).split("\n\n")[0].split()),
        "offset_only": cls.offset_only,
        "trained_past_range": cls.trained_past_range,
        "monotone_in_offset": cls.monotone_in_offset,
        "random_positions": cls.sample_positions is not PositionalEncoding.sample_positions,
    }
